"""A sweep's run config given by a ready config's name (`base: verdict`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_helpers import backtest_here

REPO = Path(__file__).resolve().parents[2]
VERDICT = REPO / "configs" / "verdict.yaml"
GRID = {"sessions": 20, "seed": 3, "grid": {"table.max": [500, 1000]}}


def sweep_file(folder: Path, name: str, **keys: object) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump({**GRID, **keys}))
    return path


def sweep(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    path: Path,
    out: Path,
    *args: str,
) -> tuple[int, str, str]:
    return backtest_here(
        monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--workers", "1", "-q", *args
    )


def table(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    path: Path,
    out: Path,
    *args: str,
) -> list[dict[str, object]]:
    code, printed, err = sweep(monkeypatch, capsys, path, out, "--format", "json", *args)
    assert code == 0, err
    return json.loads(printed)


def test_base_takes_a_ready_config_s_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    by_name = sweep_file(tmp_path, "by-name.yaml", base="verdict")
    by_path = sweep_file(tmp_path, "by-path.yaml", base=str(VERDICT))
    assert table(monkeypatch, capsys, by_name, tmp_path / "a") == table(
        monkeypatch, capsys, by_path, tmp_path / "b"
    )
    # a file of that name beside the sweep is the one it means
    beside = yaml.safe_load(VERDICT.read_text()) | {"seats": [{"strategy": "flat"}]}
    (tmp_path / "verdict").write_text(yaml.safe_dump(beside))
    seats = {row["seat"] for row in table(monkeypatch, capsys, by_name, tmp_path / "c")}
    assert seats == {"flat"}
    missing = sweep_file(tmp_path, "missing.yaml", base="verdikt")
    code, _, err = sweep(monkeypatch, capsys, missing, tmp_path / "d")
    assert code == 1 and "base: file verdikt does not exist" in err

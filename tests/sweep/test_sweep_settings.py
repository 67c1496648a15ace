"""A sweep's run config given by a ready config's name (`base: verdict`), and
set from the command line (`--set KEY=VALUE`, `--rules PRESET`)."""

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


def test_set_and_rules_set_the_run_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = yaml.safe_load(VERDICT.read_text())
    run["rules"] = "no-commission"
    run["seats"][1]["params"]["base"] = 20
    inline = sweep_file(tmp_path, "inline.yaml", run=run)
    based = sweep_file(tmp_path, "based.yaml", base="verdict")
    given = table(
        monkeypatch,
        capsys,
        based,
        tmp_path / "a",
        "--rules",
        "no-commission",
        "--set",
        "seats[1].params.base=20",
    )
    assert given == table(monkeypatch, capsys, inline, tmp_path / "b")
    assert given != table(monkeypatch, capsys, based, tmp_path / "c")

    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = sweep(
        monkeypatch, capsys, based, tmp_path / "d", "--rules", "ez", "--set", "seed=5"
    )
    assert code == 0, err
    assert out.startswith(f"based: 2 cells, seed 5, rules ez, with seed=5; results in {tmp_path}")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--set", "table.max=20"], "error: --set table.max: the sweep varies grid.table.max"),
        (
            ["--set", "session.bankrol=500"],
            "error: --set session.bankrol: unknown key; did you mean 'bankroll'?",
        ),
        (["--set", "seats[5].name=x"], "error: --set seats[5].name: seats[5] does not exist"),
        (["--rules", "germn"], "error: --rules: unknown rules preset 'germn'; did you mean"),
    ],
)
def test_a_bad_setting_of_a_sweep_names_it(
    args: list[str],
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = sweep_file(tmp_path, "s.yaml", base="verdict")
    code, out, err = sweep(monkeypatch, capsys, path, tmp_path / "out", *args)
    assert code == 2 and out == ""
    assert err.startswith(said), err
    assert not (tmp_path / "out").exists()


def test_a_setting_the_cells_override_is_refused_only_where_they_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sweep_file(tmp_path, "s.yaml", base="verdict")
    # the table whole, its `max` the cells' own
    rows = table(monkeypatch, capsys, path, tmp_path / "a", "--set", "table={min: 5, max: 10}")
    assert {row["table.max"] for row in rows} == {500, 1000}

"""`--resume` takes only cells made as the sweep would make them now: each
cell's file records its settings, inputs and code (`out_dir.made_with`), and
a folder of cells without its sweep.json is not resumed; `run --out` does not
write into a sweep's folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import backtest_here, one_line_error

from backtest.sweep import digests, load_sweep, run_sweep
from backtest.sweep.out_dir import MADE_WITH

RUN = """\
name: base
seed: 3
sessions: 10
rules: commission
shoe: {decks: 8, cut_card: 14, burn: true}
session: {bankroll: 1000, win_goal: 200, max_shoes: 1}
table: {min: 10, max: 1000}
seats:
- strategy: flat
  name: flat
  params: {bets: {banker: 10}}
"""

SWEEP = "base: run.yaml\nname: small\nseed: 2\ngrid:\n  session.bankroll: [300, 3000]\n"


@pytest.fixture
def sweep_path(tmp_path: Path) -> Path:
    (tmp_path / "run.yaml").write_text(RUN, encoding="utf-8")
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP, encoding="utf-8")
    return path


def resume(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    path: Path,
    out: Path,
    sessions: int,
) -> tuple[int, str, str]:
    return backtest_here(
        monkeypatch,
        capsys,
        "sweep",
        str(path),
        "--out",
        str(out),
        "--sessions",
        str(sessions),
        "--workers",
        "1",
        "--resume",
    )


def test_each_cell_file_records_what_made_it(sweep_path: Path, tmp_path: Path) -> None:
    sweep = load_sweep(sweep_path, sessions=6)
    run_sweep(sweep, tmp_path / "out", workers=1)
    for cell in sweep.cells:
        meta = pl.read_parquet_metadata(tmp_path / "out" / "cells" / f"{cell.id}.parquet")
        assert '"sessions": "6"' in meta[MADE_WITH]
        assert digests.code_digest() in meta[MADE_WITH]


def test_cells_without_their_sweep_json_are_not_resumed(
    sweep_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    run_sweep(load_sweep(sweep_path, sessions=6), out, workers=1)
    (out / "sweep.json").unlink()
    code, stdout, err = resume(monkeypatch, capsys, sweep_path, out, 3)
    assert one_line_error(code, err, 2) == (
        f"error: --out {out} holds cells but no sweep.json, so which sweep they belong "
        "to is unknown; use another directory, or delete it to start again"
    )
    assert stdout == "" and not (out / "sweep.json").exists()


def test_a_cell_made_with_other_sessions_is_refused(
    sweep_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A cell's file copied over from the same sweep run with more sessions."""
    sweep = load_sweep(sweep_path, sessions=6)
    run_sweep(sweep, tmp_path / "six", workers=1)
    out = tmp_path / "three"
    run_sweep(load_sweep(sweep_path, sessions=3), out, workers=1)
    name = f"{sweep.cells[1].id}.parquet"
    shutil.copy(tmp_path / "six" / "cells" / name, out / "cells" / name)
    code, _, err = resume(monkeypatch, capsys, sweep_path, out, 3)
    assert one_line_error(code, err, 2) == (
        f"error: --out {out}: cells/{name} was made with sessions 6, and cell 2 "
        "(session.bankroll=3000) has 3 now; use another --out, or delete the cell's "
        "file to run it again"
    )


def test_a_cell_made_by_other_code_or_recording_nothing_is_refused(
    sweep_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    sweep = load_sweep(sweep_path, sessions=3)
    run_sweep(sweep, out, workers=1)
    monkeypatch.setattr(digests, "code_digest", lambda: "0" * 64)
    code, _, err = resume(monkeypatch, capsys, sweep_path, out, 3)
    name = f"{sweep.cells[0].id}.parquet"
    assert one_line_error(code, err, 2) == (
        f"error: --out {out}: cells/{name} was made with another version of the code "
        "than cell 1 (session.bankroll=300) has now; use another --out, or delete the "
        "cell's file to run it again"
    )
    monkeypatch.undo()
    f = out / "cells" / name
    pl.read_parquet(f).write_parquet(f)  # the same numbers, no record of what made them
    code, _, err = resume(monkeypatch, capsys, sweep_path, out, 3)
    assert one_line_error(code, err, 2).startswith(
        f"error: --out {out}: cells/{name} does not record what it was made with"
    )


@pytest.mark.parametrize("inside", ["", "cells", "cells/."])
def test_a_run_does_not_write_into_a_sweeps_folder(
    inside: str,
    sweep_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    run_sweep(load_sweep(sweep_path, sessions=3), out, workers=1)
    target = f"{out}/{inside}" if inside else str(out)
    code, _, err = backtest_here(
        monkeypatch, capsys, "run", str(tmp_path / "run.yaml"), "--out", target
    )
    line = one_line_error(code, err, 2)
    assert "sweep" in line and "give another directory for" in line
    assert sorted(p.name for p in (out / "cells").iterdir()) == sorted(
        f"{c.id}.parquet" for c in load_sweep(sweep_path, sessions=3).cells
    )

"""The cheap benchmark scripts still run against the library as it is.

Nothing here times anything: the figures are the scripts' business. A script
that calls a function whose signature changed fails here instead of on the
next person who runs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: the benchmarks run as processes: the slow tier
pytestmark = pytest.mark.slow


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_counting_report_prices_every_bet_of_both_tables() -> None:
    out = run("counting_report.py", "--shoes", "3", "--workers", "1")
    assert "hands priced exactly before the deal" in out
    for row in (
        "Player 1:1",
        "Banker 0.95:1 (commission)",
        "Tie 8:1",
        "Dragon 7 40:1 (EZ)",
        "Panda 8 25:1 (EZ)",
    ):
        assert row in out


def test_bench_odds_times_each_path() -> None:
    out = run("bench_odds.py", "--calls", "3")
    for line in (
        "bet_evs (checks input, dict out)",
        "ev_array (array out)",
        "ev_fill (the counter's call)",
        "ev_fill_ahead, 16 hands a call, commission",
        "full exact 8-deck table",
    ):
        assert line in out


def test_bench_engine_prints_every_figure_in_its_quick_mode() -> None:
    out = run("bench_engine.py", "--quick")
    for line in (
        "session loop martingale",
        "session loop, README's compiled class",
        "plain Python plain-martingale",
        "backtest run, 3 seats",
        "warm start-up, backtest roads",
    ):
        assert line in out


def test_bench_sweep_cells_prints_its_figures_for_a_few_cells() -> None:
    out = run("bench_sweep_cells.py", "--cells", "4", "--sessions", "2")
    for line in ("sweep of 4 cells x 2 sessions", "cells/s", "load_sweep", "run_sweep"):
        assert line in out

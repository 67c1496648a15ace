"""Sweeps: one run config over a grid of settings (`backtest.sweep`, `backtest sweep`).

What is checked: the cells a sweep's `grid:` and `zip:` make, over any key path
of the run config; validation of every cell before the first one runs, with
errors naming the cell, its values and the key; random streams keyed by the
master seed and the cell's own values (or shared with `common_shoes`); the same
numbers on one worker, two local processes, a Dask LocalCluster and a running
Dask scheduler; the output directory (cells written atomically as they finish,
`summary.parquet`, `sweep.json`); a sweep killed halfway and resumed; `--resume`
and its usage errors; the printed result; and the ready sweeps in
`configs/sweeps/`.

Sweeps run in this process (`run_sweep`, or the real entry point `main`) where
that is enough, and as a real `python -m backtest` process where the process
itself matters (a kill, the error boundary).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import Run, backtest_here, backtest_process, one_line_error
from polars.testing import assert_frame_equal

from backtest import sweep as sweeps
from backtest.core.errors import BacktestError, ConfigError, UsageError
from backtest.core.rules import Bet
from backtest.run import chunks, cluster, engine
from backtest.run.config import load_config
from backtest.sweep import cells as sweep_cells
from backtest.sweep import execute as sweep_execute
from backtest.sweep import load_sweep, run_sweep
from backtest.sweep import spec as sweep_spec

REPO = Path(__file__).resolve().parents[2]
READY_SWEEPS = sorted((REPO / "configs" / "sweeps").glob("*.yaml"))

#: a run config with one Martingale seat (the base of most sweeps here)
RUN = """\
name: base
seed: 3
sessions: 10
rules: commission
shoe: {decks: 8, cut_card: 14, burn: true}
session: {bankroll: 1000, win_goal: 200, max_shoes: 1}
table: {min: 10, max: 1000}
seats:
- strategy: martingale
  name: martingale
  params: {bet: banker, base: 10}
"""

#: the metrics `backtest run` writes in its summary (a sweep row carries them all)
RUN_METRICS = (
    "seat",
    "strategy",
    "sessions",
    "hands",
    "bets",
    "wagered",
    "net",
    "edge",
    "edge_ci_low",
    "edge_ci_high",
    "expected_edge",
    "z",
    "ruin_rate",
    "win_goal_rate",
    "winning_sessions",
    "mean_net",
    "median_net",
    "final_bankroll_p5",
    "final_bankroll_p95",
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def sweep_file(tmp: Path, body: str, name: str = "sweep.yaml", run: str = RUN) -> Path:
    """A sweep `name` in `tmp` over the run config `run.yaml` beside it."""
    write(tmp / "run.yaml", run)
    return write(tmp / name, "base: run.yaml\n" + body)


def by_cell(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort("cell", "seat")


def cell_files(out: Path) -> list[Path]:
    return sorted((out / "cells").glob("*.parquet"))


def temp_files(out: Path) -> list[str]:
    return [os.path.join(d, f) for d, _, files in os.walk(out) for f in files if f.endswith(".tmp")]


cli = backtest_here


def backtest(*args: str, timeout: float = 300) -> Run:
    """`python -m backtest ARGS` from the project's top folder."""
    return backtest_process(args, cwd=REPO, timeout=timeout)


# --- the cells of a sweep ----------------------------------------------------------------------


def test_grid_is_a_product_and_zip_goes_in_step(tmp_path: Path) -> None:
    path = sweep_file(
        tmp_path,
        """\
sessions: 7
seed: 42
grid:
  seats[0].params.base: [5, 25]
  session.bankroll: [500, 2000]
zip:
  rules: [commission, ez]
  shoe.decks: [8, 6]
""",
    )
    sweep = load_sweep(path)
    assert sweep.keys == ("seats[0].params.base", "session.bankroll", "rules", "shoe.decks")
    assert sweep.seed == 42 and sweep.metric == "edge" and sweep.name == "sweep"
    assert len(sweep.cells) == 2 * 2 * 2
    got = [
        (
            c.config.seats[0].params["base"],
            c.config.session.bankroll,
            c.config.rules.name,
            c.config.shoe.decks,
        )
        for c in sweep.cells
    ]
    assert got == [
        (base, bankroll, rules, decks)
        for base in (5, 25)
        for bankroll in (500, 2000)
        for rules, decks in (("commission", 8), ("ez", 6))
    ]
    for i, cell in enumerate(sweep.cells):
        assert cell.index == i
        assert dict(cell.values) == {
            "seats[0].params.base": got[i][0],
            "session.bankroll": got[i][1],
            "rules": got[i][2],
            "shoe.decks": got[i][3],
        }
        assert cell.sessions == 7 and cell.config.sessions == 7
        # what is not varied comes from the base config, untouched by other cells
        assert cell.config.session.win_goal == 200 and cell.config.limits.maximum
        assert cell.config.seats[0].params["bet"] == "banker"
        assert cell.config.seed == sweep_cells.cell_seed(42, cell.key)
    assert len({c.config.seed for c in sweep.cells}) == len(sweep.cells)
    assert len({c.id for c in sweep.cells}) == len(sweep.cells)
    # --sessions overrides the sweep's sessions
    assert {c.sessions for c in load_sweep(path, sessions=3).cells} == {3}


def test_a_whole_seat_and_an_inline_run(tmp_path: Path) -> None:
    path = write(
        tmp_path / "seats.yaml",
        """\
run:
  seed: 9
  sessions: 4
  shoe: {decks: 1}
  session: {bankroll: 500, max_shoes: 1}
  seats:
  - strategy: flat
zip:
  seats[0]:
  - {strategy: flat, name: flat player, params: {bets: {player: 5}}}
  - {strategy: random, name: coin, params: {base: 5}}
  table.max: [100, 200]
""",
    )
    sweep = load_sweep(path)
    assert [c.config.seats[0].strategy for c in sweep.cells] == ["flat", "random"]
    assert [c.config.seats[0].label for c in sweep.cells] == ["flat player", "coin"]
    assert [c.config.shoe.decks for c in sweep.cells] == [1, 1]
    assert sweep.seed == 9 and [c.sessions for c in sweep.cells] == [4, 4]  # from the run
    assert [c.label() for c in sweep.cells] == [
        "seats[0]=flat player, table.max=100",
        "seats[0]=coin, table.max=200",
    ]


# the sweep's varied part, and what its error says after "<file>: "
BAD_SWEEPS = {
    "list-index-out-of-range": (
        "grid:\n  seats[3].params.base: [5, 10]\n",
        "cell 1 (seats[3].params.base=5): seats[3].params.base: seats[3] does not exist "
        "(the list has 1 item(s))",
    ),
    "misspelt-section": (
        "grid:\n  sesion.bankroll: [500, 1000]\n",
        "cell 1 (sesion.bankroll=500): sesion: unknown key; did you mean 'session'",
    ),
    "misspelt-session-key": (
        "grid:\n  session.bankrol: [500, 1000]\n",
        "cell 1 (session.bankrol=500): session.bankrol: unknown key; did you mean 'bankroll'?",
    ),
    "misspelt-strategy-parameter": (
        "grid:\n  seats[0].params.bse: [5]\n",
        "cell 1 (seats[0].params.bse=5): seats[0].params: unknown parameter 'bse'; "
        "did you mean 'base'",
    ),
    "zip-lengths": (
        "zip:\n  rules: [commission, ez, no-commission]\n  shoe.decks: [8, 6]\n",
        "zip: the lists must have the same length (rules has 3, shoe.decks has 2)",
    ),
    "empty-grid": ("grid: {}\n", "nothing varies: give `grid:` and/or `zip:`"),
    "no-grid-nor-zip": ("sessions: 5\n", "nothing varies: give `grid:` and/or `zip:`"),
    "empty-list": (
        "grid:\n  session.bankroll: []\n",
        "grid.session.bankroll: expected a non-empty list of values, got []",
    ),
    "not-a-list": (
        "zip:\n  session.bankroll: 500\n",
        "zip.session.bankroll: expected a non-empty list of values, got 500",
    ),
    "bad-value-in-third-cell": (
        "grid:\n  session.bankroll: [100, 200, -5]\n",
        "cell 3 (session.bankroll=-5): session.bankroll: must be more than 0, got -5",
    ),
    "bad-value-with-two-keys": (
        "grid:\n  table.max: [500, 1000]\n  session.bankroll: [100, 200, -5]\n",
        "cell 3 (table.max=500, session.bankroll=-5): session.bankroll: must be more than 0, "
        "got -5",
    ),
    "bad-value-under-zip": (
        "zip:\n  rules: [commission, ez]\n  shoe.decks: [8, 0]\n",
        "cell 2 (rules=ez, shoe.decks=0): shoe.decks: must be from 1 to 64, got 0",
    ),
    "bad-parameter-value": (
        "grid:\n  seats[0].params.base: [5, ten]\n",
        "cell 2 (seats[0].params.base=ten): seats[0].params.base: expected a number, got 'ten'",
    ),
    "unknown-rules-preset": (
        "grid:\n  rules: [commission, comission]\n",
        "cell 2 (rules=comission): rules: unknown rules preset 'comission'; "
        "did you mean 'commission'",
    ),
    "unknown-strategy-in-a-whole-seat": (
        "grid:\n  seats[0]: [{strategy: flat}, {strategy: nope}]\n",
        "cell 2 (seats[0]=nope): seats[0].strategy: unknown strategy 'nope'",
    ),
    # the engine's own checks before any hand (a bet the table does not offer) count too
    "bet-the-table-does-not-offer": (
        "grid:\n  rules: [commission, bulgarian]\n"
        "  seats[0]: [{strategy: flat, params: {bets: {player_pair: 5}}}]\n",
        "cell 2 (rules=bulgarian, seats[0]=flat): seats[0] (flat): the bulgarian table does not "
        "offer the player_pair bet",
    ),
    "into-a-number": (
        "grid:\n  session.bankroll.x: [5]\n",
        "cell 1 (session.bankroll.x=5): session.bankroll.x: session.bankroll is not a mapping",
    ),
    "not-a-key-path": ("grid:\n  seats[0]..base: [5]\n", "grid.seats[0]..base: not a key path"),
    "both-grid-and-zip": (
        "grid:\n  table.max: [500]\nzip:\n  table.max: [1000]\n",
        "zip.table.max: also in grid; vary a key in one of them",
    ),
    "unknown-sweep-key": ("gird:\n  table.max: [500]\n", "gird: unknown key; did you mean 'grid'?"),
    "unknown-metric": (
        "metric: ruin\ngrid:\n  table.max: [500]\n",
        "metric: unknown metric 'ruin'; did you mean 'ruin_rate'?",
    ),
    "negative-seed": (
        "seed: -1\ngrid:\n  table.max: [500]\n",
        "seed: must be at least 0, got -1",
    ),
    "zero-sessions": (
        "sessions: 0\ngrid:\n  table.max: [500]\n",
        "sessions: must be at least 1, got 0",
    ),
    # the summary has a `sessions` column of its own, and every cell runs the sweep's number
    "too-many-cells": (
        "grid:\n"
        + "".join(f"  seats[0].params.base{'x' * i}: {list(range(10))}\n" for i in range(6)),
        "the grid and zip make 1,000,000 cells, more than 100,000",
    ),
    "sessions-varied": (
        "grid:\n  sessions: [5, 10]\n",
        "grid.sessions: every cell runs the sweep's `sessions`",
    ),
    # a varied seed is the cell's, checked as a run config's (not replaced by a derived one)
    "seed-not-a-number": (
        "grid:\n  seed: [1, abc]\n",
        "cell 2 (seed=abc): seed: expected a whole number, got 'abc'",
    ),
    "seed-negative": (
        "grid:\n  seed: [1, -1]\n",
        "cell 2 (seed=-1): seed: must be at least 0, got -1",
    ),
    "seed-a-fraction-under-zip": (
        "zip:\n  seed: [1, 2.5]\n  table.max: [500, 600]\n",
        "cell 2 (seed=2.5, table.max=600): seed: expected a whole number, got 2.5",
    ),
    "seed-true-with-common-shoes": (
        "common_shoes: true\ngrid:\n  seed: [1, true]\n",
        "cell 2 (seed=true): seed: expected a whole number, got True",
    ),
}


@pytest.mark.parametrize("name", BAD_SWEEPS)
def test_every_cell_is_validated_before_any_runs(tmp_path: Path, name: str) -> None:
    body, message = BAD_SWEEPS[name]
    path = sweep_file(tmp_path, body)
    with pytest.raises(ConfigError) as error:
        load_sweep(path)
    # the line of the key the message names, where the sweep file has it
    assert re.match(
        rf"{re.escape(str(path))}: (line \d+: )?{re.escape(message)}", str(error.value)
    ), str(error.value)
    assert "\n" not in str(error.value)


def test_a_sweep_file_s_error_names_the_line_of_its_key(tmp_path: Path) -> None:
    write(tmp_path / "run.yaml", RUN)
    path = write(
        tmp_path / "lines.yaml",
        "name: lines\nbase: run.yaml\nsessions: 5\n"
        "grid:\n  table.max: [500]\n  session.bankroll: []\n",
    )
    with pytest.raises(ConfigError) as error:
        load_sweep(path)
    assert str(error.value) == (
        f"{path}: line 6: grid.session.bankroll: expected a non-empty list of values, got []"
    )
    write(path, "name: lines\nbase: run.yaml\nmetric: ruin\ngrid:\n  table.max: [500]\n")
    with pytest.raises(ConfigError, match=r"lines.yaml: line 3: metric: unknown metric 'ruin'"):
        load_sweep(path)


def test_errors_in_an_inline_run_name_the_sweep_file(tmp_path: Path) -> None:
    path = write(
        tmp_path / "inline.yaml",
        "run:\n"
        + "".join(f"  {line}\n" for line in RUN.splitlines())
        + "grid:\n  sesion.bankroll: [500]\n",
    )
    with pytest.raises(ConfigError) as error:
        load_sweep(path)
    assert str(error.value).startswith(
        f"{path}: line 14: cell 1 (sesion.bankroll=500): sesion: unknown key; did you mean 'session'"
    )


def test_a_params_value_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, "grid:\n  seats[0].params: [{base: 5}, 5]\n")
    with pytest.raises(ConfigError) as error:
        load_sweep(path)
    assert str(error.value).startswith(
        f"{path}: line 3: cell 2 (seats[0].params=5): seats[0].params"
    )


def test_a_bad_last_cell_fails_before_any_cell_runs(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, "sessions: 20\ngrid:\n  session.bankroll: [500, 1000, -5]\n")
    out = tmp_path / "out"
    done = backtest("sweep", str(path), "--out", str(out), "--workers", "1")
    message = one_line_error(done.returncode, done.stderr, 1)
    assert message == (
        f"error: {path}: line 4: cell 3 (session.bankroll=-5): session.bankroll: "
        "must be more than 0, got -5"
    )
    assert done.stdout == ""
    assert cell_files(out) == [] and not (out / "summary.parquet").exists()


HUGE = "1" + "0" * 309  # a whole number beyond any float


@pytest.mark.parametrize(
    "key, first",
    [
        ("session.max_shoes", 1),
        ("session.max_hands", 50),
        ("shoe.decks", 8),
        ("session.bankroll", 1000),
        ("seats[0].params.base", 10),
    ],
)
def test_a_huge_whole_number_is_one_line_naming_the_cell_and_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    key: str,
    first: int,
) -> None:
    path = sweep_file(tmp_path, f"sessions: 2\ngrid:\n  {key}: [{first}, {HUGE}]\n")
    out = tmp_path / "out"
    code, stdout, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--workers", "1"
    )
    message = one_line_error(code, err, 1)
    # the line of the value, in the sweep file
    assert message.startswith(f"error: {path}: line 4: cell 2 ({key}={HUGE[:37]}...): {key}"), (
        message
    )
    assert stdout == "" and not out.exists()


# --- random streams: the master seed and the cell's own key ------------------------------------

STREAMS_RUN = RUN.replace(
    """\
- strategy: martingale
  name: martingale
  params: {bet: banker, base: 10}
""",
    """\
- strategy: martingale
  name: martingale
  params: {bet: banker, base: 10}
- strategy: random
  name: coin
  params: {base: 10}
""",
)


def run_file(path: Path, out: Path, **kwargs: Any) -> pl.DataFrame:
    return run_sweep(load_sweep(path), out, **{"workers": 1, **kwargs})


def keyed(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """The rows matched by the varied values, not by the cell's number."""
    return frame.drop("cell").sort(*keys, "seat")


def test_a_cells_numbers_do_not_depend_on_the_order_of_the_grid(tmp_path: Path) -> None:
    keys = ["session.bankroll", "seats[0].params.base"]
    forward = sweep_file(
        tmp_path,
        "sessions: 60\nseed: 5\ngrid:\n"
        "  session.bankroll: [300, 1000, 3000]\n"
        "  seats[0].params.base: [5, 10]\n",
        "forward.yaml",
        STREAMS_RUN,
    )
    backward = sweep_file(
        tmp_path,
        "sessions: 60\nseed: 5\ngrid:\n"
        "  session.bankroll: [3000, 1000, 300]\n"
        "  seats[0].params.base: [10, 5]\n",
        "backward.yaml",
        STREAMS_RUN,
    )
    more = sweep_file(
        tmp_path,
        "sessions: 60\nseed: 5\ngrid:\n"
        "  session.bankroll: [100, 300, 1000, 3000]\n"
        "  seats[0].params.base: [10, 5]\n",
        "more.yaml",
        STREAMS_RUN,
    )
    other_seed = sweep_file(
        tmp_path,
        "sessions: 60\nseed: 6\ngrid:\n"
        "  session.bankroll: [300, 1000, 3000]\n"
        "  seats[0].params.base: [5, 10]\n",
        "seed6.yaml",
        STREAMS_RUN,
    )
    a = run_file(forward, tmp_path / "a")
    b = run_file(backward, tmp_path / "b")
    c = run_file(more, tmp_path / "c")
    d = run_file(other_seed, tmp_path / "d")
    assert a.height == 6 * 2
    # the same cells, in another order: another cell number, the same numbers
    assert a.sort(*keys, "seat")["cell"].to_list() != b.sort(*keys, "seat")["cell"].to_list()
    assert_frame_equal(keyed(a, keys), keyed(b, keys), check_exact=True)
    # a value added to the grid moves every cell's number, not the numbers of the others
    assert_frame_equal(
        keyed(a, keys), keyed(c.filter(pl.col("session.bankroll") != 100), keys), check_exact=True
    )
    # each cell has its own streams, and the master seed decides them
    assert a["seed"].n_unique() == 6 and a["table_hands"].n_unique() > 1
    assert not set(a["seed"]) & set(d["seed"])
    assert keyed(a, keys)["net"].to_list() != keyed(d, keys)["net"].to_list()


def test_a_cells_numbers_do_not_depend_on_the_order_of_the_keys(tmp_path: Path) -> None:
    one = sweep_file(
        tmp_path, "grid:\n  session.bankroll: [300, 1000]\n  table.max: [500, 1000]\n", "one.yaml"
    )
    two = sweep_file(
        tmp_path, "grid:\n  table.max: [500, 1000]\n  session.bankroll: [300, 1000]\n", "two.yaml"
    )
    ids = [
        {(tuple(sorted(c.values)), c.id, c.config.seed) for c in load_sweep(p).cells}
        for p in (one, two)
    ]
    assert ids[0] == ids[1]


def test_common_shoes_deals_every_cell_the_same_shoes(tmp_path: Path) -> None:
    flat = RUN.replace(
        "- strategy: martingale\n  name: martingale\n  params: {bet: banker, base: 10}\n",
        "- strategy: flat\n  name: flat\n  params: {bets: {banker: 10}}\n",
    )
    flat = flat.replace("bankroll: 1000, win_goal: 200", "bankroll: 1000000")
    body = "sessions: 50\nseed: 8\ngrid:\n  seats[0].params.bets.banker: [10, 20, 40]\n"
    common = sweep_file(tmp_path, "common_shoes: true\n" + body, "common.yaml", flat)
    own = sweep_file(tmp_path, body, "own.yaml", flat)
    assert {c.config.seed for c in load_sweep(common).cells} == {8}
    shared = run_file(common, tmp_path / "common").sort("seats[0].params.bets.banker")
    apart = run_file(own, tmp_path / "own").sort("seats[0].params.bets.banker")
    assert shared["seed"].to_list() == [8, 8, 8]
    assert shared["table_hands"].n_unique() == 1 and shared["hands"].n_unique() == 1
    # the same hands: a flat stake twice as large wins or loses exactly twice as much
    net = shared["net"].to_list()
    assert net[1] == pytest.approx(2 * net[0], abs=1e-9)
    assert net[2] == pytest.approx(4 * net[0], abs=1e-9)
    assert shared["edge"].n_unique() == 1
    assert apart["seed"].n_unique() == 3 and apart["table_hands"].n_unique() == 3


def test_common_shoes_with_a_varied_seed_deals_each_seed_s_shoes(tmp_path: Path) -> None:
    """Cells that vary the seed are replications: each plays its seed's shoes."""
    body = "common_shoes: true\nsessions: 20\ngrid:\n  seed: [4, 9]\n  table.max: [500, 1000]\n"
    sweep = load_sweep(sweep_file(tmp_path, body))
    assert [c.config.seed for c in sweep.cells] == [4, 4, 9, 9]
    summary = run_file(sweep_file(tmp_path, body), tmp_path / "out")
    hands = dict(summary.group_by("seed").agg(pl.col("table_hands").unique()).iter_rows())
    assert len(hands[4]) == len(hands[9]) == 1 and hands[4] != hands[9]


def test_a_varied_seed_is_the_cells_seed_with_its_own_shoes_too(tmp_path: Path) -> None:
    """Without common shoes as with them: the cell runs with the seed given, as
    `backtest run` with that seed does, and the summary says that seed."""
    path = sweep_file(
        tmp_path,
        "sessions: 20\nseed: 7\ngrid:\n  seed: [4, 9]\n  table.max: [500, 1000]\n",
        run=STREAMS_RUN,
    )
    sweep = load_sweep(path)
    assert [c.config.seed for c in sweep.cells] == [4, 4, 9, 9]
    summary = run_file(path, tmp_path / "out").sort("cell", maintain_order=True)
    assert summary["seed"].to_list() == [4, 4, 4, 4, 9, 9, 9, 9]
    for cell in sweep.cells:
        values = dict(cell.values)
        alone = engine.run(
            load_config(
                tmp_path / "run.yaml",
                overrides={
                    "seed": values["seed"],
                    "sessions": 20,
                    "table": {"max": values["table.max"]},
                },
                merge=("table",),
            ),
            workers=1,
        ).summary
        rows = summary.filter(pl.col("cell") == cell.index + 1)
        assert_frame_equal(rows.select(alone.columns), alone, check_exact=True)


def test_a_seed_too_large_for_a_column_runs_as_a_run_config_takes_it(tmp_path: Path) -> None:
    huge = 10**40
    path = sweep_file(tmp_path, f"sessions: 2\ngrid:\n  seed: [1, {huge}]\n")
    summary = run_file(path, tmp_path / "out").sort("cell")
    assert summary["seed"].to_list() == ["1", str(huge)]


def test_an_error_found_only_as_a_cell_plays_names_the_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "late.py").write_text(
        "from dataclasses import dataclass\n"
        "from strategies.base import Strategy\n"
        "from strategies.params import param\n\n\n"
        "class Late(Strategy):\n"
        "    @dataclass(frozen=True)\n"
        "    class Params:\n"
        "        at: int = param(1000, 'the hand of the session it fails on')\n\n"
        "    def stakes(self, view):\n"
        "        if view.session_hand == self.params.at:\n"
        "            raise RuntimeError('late')\n"
        "        return {'banker': 10}\n",
        encoding="utf-8",
    )
    run = RUN.replace(
        "- strategy: martingale\n  name: martingale\n  params: {bet: banker, base: 10}\n",
        "- strategy: late.py:Late\n",
    )
    path = sweep_file(tmp_path, "grid:\n  seats[0].params.at: [1000, 3]\n", run=run)
    monkeypatch.chdir(tmp_path)
    for workers in (1, 2):
        with pytest.raises(BacktestError) as info:
            run_file(path, tmp_path / f"out{workers}", workers=workers)
        message = str(info.value)
        assert message.startswith(
            f"{path}: cell 2 (seats[0].params.at=3): seats[0] "
            "(late.py:Late): raised RuntimeError: late ("
        ), message
        # (with two workers, whichever session's chunk fails first)
        assert re.search(r"on hand 4 of shoe 1 in session \d+$", message), message
    capfd.readouterr()
    with pytest.raises(
        BacktestError,
        match=r"cell 2 \(seats\[0\]\.params\.at=3\): seats\[0\] "
        r"\(late.py:Late\): raised RuntimeError: late",
    ):
        run_file(path, tmp_path / "dask", workers=2, executor="dask")
    assert "Compute Failed" not in capfd.readouterr().err  # the workers' logs stay quiet


# --- the same numbers on any executor ---------------------------------------------------------

EXEC_SWEEP = """\
name: executors
sessions: 400
seed: 21
metric: ruin_rate
grid:
  session.bankroll: [300, 1000, 5000]
"""


@pytest.fixture(scope="module")
def exec_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, sweeps.Sweep, pl.DataFrame]:
    """A sweep of 3 cells x 400 sessions x 2 seats, and its summary on one worker."""
    tmp = tmp_path_factory.mktemp("executors")
    path = sweep_file(tmp, EXEC_SWEEP, run=STREAMS_RUN)
    sweep = load_sweep(path)
    summary = run_sweep(sweep, tmp / "one-worker", workers=1)
    return tmp, sweep, summary


def test_few_cells_are_cut_into_several_chunks(
    exec_sweep: tuple[Path, sweeps.Sweep, pl.DataFrame],
) -> None:
    _, sweep, summary = exec_sweep
    todo = [c.index for c in sweep.cells]
    # one worker: each cell in one piece; two workers: each cell cut in 8
    assert len(sweep_execute._tasks(sweep, todo, 1)) == 3
    two = sweep_execute._tasks(sweep, todo, 2)
    assert len(two) == 3 * 8 and {(t.lo, t.hi) for t in two if t.cell == 0} == {
        (lo, lo + 50) for lo in range(0, 400, 50)
    }
    assert summary.height == 3 * 2 and set(summary["sessions"]) == {400}
    assert summary["ruin_rate"].sum() > 0 and summary["edge"].is_not_null().all()


def test_two_local_processes_give_the_same_numbers(
    exec_sweep: tuple[Path, sweeps.Sweep, pl.DataFrame],
) -> None:
    tmp, sweep, summary = exec_sweep
    two = run_sweep(sweep, tmp / "two-workers", workers=2)
    assert_frame_equal(by_cell(two), by_cell(summary), check_exact=True)
    assert_frame_equal(
        by_cell(pl.read_parquet(tmp / "two-workers" / "summary.parquet")),
        by_cell(summary),
        check_exact=True,
    )


def test_a_dask_local_cluster_gives_the_same_numbers(
    exec_sweep: tuple[Path, sweeps.Sweep, pl.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("dask.distributed")
    tmp, sweep, summary = exec_sweep
    started: list[Any] = []
    real = distributed.LocalCluster

    def local_cluster(*args: Any, **kwargs: Any) -> Any:
        cluster = real(*args, **kwargs)
        started.append((cluster, kwargs))
        return cluster

    monkeypatch.setattr(distributed, "LocalCluster", local_cluster)
    on_dask = run_sweep(sweep, tmp / "dask", workers=2, executor="dask")
    assert_frame_equal(by_cell(on_dask), by_cell(summary), check_exact=True)
    # a real cluster of 2 worker processes was started, and closed at the end
    assert len(started) == 1
    cluster, kwargs = started[0]
    assert kwargs["n_workers"] == 2 and kwargs["processes"] is True
    assert str(cluster.status) in ("Status.closed", "closed")


def test_a_running_dask_scheduler_gives_the_same_numbers(
    exec_sweep: tuple[Path, sweeps.Sweep, pl.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("dask.distributed")
    tmp, sweep, summary = exec_sweep
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:

        def no_local_cluster(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("--address must use the running scheduler, not start a cluster")

        monkeypatch.setattr(distributed, "LocalCluster", no_local_cluster)
        on_scheduler = run_sweep(
            sweep, tmp / "address", workers=2, executor="dask", address=cluster.scheduler_address
        )
        assert_frame_equal(by_cell(on_scheduler), by_cell(summary), check_exact=True)
        # the tasks ran on that scheduler's worker, and the scheduler is still up
        with distributed.Client(cluster.scheduler_address) as client:
            executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
            assert list(executed.values()) == [3 * 8]


def test_executor_and_address_errors(
    exec_sweep: tuple[Path, sweeps.Sweep, pl.DataFrame],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tmp, sweep, _ = exec_sweep
    out = tmp / "never"
    code, stdout, err = cli(
        monkeypatch,
        capsys,
        "sweep",
        str(tmp / "sweep.yaml"),
        "--out",
        str(out),
        "--executor",
        "local",
        "--address",
        "127.0.0.1:8786",
    )
    assert one_line_error(code, err, 2) == "error: --address goes with --executor dask"
    assert stdout == "" and not out.exists()
    code, _, err = cli(
        monkeypatch,
        capsys,
        "sweep",
        str(tmp / "sweep.yaml"),
        "--out",
        str(tmp / "negative"),
        "--workers",
        "-1",
    )
    assert one_line_error(code, err, 2) == "error: --workers must be at least 1, got -1"
    with pytest.raises(UsageError, match="--executor must be local or dask"):
        run_sweep(sweep, tmp / "ray", workers=1, executor="ray")
    assert not (tmp / "ray").exists()


def snapshot(out: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(out)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def test_a_scheduler_that_cannot_be_reached_leaves_out_as_it_was(
    finished: tuple[Path, Path, sweeps.Sweep, pl.DataFrame],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    distributed = pytest.importorskip("dask.distributed")
    path, out, sweep, summary = finished
    tried: list[str] = []

    def unreachable(address: str, **kwargs: Any) -> Any:  # as Dask says it, without the wait
        tried.append(address)
        raise OSError(f"Timed out trying to connect to tcp://{address} after 10 s")

    monkeypatch.setattr(distributed, "Client", unreachable)
    monkeypatch.setattr(cluster, "probe", lambda address, seconds=0: None)
    bad = ("--executor", "dask", "--address", "nohost:9999")
    # a new directory is not made
    fresh = tmp_path / "fresh"
    code, stdout, err = cli(monkeypatch, capsys, "sweep", str(path), "--out", str(fresh), *bad)
    assert one_line_error(code, err, 2) == (
        "error: --address nohost:9999: cannot reach a Dask scheduler there (Timed out trying "
        "to connect to tcp://nohost:9999 after 10 s)"
    )
    assert stdout == "" and tried == ["nohost:9999"] and not fresh.exists()
    # one with cells to run on resuming (one missing, one torn) is left as it was
    (out / "cells" / f"{sweep.cells[1].id}.parquet").unlink()
    (out / "cells" / f"{sweep.cells[2].id}.parquet").write_bytes(b"PAR1 torn")
    (out / "cells" / ".stale.parquet.tmp").write_bytes(b"")
    before = snapshot(out)
    code, _, err = cli(monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--resume", *bad)
    assert one_line_error(code, err, 2).startswith("error: --address nohost:9999: ")
    assert snapshot(out) == before
    # and the same sweep run again, on workers that are there, goes ahead in both
    monkeypatch.undo()
    code, _, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(fresh), "--workers", "1"
    )
    assert code == 0, err
    code, _, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--workers", "1", "--resume"
    )
    assert code == 0, err
    assert_frame_equal(
        by_cell(pl.read_parquet(out / "summary.parquet")), by_cell(summary), check_exact=True
    )
    assert temp_files(out) == []


def test_zero_workers_is_a_usage_error(
    exec_sweep: tuple[Path, sweeps.Sweep, pl.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp, sweep, _ = exec_sweep

    def no_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a sweep with 0 workers ran")

    monkeypatch.setattr(sweep_execute, "_execute", no_work)
    with pytest.raises(UsageError, match="--workers must be at least 1, got 0"):
        run_sweep(sweep, tmp / "zero", workers=0)


# --- the output directory ---------------------------------------------------------------------


def test_summary_has_a_row_per_cell_and_seat_with_the_run_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sweep_file(
        tmp_path,
        """\
name: output
sessions: 30
seed: 4
grid:
  session.bankroll: [400, 4000]
  seats[1]:
  - {strategy: random, name: coin, params: {base: 10}}
  - {strategy: flat, name: flat player, params: {bets: {player: 10}}}
""",
        run=STREAMS_RUN,
    )
    sweep = load_sweep(path)
    out = tmp_path / "out"
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        replaced.append((str(src), str(dst)))
        real_replace(src, dst)

    seen: list[tuple[int, int]] = []

    def progress(cells: int, total: int, hands: int, expected: int) -> None:
        seen.append((cells, len(cell_files(out))))

    monkeypatch.setattr(os, "replace", replace)
    summary = run_sweep(sweep, out, workers=1, progress=progress)
    monkeypatch.undo()

    # one row per cell and seat, a column per varied key, the metrics of `backtest run`
    assert summary.height == 4 * 2
    assert summary.columns[:5] == [
        "cell",
        "cell_id",
        "session.bankroll",
        "seats[1]",
        "seats[1].json",
    ]
    assert set(RUN_METRICS) <= set(summary.columns)
    assert {"table_hands", "seed"} <= set(summary.columns)
    assert sorted(summary["seats[1]"].unique()) == ["coin", "flat player"]
    assert_frame_equal(
        by_cell(pl.read_parquet(out / "summary.parquet")), by_cell(summary), check_exact=True
    )
    for cell in sweep.cells:
        rows = summary.filter(pl.col("cell") == cell.index + 1)
        assert rows["cell_id"].to_list() == [cell.id] * 2
        assert rows["session.bankroll"].to_list() == [dict(cell.values)["session.bankroll"]] * 2
        assert json.loads(rows["seats[1].json"][0]) == dict(cell.values)["seats[1]"]
        # exactly the numbers `backtest run` gives for the cell's config
        alone = engine.run(cell.config, workers=1).summary
        assert_frame_equal(rows.select(alone.columns), alone, check_exact=True)
        assert_frame_equal(
            pl.read_parquet(out / "cells" / f"{cell.id}.parquet"), rows, check_exact=True
        )

    # each cell's file is there as soon as progress counts the cell finished
    assert [n for n, _ in seen] == sorted(n for n, _ in seen) and seen[-1][0] == 4
    assert all(files == cells for cells, files in seen)
    # and it arrives whole: written beside it under a temporary name, then renamed
    cells_dir = str(out / "cells")
    moved = {Path(dst).name: src for src, dst in replaced if Path(dst).parent == Path(cells_dir)}
    assert sorted(moved) == sorted(f"{c.id}.parquet" for c in sweep.cells)
    for name, src in moved.items():
        assert Path(src).parent == Path(cells_dir)
        assert Path(src).name.startswith(f".{name}.") and src.endswith(".tmp")
    assert any(Path(dst) == out / "summary.parquet" for _, dst in replaced)
    assert temp_files(out) == []
    assert sorted(p.name for p in out.iterdir()) == ["cells", "summary.parquet", "sweep.json"]
    meta = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert meta["kind"] == "sweep" and meta["name"] == "output" and meta["cells"] == 4
    assert meta["keys"] == ["session.bankroll", "seats[1]"] and meta["seed"] == 4
    assert meta["spec_hash"] == sweep.spec_hash


# --- kill and resume -------------------------------------------------------------------------

KILL_CELLS = 8
KILL_SWEEP = f"""\
name: kill
seed: 13
sessions: 30000
run:
  shoe: {{decks: 8, cut_card: 14, burn: true}}
  session: {{bankroll: 1000000, max_shoes: 1}}
  table: {{min: 1, max: 1000000}}
  seats:
  - strategy: flat
    name: flat
    params: {{bets: {{banker: 10}}}}
grid:
  seats[0].params.bets.banker: {list(range(1, KILL_CELLS + 1))}
"""


@pytest.mark.slow
def test_a_killed_sweep_resumed_gives_the_same_table(tmp_path: Path) -> None:
    path = write(tmp_path / "kill.yaml", KILL_SWEEP)
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    command = [
        sys.executable,
        "-m",
        "backtest",
        "sweep",
        str(path),
        "--out",
        str(killed),
        "--workers",
        "1",
    ]
    log = tmp_path / "killed.stderr"
    with log.open("w", encoding="utf-8") as stderr:
        proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + 240
        try:
            while proc.poll() is None:
                done = len(cell_files(killed)) if (killed / "cells").is_dir() else 0
                if done >= KILL_CELLS // 2:
                    proc.kill()
                    break
                assert time.monotonic() < deadline, "the sweep finished no cell in 240 s"
                time.sleep(0.01)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=60)
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in cell_files(killed)}
    why = (
        f"{len(before)} of {KILL_CELLS} cells done, exit code {proc.returncode}, "
        f"stderr {log.read_text(encoding='utf-8')[-2000:]!r}"
    )
    assert proc.returncode == -9, f"the sweep ended before it was killed ({why})"
    assert 1 <= len(before) < KILL_CELLS, (
        f"the sweep was not caught halfway ({why}): make its cells bigger (more sessions in "
        "KILL_SWEEP) so that each takes about a second"
    )

    again = backtest(
        "sweep", str(path), "--out", str(killed), "--workers", "1", "--resume", "--format", "csv"
    )
    assert again.returncode == 0, again.stderr
    assert len(cell_files(killed)) == KILL_CELLS
    # the cells finished before the kill were kept, not run again
    assert {
        p.name: (p.stat().st_mtime_ns, p.read_bytes())
        for p in cell_files(killed)
        if p.name in before
    } == before

    reference = run_sweep(load_sweep(path), whole, workers=1)
    resumed = pl.read_parquet(killed / "summary.parquet")
    assert resumed.height == KILL_CELLS
    assert_frame_equal(
        by_cell(resumed), by_cell(pl.read_parquet(whole / "summary.parquet")), check_exact=True
    )
    assert_frame_equal(by_cell(resumed), by_cell(reference), check_exact=True)
    assert_frame_equal(
        by_cell(pl.read_csv(io.StringIO(again.stdout))),
        by_cell(reference),
        check_exact=False,
        check_dtypes=False,
    )


@pytest.mark.parametrize(
    "sig, code, word, executor, group",
    [
        (signal.SIGTERM, 143, "terminated", "local", False),
        (signal.SIGINT, 130, "interrupted", "local", False),
        (signal.SIGINT, 130, "interrupted", "dask", True),
    ],
)
@pytest.mark.slow
def test_a_signal_stops_the_sweep_and_its_workers_at_once(
    tmp_path: Path, sig: int, code: int, word: str, executor: str, group: bool
) -> None:
    """SIGTERM, SIGINT to the main process alone (as `timeout -s INT` sends it), or
    Ctrl-C at a terminal (SIGINT to every process of the group, Dask's workers
    too): one word, the signal's exit code, no worker left behind, and the
    summary holds the cells finished before it."""
    if executor == "dask":
        pytest.importorskip("dask.distributed")
    path = write(tmp_path / "kill.yaml", KILL_SWEEP.replace("sessions: 30000", "sessions: 200000"))
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "backtest",
            "sweep",
            str(path),
            "--out",
            str(out),
            "--workers",
            "2",
            "--executor",
            executor,
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    try:
        deadline = time.monotonic() + 240
        while not ((out / "cells").is_dir() and cell_files(out)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.01)
        workers = subprocess.run(
            ["ps", "--ppid", str(proc.pid), "-o", "pid="], capture_output=True, text=True
        ).stdout.split()
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, err) == (code, word + "\n")
    assert workers, "no worker processes were seen"
    time.sleep(0.5)
    for pid in workers:
        assert (
            not Path(f"/proc/{pid}").exists()
            or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
        ), f"worker {pid} left running"
    done = len(cell_files(out))
    assert 1 <= done < KILL_CELLS
    assert pl.read_parquet(out / "summary.parquet")["cell"].n_unique() == done


@pytest.fixture()
def finished(tmp_path: Path) -> tuple[Path, Path, sweeps.Sweep, pl.DataFrame]:
    """A small sweep of 4 cells, run to the end."""
    path = sweep_file(
        tmp_path,
        "name: small\nsessions: 30\nseed: 2\ngrid:\n"
        "  session.bankroll: [300, 3000]\n  table.max: [500, 5000]\n",
        run=STREAMS_RUN,
    )
    sweep = load_sweep(path)
    out = tmp_path / "out"
    return path, out, sweep, run_sweep(sweep, out, workers=1)


def test_resuming_a_finished_sweep_does_no_work(
    finished: tuple[Path, Path, sweeps.Sweep, pl.DataFrame],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, out, sweep, summary = finished
    before = {p.name: p.stat().st_mtime_ns for p in cell_files(out)}

    def no_work(*args: Any) -> Any:
        raise AssertionError("a finished cell was run again")

    monkeypatch.setattr(engine, "run_task", no_work)
    monkeypatch.setattr(engine, "run_chunk", no_work)
    monkeypatch.setattr(chunks, "run_chunk", no_work)
    again = run_sweep(load_sweep(path), out, workers=1, resume=True)
    assert_frame_equal(by_cell(again), by_cell(summary), check_exact=True)
    assert {p.name: p.stat().st_mtime_ns for p in cell_files(out)} == before
    # and through the command line
    code, stdout, err = cli(
        monkeypatch,
        capsys,
        "sweep",
        str(path),
        "--out",
        str(out),
        "--workers",
        "1",
        "--resume",
        "--format",
        "json",
    )
    assert code == 0, err
    assert len(json.loads(stdout)) == 4 * 2


def test_resume_runs_only_the_missing_cells(
    finished: tuple[Path, Path, sweeps.Sweep, pl.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, out, sweep, summary = finished
    missing = sweep.cells[1]
    (out / "cells" / f"{missing.id}.parquet").unlink()
    broken = sweep.cells[3]  # a torn file is not a finished cell
    (out / "cells" / f"{broken.id}.parquet").write_bytes(b"PAR1 not a parquet file")
    ran: list[int] = []
    real = chunks.run_chunk

    def counting(config: Any, *args: Any, **kwargs: Any) -> Any:
        ran.append(config.seed)
        return real(config, *args, **kwargs)

    monkeypatch.setattr(chunks, "run_chunk", counting)
    # the torn cell is named as it is run again
    with pytest.warns(
        UserWarning,
        match=rf"cells/{broken.id}\.parquet cannot be read .*"
        rf"running cell {broken.index + 1} \(",
    ):
        again = run_sweep(load_sweep(path), out, workers=1, resume=True)
    assert sorted(set(ran)) == sorted({missing.config.seed, broken.config.seed})
    assert_frame_equal(by_cell(again), by_cell(summary), check_exact=True)
    assert temp_files(out) == []


def test_a_finished_sweep_is_printed_again_and_a_part_needs_resume(
    finished: tuple[Path, Path, sweeps.Sweep, pl.DataFrame],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, out, _, summary = finished
    cells = {f: f.stat().st_mtime_ns for f in cell_files(out)}
    # as on a fresh machine: nothing compiles to print a finished sweep, so nothing says so
    from backtest.loop import session_loop

    monkeypatch.setattr(session_loop, "loop_cached", lambda: False)
    code, printed, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--workers", "1", "-f", "csv"
    )
    assert code == 0, err
    assert "compiling" not in err
    assert_frame_equal(
        by_cell(pl.read_csv(printed.encode())),
        by_cell(pl.read_csv(summary.write_csv().encode())),
        check_exact=True,
    )
    assert {f: f.stat().st_mtime_ns for f in cell_files(out)} == cells  # nothing run again
    # a cell missing: the sweep is not finished, and --resume says to finish it
    part = tmp_path / "part"
    shutil.copytree(out, part)
    sorted(cell_files(part))[0].unlink()
    code, _, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(part), "--workers", "1"
    )
    assert one_line_error(code, err, 2) == (
        f"error: --out {part} already holds cells of this sweep: pass --resume to finish it, "
        "or use another directory"
    )
    # another sweep (other values, or other sessions) in that directory: a usage error
    other = sweep_file(
        tmp_path,
        "name: other\nsessions: 30\nseed: 2\ngrid:\n"
        "  session.bankroll: [300, 4000]\n  table.max: [500, 5000]\n",
        "other.yaml",
        STREAMS_RUN,
    )
    for args in (
        [str(other)],
        [str(other), "--resume"],
        [str(path), "--sessions", "31", "--resume"],
    ):
        code, _, err = cli(monkeypatch, capsys, "sweep", *args, "--out", str(out), "--workers", "1")
        message = one_line_error(code, err, 2)
        assert message.startswith(f"error: --out {out} holds a different sweep (small)"), message
    # nothing in the directory was touched
    assert_frame_equal(
        by_cell(pl.read_parquet(out / "summary.parquet")), by_cell(summary), check_exact=True
    )
    assert len(cell_files(out)) == 4


def test_another_sweep_in_out_is_told_by_what_differs(
    finished: tuple[Path, Path, sweeps.Sweep, pl.DataFrame],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same name, other settings: the first setting that differs, both ways."""
    path, out, _, _ = finished
    meta = out / "sweep.json"
    body = (
        "name: small\nsessions: 30\nseed: 2\ngrid:\n"
        "  session.bankroll: [300, 3000]\n  table.max: [500, 5000]\n"
    )
    edited = tmp_path / "edited"
    write(edited / "run.yaml", STREAMS_RUN.replace("win_goal: 200", "win_goal: 300"))
    cases = {
        "sessions: 30 in {meta}, 31 now": [str(path), "--sessions", "31"],
        "seed: 2 in {meta}, 5 now": [body.replace("seed: 2", "seed: 5")],
        "common_shoes: false in {meta}, true now": ["common_shoes: true\n" + body],
        "grid.session.bankroll: [300, 3000] in {meta}, [300, 4000] now": [
            body.replace("3000]", "4000]")
        ],
        'the keys of grid: ["session.bankroll", "table.max"] in {meta}, '
        '["session.bankroll", "shoe.decks"] now': [
            body.replace("table.max: [500, 5000]", "shoe.decks: [6, 8]")
        ],
        # the same keys in another order, the same number in another type: other cells
        'the keys of grid: ["session.bankroll", "table.max"] in {meta}, '
        '["table.max", "session.bankroll"] now': [
            "name: small\nsessions: 30\nseed: 2\ngrid:\n  table.max: [500, 5000]\n"
            "  session.bankroll: [300, 3000]\n"
        ],
        "grid.session.bankroll: [300, 3000] in {meta}, [300.0, 3000] now": [
            body.replace("[300, 3000]", "[300.0, 3000]")
        ],
        "session.win_goal of the run config: 200 in {meta}, 300 now": [
            str(write(edited / "sweep.yaml", "base: run.yaml\n" + body))
        ],
    }
    for i, (what, args) in enumerate(cases.items()):
        if not args[0].endswith(".yaml"):
            args = [str(write(tmp_path / f"other{i}.yaml", "base: run.yaml\n" + args[0]))]
        before = snapshot(out)
        code, _, err = cli(
            monkeypatch, capsys, "sweep", *args, "--out", str(out), "--workers", "1", "--resume"
        )
        assert one_line_error(code, err, 2) == (
            f"error: --out {out} holds a different sweep (small): {what.format(meta=meta)}; "
            f"use another --out, or the settings in {meta} to resume that sweep, or delete "
            f"{out} to start again"
        )
        assert snapshot(out) == before
    # a sweep.json of an earlier version, without the settings: what it holds
    old = json.loads(meta.read_text(encoding="utf-8"))
    del old["settings"]
    meta.write_text(json.dumps(old), encoding="utf-8")
    for args, what in (
        (
            [
                str(
                    write(
                        tmp_path / "seed5.yaml",
                        "base: run.yaml\n" + body.replace("seed: 2", "seed: 5"),
                    )
                )
            ],
            f"seed: 2 in {meta}, 5 now",
        ),
        (
            [str(path), "--sessions", "31"],
            f"what decides its numbers differs, though not in a setting {meta} records (it "
            "was written by another version)",
        ),
    ):
        code, _, err = cli(
            monkeypatch, capsys, "sweep", *args, "--out", str(out), "--workers", "1", "--resume"
        )
        assert one_line_error(code, err, 2).startswith(
            f"error: --out {out} holds a different sweep (small): {what}; use another --out"
        ), err


def test_resume_refuses_when_a_file_the_cells_read_has_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = write(tmp_path / "myrules.yaml", "base: commission\ntie_payout: 8\n")
    shoes = write(tmp_path / "shoes.txt", "BPBBPT\nPPBTB\n")
    strat = write(
        tmp_path / "mine.py",
        "from strategies.base import Strategy\n\n"
        "class Mine(Strategy):\n    name = 'mine'\n\n"
        "    def stakes(self, view):\n        return {'tie': 10}\n",
    )
    path = write(
        tmp_path / "s.yaml",
        "name: s\nsessions: 2\nrun:\n  rules: myrules.yaml\n"
        "  shoes: {file: shoes.txt}\n  seats: [{strategy: mine.py:Mine}]\n"
        "grid:\n  table.max: [500, 1000]\n",
    )
    out = tmp_path / "out"
    run_sweep(load_sweep(path), out, workers=1)
    for changed, edit, _restore in (
        ("the rules", lambda: rules.write_text("base: commission\ntie_payout: 9\n"), None),
        (str(shoes), lambda: shoes.write_text("BPBBPT\nPPBTP\n"), None),
        (str(strat), lambda: strat.write_text(strat.read_text() + "# edited\n"), None),
    ):
        before = {f: f.read_text() for f in (rules, shoes, strat)}
        edit()
        code, _, err = cli(
            monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--workers", "1", "--resume"
        )
        assert one_line_error(code, err, 2) == (
            f"error: --out {out}: {changed} changed since this sweep's cells were run, so new "
            "cells would not be comparable with them; use another directory, or delete it to "
            "start again"
        )
        for f, text in before.items():
            f.write_text(text)
    # as they were: the finished sweep resumes, with nothing to do
    code, _, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--workers", "1", "--resume"
    )
    assert code == 0, err


def test_resume_is_the_same_from_another_folder_or_path(tmp_path: Path) -> None:
    """The inputs are the files themselves, however the sweep's path reaches them."""
    write(tmp_path / "data" / "shoes.txt", "BPBBPT\nPPBTB\n")
    write(
        tmp_path / "strats" / "mine.py",
        "from strategies.base import Strategy\n\n"
        "class Mine(Strategy):\n    name = 'mine'\n\n"
        "    def stakes(self, view):\n        return {'banker': 10}\n",
    )
    rules = write(tmp_path / "rules" / "t.yaml", "base: commission\ndescription: my table\n")
    path = write(
        tmp_path / "sweeps" / "s.yaml",
        "name: s\nsessions: 2\nrun:\n  rules: ../rules/t.yaml\n"
        "  shoes: {file: ../data/shoes.txt, loop: true}\n"
        "  seats: [{strategy: ../strats/mine.py:Mine}]\ngrid:\n  table.max: [500, 1000]\n",
    )
    out = tmp_path / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        run_sweep(load_sweep(Path("sweeps/s.yaml")), out, workers=1)
        (out / "cells" / f"{load_sweep(path).cells[0].id}.parquet").unlink()
        # a rules file's description is no setting of the game
        rules.write_text("base: commission\ndescription: another name\n", encoding="utf-8")
        mp.chdir(tmp_path / "sweeps")
        again = run_sweep(load_sweep(Path("s.yaml")), out, workers=1, resume=True)
    assert again["cell"].n_unique() == 2
    run_sweep(load_sweep(path), out, workers=1, resume=True)


def test_a_sweep_that_finished_no_cell_runs_again_on_a_fixed_strategy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    strat = write(
        tmp_path / "bad.py",
        "from strategies.base import Strategy\n\n"
        "class Bad(Strategy):\n    name = 'bad'\n\n"
        "    def stakes(self, view):\n        raise RuntimeError('oops')\n",
    )
    path = write(
        tmp_path / "s.yaml",
        "name: s\nsessions: 2\nrun:\n"
        "  seats: [{strategy: bad.py:Bad}]\ngrid:\n  table.max: [500, 1000]\n",
    )
    out = tmp_path / "out"
    with pytest.raises(BacktestError, match="oops"):
        run_sweep(load_sweep(path), out, workers=1)
    assert cell_files(out) == []
    strat.write_text(
        strat.read_text().replace("raise RuntimeError('oops')", "return {'banker': 10}")
    )
    assert run_sweep(load_sweep(path), out, workers=1)["cell"].n_unique() == 2


def test_a_sweep_json_without_inputs_resumes(
    finished: tuple[Path, Path, sweeps.Sweep, pl.DataFrame],
) -> None:
    """One written before the inputs were recorded: nothing to compare."""
    path, out, sweep, summary = finished
    meta = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    del meta["inputs"]
    (out / "sweep.json").write_text(json.dumps(meta), encoding="utf-8")
    (out / "cells" / f"{sweep.cells[0].id}.parquet").unlink()
    again = run_sweep(load_sweep(path), out, workers=1, resume=True)
    assert_frame_equal(by_cell(again), by_cell(summary), check_exact=True)
    assert "inputs" in json.loads((out / "sweep.json").read_text(encoding="utf-8"))


def test_a_dask_sweep_runs_outside_the_main_thread(tmp_path: Path) -> None:
    """As a library call from a thread: Ctrl-C is left as it is there."""
    pytest.importorskip("dask.distributed")
    import threading

    path = sweep_file(tmp_path, "sessions: 3\ngrid:\n  table.max: [500, 600]\n")
    got: list[Any] = []
    thread = threading.Thread(
        target=lambda: got.append(
            run_sweep(load_sweep(path), tmp_path / "out", workers=1, executor="dask")
        )
    )
    thread.start()
    thread.join(timeout=120)
    assert len(got) == 1 and got[0]["cell"].n_unique() == 2


def test_a_value_given_twice_is_refused(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, "sessions: 5\ngrid:\n  session.bankroll: [500, 1000, 500]\n")
    with pytest.raises(
        ConfigError,
        match=re.escape(
            "line 4: grid.session.bankroll: 500 (item 3) is the same value as 500 (item 1); "
            "give each value once"
        ),
    ):
        load_sweep(path)
    # equal as numbers: one value, whatever way it is written
    path = sweep_file(tmp_path, "sessions: 5\ngrid:\n  session.bankroll: [500, 500.0]\n")
    with pytest.raises(
        ConfigError,
        match=re.escape("grid.session.bankroll: 500.0 (item 2) is the same value as 500 (item 1)"),
    ):
        load_sweep(path)
    zipped = sweep_file(
        tmp_path,
        "sessions: 5\nzip:\n  session.bankroll: [500, 900, 500]\n  table.max: [600, 600, 600]\n",
        "zip.yaml",
    )
    with pytest.raises(
        ConfigError,
        match=re.escape(
            "cell 3 (session.bankroll=500, table.max=600): the same values as cell 1; a value "
            "given twice in zip.session.bankroll or zip.table.max"
        ),
    ):
        load_sweep(zipped)


def test_an_unreadable_sweep_json_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sweep_file(tmp_path, "sessions: 5\ngrid:\n  table.max: [500, 600]\n")
    out = tmp_path / "out"
    write(out / "sweep.json", "{not json")
    code, _, err = cli(monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--resume")
    message = one_line_error(code, err, 2)
    assert message.startswith(f"error: --out {out}: sweep.json cannot be read ("), message
    assert message.endswith(
        "so which sweep its cells belong to is unknown; use another "
        "directory, or delete it to start again"
    ), message


@pytest.mark.parametrize("value", ["0", "-5", "1000000001"])
def test_sessions_out_of_range_is_a_usage_error_naming_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    path = sweep_file(tmp_path, "sessions: 5\ngrid:\n  table.max: [500, 600]\n")
    code, _, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(tmp_path / "o"), "--sessions", value
    )
    assert one_line_error(code, err, 2) == (
        f"error: --sessions must be from 1 to 1,000,000,000, got {int(value):,}"
    )


def test_an_interrupted_sweep_leaves_every_finished_cell_in_the_summary(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, "sessions: 5\ngrid:\n  table.max: [500, 600, 700, 800]\n")
    out = tmp_path / "out"
    calls = []

    def progress(done: int, total: int, hands: int, expected: int) -> None:
        calls.append(done)
        if len(calls) == 3:  # the start, then two cells run (written or not yet)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(load_sweep(path), out, workers=1, progress=progress)
    summary = pl.read_parquet(out / "summary.parquet")
    assert sorted(summary["cell"].unique().to_list()) == [1, 2] and len(cell_files(out)) == 2


def test_a_file_as_out_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sweep_file(tmp_path, "sessions: 5\ngrid:\n  table.max: [500]\n")
    target = write(tmp_path / "a-file", "x\n")
    code, _, err = cli(monkeypatch, capsys, "sweep", str(path), "--out", str(target))
    assert one_line_error(code, err, 2) == f"error: --out {target} is a file, not a directory"


# --- the printed result ----------------------------------------------------------------------

RUIN_SWEEP = """\
name: ruin
sessions: 400
seed: 17
metric: ruin_rate
grid:
  session.bankroll: [200, 1000, 10000]
"""


def table_rows(text: str, header: str) -> list[dict[str, str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == [header])
    cols = lines[start].split()
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip() or " by " in line:
            break
        rows.append(dict(zip(cols, line.split())))
    return rows


def test_the_printed_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: one table, a line per trend
    path = sweep_file(tmp_path, RUIN_SWEEP, run=RUN.replace("win_goal: 200, ", ""))
    out = tmp_path / "out"
    code, text, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--workers", "1"
    )
    assert code == 0, err
    summary = pl.read_parquet(out / "summary.parquet")
    assert text.startswith(f"ruin: 3 cells, seed 17; results in {out}\n")
    rows = table_rows(text, "cell")
    assert [r["session.bankroll"] for r in rows] == ["200", "1000", "10000"]
    ruin = [float(r["ruin_rate"].rstrip("%")) for r in rows]
    assert ruin == sorted(ruin, reverse=True) and ruin[0] > ruin[-1]
    assert ruin == [
        round(100 * x, 2) for x in summary.sort("ruin_rate", descending=True)["ruin_rate"]
    ]
    trend = [line for line in text.splitlines() if line.startswith("ruin_rate by ")]
    assert len(trend) == 1
    assert re.fullmatch(
        r"ruin_rate by session\.bankroll for martingale: 200: [\d.]+%, "
        r"1000: [\d.]+%, 10000: [\d.]+% "
        r"\(ruin_rate falls as session\.bankroll rises\)",
        trend[0],
    ), trend[0]

    # --sort: another metric, both for the rows and the trend line
    code, text, err = cli(
        monkeypatch,
        capsys,
        "sweep",
        str(path),
        "--out",
        str(out),
        "--workers",
        "1",
        "--resume",
        "--sort",
        "mean_net",
    )
    assert code == 0, err
    rows = table_rows(text, "cell")
    expected = summary.sort("mean_net", descending=True)["session.bankroll"].to_list()
    assert [int(r["session.bankroll"]) for r in rows] == expected
    assert "mean_net" in text.splitlines()[1].split()
    # a metric without a standard error: its means, and no word on a change
    assert [line for line in text.splitlines() if " by " in line] == [
        "mean_net by session.bankroll for martingale: "
        + ", ".join(
            f"{v}: {x:,.4g}"
            for v, x in summary.sort("cell").select("session.bankroll", "mean_net").rows()
        )
    ]

    code, text, err = cli(
        monkeypatch,
        capsys,
        "sweep",
        str(path),
        "--out",
        str(out),
        "--workers",
        "1",
        "--resume",
        "--format",
        "json",
    )
    assert code == 0, err
    data = json.loads(text)
    assert len(data) == 3 and {"cell", "session.bankroll", "seat", "edge", "ruin_rate"} <= set(
        data[0]
    )
    assert sorted(d["ruin_rate"] for d in data) == sorted(summary["ruin_rate"])

    code, text, err = cli(
        monkeypatch,
        capsys,
        "sweep",
        str(path),
        "--out",
        str(out),
        "--workers",
        "1",
        "--resume",
        "--format",
        "csv",
    )
    assert code == 0, err
    frame = pl.read_csv(io.StringIO(text))
    assert frame.columns == summary.columns and frame.height == 3
    assert frame.sort("cell")["ruin_rate"].to_list() == pytest.approx(
        summary.sort("cell")["ruin_rate"].to_list(), abs=1e-12
    )

    code, text, err = cli(
        monkeypatch, capsys, "sweep", str(path), "--out", str(out), "--resume", "--sort", "ruin"
    )
    assert one_line_error(code, err, 2).startswith("error: --sort: unknown metric 'ruin'")


def made_summary(
    cells: Sequence[dict[str, Any]],
    seats: Sequence[str],
    edges: Sequence[Sequence[tuple[float, float]]],
    sessions: int = 10_000,
    ruin: Sequence[Sequence[float]] | None = None,
) -> pl.DataFrame:
    """A sweep's summary as `run_sweep` returns it: the cells' varied values,
    each seat's (edge, its standard error), and ruin rates if given."""
    from backtest.run.intervals import t95

    t = float(t95([sessions])[0])
    rows = []
    for c, (values, by_seat) in enumerate(zip(cells, edges)):
        for s, (seat, (edge, se)) in enumerate(zip(seats, by_seat)):
            rows.append(
                {
                    "cell": c + 1,
                    **values,
                    "seat": seat,
                    "sessions": sessions,
                    "edge": edge,
                    "edge_ci_low": edge - t * se,
                    "edge_ci_high": edge + t * se,
                    "ruin_rate": ruin[c][s] if ruin else 0.0,
                    "median_net": 10.0 * c,
                    "seed": 1000 + c,
                }
            )
    return pl.DataFrame(rows).with_columns(pl.col("seat").cast(pl.Categorical))


def test_trends_are_per_seat_and_state_only_a_change_beyond_the_noise() -> None:
    rules = ["commission", "no-commission", "ez"]
    seats = ["flat banker", "flat player", "flat tie"]
    summary = made_summary(
        [{"rules": r} for r in rules],
        seats,
        [
            [(-0.0106, 0.0005), (-0.0124, 0.005), (-0.1436, 0.01)],
            [(-0.0146, 0.0005), (-0.0130, 0.005), (-0.1436, 0.01)],
            [(-0.0102, 0.0005), (-0.0118, 0.005), (-0.1436, 0.01)],
        ],
    )
    # banker's edge moves far more than its noise; player's within it; tie's not at all
    assert sweeps.trends(summary, ["rules"], "edge") == [
        "edge by rules for flat banker: commission: -1.06%, no-commission: -1.46%, "
        "ez: -1.02% (edge changes with rules beyond the noise)",
        "edge by rules: no change beyond the noise for flat player, flat tie",
    ]


def test_a_trend_in_numbers_needs_steps_beyond_the_noise() -> None:
    bankrolls = [{"session.bankroll": b} for b in (500, 1000, 2000)]
    # rising, but each step within the noise: no trend (once said to rise)
    noisy = made_summary(
        bankrolls, ["m"], [[(-0.010, 0.004)], [(-0.008, 0.004)], [(-0.006, 0.004)]]
    )
    assert sweeps.trends(noisy, ["session.bankroll"], "edge") == [
        "edge by session.bankroll: no change beyond the noise for m"
    ]
    steady = made_summary(
        bankrolls, ["m"], [[(-0.030, 0.001)], [(-0.020, 0.001)], [(-0.010, 0.001)]]
    )
    assert sweeps.trends(steady, ["session.bankroll"], "edge") == [
        "edge by session.bankroll for m: 500: -3.00%, 1000: -2.00%, 2000: -1.00% "
        "(edge rises with session.bankroll)"
    ]
    # listed as written, read in the order of the numbers
    hump = made_summary(
        list(reversed(bankrolls)), ["m"], [[(-0.030, 0.001)], [(-0.010, 0.001)], [(-0.030, 0.001)]]
    )
    assert sweeps.trends(hump, ["session.bankroll"], "edge") == [
        "edge by session.bankroll for m: 2000: -3.00%, 1000: -1.00%, 500: -3.00% "
        "(edge changes with session.bankroll beyond the noise, not steadily)"
    ]
    # a steady slope beyond the noise, with a step back within it: not monotone,
    # so no rise is claimed
    back = made_summary(bankrolls, ["m"], [[(0.2271, 0.01)], [(0.2844, 0.01)], [(0.2676, 0.01)]])
    assert sweeps.trends(back, ["session.bankroll"], "edge") == [
        "edge by session.bankroll for m: 500: 22.71%, 1000: 28.44%, 2000: 26.76% "
        "(edge changes with session.bankroll beyond the noise, not monotone across the cells)"
    ]
    # ten small steps, each within the noise, that add up: a rise (a chi-squared test
    # of the means would miss it; the slope against the values' order does not)
    small = made_summary(
        [{"session.bankroll": b} for b in range(100, 1100, 100)],
        ["m"],
        [[(-0.02 + 0.0005 * i, 0.001)] for i in range(10)],
    )
    assert sweeps.trends(small, ["session.bankroll"], "edge")[0].endswith(
        "1000: -1.55% (edge rises with session.bankroll)"
    )
    # a z is null for a cell without spread: that cell neither counts nor hides the rest
    zs = made_summary(bankrolls, ["m"], [[(0, 0.001)]] * 3).with_columns(
        pl.Series("z", [None, -4.0, 4.0])
    )
    assert sweeps.trends(zs, ["session.bankroll"], "z") == [
        "z by session.bankroll for m: 500: n/a, 1000: -4, 2000: 4 (z rises with session.bankroll)"
    ]
    # a rate's noise is binomial: the same rates are a fall in 4,000 sessions, not in 40
    for sessions, said in ((4000, "(ruin_rate falls as session.bankroll rises)"), (40, None)):
        rates = made_summary(
            bankrolls, ["m"], [[(0, 0.01)]] * 3, sessions=sessions, ruin=[[0.30], [0.25], [0.20]]
        )
        lines = sweeps.trends(rates, ["session.bankroll"], "ruin_rate")
        assert lines == (
            [f"ruin_rate by session.bankroll for m: 500: 30.00%, 1000: 25.00%, 2000: 20.00% {said}"]
            if said
            else ["ruin_rate by session.bankroll: no change beyond the noise for m"]
        )


def test_a_seat_key_is_read_for_its_seat_and_zipped_keys_together() -> None:
    # seats[1].params.base sets seat 1 only: seat 0 (noise apart) has no line
    bases = [{"seats[1].params.base": b} for b in (5, 10)]
    summary = made_summary(
        bases,
        ["flat", "martingale"],
        [[(-0.0106, 0.0001), (-0.030, 0.001)], [(-0.0200, 0.0001), (-0.010, 0.001)]],
    )
    assert sweeps.trends(summary, ["seats[1].params.base"], "edge") == [
        "edge by seats[1].params.base for martingale: 5: -3.00%, 10: -1.00% "
        "(edge rises with seats[1].params.base)"
    ]
    # rules and shoe.decks zipped, crossed with table.max: the zip's change is the zip's
    cells = [
        {"rules": r, "shoe.decks": d, "table.max": m}
        for r, d in (("commission", 8), ("ez", 1))
        for m in (500, 1000)
    ]
    summary = made_summary(
        cells,
        ["b"],
        [[(-0.0106, 0.0005)], [(-0.0106, 0.0005)], [(-0.0200, 0.0005)], [(-0.0200, 0.0005)]],
    )
    assert sweeps.trends(summary, ["table.max", "rules", "shoe.decks"], "edge") == [
        "edge by table.max: no change beyond the noise for b",
        "edge by rules and shoe.decks for b: commission & 8: -1.06%, ez & 1: -2.00% (it "
        "changes beyond the noise, but rules and shoe.decks vary together, so either may be "
        "the cause)",
    ]
    # a varied seed makes replications, not a trend; a metric without a standard
    # error gets its means and no word on them
    seeds = made_summary([{"seed": 4}, {"seed": 9}], ["b"], [[(-0.01, 0.001)], [(-0.05, 0.001)]])
    assert sweeps.trends(seeds, ["seed"], "edge") == []
    assert sweeps.trends(summary, ["table.max"], "median_net") == [
        "median_net by table.max for b: 500: 10, 1000: 20"
    ]


# --- the ready sweeps -------------------------------------------------------------------------


@pytest.mark.parametrize("path", READY_SWEEPS, ids=[p.stem for p in READY_SWEEPS])
def test_ready_sweeps_load_and_run(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = load_sweep(path)
    assert sweep.cells and sweep.keys
    seats = {c.index: len(c.config.seats) for c in sweep.cells}
    out = tmp_path / "out"
    code, text, err = cli(
        monkeypatch,
        capsys,
        "sweep",
        str(path),
        "--out",
        str(out),
        "--sessions",
        "20",
        "--workers",
        "1",
    )
    assert code == 0, err
    assert text.startswith(f"{sweep.name}: {len(sweep.cells)} cells, seed {sweep.seed}")
    summary = pl.read_parquet(out / "summary.parquet")
    assert summary.height == sum(seats.values())
    assert set(summary["sessions"]) == {20}
    assert set(sweep.keys) <= set(summary.columns)
    assert len(cell_files(out)) == len(sweep.cells) and temp_files(out) == []


def test_ready_sweeps_are_found() -> None:
    assert {p.stem for p in READY_SWEEPS} >= {"martingale-ruin", "progressions", "rules-and-decks"}


def test_checking_many_cells_reports_progress_and_shares_the_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the cells share is checked once; each cell still gets its own
    values, and a long check says how far it is."""
    monkeypatch.setattr(sweep_spec, "PROGRESS_CELLS", 10)
    path = sweep_file(
        tmp_path,
        "sessions: 5\ngrid:\n  session.bankroll: [500, 600, 700]\n"
        "  table.max: [" + ", ".join(str(500 + i) for i in range(10)) + "]\n",
    )
    calls: list[tuple[int, int]] = []
    sweep = load_sweep(path, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(10, 30), (20, 30), (30, 30)]
    assert [(c.config.session.bankroll, c.config.limits.maximum[Bet.TIE]) for c in sweep.cells] == [
        (b, float(m)) for b in (500, 600, 700) for m in range(500, 510)
    ]
    assert len({id(c.config.seats) for c in sweep.cells}) == 1  # checked once, shared

"""Every built-in asked through the Strategy API (`force_python`: its
functions as plain Python, called back from the session loop) plays as it
does compiled into the loop: the same ledger and frames, to the bit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import backtest_process
from scenarios import SCENARIOS

from backtest.run import engine
from backtest.run.config import RunConfig, parse_config
from strategies.registry import BUILTIN_NAMES

BUILTINS = list(BUILTIN_NAMES)


def _config(scenario: str, seed: int) -> RunConfig:
    session, table, params = SCENARIOS[scenario]
    shoe: dict[str, Any] = {"decks": 8}
    if scenario == "stop-loss-win-goal-hands":  # and a burnt, cut shoe of 6 decks
        shoe = {"decks": 6, "burn": True, "cut": "random", "cut_card": 60}
    return parse_config(
        {
            "seed": seed,
            "sessions": 3,
            "shoe": shoe,
            "session": session,
            "table": table,
            "seats": [{"strategy": name, "params": dict(params)} for name in BUILTINS],
        },
        source=f"{scenario}.yaml",
    )


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_built_in_in_python_plays_as_compiled(scenario: str, seed: int) -> None:
    _played_alike(_config(scenario, seed))


def _played_alike(config: RunConfig) -> None:
    """`config`'s run with every seat asked through the Strategy API gives
    the frames it gives with the built-ins compiled into the loop."""
    python = engine.run(config, ledger=True, workers=1, force_python=True)
    compiled = engine.run(config, ledger=True, workers=1)
    assert python.hands == compiled.hands > 0
    for name in ("ledger", "sessions", "summary"):
        a, b = getattr(python, name), getattr(compiled, name)
        differ = [
            seat
            for seat in BUILTINS
            if not a.filter(pl.col("seat") == seat).equals(b.filter(pl.col("seat") == seat))
        ]
        assert differ == [], (name, differ)
    assert python.comparisons is not None and python.comparisons.equals(compiled.comparisons)


DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize(
    "file",
    [
        "generated-8deck-seed1.txt",
        "cards-8deck-seed1-shoe1.csv",
        "outcomes-8deck-seed1-shoe1.csv",
        "roads-8deck-seed1.txt",
        "live-table-shoe-state.json",
        "game-results.jsonl",
    ],
)
def test_a_built_in_in_python_plays_recorded_shoes_as_compiled(file: str) -> None:
    """A shoe file's run, card by card or outcome by outcome: the same
    frames either way (the counters only where the file has the cards)."""
    cards = not file.startswith(("outcomes", "roads", "live", "game"))
    config = parse_config(
        {
            "seed": 3,
            "shoes": {"file": str(DATA / file)},
            "session": {"bankroll": 300, "win_goal": 60},
            "table": {"min": 1, "max": 100},
            "seats": [
                {"strategy": name}
                for name, cls in BUILTIN_NAMES.items()
                if cards or not cls.uses_cards
            ],
        },
        source="recorded.yaml",
    )
    _played_alike(config)


def test_a_run_says_it_compiles_only_when_it_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """`compiling` (the command line's note that the table compiles) is called
    as a run with a built-in seat starts while the loop is not cached, never
    once it is cached."""
    config = _config("max-reset-stop", 1)
    from backtest.loop import session_loop

    said: list[str] = []
    monkeypatch.setattr(session_loop, "loop_cached", lambda: False)
    engine.run(config, compiling=lambda: said.append("compiling"))
    assert said == ["compiling"]
    monkeypatch.setattr(session_loop, "loop_cached", lambda: True)
    engine.run(config, compiling=lambda: said.append("compiling"))
    assert said == ["compiling"]


SMALL_SWEEP = """\
name: small
seed: 5
sessions: 1500
run:
  shoe: {decks: 8}
  session: {bankroll: 1000, win_goal: 200}
  table: {min: 5, max: 1000}
  seats:
    - strategy: martingale
      params: {bet: banker, base: 10}
grid:
  seats[0].params.base: [5, 25]
"""


@pytest.mark.slow
def test_with_numba_s_compiler_off_runs_and_sweeps_play_in_python(tmp_path: Path) -> None:
    """NUMBA_DISABLE_JIT=1, numba's switch for debugging: every kernel runs
    in its plain-Python form and every seat in the Python loop, with the
    numbers of a compiled run, without a traceback or a warning."""
    import os

    (tmp_path / "sweep.yaml").write_text(SMALL_SWEEP, encoding="utf-8")
    repo = Path(__file__).resolve().parents[2]
    commands = {
        "run": ["run", "configs/verdict.yaml", "--sessions", "1000", "-f", "json"],
        "sweep": ["sweep", str(tmp_path / "sweep.yaml"), "-f", "json", "--out"],
    }
    for name, args in commands.items():
        outputs = []
        for off in ("1", "0"):
            env = {**os.environ, "NUMBA_DISABLE_JIT": off}
            out = [str(tmp_path / f"out-{off}")] if name == "sweep" else []
            done = backtest_process([*args, *out], cwd=repo, env=env)
            assert done.returncode == 0, done.stderr
            if off == "1":
                assert "Traceback" not in done.stderr and "warning" not in done.stderr, name
            outputs.append(done.stdout)
        assert outputs[0] == outputs[1], name

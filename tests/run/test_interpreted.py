"""Small runs played as plain Python (`engine.plays_interpreted`): the same
deal, the same ledger and the same frames as the compiled run, to the bit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import backtest_process
from scenarios import SCENARIOS

from backtest.loop import python_loop
from backtest.run import engine
from backtest.run.config import RunConfig, parse_config
from strategies.registry import BUILTIN_NAMES

#: every built-in but those that count cards (their exact EVs are compiled code)
PLAIN = [name for name, cls in BUILTIN_NAMES.items() if not cls.uses_cards]


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
            "seats": [{"strategy": name, "params": dict(params)} for name in PLAIN],
        },
        source=f"{scenario}.yaml",
    )


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_small_run_in_python_is_the_compiled_run(
    scenario: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _played_alike(_config(scenario, seed), monkeypatch)


def _played_alike(config: RunConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    """`config`'s run, small, is played as plain Python (in a fresh process),
    and gives the frames it gives compiled, seat by seat."""
    monkeypatch.setattr(engine, "_loop_loaded", lambda: False)  # (as in a fresh process)
    played: list[str] = []
    run_python = python_loop.run_python

    def spy(*args: Any, **kwargs: Any) -> Any:
        played.append("python")
        return run_python(*args, **kwargs)

    monkeypatch.setattr(python_loop, "run_python", spy)
    plain = engine.run(config, ledger=True)
    assert played, "the small run was not played in Python"
    played.clear()
    monkeypatch.setattr(engine, "INTERPRETED_HANDS", 0)
    compiled = engine.run(config, ledger=True)
    assert not played, "the run was not compiled"
    assert plain.hands == compiled.hands > 0
    for name in ("ledger", "sessions", "summary"):
        a, b = getattr(plain, name), getattr(compiled, name)
        differ = [
            seat
            for seat in PLAIN
            if not a.filter(pl.col("seat") == seat).equals(b.filter(pl.col("seat") == seat))
        ]
        assert differ == [], (name, differ)
    assert plain.comparisons is not None and plain.comparisons.equals(compiled.comparisons)


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
def test_a_small_run_of_recorded_shoes_in_python_is_the_compiled_run(
    file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shoe file's run, card by card or outcome by outcome, plays as plain
    Python too (a user's first look at a file of theirs compiles nothing):
    the same frames as compiled."""
    config = parse_config(
        {
            "seed": 3,
            "shoes": {"file": str(DATA / file)},
            "session": {"bankroll": 300, "win_goal": 60},
            "table": {"min": 1, "max": 100},
            "seats": [{"strategy": name} for name in PLAIN],
        },
        source="recorded.yaml",
    )
    _played_alike(config, monkeypatch)


def test_what_plays_in_python() -> None:
    """Small runs of built-ins; never a counter (its EVs are compiled code), a
    user's compiled class (the compiled loop is where its code is checked), or
    a large run."""
    config = _config("max-reset-stop", 1)
    strategies = engine.build_strategies(config)
    assert engine.plays_interpreted(strategies, 100)
    assert not engine.plays_interpreted(strategies, engine.INTERPRETED_HANDS)
    counter = parse_config(
        {"sessions": 2, "shoe": {"decks": 8}, "seats": [{"strategy": "counter"}]}, source="c"
    )
    assert not engine.plays_interpreted(engine.build_strategies(counter), 100)

    class MyFlat(type(strategies[0])):  # type: ignore[misc]
        """A user's subclass of a built-in: its functions may differ."""

    assert not engine.plays_interpreted([MyFlat()], 100)


def test_a_run_says_it_compiles_only_when_it_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """`compiling` (the command line's note that the table compiles) is called
    as a compiled run with a built-in seat starts while the loop is not
    cached, never for a run played in Python nor once it is cached."""
    config = _config("max-reset-stop", 1)
    monkeypatch.setattr(engine, "_loop_loaded", lambda: False)  # (as in a fresh process)
    from backtest.loop import session_loop

    monkeypatch.setattr(session_loop, "loop_cached", lambda: False)
    said: list[str] = []
    engine.run(config, compiling=lambda: said.append("compiling"))
    assert said == []  # small: played in Python
    monkeypatch.setattr(engine, "INTERPRETED_HANDS", 0)
    engine.run(config, compiling=lambda: said.append("compiling"))
    assert said == ["compiling"]
    monkeypatch.setattr(session_loop, "loop_cached", lambda: True)
    engine.run(config, compiling=lambda: said.append("compiling"))
    assert said == ["compiling"]


def test_a_process_with_the_compiled_loop_plays_small_runs_compiled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once the compiled loop is loaded (a run before, say, in a notebook's
    loop of runs), a small run is faster compiled, and is."""
    config = _config("max-reset-stop", 1)
    monkeypatch.setattr(engine, "INTERPRETED_HANDS", 0)
    engine.run(config)  # compiled: the loop is loaded now
    monkeypatch.undo()
    played: list[str] = []
    run_python = python_loop.run_python

    def spy(*args: Any, **kwargs: Any) -> Any:
        played.append("python")
        return run_python(*args, **kwargs)

    monkeypatch.setattr(python_loop, "run_python", spy)
    engine.run(config)
    assert played == []


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

"""Small runs played as plain Python (`engine.plays_interpreted`): the same
deal, the same ledger and the same frames as the compiled run, to the bit."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
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
    config = _config(scenario, seed)
    monkeypatch.setattr(engine, "_loop_loaded", lambda config: False)  # (as in a fresh process)
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
    assert plain.hands == compiled.hands
    for name in ("ledger", "sessions", "summary"):
        a, b = getattr(plain, name), getattr(compiled, name)
        differ = [
            seat
            for seat in PLAIN
            if not a.filter(pl.col("seat") == seat).equals(b.filter(pl.col("seat") == seat))
        ]
        assert differ == [], (name, differ)


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
    as a compiled run starts the compiler, never for a run played in Python."""
    config = _config("max-reset-stop", 1)
    monkeypatch.setattr(engine, "_loop_loaded", lambda config: False)  # (as in a fresh process)
    from backtest.loop import session_loop

    monkeypatch.setattr(session_loop, "own_ready", lambda kind: False)  # (no own loops either)
    said: list[bool] = []
    engine.run(config, compiling=lambda: said.append(True))
    assert said == []
    monkeypatch.setattr(engine, "INTERPRETED_HANDS", 0)
    engine.run(config, compiling=lambda: said.append(True))
    assert said == [True]


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

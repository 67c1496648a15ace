"""A built-in's own form of the session loop: the same numbers as the shared
loop and as Python, to the cent; compiled when asked, or when a run is long
enough to pay for it; used wherever it is compiled.
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from backtest.cli import app
from backtest.loop import session_loop
from backtest.run import engine, own_loops
from backtest.run.config import parse_config
from strategies import compiled, dispatch
from strategies.registry import BUILTIN_NAMES

#: the README main job's strategies and a counter (whose own form keeps its EV code)
QUICK = ("flat", "martingale", "follow-the-shoe", "counter")


def _config(names: list[str], seed: int, bankroll: int, table_min: int, span: int, **session: Any):
    return parse_config(
        {
            "seed": seed,
            "sessions": 5,
            "shoe": {"decks": 8},
            "session": {"bankroll": bankroll, "max_shoes": 1, **session},
            "table": {"min": table_min, "max": table_min * span},
            "seats": [{"strategy": n, "params": {"on_max": "cap"}} for n in names],
        },
        source="own.yaml",
    )


def _forms(cfg: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[engine.RunResult, ...]:
    """The run in each built-in's own loop, in the shared loop, and in Python."""
    kinds = own_loops.builtin_kinds(cfg)
    session_loop.compile_own(kinds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stakes off the table's limits: what these are for
        own = engine.run(cfg, ledger=True, workers=1)
        with monkeypatch.context() as m:
            m.setattr(session_loop, "own_ready", lambda kind: False)
            shared = engine.run(cfg, ledger=True, workers=1)
        python = engine.run(cfg, ledger=True, workers=1, force_python=True)
    return own, shared, python


def _same(results: tuple[engine.RunResult, ...]) -> None:
    first = results[0]
    assert first.ledger is not None and first.ledger.height > 0
    for other in results[1:]:
        assert other.ledger is not None
        assert first.ledger.equals(other.ledger)
        assert first.sessions.equals(other.sessions)  # type: ignore[arg-type]
        assert first.summary.equals(other.summary)


#: a table: the seed, the bankroll, the limits and a session's length
tables = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**32 - 1),
        "bankroll": st.integers(20, 3000),
        "table_min": st.integers(1, 20),
        "span": st.integers(1, 60),
        "max_hands": st.one_of(st.none(), st.integers(1, 150)),
    }
)


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=tables)
def test_a_built_ins_own_loop_plays_as_the_shared_loop_and_python(
    monkeypatch: pytest.MonkeyPatch, table: dict[str, Any]
) -> None:
    _same(_forms(_config(list(QUICK), **table), monkeypatch))


@pytest.mark.slow
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=tables)
def test_every_built_ins_own_loop_plays_as_the_shared_loop_and_python(
    monkeypatch: pytest.MonkeyPatch, table: dict[str, Any]
) -> None:
    _same(_forms(_config(list(BUILTIN_NAMES), **table), monkeypatch))


def test_a_run_uses_a_built_ins_own_loop_where_it_is_compiled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once compiled (or loaded: the cache may hold it already), in one
    signature a built-in (no compile for a run's arguments), and found again
    in numba's cache on disk by a new process's dispatcher."""
    kind = compiled.BUILTINS.index(BUILTIN_NAMES["martingale"])
    session_loop.compile_own([kind])
    assert session_loop.loop_loaded(f"own{kind}")
    strat = BUILTIN_NAMES["martingale"]()
    fns = session_loop.functions_for(strat)
    assert isinstance(fns, dispatch.Own) and fns.kind == kind
    ran = []
    run_sessions = session_loop.run_sessions
    monkeypatch.setattr(
        session_loop, "run_sessions", lambda *a: ran.append(a[1]) or run_sessions(*a)
    )
    # a small run: played compiled, for the loop it runs is loaded already
    engine.run(_config(["martingale"], 1, 1000, 1, 100), workers=1)
    assert [(type(f), getattr(f, "kind", None)) for f in ran] == [(dispatch.Own, kind)]
    own = session_loop._compiled_loop(f"own{kind}")
    assert [sig[1] for sig in own.signatures] == [dispatch.OwnType(kind)]
    session_loop._compiled_loop.cache_clear()
    session_loop._OWN_FOUND.clear()
    session_loop._OWN_MISSING.clear()
    try:
        assert not session_loop._compiled_loop(f"own{kind}").signatures
        assert session_loop.own_ready(kind)  # from the index on disk
    finally:
        session_loop._compiled_loop.cache_clear()
    # each form caches in files of its own (two processes compiling two forms
    # at once never rewrite one index)
    forms = ["shared", "user", f"own{kind}", f"own{kind + 1}"]
    paths = {session_loop._compiled_loop(f)._cache._cache_file._index_path for f in forms}
    assert len(paths) == len(forms)
    # a user's class (a subclass of a built-in too) runs its own functions
    sub = type("Sub", (BUILTIN_NAMES["martingale"],), {"name": "sub"})
    assert not isinstance(session_loop.functions_for(sub()), dispatch.Own)


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Every own form counted as not compiled; what `compile_own` is asked."""
    asked: list[list[int]] = []
    monkeypatch.setattr(session_loop, "own_ready", lambda kind: False)
    monkeypatch.setattr(session_loop, "compile_own", lambda kinds: asked.append(list(kinds)))
    return asked


def test_own_loops_are_compiled_when_asked_or_when_a_run_pays_for_them(
    compiles: list[list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    flat, mart = (compiled.BUILTINS.index(BUILTIN_NAMES[n]) for n in ("flat", "martingale"))
    cfg = _config(["martingale", "flat", "martingale"], 1, 1000, 1, 100)
    assert own_loops.kinds_to_compile([(cfg, 10**6)], asked=True) == [flat, mart]
    assert own_loops.kinds_to_compile([(cfg, 10**6)], asked=False) == []
    # hands summed over a kind's seats (and a sweep's cells)
    n = own_loops.OWN_LOOP_HANDS // 2
    assert own_loops.kinds_to_compile([(cfg, n)], asked=False) == [mart]
    assert own_loops.kinds_to_compile([(cfg, n), (cfg, n)], asked=False) == [flat, mart]
    # a long run compiles them before its first chunk; a shorter one, compiled too
    # (not so short as to be played as Python), does not
    monkeypatch.setattr(own_loops, "OWN_LOOP_HANDS", 80_000)
    monkeypatch.setattr(engine, "INTERPRETED_HANDS", 60_000)
    short = engine.run(_config(["martingale", "flat"], 1, 10**6, 1, 100), sessions=600, workers=1)
    assert compiles == [] and short.hands > engine.INTERPRETED_HANDS / 2
    engine.run(_config(["martingale", "flat"], 1, 10**6, 1, 100), sessions=1500, workers=1)
    assert compiles == [[flat, mart]]


def test_run_own_loops_says_what_it_compiles(compiles: list[list[int]], tmp_path: Any) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "seed: 1\nsessions: 3\nshoe: {decks: 8}\nsession: {bankroll: 1000, max_shoes: 1}\n"
        "seats:\n  - {strategy: paroli}\n  - {strategy: flat}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["run", str(config), "--own-loops", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert "compiling the own loop of flat, paroli (once, about " in result.stderr
    assert len(compiles) == 1
    out = tmp_path / "sweep-out"
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        f"base: {config}\nsessions: 2\ngrid:\n  session.bankroll: [500, 1000]\n", encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["sweep", str(sweep), "--out", str(out), "--own-loops"])
    assert result.exit_code == 0, result.output
    assert "compiling the own loop of flat, paroli" in result.stderr
    assert pl.read_parquet(out / "summary.parquet").height == 4  # 2 cells, 2 seats


def test_the_loops_are_compiled_with_their_arrays_apart_where_that_is_faster() -> None:
    """The shared loop, and a built-in's own form unless its class says
    otherwise (`arrays_apart`), are compiled with numba's noalias flag; a
    user's form is not."""
    from numba.core.compiler import Flags

    def apart(form: str) -> bool:
        return bool(session_loop._compiled_loop(form)._compiler._customize_flags(Flags()).noalias)

    assert apart("shared") and not apart("user")
    for kind, cls in enumerate(compiled.BUILTINS):
        assert apart(f"own{kind}") == cls.arrays_apart
    assert (
        not BUILTIN_NAMES["oscars-grind"].arrays_apart and BUILTIN_NAMES["martingale"].arrays_apart
    )

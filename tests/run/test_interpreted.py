"""Small runs played as plain Python (`engine.plays_interpreted`): the same
deal, the same ledger and the same frames as the compiled run, to the bit."""

from __future__ import annotations

import subprocess
import sys
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
    as a compiled run starts the compiler, never for a run played in Python;
    with whether the run plays in Python meanwhile."""
    config = _config("max-reset-stop", 1)
    monkeypatch.setattr(engine, "_loop_loaded", lambda config: False)  # (as in a fresh process)
    from backtest.loop import session_loop

    monkeypatch.setattr(session_loop, "own_ready", lambda kind: False)  # (no own loops either)
    monkeypatch.setattr(session_loop, "compile_in_background", lambda then=None: True)
    monkeypatch.setattr(session_loop, "compiling", lambda: False)  # (done at once)
    said: list[bool] = []
    engine.run(config, compiling=said.append)
    assert said == []
    monkeypatch.setattr(engine, "INTERPRETED_HANDS", 0)
    engine.run(config, compiling=said.append)
    engine.run(config, compiling=said.append, python_meanwhile=True)
    assert said == [False, True]
    # nor when no compile is under way (the loop cached)
    monkeypatch.setattr(session_loop, "compile_in_background", lambda then=None: False)
    monkeypatch.setattr(session_loop, "loop_cached", lambda: True)
    engine.run(config, compiling=said.append, python_meanwhile=True)
    assert said == [False, True]
    # not cached, and no child could start: this process compiles it, and says so
    monkeypatch.setattr(session_loop, "loop_cached", lambda: False)
    engine.run(config, compiling=said.append, python_meanwhile=True)
    assert said == [False, True, False]


def _frames(result: engine.RunResult) -> dict[str, Any]:
    return {
        "ledger": result.ledger,
        "sessions": result.sessions,
        "summary": result.summary,
        "paths": result.paths,
        "comparisons": result.comparisons,
    }


@pytest.mark.parametrize(
    ("compiling_for", "workers", "spill", "long"),
    [
        (0, 1, False, False),
        (3, 1, False, False),
        (3, 2, False, False),
        (3, 1, True, False),
        (3, 1, False, True),
        (10**6, None, False, False),
    ],
)
def test_a_run_plays_python_while_the_loop_compiles_with_the_same_numbers(
    compiling_for: int,
    workers: int | None,
    spill: bool,
    long: bool,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """`python_meanwhile`: while the loop compiles (`compiling()` true for its
    first `compiling_for` checks), the run plays chunks of a few sessions in
    plain Python; the rest compiled, in this process or in others: the same
    ledger, sessions, summary, paths and comparisons as a run compiled
    throughout. The compiling child is given a session of the run to warm;
    a `long` run (more than `PYTHON_FIRST_HANDS`) compiles the deal and
    pricing here first, and gives the child nothing more to do."""
    from backtest.loop import session_loop
    from backtest.run import chunks

    config = _config("stop-loss-win-goal-hands", 2)
    monkeypatch.setattr(engine, "INTERPRETED_HANDS", 0)  # nothing small enough to play whole
    compiled = engine.run(config, sessions=12, ledger=True, paths=3, workers=1)
    monkeypatch.setattr(engine, "_loop_loaded", lambda config: False)  # (as in a fresh process)
    monkeypatch.setattr(session_loop, "own_ready", lambda kind: False)
    warmed: list[Any] = []

    def compile_in_background(then: Any = None) -> bool:
        warmed.append(then)
        return True

    checks = iter(range(10**9))
    monkeypatch.setattr(session_loop, "compile_in_background", compile_in_background)
    monkeypatch.setattr(session_loop, "compiling", lambda: next(checks) < compiling_for)
    # chunks of two sessions in Python
    hands = engine.prepare(config)[1] * len(config.seats)
    monkeypatch.setattr(engine, "MEANWHILE_HANDS", 2 * hands)
    if long:
        monkeypatch.setattr(engine, "PYTHON_FIRST_HANDS", 0)
    ran: list[tuple[int, int, bool]] = []
    run_chunk = chunks.run_chunk

    def spy(config: Any, strategies: Any, lo: int, hi: int, *args: Any) -> Any:
        ran.append((lo, hi, bool(args[1]) if len(args) > 1 else False))
        return run_chunk(config, strategies, lo, hi, *args)

    monkeypatch.setattr(engine, "run_chunk", spy)
    said: list[bool] = []
    both = engine.run(
        config,
        sessions=12,
        ledger=True,
        paths=3,
        workers=workers,
        compiling=said.append,
        python_meanwhile=True,
        spill=tmp_path if spill else None,
    )
    if spill:  # each block of chunks' sessions written to disk as it was played
        assert isinstance(both.sessions, pl.LazyFrame)
        both.sessions = both.sessions.collect()
    assert said == [True]
    # the child warms the run's kernels with its first session, once the loop is compiled
    assert warmed == [
        None
        if long
        else (
            "backtest.run.chunks:warm_in_child",
            (dict(config.raw), str(config.base_dir), config.source),
        )
    ]
    in_python = [(lo, hi) for lo, hi, python in ran if python]
    if compiling_for == 0:
        assert in_python == []
    elif compiling_for == 3:  # the paths' sessions, then two chunks of at most two
        assert in_python[0] == (0, 3) and len(in_python) == 3
        assert all(hi - lo <= 2 for lo, hi in in_python[1:])
        compiled_here = ran[3:]  # (in this process: with workers, in theirs)
        assert not any(python for _, _, python in compiled_here)
        assert bool(compiled_here) == (workers == 1)
    else:
        assert len(in_python) == len(ran) and in_python[-1][1] == 12
    assert both.hands == compiled.hands
    for name, frame in _frames(compiled).items():
        other = _frames(both)[name]
        assert (frame is None) == (other is None), name
        if frame is not None:
            assert other.equals(frame), name


def test_a_run_without_a_built_in_seat_starts_no_compile_of_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The built-ins' loop is compiled for a run with a built-in seat that
    has no own form compiled; seats of users' classes alone never play it."""
    from backtest.loop import session_loop

    config = _config("max-reset-stop", 1)
    started: list[Any] = []
    monkeypatch.setattr(
        session_loop, "compile_in_background", lambda then=None: started.append(then) or True
    )
    monkeypatch.setattr(session_loop, "own_ready", lambda kind: False)
    monkeypatch.setattr(engine, "builtin_kinds", lambda config: [])
    assert engine._compile_ahead(None, config) is False and started == []
    monkeypatch.setattr(engine, "builtin_kinds", lambda config: [0])
    assert engine._compile_ahead(None, config) is True and started == [None]


def test_a_compile_under_way_in_another_run_is_waited_for_not_repeated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that finds the loop compiling in another process (which holds
    the cache's lock) starts no compile of its own, plays in Python while
    the lock is held, and finds it free once that process ends."""
    from backtest.loop import session_loop

    lock = tmp_path / "session-loop.lock"
    monkeypatch.setattr(session_loop, "_lock_path", lambda: lock)
    monkeypatch.setattr(session_loop, "_background", None)
    monkeypatch.setattr(session_loop, "loop_cached", lambda: False)
    started: list[Any] = []
    monkeypatch.setattr(session_loop, "_compile_child", lambda *a, **k: started.append(a))
    assert not session_loop.compiling()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            "f = open(sys.argv[1], 'a')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert session_loop.compiling()
        assert session_loop.compile_in_background(("module:function", ())) is True
        assert started == []
    finally:
        holder.kill()
        holder.wait()
    assert not session_loop.compiling()
    session_loop.compile_in_background()
    assert len(started) == 1  # free: this run starts its own


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


_SEEN: list[tuple[Any, ...]] = []


def _then(*args: Any) -> None:
    from backtest.loop import session_loop

    _SEEN.append(("then", session_loop._lock_held(), *args))


def test_a_compiling_child_holds_the_lock_while_it_compiles_then_warms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`compile_then`, the child's work: the loop compiled, then the function
    it was given called with its arguments, all under the lock (made with
    its folder where there is none yet), released at the end."""
    from backtest.loop import session_loop

    monkeypatch.setattr(session_loop, "_lock_path", lambda: tmp_path / "new" / "loop.lock")
    monkeypatch.setattr(
        session_loop, "compile_loop", lambda: _SEEN.append(("loop", session_loop._lock_held()))
    )
    _SEEN.clear()
    session_loop.compile_then((f"{__name__}:_then", (1, "two")))
    assert _SEEN == [("loop", True), ("then", True, 1, "two")]
    assert not session_loop._lock_held()
    session_loop.compile_then(None)  # an ordinary compiling child: the loop alone
    assert _SEEN[2:] == [("loop", True)]


def test_a_compiling_child_imports_what_its_parent_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from a folder with a package of the project's name (a user's own
    `backtest/`), the child imports this process's modules, as the parent
    does: not `python -c`'s current folder first. It ends as its call does."""
    from backtest.loop import session_loop

    (tmp_path / "backtest").mkdir()
    (tmp_path / "backtest" / "__init__.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for outlive in (False, True):
        child = session_loop._compile_child("_lock_path()", outlive=outlive)
        assert child is not None and child.wait(timeout=120) == 0


def test_a_child_warms_on_generated_shoes_where_the_run_s_shoe_file_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compiling child outlives its run, and the shoe file of `--shoes -`
    (standard input, kept in a temporary folder for the run) with it: the
    child plays its session on generated shoes of the table's decks."""
    from backtest.run import chunks

    seen: list[RunConfig] = []
    monkeypatch.setattr(chunks, "warm", lambda config, strategies: seen.append(config))
    shoes = Path(__file__).resolve().parents[2] / "data" / "generated-8deck-seed1.txt"
    raw: dict[str, Any] = {
        "seed": 3,
        "shoes": {"file": str(tmp_path / "standard-input"), "decks": 6},
        "table": {"min": 10, "max": 1000},
        "session": {"bankroll": 1000},
        "seats": [{"strategy": "flat"}, {"strategy": "martingale"}],
    }
    chunks.warm_in_child(raw, str(tmp_path), "run.yaml")
    raw["shoes"] = {"file": str(shoes)}
    chunks.warm_in_child(raw, str(tmp_path), "run.yaml")
    gone, there = seen
    assert gone.recorded is None and gone.shoe is not None and gone.shoe.decks == 6
    assert [s.strategy for s in gone.seats] == ["flat", "martingale"]
    assert there.recorded is not None and there.recorded.path == shoes


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

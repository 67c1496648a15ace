"""Seats (strategies with bankrolls) over hands: the backtest engine.

A table deals one stream of hands to every seat, so seats are compared on
exactly the same hands. A session starts with a fresh shoe and a fresh
bankroll and lasts `max_shoes` shoes or `max_hands` hands; a seat that is
ruined or reaches a stop rule sits out the rest of it. Sessions are keyed by
their number: session j's shoes are random streams (j << 20) + m of the
master seed, and each seat's own randomness (the random bettor) streams from
the seed, the seat and j. So the same config gives the same numbers in one
process or spread over many, in any order.

Work goes in chunks of sessions, so memory stays flat however many hands are
asked for; only per-session statistics are kept, unless a ledger is asked.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import nullcontext, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from backtest.core.errors import UsageError
from backtest.jit import lazy_jit
from backtest.jit.buffers import Buffers
from backtest.run.chunks import SeatResult, merge_parts, run_chunk, run_task, warm
from backtest.run.config import RunConfig, build_strategies
from backtest.run.frames import (
    SeatFrames,
    chunk_frames,
    finish,
    ledger_path,
    paths_of,
    spill_path,
)
from backtest.run.plan import count_sessions, hands_for, plan_chunks
from backtest.run.pool import check_workers, default_workers, process_pool
from backtest.run.recorded_plan import shoes_per_session
from backtest.run.seats import check_money, check_seats
from strategies.base import Strategy

#: sessions whose bankroll after every hand is kept for plots (`--out`)
PATH_SESSIONS = 100
#: chunks' sessions are made frames (and spilled) in blocks of at least this many
FRAME_SESSIONS = 1 << 14
#: the most rows (a seat's hand each) a ledger kept in memory holds, about
#: 90 bytes each: a run with more streams it to files (`run(spill=...)`)
MEMORY_LEDGER_ROWS = 5_000_000
#: with a ledger, chunks of about this many rows at most: those in flight
#: between the workers and this process, as raw arrays, stay small
LEDGER_CHUNK_ROWS = 200_000
#: runs this large use every core by default (below it, starting processes costs more)
PARALLEL_HANDS = 4_000_000
#: a hand at a table with a counting seat, in hands of that measure: the exact
#: EVs cost 7 to 9 us a hand, three other seats about 0.15 us
COUNTING_WEIGHT = 50


@dataclass
class RunResult:
    config: RunConfig
    sessions: pl.DataFrame | pl.LazyFrame  # lazy when the run was spilled to disk
    summary: pl.DataFrame
    ledger: pl.DataFrame | pl.LazyFrame | None  # lazy when spilled, as `sessions`
    seed: int
    hands: int
    #: each seat's bankroll after every hand of the run's first sessions
    #: (`run(paths=N)`; see `bankroll_paths`)
    paths: pl.DataFrame | None = None
    #: each seat against the baseline on the same sessions (`comparisons.compare`;
    #: no rows for one seat)
    comparisons: pl.DataFrame | None = None

    @property
    def n_sessions(self) -> int:
        """The sessions run (which `sessions=` may have set over the config's)."""
        return int(self.summary["sessions"].to_numpy().max(initial=0))


# --- the whole run -----------------------------------------------------------------------


def prepare(
    config: RunConfig, sessions: int | None = None, memo: dict[Any, Any] | None = None
) -> tuple[int, int, list[Strategy]]:
    """Validate a run before any work: (sessions, hands in one session, strategies).

    `memo`, a dict kept between calls (a sweep's cells), checks the seats once
    for each setting of the seats, rules and table on the same kind of shoes;
    the strategies are then those built for the first of them. It also deals
    generated shoes' first session once for each shoe and session setting:
    the hands in one session are then those of the first config's seed."""
    n = count_sessions(config, sessions)
    check_money(config, n)
    if memo is not None and config.recorded is None:
        dealt = ("first session", repr(config.shoe), shoes_per_session(config))
        if dealt not in memo:
            memo[dealt] = hands_for(config, 0, 1)[0]
        probe = memo[dealt]
    else:
        probe, _, _ = hands_for(config, 0, 1)
    key = None
    if memo is not None:
        import json

        raw = config.raw
        key = (
            "seats at the table",
            config.source,
            str(config.base_dir),
            json.dumps(
                [
                    raw.get("seats"),
                    raw.get("rules"),
                    raw.get("table"),
                    sorted(probe.known),
                    probe.source,
                ],
                sort_keys=True,
                default=repr,
            ),
        )
        if key in memo:
            return n, max(1, len(probe)), memo[key]
    strategies = build_strategies(config)
    check_seats(config, strategies, probe)
    if key is not None and memo is not None:
        memo[key] = strategies
    return n, max(1, len(probe)), strategies


def run(
    config: RunConfig,
    sessions: int | None = None,
    workers: int | None = None,
    ledger: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    force_python: bool = False,
    spill: Path | None = None,
    executor: str = "local",
    address: str | None = None,
    paths: int = 0,
    compiling: Callable[[], None] | None = None,
    compiling_users: Callable[[], None] | None = None,
) -> RunResult:
    """Run every session of `config` for every seat.

    workers > 1 spreads chunks of sessions over processes; executor "dask"
    over the workers of a Dask cluster instead (the scheduler at `address`,
    HOST:PORT, or a local cluster of `workers` processes); the numbers are
    the same for any number of workers, on either. progress(sessions_done,
    hands_done, sessions) is called after each chunk (with the total sessions).

    spill: a directory (it must exist) for each chunk's sessions frames as
    Arrow IPC files, written as the chunks finish instead of kept in memory;
    the result's `sessions` is then a LazyFrame over them (valid while the
    files are), and memory stays flat however many sessions are run, but for
    the summary, worked out at the end from one seat's metric columns at a
    time. So is the ledger, with `ledger`: a row per seat per hand, which
    without `spill` is kept in memory for a run of at most
    MEMORY_LEDGER_ROWS rows (about; a larger one is refused before it starts).

    paths: the bankroll after every hand of the first `paths` sessions is
    kept as the run plays them (`RunResult.paths`, for plots): they are run
    first, here, with a ledger.

    Every run plays in the compiled session loop: the first run on a
    machine compiles it here, once (numba caches it), and `compiling` is
    called first. force_python: every strategy is asked through the
    Strategy API (a built-in's functions as plain Python), in the same loop.

    compiling_users: called as the run starts to compile the loop's form
    for every strategy but the built-ins (a user's class, compiled or
    plain Python; the first run of one, on a machine). A user's compiled
    class plays in worker processes only (one, for one worker), never in
    this one: its code that never returns ends with its process when the
    run is interrupted.
    """
    if executor not in ("local", "dask"):
        raise UsageError(f"--executor must be local or dask, got {executor!r}")
    if address is not None and executor != "dask":
        raise UsageError("--address goes with --executor dask")
    force_python = force_python or lazy_jit.JIT_DISABLED  # (numba's compiler is off)
    n, per_session, strategies = prepare(config, sessions)
    if ledger and spill is None and n * per_session * len(strategies) > MEMORY_LEDGER_ROWS:
        raise UsageError(
            f"a ledger kept in memory holds at most {MEMORY_LEDGER_ROWS:,} rows (a seat's "
            f"hand each), and this run has about {n * per_session * len(strategies):,}; "
            "stream it to files instead (`run(spill=DIR)`, as `backtest run --ledger "
            "--out DIR` does), or run fewer sessions"
        )
    from backtest.loop import session_loop

    forms = _forms(strategies, force_python)
    if compiling is not None and "shared" in forms and not session_loop.loop_cached():
        compiling()
    if compiling_users is not None and not all(
        session_loop.loop_cached(form) for form in forms - {"shared"}
    ):
        compiling_users()
    if workers is None:
        # every core for a large run; with Dask, this machine's cores (the local
        # cluster's size, and how finely the sessions are split for any cluster)
        weight = COUNTING_WEIGHT if any(strat.uses_cards for strat in strategies) else 1
        workers = (
            default_workers()
            if executor == "dask" or n * per_session * weight >= PARALLEL_HANDS
            else 1
        )
    check_workers(workers)
    chunks = plan_chunks(n, per_session, workers)
    if ledger:
        step = max(1, LEDGER_CHUNK_ROWS // (per_session * len(strategies)))
        chunks = [(a, min(hi, a + step)) for lo, hi in chunks for a in range(lo, hi, step)]
    frames: list[list[SeatFrames]] = []
    # each seat's spilled files, in session order (chunks are collected in order)
    # (a file, the sessions it holds)
    spilled: list[list[tuple[Path, int]]] = [[] for _ in config.seats] if spill is not None else []
    # and each seat's spilled ledger files, in session order
    ledgers: list[list[Path]] = [[] for _ in config.seats] if spill and ledger else []
    done_s = done_h = 0
    # chunks' raw results not yet made frames: (first session, part), in order
    pending: list[tuple[int, tuple[list[SeatResult], int]]] = []

    def flush() -> None:
        # a block of chunks becomes compact frames at once (in this process:
        # polars' threads do not survive a fork), so the raw arrays do not pile up
        if not pending:
            return
        lo = pending[0][0]
        part = merge_parts([p for _, p in pending])
        frames.append(chunk_frames(config, part, lo, spill))
        if spill is not None:
            for k in range(len(config.seats)):
                spilled[k].append((spill_path(spill, k, lo), len(part[0][k].stats)))
                if ledger:
                    ledgers[k].append(ledger_path(spill, k, lo))
        pending.clear()

    def collect(lo: int, hi: int, part: tuple[list[SeatResult], int]) -> None:
        nonlocal done_s, done_h
        pending.append((lo, part))
        if ledger or sum(len(p[0][0].stats) for _, p in pending if p[0]) >= FRAME_SESSIONS:
            flush()
        done_s += hi - lo
        done_h += part[1]
        if progress:
            progress(done_s, done_h, n)

    path_frame = None

    def task(lo: int, hi: int) -> tuple[Any, ...]:
        """`run_task`'s arguments for sessions lo..hi-1 in another process."""
        return _task_of(config, lo, hi, ledger)

    # a user's compiled functions run in worker processes alone, even for one
    # worker: compiled code that never returns is stopped by ending its process
    # (this one would never see Ctrl-C); the pool is left to do so on an interrupt
    users = "user" in forms
    local = workers if executor == "local" else 1
    with process_pool(local) if users else nullcontext() as own:

        def run_alone(lo: int, hi: int, keep_ledger: bool) -> tuple[list[SeatResult], int]:
            """Sessions lo..hi-1, here (or in a worker of `own`), before the others."""
            if own is None:
                return run_chunk(config, strategies, lo, hi, keep_ledger, force_python)
            return own.submit(run_task, *_task_of(config, lo, hi, keep_ledger)).result()

        if paths > 0 and chunks:
            chunks = _first_sessions_apart(chunks, min(paths, n))
            (lo, hi), chunks = chunks[0], chunks[1:]
            part = run_alone(lo, hi, True)
            path_frame = paths_of(config, part)
            if not ledger:
                part = ([replace(r, ledger=None) for r in part[0]], part[1])
            collect(lo, hi, part)
        if executor == "dask":
            from backtest.run.cluster import dask_client

            with dask_client(workers, address) as client:
                _collect_in_order(
                    chunks,
                    workers,
                    collect,
                    lambda lo, hi: client.submit(run_task, *task(lo, hi), force_python, pure=False),
                )
        elif own is not None:
            if path_frame is None and workers > 1 and len(chunks) > 1:
                run_alone(0, 1, False)  # compiled once, then loaded from numba's cache
            _collect_in_order(
                chunks, workers, collect, lambda lo, hi: own.submit(run_task, *task(lo, hi))
            )
        elif workers > 1 and len(chunks) > 1 and not force_python:
            if path_frame is None:  # (those sessions loaded every kernel a run needs)
                warm(config, strategies)
            with process_pool(workers) as pool:
                _collect_in_order(
                    chunks,
                    workers,
                    collect,
                    lambda lo, hi: pool.submit(run_task, *task(lo, hi)),
                )
        else:
            buffers = Buffers()
            for lo, hi in chunks:
                collect(
                    lo, hi, run_chunk(config, strategies, lo, hi, ledger, force_python, buffers)
                )
    flush()
    _release_freed_memory()
    sessions_frame, summary, ledger_df = finish(config, frames, ledger, spilled, ledgers)
    from backtest.run.comparisons import compare
    from backtest.run.metrics import file_blocks

    paired = compare(
        sessions_frame,
        [seat.label for seat in config.seats],
        config.baseline,
        [file_blocks(files) for files in spilled] if spilled else None,
    )
    return RunResult(
        config, sessions_frame, summary, ledger_df, config.seed, done_h, path_frame, paired
    )


def _release_freed_memory() -> None:
    """Give the system back the memory the chunks' raw arrays held, freed by
    now, which the C allocator (glibc) would keep for reuse: about 100 MB
    after a million sessions with a ledger, in use again as its files are
    written. Elsewhere than glibc, nothing is done."""
    if sys.platform.startswith("linux"):
        import ctypes

        with suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)


def _forms(strategies: Sequence[Strategy], force_python: bool) -> set[str]:
    """The loop's forms these seats play in (`session_loop.form_of`)."""
    from backtest.loop import session_loop

    return {session_loop.form_of(s, force_python) for s in strategies}


def _task_of(config: RunConfig, lo: int = 0, hi: int = 1, ledger: bool = False) -> tuple[Any, ...]:
    """`run_task`'s arguments for sessions lo..hi-1 of `config` in another process."""
    return (dict(config.raw), str(config.base_dir), config.source, lo, hi, ledger)


def _first_sessions_apart(chunks: Sequence[tuple[int, int]], first: int) -> list[tuple[int, int]]:
    """The chunks, with sessions 0..first-1 a chunk of their own."""
    return [(0, first)] + [(max(lo, first), hi) for lo, hi in chunks if hi > first]


def _collect_in_order(
    chunks: Sequence[tuple[int, int]],
    workers: int,
    collect: Callable[[int, int, tuple[list[SeatResult], int]], None],
    submit: Callable[[int, int], Any],
) -> None:
    """Run the chunks on workers (`submit(lo, hi)` gives a future) and collect
    their results in order, a few chunks ahead of the one collected, not
    all: results this process has not turned into frames yet would pile up
    in memory."""
    ahead: deque[tuple[int, int, Any]] = deque()
    for lo, hi in chunks:
        ahead.append((lo, hi, submit(lo, hi)))
        if len(ahead) > 2 * workers:
            lo0, hi0, fut = ahead.popleft()
            collect(lo0, hi0, fut.result())
    while ahead:
        lo0, hi0, fut = ahead.popleft()
        collect(lo0, hi0, fut.result())


def bankroll_paths(result: RunResult, sessions: int = PATH_SESSIONS) -> pl.DataFrame:
    """Each seat's bankroll after every hand of the first `sessions` sessions
    of a run, for plots: seat, session, hand (the seat's n-th hand),
    bankroll. Those the run kept (`run(paths=...)`), or else its first
    sessions played again with a ledger."""
    n = min(sessions, result.n_sessions)
    kept = result.paths
    if kept is not None and (kept.height == 0 or kept["session"].to_numpy().max() >= n):
        return kept.filter(pl.col("session") <= n)
    config = result.config
    return paths_of(config, run_chunk(config, build_strategies(config), 0, n, ledger=True))

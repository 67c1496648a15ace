"""The session loop: one seat, over the hands of many sessions.

One loop (`run_sessions`) applies the table rules for every strategy: the
limits (`limits`: stakes to cents, side bets, the table minimum), `place`
(the table maximum, the table's rules, the bankroll), settlement and the
session statistics. It is compiled once for the built-ins, which it reaches
by their kind (`strategies.compiled`), and once for any other `Compiled`
class, whose functions it calls through pointers; neither is compiled again
for another strategy. Its inputs travel as a few NamedTuples (`Dealt`,
`Table`, `Stops`, `SharedEvs`, `Outputs`, `Seat`, `Work`). A plain-Python
`Strategy` runs in `python_loop.run_python`, whose general path calls
`limits` and `place` themselves in their Python form; a test runs every
built-in and a user's compiled class through both and compares the ledgers.

Money is exact: stakes are whole cents, results are cents times the unit
results of `payouts.unit_results` (whole 1/D units), so one currency unit
is 100 * D ticks and every sum is an integer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np

from backtest.jit.lazy_jit import kernel
from backtest.loop.inputs import (
    Dealt,
    Outputs,
    Seat,
    SharedEvs,
    Stops,
    Table,
    Work,
    shared_evs,
    work_for,
)
from backtest.loop.session_kernel import sessions_kernel
from backtest.loop.table_rules import (
    N_STATS,
)
from backtest.odds import (
    N_JOINT,
)
from strategies import dispatch
from strategies.base import (
    N_BETS,
)


def run_sessions(
    seat: Seat,
    fns: tuple[Any, ...] | None,
    dealt: Dealt,
    table: Table,
    stops: Stops,
    shared: SharedEvs,
    outputs: Outputs,
    work: Work,
) -> tuple[int, int, int]:
    """Run the sessions of `dealt` for one seat of a Compiled strategy; `fns`
    is `dispatch.user_functions(strategy)`. Returns (a PLACE_* code, the hand
    index of an error or -1, ledger rows written).

    The loop is compiled once for every built-in (and cached on disk), and
    once for every other Compiled class: the first call in a process gives
    it its one signature, in which `fns` are first-class functions, so a
    user's functions never compile it again."""
    if work.hist_seen.shape[0] < (dealt.winner.shape[0] if fns is not None else 0):
        raise ValueError("run_sessions: work is not for these hands (work_for(seat, dealt))")
    args = (seat, fns, dealt, table, stops, shared, outputs, work)
    loop = _compiled_loop(fns is not None)
    with _quiet_numba():
        if not loop.signatures:
            if fns is None:
                _wait_background()
            loop.compile(_signature(args))
            # one signature: other functions in `fns` are converted to it, never compiled anew
            loop.disable_compile()
        code, at, rows = loop(*args)
    return int(code), int(at), int(rows)


def _signature(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The loop's argument types for `args`: `fns` (the second) as the
    first-class functions' types, whatever functions it holds."""
    from numba import typeof

    return tuple(
        dispatch.function_types() if k == 1 and a is not None else typeof(a)
        for k, a in enumerate(args)
    )


@contextmanager
def _quiet_numba() -> Iterator[None]:
    """numba calls first-class functions experimental, at every call: not news."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@cache
def _compiled_loop(user: bool) -> Any:
    """The loop's dispatcher for the built-ins, or for the user's functions
    (one signature each, cached on disk in one index)."""
    with _quiet_numba():
        return kernel(nrt=False)(sessions_kernel).dispatcher


def loop_loaded() -> bool:
    """Whether this process has the built-ins' session loop compiled (or
    loaded from the cache) already: a run then costs no start-up."""
    return _compiled_loop.cache_info().currsize > 0 and bool(_compiled_loop(False).signatures)


def loop_cached() -> bool:
    """Whether the built-ins' session loop is in numba's cache on disk (so the
    first run in a process loads it in a fraction of a second, rather than
    compiling it)."""
    loop = _compiled_loop(False)
    if loop.signatures:
        return True
    try:  # numba's index of the cached signatures of `sessions_kernel`
        index = loop._cache._cache_file._load_index()
    except Exception:  # no cache (a read-only install), or a format numba changed
        return False
    return any(_builtin_signature(key[0]) for key in index)


def _builtin_signature(args: Any) -> bool:
    from numba import types

    return isinstance(args, tuple) and len(args) > 1 and isinstance(args[1], types.NoneType)


def example_args() -> tuple[Any, ...]:
    """Arguments of `run_sessions` for a built-in, of the types every run
    gives (a test holds a run's to them): what `compile_loop` compiles for."""
    z8, z32, z64 = np.zeros(0, np.int8), np.zeros(0, np.int32), np.zeros(0, np.int64)
    bets_i, bets_f = np.zeros(N_BETS, np.int64), np.zeros(N_BETS)
    seat = Seat(
        0, np.uint64(0), np.zeros(1), np.zeros(1, np.uint64), -1, False, True, False, False, False
    )
    dealt = Dealt(
        z8,
        z32,
        z32,
        np.zeros((N_BETS, 0), np.int64),
        np.zeros((0, 6), np.uint8),
        np.zeros(1, np.int64),
        z64,
    )
    table = Table(
        1,
        bets_i,
        bets_i,
        np.zeros(N_BETS, np.bool_),
        True,
        False,
        np.zeros(14, np.int64),
        np.zeros(9),
        bets_f,
        np.zeros((N_BETS, N_BETS)),
        np.zeros((N_BETS, N_JOINT)),
    )
    shared = SharedEvs(*shared_evs(0, 0, False))
    outputs = Outputs(
        np.zeros((0, N_STATS), np.int64),
        np.zeros((0, N_BETS), np.int64),
        np.zeros(0),
        np.zeros(0),
        False,
        z64,
        np.zeros((0, N_BETS), np.int64),
        z64,
        z64,
    )
    return (
        seat,
        None,
        dealt,
        table,
        Stops(0, -1, -1, -1, 0),
        shared,
        outputs,
        work_for(seat, dealt),
    )


def compile_loop() -> None:
    """Compile the built-ins' session loop (or load it from the cache)."""
    loop = _compiled_loop(False)
    if not loop.signatures:
        loop.compile(_signature(example_args()))


_background: Any = None  # the process compiling the loop, if one was started
#: seconds the first run waits for that process (it takes about 20)
COMPILE_WAIT = 600


def compile_in_background() -> bool:
    """Start compiling the built-ins' session loop in a child process (on
    another core) if it is not cached: the caller deals its first shoes and
    compiles the other kernels meanwhile, and the loop's first use waits for
    the child and loads what it cached. True if a child was started."""
    global _background
    import os
    import subprocess
    import sys

    if _background is not None or loop_cached() or (os.cpu_count() or 1) < 2:
        return False
    try:
        # it finds the same cache folder (`numba_cache`, or NUMBA_CACHE_DIR, inherited)
        _background = subprocess.Popen(
            [sys.executable, "-c", "import backtest.loop.session_loop as s; s.compile_loop()"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_end_with_parent if sys.platform.startswith("linux") else None,
        )
    except OSError:
        return False
    return True


def _end_with_parent() -> None:
    """In the child (Linux): a SIGTERM when its parent dies."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _wait_background() -> None:
    """Wait for the child compiling the loop, if one was started (it ends
    with its parent's run, whatever it did: the loop is compiled here if
    the child cached nothing)."""
    global _background
    import subprocess

    child, _background = _background, None
    if child is not None:
        try:
            child.wait(timeout=COMPILE_WAIT)
        except subprocess.TimeoutExpired:  # (never seen) it compiles here instead
            child.kill()
        except BaseException:
            child.kill()
            raise

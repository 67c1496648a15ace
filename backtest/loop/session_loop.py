"""The session loop: one seat, over the hands of many sessions.

One loop (`run_sessions`) applies the table rules for every strategy: the
limits (`limits`: stakes to cents, side bets, the table minimum), `place`
(the table maximum, the table's rules, the bankroll), settlement and the
session statistics. It is compiled once for the built-ins, which it reaches
by their kind (`strategies.compiled`), and once for every other strategy,
whose functions it calls through pointers: a user's compiled class's
(`dispatch.user_functions`) or a plain-Python `Strategy`'s callbacks
(`python_seat`); neither form is compiled again for another strategy. Its
inputs travel as a few NamedTuples (`Dealt`, `Table`, `Stops`, `SharedEvs`,
`Outputs`, `Seat`, `Work`).

Money is exact: stakes are whole cents, results are cents times the unit
results of `payouts.unit_results` (whole 1/D units), so one currency unit
is 100 * D ticks and every sum is an integer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import FunctionType
from typing import Any

import numpy as np

from backtest.jit import numba_cache
from backtest.jit.lazy_jit import JIT_DISABLED, kernel
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
from backtest.loop.python_seat import PythonCallback
from backtest.loop.session_kernel import sessions_kernel
from backtest.loop.table_rules import (
    N_STATS,
)
from backtest.odds import (
    N_JOINT,
)
from strategies import compiled, dispatch
from strategies.base import (
    N_BETS,
    Compiled,
    Strategy,
)


def run_sessions(
    seat: Seat,
    fns: Any,
    dealt: Dealt,
    table: Table,
    stops: Stops,
    shared: SharedEvs,
    outputs: Outputs,
    work: Work,
) -> tuple[int, int, int]:
    """Run the sessions of `dealt` for one seat of a Compiled strategy; `fns`
    is `functions_for(strategy)`. Returns (a PLACE_* code, the hand index of
    an error or -1, ledger rows written).

    The loop is compiled once for every built-in (and cached on disk), and
    once for every other Compiled class: the first call in a process gives
    it its one signature, in which `fns` are first-class functions, so a
    user's functions never compile it again."""
    if work.hist_seen.shape[0] < (dealt.winner.shape[0] if dispatch.is_user(fns) else 0):
        raise ValueError("run_sessions: work is not for these hands (work_for(seat, dealt))")
    args = (seat, fns, dealt, table, stops, shared, outputs, work)
    if JIT_DISABLED:  # numba's compiler is off: the loop as the Python it is written in
        code, at, rows = kernel(nrt=False)(sessions_kernel).python_form()(*args)
        return int(code), int(at), int(rows)
    form = _form(fns)
    loop = _compiled_loop(form)
    with _quiet_numba():
        if not loop.signatures:
            _compiled_for(loop, form, args)
        code, at, rows = loop(*args)
    return int(code), int(at), int(rows)


def _signature(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The loop's argument types for `args`: `fns` (the second) as the
    first-class functions' types, whatever functions it holds."""
    from numba import typeof

    return tuple(
        dispatch.function_types(_form(a) == "python") if k == 1 and a is not None else typeof(a)
        for k, a in enumerate(args)
    )


@contextmanager
def _quiet_numba() -> Iterator[None]:
    """numba calls first-class functions experimental, at every call: not news."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _form(fns: Any) -> str:
    """Which of the loop's dispatchers runs `fns`: "shared" (None: every
    built-in, by its kind), "user" (a user's compiled functions) or
    "python" (a plain-Python strategy's callbacks, `python_seat`)."""
    if fns is None:
        return "shared"
    return "python" if isinstance(fns[0], PythonCallback) else "user"


@cache
def _compiled_loop(form: str) -> Any:
    """The loop's dispatcher for `form` (`_form`), of one signature. Each
    form is the loop's function under a name of its own, so numba caches
    each in files of its own: two processes compiling the two forms at
    once never rewrite one index, where one form's entry could otherwise be
    given the other's compiled code."""
    fn = sessions_kernel
    if form != "shared":
        fn = FunctionType(fn.__code__, fn.__globals__, f"sessions_kernel_{form}")
        fn.__qualname__ = fn.__name__
        fn.__module__ = sessions_kernel.__module__
    with _quiet_numba():
        loop = kernel(nrt=False)(fn).dispatcher
    return loop


def loop_cached(form: str = "shared") -> bool:
    """Whether the loop's `form` (`_form`) is compiled in this process, or
    in numba's cache on disk for these sources (so a run loads it in a
    fraction of a second, rather than compiling it). numba has no public
    way to ask what its cache holds: a file beside it, written once the
    form is compiled, says so. With numba's compiler off: yes."""
    if JIT_DISABLED or _compiled_loop(form).signatures:
        return True
    marker = _marker(form)
    return marker is not None and marker.exists()


def _marker(form: str) -> Path | None:
    """The file that says the loop's `form` is in numba's cache folder."""
    folder = numba_cache.cache_folder()
    return None if folder is None else folder / f"sessions_kernel_{form}.compiled"


def _compiled_for(loop: Any, form: str, args: tuple[Any, ...]) -> None:
    """Compile `loop` for `args`'s types, its one signature, and say so
    beside numba's cache."""
    loop.compile(_signature(args))
    # one signature: other functions in `fns` are converted to it, never compiled anew
    loop.disable_compile()
    marker = _marker(form)
    if marker is not None:
        try:
            marker.touch()
        except OSError:
            pass  # (a read-only cache: the next run says it compiles, and loads it)


def form_of(strategy: Strategy, as_python: bool = False) -> str:
    """The loop's form (`_form`) that plays `strategy`: "shared" for a
    built-in, "user" for a user's compiled class, "python" for any other
    strategy, or any at all asked through the Strategy API (`as_python`)."""
    if as_python or not isinstance(strategy, Compiled):
        return "python"
    return "user" if compiled.kind_of(strategy) == compiled.USER else "shared"


def functions_for(strategy: Compiled) -> Any:
    """The loop's `fns` for a Compiled strategy: None for a built-in (the
    shared loop reaches it by its kind), a user's four functions for any
    other class (`dispatch.user_functions`)."""
    return dispatch.user_functions(strategy)


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
        np.zeros(0),
        np.zeros(0),
        np.zeros((0, N_BETS), np.int64),
        0,
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
    """Compile the built-ins' session loop, in this process (or load it from
    numba's cache)."""
    loop = _compiled_loop("shared")
    if not loop.signatures:
        _compiled_for(loop, "shared", example_args())

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

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from types import FunctionType
from typing import Any

import numpy as np

from backtest.jit.lazy_jit import JIT_DISABLED, cores, kernel
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
    Compiled,
)
from strategies.compiled import BUILTINS, USER, kind_of


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
    user's functions never compile it again. A built-in may also run the
    loop's form of its own (`compile_own`), with its kind and facts
    constants: 5-50 % faster, for a compile of its own."""
    if work.hist_seen.shape[0] < (dealt.winner.shape[0] if dispatch.is_user(fns) else 0):
        raise ValueError("run_sessions: work is not for these hands (work_for(seat, dealt))")
    args = (seat, fns, dealt, table, stops, shared, outputs, work)
    check_apart(args)
    loop = _compiled_loop(_form(fns))
    with _quiet_numba():
        if not loop.signatures and not isinstance(fns, dispatch.Own):
            if fns is None:
                _wait_background()
            loop.compile(_signature(args))
            # one signature: other functions in `fns` are converted to it, never compiled anew
            loop.disable_compile()
        code, at, rows = loop(*args)
    return int(code), int(at), int(rows)


def check_apart(args: tuple[Any, ...]) -> None:
    """Raise ValueError if an array the loop writes (in `SharedEvs`,
    `Outputs` or `Work`) shares memory with another of its arrays: the loop
    is compiled on the promise that none does (`_arrays_apart`), and would
    give wrong numbers silently."""
    spans = []
    for arg in args:
        if not isinstance(arg, Seat | Dealt | Table | SharedEvs | Outputs | Work):
            continue  # `fns`, `Stops`
        written = isinstance(arg, SharedEvs | Outputs | Work)
        for name, value in zip(arg._fields, arg, strict=True):
            if isinstance(value, np.ndarray) and value.size:
                spans.append((*_bytes_of(value), written, f"{type(arg).__name__}.{name}"))
    spans.sort()
    # the spans that reach furthest so far, of all, and of those written
    reach: tuple[int, str] = (-1, "")
    reach_written: tuple[int, str] = (-1, "")
    for lo, hi, written, name in spans:
        other = reach if written else reach_written
        if lo < other[0]:
            raise ValueError(f"run_sessions: {other[1]} and {name} share memory")
        reach = max(reach, (hi, name))
        if written:
            reach_written = max(reach_written, (hi, name))


def _bytes_of(a: np.ndarray) -> tuple[int, int]:
    """The addresses of an array's first byte and one past its last."""
    lo = hi = a.__array_interface__["data"][0]
    for n, step in zip(a.shape, a.strides, strict=True):
        lo += min(0, (n - 1) * step)
        hi += max(0, (n - 1) * step)
    return lo, hi + a.itemsize


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


def _form(fns: Any) -> str:
    """Which of the loop's dispatchers runs `fns`: "shared" (None: every
    built-in, by its kind), "own<kind>" (`dispatch.Own`: a built-in's own
    form) or "user" (a user's functions)."""
    if fns is None:
        return "shared"
    return f"own{fns.kind}" if isinstance(fns, dispatch.Own) else "user"


@cache
def _compiled_loop(form: str) -> Any:
    """The loop's dispatcher for `form` (`_form`), of one signature. Each
    form is the loop's function under a name of its own, so numba caches
    each in files of its own: two processes compiling two forms at once
    (the shared loop in a child, a user's in the parent; two own forms on
    two cores) never rewrite one index, where one form's entry could
    otherwise be given the other's compiled code."""
    fn = sessions_kernel
    if form != "shared":
        fn = FunctionType(fn.__code__, fn.__globals__, f"sessions_kernel_{form}")
        fn.__qualname__ = fn.__name__
        fn.__module__ = sessions_kernel.__module__
    with _quiet_numba():
        loop = kernel(nrt=False)(fn).dispatcher
    if form == "shared" or (form.startswith("own") and BUILTINS[int(form[3:])].arrays_apart):
        _arrays_apart(loop)
    return loop


def _arrays_apart(loop: Any) -> None:
    """Compile `loop` telling LLVM that no two of its arrays share memory
    (numba's `noalias` flag, which numba sets itself for a parallel loop's
    body): it then holds a strategy's state in registers across the stores
    of a hand, where it would otherwise reload it after each. The shared
    loop and most own forms are compiled so (`Compiled.arrays_apart`);
    `run_sessions` holds its callers to it (`check_apart`)."""
    compiler = loop._compiler
    customize = compiler._customize_flags

    def flags_apart(flags: Any) -> Any:
        flags = customize(flags)
        flags.noalias = True
        return flags

    compiler._customize_flags = flags_apart


def loop_loaded(form: str = "shared") -> bool:
    """Whether this process has the loop's `form` (`_form`: by default the
    built-ins' shared loop) compiled, or loaded from the cache, already: a
    run then costs no start-up."""
    return _compiled_loop.cache_info().currsize > 0 and bool(_compiled_loop(form).signatures)


def loop_cached() -> bool:
    """Whether the built-ins' session loop is in numba's cache on disk (so the
    first run in a process loads it in a fraction of a second, rather than
    compiling it). With numba's compiler off, nothing is compiled: yes."""
    if JIT_DISABLED:
        return True
    from numba import types

    return _has(_compiled_loop("shared"), lambda fns: isinstance(fns, types.NoneType))


def user_loop_cached() -> bool:
    """Whether the loop's form for users' classes (their functions through
    pointers) is compiled in this process or in numba's cache on disk: the
    first run of any user's compiled class compiles it, once."""
    if JIT_DISABLED:
        return True
    from numba import types

    return _has(_compiled_loop("user"), lambda fns: isinstance(fns, types.BaseTuple))


def _has(loop: Any, wanted: Callable[[Any], bool]) -> bool:
    """Whether `loop` has a signature whose `fns` type is `wanted`, compiled
    in this process or in numba's cache on disk."""
    if any(wanted(sig[1]) for sig in loop.signatures):
        return True
    try:  # numba's index of the cached signatures of `sessions_kernel`
        index = loop._cache._cache_file._load_index()
    except Exception:  # no cache (a read-only install), or a format numba changed
        return False
    return any(isinstance(key[0], tuple) and len(key[0]) > 1 and wanted(key[0][1]) for key in index)


def own_ready(kind: int) -> bool:
    """Whether the built-in `kind`'s own form of the loop is compiled (in
    this process, or in numba's cache on disk). Not found, it is looked for
    again after `OWN_RECHECK` seconds (not at every chunk of a run). With
    numba's compiler off, none is."""
    import time

    if JIT_DISABLED:
        return False
    if kind in _OWN_FOUND:
        return True
    if time.monotonic() < _OWN_MISSING.get(kind, -1.0):
        return False
    if _has(_compiled_loop(f"own{kind}"), lambda fns: isinstance(fns, dispatch.OwnType)):
        _OWN_FOUND.add(kind)
        return True
    _OWN_MISSING[kind] = time.monotonic() + OWN_RECHECK
    return False


_OWN_FOUND: set[int] = set()  # the kinds `own_ready` has found (a form, once made, stays)
_OWN_MISSING: dict[int, float] = {}  # the kinds it has not found, and when to look again
#: seconds before `own_ready` looks again for a form it did not find
OWN_RECHECK = 60.0


def functions_for(strategy: Compiled) -> Any:
    """The loop's `fns` for a Compiled strategy: a built-in runs its own
    form of the loop (`dispatch.Own`) where that is compiled, else the
    shared loop (None); any other class, its functions
    (`dispatch.user_functions`). The numbers are the same in every form."""
    kind = kind_of(strategy)
    if kind != USER and own_ready(kind):
        return dispatch.Own(kind)
    return dispatch.user_functions(strategy)


def compile_own(kinds: Iterable[int]) -> None:
    """Compile the own forms of the built-ins `kinds` of the loop where
    they are not compiled yet (about 10 s each): a share of them in a child
    process for each other core, the rest here; then load them all (those
    cached before too)."""
    todo = sorted({k for k in kinds if not own_ready(k)})
    shares = [todo[c :: cores()] for c in range(cores())]
    children = [_compile_child(f"compile_own({share})") for share in shares[1:] if share]
    with _quiet_numba():
        for k in shares[0]:
            _compiled_loop(f"own{k}").compile(_own_signature(k))
        for child in children:
            if child is not None:
                child.wait()
        for k in sorted(set(kinds)):  # the children's from the cache (or compiled here,
            _compiled_loop(f"own{k}").compile(_own_signature(k))  # if one failed)
            _OWN_FOUND.add(k)
            _OWN_MISSING.pop(k, None)


def _own_signature(kind: int) -> tuple[Any, ...]:
    from numba import typeof

    args = example_args()
    return tuple(typeof(dispatch.Own(kind) if k == 1 else a) for k, a in enumerate(args))


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
    """Compile the built-ins' session loop (or load it from the cache)."""
    loop = _compiled_loop("shared")
    if not loop.signatures:
        loop.compile(_signature(example_args()))


_background: Any = None  # the process compiling the loop, if one was started
#: seconds the first run waits for that process (it takes about 20)
COMPILE_WAIT = 600


def compile_in_background(then: tuple[str, tuple[Any, ...]] | None = None) -> bool:
    """Start compiling the built-ins' session loop in a child process (on
    another core, where there is one) if it is not cached, and say whether a compile is under
    way: the child started here, or one another run started (which holds
    `_lock_path`). The caller deals its first shoes and compiles the other
    kernels meanwhile, or plays its first sessions in plain Python while
    `compiling()`; the loop's first use waits for the compile and loads
    what it cached.

    then: ("module:function", args) the child calls once the loop is
    compiled (a run's layer warms its other kernels so), and the child
    outlives this process: a run that ends in Python before the compile
    does leaves the cache filled for the next. On a machine of one core the
    child shares it: a run that plays in Python meanwhile still answers
    long before the compile would have ended."""
    global _background

    if _background is not None:
        return compiling()
    if loop_cached():
        return False
    if _lock_held():
        return True
    _background = _compile_child("compile_then(given)", then, outlive=then is not None)
    return _background is not None


def compiling() -> bool:
    """Whether the loop is being compiled in another process: the child this
    one started, or another run's (the cache's lock is held)."""
    if _background is not None and _background.poll() is None:
        return True
    return _lock_held()


def compile_then(then: tuple[str, tuple[Any, ...]] | None) -> None:
    """A compiling child's work: the loop, holding the lock (`_lock_path`) so
    that another run waits for it rather than compiling it again; then
    `then`'s function with its arguments, if given."""
    import importlib

    with _holding_lock():
        compile_loop()
        if then:
            module, function = then[0].split(":")
            getattr(importlib.import_module(module), function)(*then[1])


def _lock_path() -> Any:
    """The file a compiling child holds locked, beside the loop's cache
    files; None where there is none (no cache, or no `fcntl`)."""
    from pathlib import Path

    try:
        import fcntl  # noqa: F401 (Unix)

        return Path(_compiled_loop("shared")._cache._cache_path) / "session-loop.lock"
    except Exception:  # no cache (a read-only install), or a layout numba changed
        return None


@contextmanager
def _holding_lock() -> Iterator[None]:
    """Hold the lock of a compiling child (waiting while another holds it);
    without it where it cannot be had (the compile is then only repeated)."""
    path = _lock_path()
    f = None
    if path is not None:
        import fcntl

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            f = open(path, "a")  # noqa: SIM115 (closed below, after the work)
            fcntl.flock(f, fcntl.LOCK_EX)
        except OSError:
            if f is not None:
                f.close()
            f = None
    try:
        yield
    finally:
        if f is not None:
            f.close()  # (which releases the lock)


def _lock_held() -> bool:
    """Whether another process holds the lock of a compiling child."""
    path = _lock_path()
    if path is None:
        return False
    import fcntl

    try:
        with open(path, "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(f, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def _compile_child(call: str, given: Any = None, outlive: bool = False) -> Any:
    """A child process running `call` of this module (to compile into the
    cache), where `given` is what its parent gave (pickled on its standard
    input); it ends with this one unless `outlive`. None if none could be
    started."""
    import os
    import pickle
    import subprocess
    import sys

    # this process's import path, not `-c`'s (the current folder first, where
    # a user's own package named `backtest` or `strategies` may be)
    code = f"import sys\nsys.path[:] = {sys.path!r}\n"
    if sys.platform.startswith("linux") and not outlive:
        code += _END_WITH_PARENT.format(parent=os.getpid())
    code += (
        "import pickle\n"
        "given = pickle.loads(sys.stdin.buffer.read())\n"
        f"import backtest.loop.session_loop as s; s.{call}"
    )
    try:
        # it finds the same cache folder (`numba_cache`, or NUMBA_CACHE_DIR, inherited)
        child = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=outlive,  # (a Ctrl-C of this run does not reach it)
        )
    except OSError:
        return None
    child.outlives = outlive  # type: ignore[attr-defined]  # (read by `_wait_background`)
    try:
        if child.stdin is not None:
            child.stdin.write(pickle.dumps(given))
            child.stdin.close()
    except OSError:  # it ended already: its exit says what it did
        pass
    return child


#: a child's first lines (Linux), after its import path: a SIGTERM when its
#: parent dies (PR_SET_PDEATHSIG), and its end now if the parent is gone already
_END_WITH_PARENT = """\
import ctypes, os, signal
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
except (OSError, AttributeError):
    pass
if os.getppid() != {parent}:
    sys.exit(0)
"""


def _wait_background() -> None:
    """Wait for the loop's compile in another process, if one is under way:
    the child this one started (which ends with its parent's run, whatever
    it did: the loop is compiled here if the child cached nothing), or
    another run's (its lock)."""
    global _background
    import subprocess
    import time

    child, _background = _background, None
    if child is not None:
        try:
            child.wait(timeout=COMPILE_WAIT)
        except subprocess.TimeoutExpired:  # (never seen) it compiles here instead
            child.kill()
        except BaseException:  # (a Ctrl-C): one that outlives the run fills the cache still
            if not child.outlives:
                child.kill()
            raise
    waited_until = time.monotonic() + COMPILE_WAIT
    while _lock_held() and time.monotonic() < waited_until:
        time.sleep(0.05)

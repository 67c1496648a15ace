"""The plug-ins' dispatch: how the compiled session loop calls a strategy.

`reset_any`, `init_any`, `decide_any` and `update_any` reach a built-in by
its kind (`strategies.compiled.BUILTINS`), each branch its own function,
inlined; `user_functions` makes a user's class four first-class functions
the loop calls through a pointer. See `strategies.compiled` for the two
ways, and `backtest.loop.session_loop` for the loop. This module loads numba.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np

from backtest.core.errors import StrategyError
from backtest.jit.lazy_jit import register_with_numba
from strategies._common import stateless_update
from strategies.base import Compiled
from strategies.compiled import BUILTINS, USER, kind_of
from strategies.slots import CTX_SIZE, N_BETS, SEVERAL, STATE_FLOATS, STATE_INTS

# the built-ins' functions call helpers marked with `lazy_jit.jit`, which numba
# must see as their dispatchers before it compiles them here
register_with_numba()

# --- the built-ins, by kind ---------------------------------------------------------------

_ARGS = {
    "reset": "p, s, si",
    "init": "p, s, si, seed",
    "decide": "p, s, si, ctx, hist, evs, out",
    "update": "p, s, si, ctx, stakes, unit, net",
}
_USER_SLOT = {"reset": 0, "init": 1, "decide": 2, "update": 3}

#: the arguments of the functions the loop calls through a pointer: each array
#: as the address of its data (and the parameters' and the winners' lengths),
#: for a call costs about 2 ns an argument, and an array is seven
_POINTER_ARGS = {
    "reset": "pp, n_p, sp, sip",
    "init": "pp, n_p, sp, sip, seed",
    "decide": "pp, n_p, sp, sip, ctxp, histp, n_hist, evsp, outp",
    "update": "pp, n_p, sp, sip, ctxp, stakesp, unitp, net",
}
_ARRAYS = {
    "p": "pp, n_p, f8",
    "s": "sp, STATE_FLOATS, f8",
    "si": "sip, STATE_INTS, i8",
    "ctx": "ctxp, CTX_SIZE, f8",
    "hist": "histp, n_hist, i1",
    "evs": "evsp, N_BETS, f8",
    "out": "outp, N_BETS, f8",
    "stakes": "stakesp, N_BETS, f8",
    "unit": "unitp, N_BETS, f8",
}


def _branch(cls: type[Compiled], hook: str, name: str) -> tuple[str, Callable[..., Any] | None]:
    """The body of `hook`'s branch for `cls` (one line, calling `name`), and
    the function `name` is (None: nothing to call)."""
    if hook == "reset":
        return f"{name}(p, s, si)\n        return 0", cls.k_reset
    if hook == "init":
        if cls.k_init is None:  # a session starts as the progression restarts
            return f"{name}(p, s, si)\n        return 0", cls.k_reset
        return f"{name}(p, s, si, seed)\n        return 0", cls.k_init
    if hook == "update":
        if cls.k_update is stateless_update:
            return "return 0", None
        return f"{name}(p, s, si, ctx, stakes, unit, net)\n        return 0", cls.k_update
    call = f"{name}({_ARGS['decide']})"
    if cls.bet_slot >= 0:
        return f"return np.int64(p[{int(cls.bet_slot)}]), np.float64({call})", cls.k_decide
    if cls.picks_one:
        return f"b, x = {call}\n        return np.int64(b), np.float64(x)", cls.k_decide
    return f"{call}\n        return SEVERAL, 1.0", cls.k_decide


@cache
def _address_intrinsic() -> Any:
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def address(typingctx, arr):  # type: ignore[no-untyped-def]
        """The address of an array's data, as a void pointer (numba has no
        public function for it: `arr.ctypes.data` is an integer, which
        `carray` does not take)."""
        if not isinstance(arr, types.Array):
            return None

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            data = context.make_array(signature.args[0])(context, builder, value=args[0]).data
            return builder.bitcast(data, ir.IntType(8).as_pointer())

        return types.voidptr(arr), codegen

    return address


def _dispatch(hook: str, inline: Literal["never", "always"] = "always") -> Callable[..., Any]:
    """`{hook}_any(kind, fns, ...)` for compiled code: the built-in `kind`'s
    function when `fns` is None, else the user's function in `fns` (see
    `user_functions`). The loop is compiled once for each: its built-in form
    holds no call through a pointer (whose mere presence in the loop keeps
    LLVM from holding a progression's state in registers: a third slower),
    its user form no built-in. A third form calls a plain-Python
    strategy's callbacks (`python_signatures`). Every hook answers 0, or
    RAISED where a plain-Python strategy's code raised (decide: (bet,
    stake), the bet RAISED then). Called from plain Python (numba's
    compiler off), it runs the third form: every strategy is then called
    through the Strategy API."""
    from numba.extending import overload

    names: dict[str, Any] = {"np": np, "SEVERAL": np.int64(SEVERAL), "N_BETS": N_BETS}
    lines = [f"def {hook}_builtin(kind, fns, {_ARGS[hook]}):"]
    for i, cls in enumerate(BUILTINS):
        body, fn = _branch(cls, hook, f"f{i}")
        if fn is not None:
            names[f"f{i}"] = _kernel(fn)
        lines += [f"    if kind == {i}:", f"        {body}"]
    lines.append("    return SEVERAL, 0.0" if hook == "decide" else "    return 0")
    exec(compile("\n".join(lines), f"<{hook}_any>", "exec"), names)
    builtin = names[f"{hook}_builtin"]
    users = _user_call(hook, _address_intrinsic())
    in_python = _python_call(hook)

    # the hook's Python function, and its compiled form by the type of `fns`
    # (numba reads the arguments' names: they are spelled out)
    made: dict[str, Any] = {"in_python": in_python}
    exec(
        f"def {hook}_any(kind, fns, {_ARGS[hook]}):\n"
        f"    return in_python(kind, fns, {_ARGS[hook]})\n"
        f"def chosen(kind, fns, {_ARGS[hook]}):\n"
        f"    return typed(kind, fns)\n",
        made | {"typed": lambda kind, fns: _chosen(fns, builtin, users, in_python)},
        made,
    )
    overload(made[f"{hook}_any"], inline=inline)(made["chosen"])
    return made[f"{hook}_any"]  # type: ignore[no-any-return]


def _chosen(fns: Any, builtin: Any, users: Any, pythons: Any) -> Any:
    """The form of a hook for the type of `fns`: None, the built-ins; the
    four functions of `pointer_signatures`, a user's compiled class; those
    of `python_signatures` (no arrays), a plain-Python strategy."""
    from numba import types

    if isinstance(fns, types.NoneType):
        return builtin
    return pythons if fns.types[0].nargs == 0 else users


def _python_call(hook: str) -> Callable[..., Any]:
    """The plain-Python form of `{hook}_any`: the callback of
    `python_signatures` (the seat holds the arrays), its decide's answer
    made (bet, stake) as the user's form makes it."""
    call = {"reset": "fns[0]()", "init": "fns[1](seed)", "decide": "fns[2]()"}.get(
        hook, "fns[3](net)"
    )
    body = _DECIDE_ANSWER.format(call=call) if hook == "decide" else f"    return {call}\n"
    names: dict[str, Any] = {"N_BETS": N_BETS}
    exec(
        compile(f"def {hook}_py(kind, fns, {_ARGS[hook]}):\n{body}", f"<{hook}_py>", "exec"), names
    )
    return names[f"{hook}_py"]  # type: ignore[no-any-return]


#: a decide's answer (its bet; its stake in `out`) made (bet, stake)
_DECIDE_ANSWER = """    pick = {call}
    if 0 <= pick < N_BETS:
        return pick, out[pick]
    return pick, 0.0 if pick == -1 else 1.0
"""


def _user_call(hook: str, addr: Any) -> Callable[..., Any]:
    """The user's form of `{hook}_any`: `fns`'s function for the hook, called
    with each array's address (`addr`); a decide's answer made (bet, stake)
    (the stake is in `out`, where the bet is one)."""
    call = f"fns[{_USER_SLOT[hook]}]({_address_args(hook)})"
    body = _DECIDE_ANSWER.format(call=call) if hook == "decide" else f"    return {call}\n"
    names: dict[str, Any] = {"addr": addr, "N_BETS": N_BETS}
    exec(
        compile(f"def {hook}_user(kind, fns, {_ARGS[hook]}):\n{body}", f"<{hook}_user>", "exec"),
        names,
    )
    return names[f"{hook}_user"]  # type: ignore[no-any-return]


def _address_args(hook: str) -> str:
    """The loop's call of a user's `hook`: its arguments as `_POINTER_ARGS`."""
    out = []
    for name in _ARGS[hook].split(", "):
        if name in _ARRAYS:
            out.append(f"addr({name})")
            if name in ("p", "hist"):
                out.append(f"{name}.shape[0]")
        else:
            out.append(name)
    return ", ".join(out)


def fixed(fns: object, seat: Any) -> tuple[int, int, bool, bool, bool, bool]:
    """(kind, slot, writes_out, learns, reads_ctx, cards_seen) of the seat."""
    return (seat.kind, seat.slot, seat.writes_out, seat.learns, seat.reads_ctx, seat.cards_seen)


def is_user(fns: object) -> bool:
    """Whether the loop runs a user's functions (`fns` a tuple of them); a
    constant while compiling."""
    return fns is not None


def _overloads() -> None:
    from numba import types
    from numba.extending import overload

    @overload(fixed, inline="always")
    def _fixed(fns, seat):  # type: ignore[no-untyped-def]
        def impl(fns, seat):  # type: ignore[no-untyped-def]
            return (
                seat.kind,
                seat.slot,
                seat.writes_out,
                seat.learns,
                seat.reads_ctx,
                seat.cards_seen,
            )

        return impl

    @overload(is_user, inline="always")
    def _is_user(fns):  # type: ignore[no-untyped-def]
        answer = not isinstance(fns, types.NoneType)

        def impl(fns):  # type: ignore[no-untyped-def]
            return answer

        return impl


_overloads()


_KERNELS: dict[Callable[..., Any], Any] = {}


def _kernel(fn: Callable[..., Any]) -> Any:
    """A built-in's function compiled on its own (cached on disk), once for
    every hook that calls it: numba inlines the dispatch into the loop, and
    LLVM, seeing this small function's code there, inlines it too (inlining
    each strategy into the loop at numba's level compiled for a minute)."""
    if fn not in _KERNELS:
        from backtest.jit.numba_cache import njit_plain

        _KERNELS[fn] = njit_plain(forceinline=True)(getattr(fn, "py_func", fn))
    return _KERNELS[fn]


# called once a session, or when the table maximum restarts a progression: not inlined
reset_any = _dispatch("reset", inline="never")
init_any = _dispatch("init", inline="never")
decide_any = _dispatch("decide")
#: `decide_any` for the table maximum's second ask, not inlined
decide_again = _dispatch("decide", inline="never")
update_any = _dispatch("update")


# --- any other class, through first-class functions -------------------------------------------


def signatures() -> dict[str, Any]:
    """The numba signatures of the four functions the loop calls through a
    pointer (`user_functions`)."""
    from numba import types

    f8, i8, w = types.float64[::1], types.int64[::1], types.int8[::1]
    p = types.Array(types.float64, 1, "C", readonly=True)  # the parameters: read-only
    return {
        "reset": types.void(p, f8, i8),
        "init": types.void(p, f8, i8, types.int64),
        "decide": types.Tuple((types.int64, types.float64))(p, f8, i8, f8, w, f8, f8),
        "update": types.void(p, f8, i8, f8, f8, f8, types.float64),
    }


def pointer_signatures() -> dict[str, Any]:
    """The numba signatures of the four functions as the loop calls them:
    each answers a whole number (decide: the bet staked, its stake in `out`;
    -1 none, SEVERAL all in `out`; RAISED where a plain-Python strategy's
    code raised), so a plain-Python strategy fits them too (`python_seat`)."""
    from numba import types

    v, i = types.voidptr, types.int64
    return {
        "reset": i(v, i, v, v),
        "init": i(v, i, v, v, i),
        "decide": i(v, i, v, v, v, v, i, v, v),
        "update": i(v, i, v, v, v, v, v, types.float64),
    }


def python_signatures() -> dict[str, Any]:
    """The numba signatures of a plain-Python strategy's four callbacks
    (`python_seat`): no arrays (the seat holds them), and so few arguments
    that a call costs about half what it would with the arrays' addresses."""
    from numba import types

    i = types.int64
    return {"reset": i(), "init": i(i), "decide": i(), "update": i(types.float64)}


def function_types(python: bool = False) -> Any:
    """The type of the loop's `fns` argument: the four functions' types
    (`python`: a plain-Python strategy's callbacks)."""
    from numba import types

    sig = python_signatures() if python else pointer_signatures()
    return types.Tuple(tuple(types.FunctionType(sig[h]) for h in _ARGS))


def _adapted(cls: type[Compiled], hook: str) -> Callable[..., Any]:
    """`hook` of `cls` as a function of the loop's fixed signature (its decide
    returning (bet, stake)), compiled with numba's cache: a class's second
    run, in any process, loads it. Its source is written once to a file of
    its own in this package's cache folder (`_adaptor_file`: numba caches a
    function of a file alone), named by a hash of the class's source files.
    Where that file is new, the class's own function is compiled first, for
    the loop's argument types, so that an error in it names its own line;
    its decide is read by what it returns (nothing: the stakes are in `out`;
    a number: the stake on its `bet_slot`; a pair: (bet, stake))."""
    from numba import njit

    body, fn = _branch(cls, hook, "f")
    own = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba calls first-class functions experimental
        if fn is not None:
            # indices checked (`bounds_checked`): an index out of its array is
            # an IndexError, never a write over the loop's memory
            own = njit(boundscheck=cls.bounds_checked)(getattr(fn, "py_func", fn))
        file = _adaptor_file(cls, hook, fn)
        if file is None or not file.exists():
            if own is not None:
                own.compile(_own_args(hook, body))
                if hook == "decide":
                    body = _decide_body(cls, own.nopython_signatures[0].return_type)
            src = _adaptor_source(hook, body)
            if file is None:  # no cache folder: compiled for this process alone
                names: dict[str, Any] = {"f": own}
                exec(compile(src, f"<{cls.__name__}.{hook}>", "exec"), names)
                return njit(pointer_signatures()[hook])(names[hook])  # type: ignore[no-any-return]
            _write_once(file, src)
        module = _load_file(file)
        module.f = own  # (read only where numba's cache lacks the function)
        return njit(pointer_signatures()[hook], cache=True)(getattr(module, hook))  # type: ignore[no-any-return]


def _adaptor_source(hook: str, body: str) -> str:
    """A module defining `hook` of the loop's pointer signature: each array
    from its address, then `body` (which calls `f`, the class's function)."""
    if body == "return":
        body = "pass"
    arrays = "".join(
        f"    {name} = carray({_ARRAYS[name]})\n"
        for name in _ARGS[hook].split(", ")
        if name in _ARRAYS
    )
    head = (
        "import numpy as np\n"
        "from numba import carray\n\n"
        "f8, i8, i1 = np.float64, np.int64, np.int8\n"
        f"SEVERAL = np.int64({SEVERAL})\n"
        f"STATE_FLOATS, STATE_INTS = {STATE_FLOATS}, {STATE_INTS}\n"
        f"CTX_SIZE, N_BETS = {CTX_SIZE}, {N_BETS}\n"
        "f = None  # the class's function, set by its loader\n\n\n"
    )
    return head + f"def {hook}({_POINTER_ARGS[hook]}):\n{arrays}    {body}\n".replace(
        "\n        ", "\n    "
    )


#: the adaptors' form: a new one names new files
_ADAPTOR_FORM = "answers int64"


def _adaptor_file(cls: type[Compiled], hook: str, fn: Any) -> Any:
    """Where `hook`'s adaptor for `cls` is kept: a file named by a hash of
    what it is made of (the class's and the function's source files and
    their paths, the function's code, the class's name and settings,
    numba's version); None where there is no cache folder, no source file,
    or the function is a closure (its cells' values are compiled in, and
    not in the hash)."""
    import hashlib

    import numba

    from backtest.jit import numba_cache

    folder = numba_cache.cache_folder()
    py = getattr(fn, "py_func", fn)
    if folder is None or getattr(py, "__closure__", None):
        return None
    code = getattr(py, "__code__", None)
    # (not the class's module name: a class from a file is given a new one in each process)
    made_of: tuple[Any, ...] = (numba.__version__, cls.__qualname__, hook, _ADAPTOR_FORM)
    made_of += (cls.bounds_checked,)
    made_of += (cls.bet_slot, cls.picks_one)
    if code is not None:
        made_of += (py.__qualname__, code.co_filename, code.co_firstlineno, _code_key(code))
    digest = hashlib.sha256(repr(made_of).encode())
    try:
        for source in sorted({inspect.getsourcefile(cls), inspect.getsourcefile(py or cls)}):  # type: ignore[type-var]
            digest.update(f"{source}\n".encode() + Path(source).read_bytes())  # type: ignore[arg-type]
    except (OSError, TypeError):  # (no source file: None, or a built-in's)
        return None
    return folder / "users" / f"{cls.__name__}_{hook}_{digest.hexdigest()[:16]}.py"


def _code_key(code: Any) -> tuple[Any, ...]:
    """A code object's bytecode, names and constants, nested code objects
    (a comprehension's) by their own key, not by their address."""
    consts = tuple(_code_key(c) if inspect.iscode(c) else repr(c) for c in code.co_consts)
    return (code.co_code, code.co_names, consts)


def _write_once(file: Any, text: str) -> None:
    """Write `file` whole (another process writing it at once writes the same)."""
    import os

    file.parent.mkdir(parents=True, exist_ok=True)
    part = file.with_name(f"{file.name}.{os.getpid()}")
    part.write_text(text, encoding="utf-8")
    os.replace(part, file)


def _load_file(file: Any) -> Any:
    """The module of the Python file `file`, loaded and listed in
    sys.modules under a name of its own (numba, loading a function from its
    cache, imports the function's module by name)."""
    import importlib.util
    import sys

    name = f"_backtest_adaptor_{file.stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


def _decide_body(cls: type[Compiled], returns: Any) -> str:
    """The adaptor's decide, for what the class's own decide returns: its
    stakes in `out`, and the bet staked (-1 none, SEVERAL, N_BETS a bet that
    is none)."""
    from numba import types

    call = f"f({_ARGS['decide']})"
    if isinstance(returns, types.NoneType):
        return f"{call}\n    return SEVERAL"
    if isinstance(returns, types.BaseTuple) and len(returns) == 2:
        if not isinstance(returns[0], types.Integer):  # type: ignore[index]
            raise TypeError(
                f"k_decide returns {returns}: the bet of (bet, stake) must be a whole "
                f"number, its code (0 Player, 1 Banker, 2 Tie, ...)"
            )
        return f"b, x = {call}\n{_ONE_STAKE}"
    if isinstance(returns, types.Number) and cls.bet_slot >= 0:
        return f"x = {call}\n    b = np.int64(p[{int(cls.bet_slot)}])\n{_ONE_STAKE}"
    raise TypeError(
        f"k_decide returns {returns}: it must write the stakes into `out` and "
        f"return nothing, or return (bet, stake)"
    )


#: the adaptor's decide, after the class's gave one stake `x` on bet `b`
#: (one line an `if`: the adaptor's source is made of one-level lines)
_ONE_STAKE = """    if x == 0.0: return -1
    if 0 <= b < N_BETS: out[b] = x; return b
    return N_BETS"""


def _own_args(hook: str, body: str) -> tuple[Any, ...]:
    """The argument types the class's own function is called with: the
    hook's, less the seed where a session starts as `k_reset` does."""
    args = tuple(signatures()[hook].args)
    return args[:3] if hook == "init" and "seed" not in body else args


_USER_CACHE: dict[type, tuple[Callable[..., Any], ...]] = {}


def user_functions(strategy: Compiled) -> tuple[Callable[..., Any], ...] | None:
    """The loop's `fns` argument for `strategy`: None for a built-in (reached
    by its kind); for any other class, its four functions
    compiled with the loop's signatures (once per class and process). A
    function numba cannot compile is a StrategyError naming its file and
    line."""
    cls = type(strategy)
    if kind_of(strategy) != USER:
        return None
    if cls not in _USER_CACHE:
        compiled = []
        for hook in _ARGS:
            try:
                compiled.append(_adapted(cls, hook))
            except Exception as exc:  # numba's errors, and anything its compiler raised
                raise StrategyError(_compile_error(cls, hook, exc)) from None
        _USER_CACHE[cls] = tuple(compiled)
    return _USER_CACHE[cls]


_WHERE = re.compile(r'File "([^"]+)", line (\d+)')


def _compile_error(cls: type[Compiled], hook: str, exc: BaseException) -> str:
    """numba's error for `cls`'s `hook` as one line: where in the user's file
    (the last place numba names in it), what numba said, and the way out."""
    import os

    fn = _branch(cls, hook, "f")[1]
    fn = getattr(fn, "py_func", fn)
    try:
        own = inspect.getsourcefile(fn) if fn is not None else None  # type: ignore[arg-type]
    except TypeError:
        own = None
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    # numba names a file relative to the working folder
    places = [(os.path.abspath(f), n) for f, n in _WHERE.findall(text)]
    mine = [
        (f, n) for f, n in places if own is not None and os.path.abspath(f) == os.path.abspath(own)
    ] or places
    where = f"{mine[-1][0]}:{mine[-1][1]}" if mine else (own or cls.__module__)
    lines = [line.strip() for line in text.splitlines()]
    said = [
        line
        for line in lines
        if line and not line.startswith(("Failed in", "During:")) and "pipeline" not in line
    ]
    reason = said[0] if said else type(exc).__name__
    if reason.endswith(":") and len(said) > 1:  # "... found for signature:", then it
        reason = f"{reason} {said[1].removeprefix('>>> ')}"
    return (
        f"{where}: {cls.__name__}.k_{hook} cannot be compiled: {reason} (a compiled "
        f"strategy's functions must be in the subset of Python numba compiles; a "
        f"plain-Python Strategy, with stakes() and update(), runs any Python)"
    )

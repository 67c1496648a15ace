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
from typing import Any, Literal

import numpy as np
from numba import types

from backtest.core.errors import StrategyError
from backtest.jit.lazy_jit import register_with_numba
from strategies._common import stateless_update
from strategies.base import Compiled
from strategies.compiled import BUILTINS, USER, facts, kind_of
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
        return f"{name}(p, s, si)", cls.k_reset
    if hook == "init":
        if cls.k_init is None:  # a session starts as the progression restarts
            return f"{name}(p, s, si)", cls.k_reset
        return f"{name}(p, s, si, seed)", cls.k_init
    if hook == "update":
        if cls.k_update is stateless_update:
            return "return", None
        return f"{name}(p, s, si, ctx, stakes, unit, net)", cls.k_update
    call = f"{name}({_ARGS['decide']})"
    if cls.bet_slot >= 0:
        return f"return np.int64(p[{int(cls.bet_slot)}]), np.float64({call})", cls.k_decide
    if cls.picks_one:
        return f"b, x = {call}\n        return np.int64(b), np.float64(x)", cls.k_decide
    return f"{call}\n        return SEVERAL, 1.0", cls.k_decide


@cache
def _address_intrinsic() -> Any:
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def address(typingctx, arr):  # type: ignore[no-untyped-def]
        """The address of an array's data, as a void pointer."""
        if not isinstance(arr, types.Array):
            return None

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            data = cgutils.create_struct_proxy(signature.args[0])(
                context, builder, value=args[0]
            ).data
            return builder.bitcast(data, cgutils.voidptr_t)

        return types.voidptr(arr), codegen

    return address


def _dispatch(hook: str, inline: Literal["never", "always"] = "always") -> Callable[..., Any]:
    """`{hook}_any(kind, fns, ...)` for compiled code: the built-in `kind`'s
    function when `fns` is None, else the user's function in `fns` (see
    `user_functions`). The loop is compiled once for each: its built-in form
    holds no call through a pointer (whose mere presence in the loop keeps
    LLVM from holding a progression's state in registers: a third slower),
    its user form no built-in."""
    from numba import types
    from numba.extending import overload

    names: dict[str, Any] = {"np": np, "SEVERAL": np.int64(SEVERAL)}
    lines = [f"def {hook}_builtin(kind, fns, {_ARGS[hook]}):"]
    for i, cls in enumerate(BUILTINS):
        body, fn = _branch(cls, hook, f"f{i}")
        if fn is not None:
            names[f"f{i}"] = _kernel(fn)
        lines += [f"    if kind == {i}:", f"        {body}"]
    lines.append("    return SEVERAL, 0.0" if hook == "decide" else "    return")
    user = f"fns[{_USER_SLOT[hook]}]({_address_args(hook)})"
    names["addr"] = _address_intrinsic()
    lines += [
        f"def {hook}_user(kind, fns, {_ARGS[hook]}):",
        f"    return {user}" if hook == "decide" else f"    {user}",
    ]
    for i, cls in enumerate(BUILTINS):  # each built-in's form of its own (`Own`)
        body = _branch(cls, hook, f"f{i}")[0]
        tail = "    return SEVERAL, 0.0" if hook == "decide" and "return" not in body else None
        body = body.replace("\n        ", "\n    ")
        lines += [f"def {hook}_own{i}(kind, fns, {_ARGS[hook]}):", f"    {body}"]
        if tail:
            lines.append(tail)
    exec(compile("\n".join(lines), f"<{hook}_any>", "exec"), names)
    builtin, users = names[f"{hook}_builtin"], names[f"{hook}_user"]
    own = [names[f"{hook}_own{i}"] for i in range(len(BUILTINS))]

    # a Python function of the hook's arguments, and its compiled form by the type of `fns`
    stub_names: dict[str, Any] = {}
    exec(
        f"def {hook}_any(kind, fns, {_ARGS[hook]}):\n"
        f"    raise TypeError('{hook}_any is called by the compiled session loop alone')\n",
        stub_names,
    )
    stub = stub_names[f"{hook}_any"]

    def typed(kind, fns, *args):  # type: ignore[no-untyped-def]
        if isinstance(fns, OwnType):
            return own[fns.kind]
        return builtin if isinstance(fns, types.NoneType) else users

    exec(
        f"def chosen(kind, fns, {_ARGS[hook]}):\n    return typed(kind, fns)\n",
        {"typed": typed},
        stub_names,
    )
    overload(stub, inline=inline)(stub_names["chosen"])
    return stub  # type: ignore[no-any-return]


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


class Own:
    """The loop's `fns` for a built-in run by the loop's form of its own:
    compiled for that strategy alone (its kind and facts constants, its
    functions the only ones in it), once per strategy and machine."""

    __slots__ = ("kind",)

    def __init__(self, kind: int) -> None:
        self.kind = kind


class OwnType(types.Type):
    """numba's type of an `Own`: the kind is in the type, so each built-in's
    form is a signature of its own."""

    def __init__(self, kind: int) -> None:
        self.kind = kind
        super().__init__(name=f"Own({kind})")


def _own_type() -> None:
    from numba.core import cgutils
    from numba.extending import NativeValue, models, register_model, typeof_impl, unbox

    @typeof_impl.register(Own)
    def _typeof(value, context):  # type: ignore[no-untyped-def]
        return OwnType(value.kind)

    register_model(OwnType)(models.OpaqueModel)

    @unbox(OwnType)
    def _unbox(typ, obj, c):  # type: ignore[no-untyped-def]
        return NativeValue(cgutils.get_null_value(cgutils.voidptr_t))


_own_type()


def fixed(fns: object, seat: object) -> tuple[int, int, bool, bool, bool, bool]:
    """(kind, slot, writes_out, learns, reads_ctx, cards_seen) of the seat:
    constants while compiling a built-in's own form, else read from `seat`."""
    raise TypeError("fixed is called by the compiled session loop alone")


def _fixed_overload() -> None:
    from numba.extending import overload

    @overload(fixed, inline="always")
    def _typed(fns, seat):  # type: ignore[no-untyped-def]
        if isinstance(fns, OwnType):
            f = facts(BUILTINS[fns.kind])
            k, slot, wo, le, rc, cs = (
                fns.kind,
                f.slot,
                f.writes_out,
                f.learns,
                f.reads_ctx,
                f.cards_seen,
            )

            def impl(fns, seat):  # type: ignore[no-untyped-def]
                return k, slot, wo, le, rc, cs

            return impl

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


_fixed_overload()


def is_user(fns: object) -> bool:
    """Whether the loop runs a user's functions (`fns` a tuple of them); a
    constant while compiling."""
    return fns is not None and not isinstance(fns, Own)


def _is_user_overload() -> None:
    from numba import types
    from numba.extending import overload

    @overload(is_user, inline="always")
    def _typed(fns):  # type: ignore[no-untyped-def]
        answer = not isinstance(fns, (types.NoneType, OwnType))

        def impl(fns):  # type: ignore[no-untyped-def]
            return answer

        return impl


_is_user_overload()


_KERNELS: dict[Callable[..., Any], Any] = {}


def _kernel(fn: Callable[..., Any]) -> Any:
    """A built-in's function compiled on its own (cached on disk), once for
    every hook that calls it: numba inlines the dispatch into the loop, and
    LLVM, seeing this small function's code there, inlines it too (inlining
    each strategy into the loop at numba's level compiled for a minute)."""
    if fn not in _KERNELS:
        from numba import njit

        from backtest.jit import numba_cache

        numba_cache.install()  # before the function is decorated for numba's cache
        # `_nrt` is a private numba option, which numba's type stubs do not list
        _KERNELS[fn] = njit(cache=True, _nrt=False, forceinline=True)(  # type: ignore[call-overload]
            getattr(fn, "py_func", fn)
        )
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
    """The numba signatures of the four functions as the loop calls them."""
    from numba import types

    v, i = types.voidptr, types.int64
    return {
        "reset": types.void(v, i, v, v),
        "init": types.void(v, i, v, v, i),
        "decide": types.Tuple((types.int64, types.float64))(v, i, v, v, v, v, i, v, v),
        "update": types.void(v, i, v, v, v, v, v, types.float64),
    }


def function_types() -> Any:
    """The type of the loop's `fns` argument: the four functions' types."""
    from numba import types

    sig = pointer_signatures()
    return types.Tuple(tuple(types.FunctionType(sig[h]) for h in _ARGS))


def _adapted(cls: type[Compiled], hook: str) -> Callable[..., Any]:
    """`hook` of `cls` as a function of the loop's fixed signature (its decide
    returning (bet, stake)). The class's own function is compiled first, for
    the loop's argument types, so that an error in it names its own line;
    its decide is read by what it returns (nothing: the stakes are in `out`;
    a number: the stake on its `bet_slot`; a pair: (bet, stake))."""
    from numba import carray, njit, types

    body, fn = _branch(cls, hook, "f")
    names: dict[str, Any] = {"np": np, "SEVERAL": np.int64(SEVERAL)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba calls first-class functions experimental
        if fn is not None:
            # indices checked (`bounds_checked`): an index out of its array is
            # an IndexError, never a write over the loop's memory
            own = njit(_own_args(hook, body), boundscheck=cls.bounds_checked)(
                getattr(fn, "py_func", fn)
            )
            names["f"] = own
            if hook == "decide":
                body = _decide_body(cls, own.nopython_signatures[0].return_type, types)
        if body == "return":
            body = "pass"
        arrays = "".join(
            f"    {name} = carray({_ARRAYS[name]})\n"
            for name in _ARGS[hook].split(", ")
            if name in _ARRAYS
        )
        src = f"def {hook}({_POINTER_ARGS[hook]}):\n{arrays}    {body}\n".replace(
            "\n        ", "\n    "
        )
        names.update(
            carray=carray,
            f8=np.float64,
            i8=np.int64,
            i1=np.int8,
            STATE_FLOATS=STATE_FLOATS,
            STATE_INTS=STATE_INTS,
            CTX_SIZE=CTX_SIZE,
            N_BETS=N_BETS,
        )
        exec(compile(src, f"<{cls.__name__}.{hook}>", "exec"), names)
        return njit(pointer_signatures()[hook])(names[hook])  # type: ignore[no-any-return]


def _decide_body(cls: type[Compiled], returns: Any, types: Any) -> str:
    call = f"f({_ARGS['decide']})"
    if isinstance(returns, types.NoneType):
        return f"{call}\n    return SEVERAL, 1.0"
    if isinstance(returns, types.BaseTuple) and len(returns) == 2:
        if not isinstance(returns[0], types.Integer):
            raise TypeError(
                f"k_decide returns {returns}: the bet of (bet, stake) must be a whole "
                f"number, its code (0 Player, 1 Banker, 2 Tie, ...)"
            )
        return f"b, x = {call}\n    return np.int64(b), np.float64(x)"
    if isinstance(returns, types.Number) and cls.bet_slot >= 0:
        return f"return np.int64(p[{int(cls.bet_slot)}]), np.float64({call})"
    raise TypeError(
        f"k_decide returns {returns}: it must write the stakes into `out` and "
        f"return nothing, or return (bet, stake)"
    )


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

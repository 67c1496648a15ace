"""The built-in strategies, dispatched by kind while compiling.

The session loop calls `decide(kind, ...)` etc.; `kind` is the strategy's
position in `BUILTINS` (and its class attribute `kind`). In compiled code
`kind` is known from its type (see `kind_marker`), and each call resolves to that strategy's
own function, inlined: the session loop is compiled once per strategy, with
nothing of the others in it, and cached on disk (functions passed as
arguments would not be). Adding a built-in: append it to BUILTINS.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeGuard, TypeVar

import numpy as np
from numba.core import errors, types
from numba.extending import overload

from backtest.kernels import jit
from strategies._common import stateless_update
from strategies.base import Builtin
from strategies.flat import Flat
from strategies.progressions import Martingale, GrandMartingale, Paroli, Fibonacci, DAlembert, Labouchere, OneThreeTwoSix, OscarsGrind
from strategies.patterns import FollowTheShoe, Chop, Streak, PatternTable
from strategies.control import RandomBettor
from strategies.counting import ExactCounter
from strategies.roadreader import RoadReader

BUILTINS = (Flat, Martingale, GrandMartingale, Paroli, Fibonacci, DAlembert, Labouchere, OneThreeTwoSix, OscarsGrind, FollowTheShoe, Chop, Streak, PatternTable, RandomBettor, ExactCounter,
            RoadReader)

for _i, _cls in enumerate(BUILTINS):
    if _cls.kind != _i:
        raise ImportError(f"{_cls.__name__}.kind is {_cls.kind}, expected {_i}")


def kind_marker(kind: int) -> tuple[int, ...]:
    """The strategy `kind` as a value whose TYPE says it: a tuple of kind + 1
    zeros. The session loop takes this, so that numba compiles (and caches) it
    once per strategy. (numba.literally would also specialise, but the
    function it recompiles loses the no-reference-counting option.)"""
    return (0,) * (kind + 1)


def runs_compiled(strategy: object) -> TypeGuard[Builtin]:
    """Whether the session loop compiled for `strategy.kind` is this strategy's:
    a built-in's class exactly. A user's subclass of `Builtin` (or of a
    built-in) runs in Python through the same kernel functions, since its
    kind would name another class's compiled code."""
    kind = getattr(type(strategy), "kind", -1)
    return isinstance(kind, int) and 0 <= kind < len(BUILTINS) and BUILTINS[kind] is type(strategy)


def _builtin(kind: object) -> type[Builtin]:
    """The class a kind marker's type names, while compiling."""
    if isinstance(kind, types.BaseTuple):
        return BUILTINS[len(kind) - 1]
    if isinstance(kind, types.IntegerLiteral):
        return BUILTINS[kind.literal_value]
    raise errors.TypingError("the strategy kind must be known while compiling: "
                             "pass kind_marker(kind)")


def _class(kind: int | tuple[int, ...]) -> type[Builtin]:
    return BUILTINS[len(kind) - 1 if isinstance(kind, tuple) else kind]


_Answer = TypeVar("_Answer", bool, int)


def _class_fact(question: Callable[[type[Builtin]], _Answer]) -> Callable[[int | tuple[int, ...]], _Answer]:
    """`fact(kind)`: `question` answered for the strategy `kind` names, in
    Python and, as a constant while compiling, in compiled code."""

    def fact(kind: int | tuple[int, ...]) -> _Answer:
        return question(_class(kind))

    fact.__doc__ = question.__doc__

    @overload(fact, inline="always")
    def _compiled(kind):  # type: ignore[no-untyped-def]
        answer = question(_builtin(kind))

        def impl(kind):  # type: ignore[no-untyped-def]
            return answer
        return impl
    return fact


def _reads_context(cls: type[Builtin]) -> bool:
    """Whether the strategy's `k_decide` or `k_update` reads the context
    array (bankroll, hand numbers, last net); the session loop fills it only
    then. Found from their code: a function that names `ctx` reads it."""
    import dis

    return any(ins.argval == "ctx" for fn in (cls.k_decide, cls.k_update)
               for ins in dis.get_instructions(fn) if ins.opname.startswith("LOAD_"))


def _learns(cls: type[Builtin]) -> bool:
    """Whether the strategy's `k_update` does anything; the session loop
    prepares the stakes and unit results for it only then."""
    return cls.k_update is not stateless_update


def _counts_cards(cls: type[Builtin]) -> bool:
    """Whether the strategy reads the cards not yet seen (`uses_cards`); the
    session loop counts them, and works out the exact values, only then."""
    return cls.uses_cards


def _picks_one(cls: type[Builtin]) -> bool:
    """The strategy's `picks_one`: its decide returns (bet, stake)."""
    return cls.picks_one


def _bet_slot(cls: type[Builtin]) -> int:
    """The strategy's `bet_slot`: where its one bet's code is, or -1."""
    return int(cls.bet_slot)


reads_context = _class_fact(_reads_context)
learns = _class_fact(_learns)
counts_cards = _class_fact(_counts_cards)
picks_one = _class_fact(_picks_one)
bet_slot = _class_fact(_bet_slot)


def reset(kind: int | tuple[int, ...], p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    _class(kind).k_reset(p, s, si)


def init(kind: int | tuple[int, ...], p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    cls = _class(kind)
    if cls.k_init is None:
        cls.k_reset(p, s, si)
    else:
        cls.k_init(p, s, si, seed)


def decide(kind: int | tuple[int, ...], p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray,
           hist: np.ndarray, evs: np.ndarray, out: np.ndarray) -> float | tuple[int, float] | None:
    return _class(kind).k_decide(p, s, si, ctx, hist, evs, out)


def decide_one(kind: int | tuple[int, ...], p: np.ndarray, s: np.ndarray, si: np.ndarray,
               ctx: np.ndarray, hist: np.ndarray, evs: np.ndarray, out: np.ndarray) -> float:
    """The stake a strategy with a `bet_slot` returns (0.0 for any other,
    which the session loop never asks)."""
    stake = _class(kind).k_decide(p, s, si, ctx, hist, evs, out)
    return float(stake) if isinstance(stake, float) else 0.0


def decide_pick(kind: int | tuple[int, ...], p: np.ndarray, s: np.ndarray, si: np.ndarray,
                ctx: np.ndarray, hist: np.ndarray, evs: np.ndarray,
                out: np.ndarray) -> tuple[int, float]:
    """The (bet, stake) a strategy that `picks_one` returns ((0, 0.0) for any
    other, which the session loop never asks)."""
    picked = _class(kind).k_decide(p, s, si, ctx, hist, evs, out)
    return picked if isinstance(picked, tuple) else (0, 0.0)


def update(kind: int | tuple[int, ...], p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray,
           stakes: np.ndarray, unit: np.ndarray, net: float) -> None:
    _class(kind).k_update(p, s, si, ctx, stakes, unit, net)


# In compiled code each call resolves, while compiling, to the one strategy
# `kind` names, inlined: the session loop is specialised per strategy.

@overload(reset, inline="always")
def _reset(kind, p, s, si):  # type: ignore[no-untyped-def]
    fn = jit(_builtin(kind).k_reset)

    def impl(kind, p, s, si):  # type: ignore[no-untyped-def]
        fn(p, s, si)
    return impl


@overload(init, inline="always")
def _init(kind, p, s, si, seed):  # type: ignore[no-untyped-def]
    cls = _builtin(kind)
    if cls.k_init is None:   # a session starts as the progression restarts
        restart = jit(cls.k_reset)

        def impl_reset(kind, p, s, si, seed):  # type: ignore[no-untyped-def]
            restart(p, s, si)
        return impl_reset
    fn = jit(cls.k_init)

    def impl(kind, p, s, si, seed):  # type: ignore[no-untyped-def]
        fn(p, s, si, seed)
    return impl


def _returned(kind, returns: Callable[[type[Builtin]], bool], nothing: object):  # type: ignore[no-untyped-def]
    """The compiled `decide`, `decide_one` or `decide_pick` for the strategy
    `kind` names: its decide's value if `returns` says it gives one, else
    `nothing` (typed, never run: the loop's branch for such a strategy is dead)."""
    cls = _builtin(kind)
    if not returns(cls):
        def impl_none(kind, p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
            return nothing
        return impl_none
    fn = jit(cls.k_decide)

    def impl(kind, p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
        return fn(p, s, si, ctx, hist, evs, out)
    return impl


@overload(decide, inline="always")
def _decide(kind, p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
    return _returned(kind, lambda cls: True, None)


@overload(decide_one, inline="always")
def _decide_one(kind, p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
    return _returned(kind, lambda cls: cls.bet_slot >= 0, 0.0)


@overload(decide_pick, inline="always")
def _decide_pick(kind, p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
    return _returned(kind, lambda cls: cls.picks_one, (0, 0.0))


@overload(update, inline="always")
def _update(kind, p, s, si, ctx, stakes, unit, net):  # type: ignore[no-untyped-def]
    fn = jit(_builtin(kind).k_update)

    def impl(kind, p, s, si, ctx, stakes, unit, net):  # type: ignore[no-untyped-def]
        fn(p, s, si, ctx, stakes, unit, net)
    return impl

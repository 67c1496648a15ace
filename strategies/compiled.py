"""The built-in strategies compiled into one switch per kernel function.

The session loop calls `decide(kind, ...)` etc.; `kind` is the strategy's
position in `BUILTINS` (and its class attribute `kind`). One switch, rather than
functions passed as arguments, keeps the compiled loop cacheable on disk.
Adding a built-in: append it to BUILTINS and add a branch to each switch.
"""

from __future__ import annotations

import numpy as np

from backtest.kernels import jit
from strategies.flat import Flat
from strategies.progressions import Martingale, GrandMartingale, Paroli, Fibonacci, DAlembert, Labouchere, OneThreeTwoSix, OscarsGrind
from strategies.patterns import FollowTheShoe, Chop, Streak, PatternTable
from strategies.control import RandomBettor
from strategies.counting import ExactCounter

BUILTINS = (Flat, Martingale, GrandMartingale, Paroli, Fibonacci, DAlembert, Labouchere, OneThreeTwoSix, OscarsGrind, FollowTheShoe, Chop, Streak, PatternTable, RandomBettor, ExactCounter)

for _i, _cls in enumerate(BUILTINS):
    if _cls.kind != _i:
        raise ImportError(f"{_cls.__name__}.kind is {_cls.kind}, expected {_i}")

_reset_0 = jit(Flat.k_reset)
_init_0 = jit(Flat.k_init)
_decide_0 = jit(Flat.k_decide)
_update_0 = jit(Flat.k_update)
_reset_1 = jit(Martingale.k_reset)
_init_1 = jit(Martingale.k_init)
_decide_1 = jit(Martingale.k_decide)
_update_1 = jit(Martingale.k_update)
_reset_2 = jit(GrandMartingale.k_reset)
_init_2 = jit(GrandMartingale.k_init)
_decide_2 = jit(GrandMartingale.k_decide)
_update_2 = jit(GrandMartingale.k_update)
_reset_3 = jit(Paroli.k_reset)
_init_3 = jit(Paroli.k_init)
_decide_3 = jit(Paroli.k_decide)
_update_3 = jit(Paroli.k_update)
_reset_4 = jit(Fibonacci.k_reset)
_init_4 = jit(Fibonacci.k_init)
_decide_4 = jit(Fibonacci.k_decide)
_update_4 = jit(Fibonacci.k_update)
_reset_5 = jit(DAlembert.k_reset)
_init_5 = jit(DAlembert.k_init)
_decide_5 = jit(DAlembert.k_decide)
_update_5 = jit(DAlembert.k_update)
_reset_6 = jit(Labouchere.k_reset)
_init_6 = jit(Labouchere.k_init)
_decide_6 = jit(Labouchere.k_decide)
_update_6 = jit(Labouchere.k_update)
_reset_7 = jit(OneThreeTwoSix.k_reset)
_init_7 = jit(OneThreeTwoSix.k_init)
_decide_7 = jit(OneThreeTwoSix.k_decide)
_update_7 = jit(OneThreeTwoSix.k_update)
_reset_8 = jit(OscarsGrind.k_reset)
_init_8 = jit(OscarsGrind.k_init)
_decide_8 = jit(OscarsGrind.k_decide)
_update_8 = jit(OscarsGrind.k_update)
_reset_9 = jit(FollowTheShoe.k_reset)
_init_9 = jit(FollowTheShoe.k_init)
_decide_9 = jit(FollowTheShoe.k_decide)
_update_9 = jit(FollowTheShoe.k_update)
_reset_10 = jit(Chop.k_reset)
_init_10 = jit(Chop.k_init)
_decide_10 = jit(Chop.k_decide)
_update_10 = jit(Chop.k_update)
_reset_11 = jit(Streak.k_reset)
_init_11 = jit(Streak.k_init)
_decide_11 = jit(Streak.k_decide)
_update_11 = jit(Streak.k_update)
_reset_12 = jit(PatternTable.k_reset)
_init_12 = jit(PatternTable.k_init)
_decide_12 = jit(PatternTable.k_decide)
_update_12 = jit(PatternTable.k_update)
_reset_13 = jit(RandomBettor.k_reset)
_init_13 = jit(RandomBettor.k_init)
_decide_13 = jit(RandomBettor.k_decide)
_update_13 = jit(RandomBettor.k_update)
_reset_14 = jit(ExactCounter.k_reset)
_init_14 = jit(ExactCounter.k_init)
_decide_14 = jit(ExactCounter.k_decide)
_update_14 = jit(ExactCounter.k_update)


@jit
def reset(kind: int, p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    if kind == 0:
        _reset_0(p, s, si)
    elif kind == 1:
        _reset_1(p, s, si)
    elif kind == 2:
        _reset_2(p, s, si)
    elif kind == 3:
        _reset_3(p, s, si)
    elif kind == 4:
        _reset_4(p, s, si)
    elif kind == 5:
        _reset_5(p, s, si)
    elif kind == 6:
        _reset_6(p, s, si)
    elif kind == 7:
        _reset_7(p, s, si)
    elif kind == 8:
        _reset_8(p, s, si)
    elif kind == 9:
        _reset_9(p, s, si)
    elif kind == 10:
        _reset_10(p, s, si)
    elif kind == 11:
        _reset_11(p, s, si)
    elif kind == 12:
        _reset_12(p, s, si)
    elif kind == 13:
        _reset_13(p, s, si)
    elif kind == 14:
        _reset_14(p, s, si)


@jit
def init(kind: int, p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    if kind == 0:
        _init_0(p, s, si, seed)
    elif kind == 1:
        _init_1(p, s, si, seed)
    elif kind == 2:
        _init_2(p, s, si, seed)
    elif kind == 3:
        _init_3(p, s, si, seed)
    elif kind == 4:
        _init_4(p, s, si, seed)
    elif kind == 5:
        _init_5(p, s, si, seed)
    elif kind == 6:
        _init_6(p, s, si, seed)
    elif kind == 7:
        _init_7(p, s, si, seed)
    elif kind == 8:
        _init_8(p, s, si, seed)
    elif kind == 9:
        _init_9(p, s, si, seed)
    elif kind == 10:
        _init_10(p, s, si, seed)
    elif kind == 11:
        _init_11(p, s, si, seed)
    elif kind == 12:
        _init_12(p, s, si, seed)
    elif kind == 13:
        _init_13(p, s, si, seed)
    elif kind == 14:
        _init_14(p, s, si, seed)


@jit
def decide(kind: int, p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray, hist: np.ndarray,
           evs: np.ndarray, out: np.ndarray) -> None:
    if kind == 0:
        _decide_0(p, s, si, ctx, hist, evs, out)
    elif kind == 1:
        _decide_1(p, s, si, ctx, hist, evs, out)
    elif kind == 2:
        _decide_2(p, s, si, ctx, hist, evs, out)
    elif kind == 3:
        _decide_3(p, s, si, ctx, hist, evs, out)
    elif kind == 4:
        _decide_4(p, s, si, ctx, hist, evs, out)
    elif kind == 5:
        _decide_5(p, s, si, ctx, hist, evs, out)
    elif kind == 6:
        _decide_6(p, s, si, ctx, hist, evs, out)
    elif kind == 7:
        _decide_7(p, s, si, ctx, hist, evs, out)
    elif kind == 8:
        _decide_8(p, s, si, ctx, hist, evs, out)
    elif kind == 9:
        _decide_9(p, s, si, ctx, hist, evs, out)
    elif kind == 10:
        _decide_10(p, s, si, ctx, hist, evs, out)
    elif kind == 11:
        _decide_11(p, s, si, ctx, hist, evs, out)
    elif kind == 12:
        _decide_12(p, s, si, ctx, hist, evs, out)
    elif kind == 13:
        _decide_13(p, s, si, ctx, hist, evs, out)
    elif kind == 14:
        _decide_14(p, s, si, ctx, hist, evs, out)


@jit
def update(kind: int, p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray, stakes: np.ndarray,
           unit: np.ndarray, net: float) -> None:
    if kind == 0:
        _update_0(p, s, si, ctx, stakes, unit, net)
    elif kind == 1:
        _update_1(p, s, si, ctx, stakes, unit, net)
    elif kind == 2:
        _update_2(p, s, si, ctx, stakes, unit, net)
    elif kind == 3:
        _update_3(p, s, si, ctx, stakes, unit, net)
    elif kind == 4:
        _update_4(p, s, si, ctx, stakes, unit, net)
    elif kind == 5:
        _update_5(p, s, si, ctx, stakes, unit, net)
    elif kind == 6:
        _update_6(p, s, si, ctx, stakes, unit, net)
    elif kind == 7:
        _update_7(p, s, si, ctx, stakes, unit, net)
    elif kind == 8:
        _update_8(p, s, si, ctx, stakes, unit, net)
    elif kind == 9:
        _update_9(p, s, si, ctx, stakes, unit, net)
    elif kind == 10:
        _update_10(p, s, si, ctx, stakes, unit, net)
    elif kind == 11:
        _update_11(p, s, si, ctx, stakes, unit, net)
    elif kind == 12:
        _update_12(p, s, si, ctx, stakes, unit, net)
    elif kind == 13:
        _update_13(p, s, si, ctx, stakes, unit, net)
    elif kind == 14:
        _update_14(p, s, si, ctx, stakes, unit, net)

"""Small compiled helpers the built-in strategies share."""

from __future__ import annotations

import numpy as np

from backtest.kernels import jit
from strategies.base import P_ON_PUSH


# The kernel functions of a strategy that keeps no state (plain functions: the
# session loop compiles them into each strategy that uses them).

def stateless_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Nothing to restart."""


def stateless_update(p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray,
                     stakes: np.ndarray, unit: np.ndarray, net: float) -> None:
    """Nothing learned from a hand."""


@jit
def outcome(p: np.ndarray, bet: int, stakes: np.ndarray,
            unit: np.ndarray) -> tuple[bool, bool, bool, bool]:
    """How the main bet `bet` went, as flags for an update without branches:
    (placed, won, lost, pushed and `on_push` is `reset`)."""
    r = unit[bet]
    return stakes[bet] > 0.0, r > 0.0, r < 0.0, (r == 0.0) & (p[P_ON_PUSH] == 1.0)


@jit
def last_decisive(hist: np.ndarray) -> int:
    """The last non-tie winner of the shoe (0 Player, 1 Banker), or -1."""
    for i in range(hist.shape[0] - 1, -1, -1):
        if hist[i] != 2:
            return int(hist[i])
    return -1


@jit
def road_marks(hist: np.ndarray, offset: int, lengths: np.ndarray) -> tuple[int, int, int, int]:
    """Read the shoe so far as the big road and one derived road.

    `lengths` is scratch (one slot per hand at least). Returns (number of
    big-road columns, the last column's side (0 P, 1 B, -1 none), the colour
    of the derived road's last mark (+1 red, -1 blue, 0 none yet), the colour
    a Banker win would add next (+1, -1, or 0 if the road has not started)).
    The rules are those of `backtest.roads` (offset 1 big eye boy, 2 small
    road, 3 cockroach pig).
    """
    ncols = 0
    side = -1
    last = 0
    for i in range(hist.shape[0]):
        ncols, side, last = road_step(lengths, ncols, side, last, offset, hist[i])
    return ncols, side, last, derived_mark(lengths, ncols, side, offset, 1)


@jit
def road_step(lengths: np.ndarray, ncols: int, side: int, last: int, offset: int,
              w: int) -> tuple[int, int, int]:
    """Add one winner `w` to the roads of `road_marks`: the new (number of
    big-road columns, last column's side, last derived mark)."""
    if w == 2:
        return ncols, side, last
    mark = derived_mark(lengths, ncols, side, offset, w)
    if mark != 0:
        last = mark
    if w == side:
        lengths[ncols - 1] += 1
    else:
        lengths[ncols] = 1
        ncols += 1
        side = w
    return ncols, side, last


@jit
def derived_mark(lengths: np.ndarray, ncols: int, side: int, offset: int, w: int) -> int:
    """The mark a win of side `w` adds to the derived road (+1 red, -1 blue, 0 none)."""
    if ncols == 0:
        return 0
    if w == side:
        row = lengths[ncols - 1] + 1
        c = ncols - 1 - offset
        if c < 0:
            return 0
        if lengths[c] >= row:
            return 1
        return -1 if lengths[c] == row - 1 else 1
    c = ncols - 1 - offset
    if c < 0:
        return 0
    return 1 if lengths[ncols - 1] == lengths[c] else -1

"""Small compiled helpers the built-in strategies share."""

from __future__ import annotations

import numpy as np

from backtest.jit.lazy_jit import jit
from strategies.slots import P_ON_PUSH

# The kernel functions of a strategy that keeps no state (plain functions: the
# session loop compiles them into each strategy that uses them).


def stateless_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Nothing to restart."""


def stateless_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    """Nothing learned from a hand."""


@jit
def outcome(
    p: np.ndarray, bet: int, stakes: np.ndarray, unit: np.ndarray
) -> tuple[bool, bool, bool, bool]:
    """How the main bet `bet` went, as flags for an update without branches:
    (placed, won, lost, pushed and `on_push` is `reset`)."""
    r = unit[bet]
    return stakes[bet] > 0.0, r > 0.0, r < 0.0, (r == 0.0) & (p[P_ON_PUSH] == 1.0)


# the largest float: twice it is infinite, so 1.0 + keep * 2.0 * _HUGE is 1 or infinity
_HUGE = float(np.finfo(np.float64).max)


@jit
def restarted(product: float, keep: float) -> float:
    """`product` (1 or more, perhaps infinite) if `keep` is 1.0, or 1.0 if
    `keep` is 0.0, exactly and without a branch: the lesser of the product and
    1 or infinity (`1.0 if keep else product` compiles to a branch on a
    processor without AVX-512)."""
    return min(product, 1.0 + keep * 2.0 * _HUGE)


@jit
def last_decisive(hist: np.ndarray) -> int:
    """The last non-tie winner of the shoe (0 Player, 1 Banker), or -1."""
    for i in range(hist.shape[0] - 1, -1, -1):
        if hist[i] != 2:
            return int(hist[i])
    return -1


# The big road as a derived road reads it: the number of columns, the last
# column's length and side, and the lengths of the columns before it in a
# ring of eight (column k at lengths[k & RING]). A derived road compares the
# last column only with the one 1 to 3 columns before it, so a shoe of any
# length fits in eight numbers.
RING = 7


@jit
def road_marks(hist: np.ndarray, offset: int, lengths: np.ndarray) -> tuple[int, int, int, int]:
    """Read the shoe so far as the big road and one derived road.

    `lengths` is scratch (eight numbers at least). Returns (number of
    big-road columns, the last column's side (0 P, 1 B, -1 none), the colour
    of the derived road's last mark (+1 red, -1 blue, 0 none yet), the colour
    a Banker win would add next (+1, -1, or 0 if the road has not started)).
    The rules are those of `backtest.shoes.roads` (offset 1 big eye boy, 2 small
    road, 3 cockroach pig).
    """
    ncols = cur = 0
    side = -1
    last = 0
    for i in range(hist.shape[0]):
        ncols, cur, side, last = road_step(lengths, ncols, cur, side, last, offset, int(hist[i]))
    return ncols, side, last, derived_mark(lengths, ncols, cur, side, offset, 1)


@jit
def road_step(
    lengths: np.ndarray, ncols: int, cur: int, side: int, last: int, offset: int, w: int
) -> tuple[int, int, int, int]:
    """Add one winner `w` (0 P, 1 B, 2 tie) to the roads of `road_marks`: the
    new (number of columns, last column's length, its side, last derived
    mark). Without branches: which side wins is a coin toss to the
    processor's branch predictor."""
    tie = w == 2
    same = w == side
    mark = derived_mark(lengths, ncols, cur, side, offset, w)
    last = last if tie | (mark == 0) else mark
    # the last column's length, final if a new column starts (a column is
    # read only once it is final, so writing it every hand is harmless)
    lengths[(ncols - 1) & RING] = cur
    grown = cur + 1 if same else 1
    cur = cur if tie else grown
    ncols = ncols + 1 if (not same) & (not tie) else ncols
    side = side if tie else w
    return ncols, cur, side, last


@jit
def derived_mark(lengths: np.ndarray, ncols: int, cur: int, side: int, offset: int, w: int) -> int:
    """The mark a win of side `w` (0 P, 1 B) adds to the derived road: +1
    red, -1 blue, 0 none (the road starts at column `offset` + 1's second
    row). Down the last column it is blue when the column `offset` before
    ends level with the last one (beside the cell above), red otherwise; a
    new column is red when the last column is as long as the one `offset`
    before it. Both compare the same two lengths, with the colours swapped."""
    c = ncols - 1 - offset
    level = lengths[c & RING] == cur
    mark = 1 if level != (w == side) else -1
    return mark if c >= 0 else 0

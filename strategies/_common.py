"""Small compiled helpers the built-in strategies share."""

from __future__ import annotations

import numpy as np

from backtest.jit.lazy_jit import jit

PLAYER, BANKER, TIE = 0, 1, 2  # the winners in a shoe's history

# The functions of a strategy that keeps no state (plain functions: the
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
def last_decisive(hist: np.ndarray) -> int:
    """The last non-tie winner of the shoe (0 Player, 1 Banker), or -1."""
    for i in range(hist.shape[0] - 1, -1, -1):
        if hist[i] != TIE:
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
    columns = length = 0
    side = -1
    last = 0
    for i in range(hist.shape[0]):
        columns, length, side, last = road_step(
            lengths, columns, length, side, last, offset, int(hist[i])
        )
    return columns, side, last, derived_mark(lengths, columns, length, side, offset, BANKER)


@jit
def road_step(
    lengths: np.ndarray, columns: int, length: int, side: int, last: int, offset: int, winner: int
) -> tuple[int, int, int, int]:
    """Add one winner (0 P, 1 B, 2 tie) to the roads of `road_marks`: the new
    (number of columns, last column's length, its side, last derived mark).
    A tie adds nothing. Each is chosen with a conditional expression, which
    compiles to a select: the winner is a coin toss to the processor's branch
    predictor."""
    tie = winner == TIE
    same = winner == side
    mark = derived_mark(lengths, columns, length, side, offset, winner)
    last = last if tie | (mark == 0) else mark
    # the last column's length, final if a new column starts (a column is
    # read only once it is final, so writing it every hand is harmless)
    lengths[(columns - 1) & RING] = length
    grown = length + 1 if same else 1
    length = length if tie else grown
    columns = columns + 1 if (not same) & (not tie) else columns
    side = side if tie else winner
    return columns, length, side, last


@jit
def derived_mark(
    lengths: np.ndarray, columns: int, length: int, side: int, offset: int, winner: int
) -> int:
    """The mark a win of `winner` (0 P, 1 B) adds to the derived road: +1
    red, -1 blue, 0 none (the road starts at column `offset` + 1's second
    row). Down the last column it is blue when the column `offset` before
    ends level with the last one (beside the cell above), red otherwise; a
    new column is red when the last column is as long as the one `offset`
    before it. Both compare the same two lengths, with the colours swapped."""
    c = columns - 1 - offset
    level = lengths[c & RING] == length
    mark = 1 if level != (winner == side) else -1
    return mark if c >= 0 else 0

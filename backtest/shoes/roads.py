"""Roads: the scoreboards a baccarat table draws from the results of its shoe.

Every road is a grid six rows high, read from the top-left corner.

* **Bead plate**: one cell per hand, ties included, filled column by column
  (down the six rows, then the next column), each cell the winner with its
  pair marks.
* **Big road**: one cell per Player or Banker win. A new column starts each
  time the winner changes side; a further win of the same side goes one row
  down. A tie takes no cell: it is counted on the cell before it. Ties dealt
  before the shoe's first Player or Banker win have no cell before them; they
  are kept as a *leading* tie count on the first cell (`RoadEntry.leading_ties`,
  also `BigRoad.leading_ties`, which keeps them while the road has no cell).
  A cell's pair marks are those of its own hand; a tie's pairs show on the
  bead plate only.
* **Big eye boy, small road, cockroach pig**: the derived roads, one red or
  blue mark per big-road entry from their starting point on, drawn like the
  big road (a new column on each change of colour). They read the big road's
  *logical* columns (each run of wins with its full length), never the drawn
  grid, so a dragon tail counts as the long column it is.

Drawing (big road and derived roads): a run goes down its column; when the
cell below is off the six rows or already taken, the run turns right and
continues along that row (the *dragon tail*). A run starts in the top row of
the column right of where the previous run started; a tail that runs along
the top row pushes that start to the first free top cell after it.

Derived roads, with offset 1 (big eye boy), 2 (small road), 3 (cockroach
pig). For a big-road entry in column c (counted from 1), row k:

* k = 1 (the first entry of a new column): compare the lengths of columns
  c-1 and c-1-offset. Equal: red; different: blue.
* k > 1: look at column c-offset. It has a cell in row k: red. Its last
  cell is in row k-1 (it is exactly k-1 long): blue. It is shorter than
  k-1: red.

An entry whose columns to compare do not exist adds nothing, so each road
starts at the entry in row 2 of column offset+1 or, if that column has one
entry only, at row 1 of column offset+2 (big eye boy: column 2 row 2 /
column 3 row 1; small road: 3/2 or 4/1; cockroach pig: 4/2 or 5/1). Red
says the big road repeats the shape it had `offset` columns back, blue that
it breaks it. These are the rules of casino scoreboards as described, e.g.,
by the Wizard of Odds ("Baccarat Score Boards", wizardofodds.com/games/
baccarat/history/).

Predictive marks: live tables show, before a hand, which colour each derived
road would add if that hand were a Banker (or a Player) win (`next_colour`,
`derived_signals`). A Player win always adds the opposite colour of a
Banker win: if the big road's last column is Banker and L long, and the
compared column is M long, a Banker win is blue exactly when M = L, and a
Player win (a new column) is red exactly when M = L.

>>> road = big_road(winners_from_text("BBPTPB"))
>>> [len(column) for column in road.columns], road.columns[1][0].ties
([2, 2, 1], 1)
>>> "".join(derived_road(road, 1))
'RR'
>>> next_colour(road.columns, 1, "B"), next_colour(road.columns, 1, "P")
(<Colour.RED: 'R'>, <Colour.BLUE: 'B'>)

The roads drawn as text, for a terminal, are in `road_text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

import numpy as np

from backtest.core.rules import Winner

#: rows of every road grid
ROWS = 6
#: the derived roads: name and column offset
DERIVED_ROADS = (("Big eye boy", 1), ("Small road", 2), ("Cockroach pig", 3))
#: width of the text a road is fitted into when no width is given
TEXT_WIDTH = 80

PLAYER, BANKER, TIE = 0, 1, 2
_LETTERS = "PBT"

T = TypeVar("T")
Grid = list[list[T | None]]


class Colour(StrEnum):
    """A derived road's mark."""

    RED = "R"
    BLUE = "B"

    @property
    def signal(self) -> int:
        """+1 red, -1 blue: the code `derived_signals` uses."""
        return 1 if self is Colour.RED else -1


@dataclass(frozen=True)
class Bead:
    """A bead-plate cell: one hand."""

    hand: int  # index of the hand in its shoe, from 0
    winner: int  # 0 player, 1 banker, 2 tie
    player_pair: bool = False
    banker_pair: bool = False

    @property
    def letter(self) -> str:
        return _LETTERS[self.winner]


@dataclass(frozen=True)
class RoadEntry:
    """A big-road cell: one Player or Banker win and the ties counted on it."""

    hand: int  # index of the hand in its shoe, from 0
    winner: int  # 0 player, 1 banker
    ties: int = 0  # ties dealt after this hand, before the next win
    player_pair: bool = False
    banker_pair: bool = False
    leading_ties: int = 0  # ties dealt before the shoe's first win (first entry only)

    @property
    def letter(self) -> str:
        return _LETTERS[self.winner]

    @property
    def marked_ties(self) -> int:
        """Every tie drawn on this cell."""
        return self.leading_ties + self.ties


@dataclass(frozen=True, eq=False)
class BigRoad:
    """The big road: `columns` are the runs (each a column of any length, the
    logical road); `grid` is the road as drawn, `ROWS` rows, tails turned."""

    columns: tuple[tuple[RoadEntry, ...], ...]
    grid: Grid[RoadEntry]
    leading_ties: int = 0

    @property
    def lengths(self) -> list[int]:
        return [len(column) for column in self.columns]

    @property
    def entries(self) -> int:
        return sum(len(column) for column in self.columns)


# --- building ---------------------------------------------------------------------------


def winners_from_text(text: str) -> list[int]:
    """Winner codes of a string of P, B and T (any case; spaces ignored).

    >>> winners_from_text("P b T")
    [0, 1, 2]
    """
    codes = []
    for ch in text:
        if ch.isspace():
            continue
        code = _LETTERS.find(ch.upper())
        if code < 0:
            raise ValueError(
                f"unknown result {ch!r}: a result is P (player), B (banker) or T (tie)"
            )
        codes.append(code)
    return codes


def _flags(values: Sequence[bool] | np.ndarray | None, n: int, name: str) -> list[bool]:
    if values is None:
        return [False] * n
    flags = [bool(v) for v in values]
    if len(flags) != n:
        raise ValueError(f"{name} has {len(flags)} entries for {n} winners")
    return flags


def _codes(winners: Sequence[int] | np.ndarray) -> list[int]:
    codes = [int(w) for w in winners]
    for i, code in enumerate(codes):
        if code not in (PLAYER, BANKER, TIE):
            raise ValueError(
                f"winners[{i}] is {code}: a winner code is 0 (player), 1 (banker) or 2 (tie)"
            )
    return codes


def bead_plate(
    winners: Sequence[int] | np.ndarray,
    player_pairs: Sequence[bool] | np.ndarray | None = None,
    banker_pairs: Sequence[bool] | np.ndarray | None = None,
    rows: int = ROWS,
) -> Grid[Bead]:
    """The bead plate as `rows` lists (top row first), one cell per hand.

    >>> [[b.letter if b else "." for b in row] for row in bead_plate([1, 0, 2], rows=2)]
    [['B', 'T'], ['P', '.']]
    """
    codes = _codes(winners)
    pp = _flags(player_pairs, len(codes), "player_pairs")
    bp = _flags(banker_pairs, len(codes), "banker_pairs")
    columns = -(-len(codes) // rows)
    grid: Grid[Bead] = [[None] * columns for _ in range(rows)]
    for i, code in enumerate(codes):
        grid[i % rows][i // rows] = Bead(i, code, pp[i], bp[i])
    return grid


def big_road(
    winners: Sequence[int] | np.ndarray,
    player_pairs: Sequence[bool] | np.ndarray | None = None,
    banker_pairs: Sequence[bool] | np.ndarray | None = None,
    rows: int = ROWS,
) -> BigRoad:
    """The big road of a shoe's results (winner codes 0 player, 1 banker, 2 tie)."""
    codes = _codes(winners)
    pp = _flags(player_pairs, len(codes), "player_pairs")
    bp = _flags(banker_pairs, len(codes), "banker_pairs")
    runs: list[list[RoadEntry]] = []
    leading = 0
    for i, code in enumerate(codes):
        if code == TIE:
            if runs:
                last = runs[-1][-1]
                runs[-1][-1] = RoadEntry(
                    last.hand,
                    last.winner,
                    last.ties + 1,
                    last.player_pair,
                    last.banker_pair,
                    last.leading_ties,
                )
            else:
                leading += 1
            continue
        entry = RoadEntry(i, code, 0, pp[i], bp[i], leading if not runs else 0)
        if runs and runs[-1][0].winner == code:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    columns = tuple(tuple(run) for run in runs)
    return BigRoad(columns, _fill([list(c) for c in columns], rows), leading)


def draw(lengths: Sequence[int], rows: int = ROWS) -> list[list[tuple[int, int]]]:
    """Where each entry of each run goes on a grid `rows` high: (row, column)
    for every entry, run by run (see the module docstring for the rule).

    >>> draw([7, 2])
    [[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (5, 1)], [(0, 1), (1, 1)]]
    """
    taken: set[tuple[int, int]] = set()
    placed: list[list[tuple[int, int]]] = []
    start = -1
    for length in lengths:
        start += 1
        while (0, start) in taken:
            start += 1
        row, col, turned = 0, start, False
        cells = []
        for k in range(length):
            if k:
                if not turned and row + 1 < rows and (row + 1, col) not in taken:
                    row += 1
                else:
                    turned = True
                    col += 1
            taken.add((row, col))
            cells.append((row, col))
        placed.append(cells)
    return placed


def _fill(runs: Sequence[Sequence[T]], rows: int) -> Grid[T]:
    """The grid of `runs` drawn by `draw`."""
    placed = draw([len(run) for run in runs], rows)
    columns = max((col + 1 for cells in placed for _, col in cells), default=0)
    grid: Grid[T] = [[None] * columns for _ in range(rows)]
    for run, cells in zip(runs, placed):
        for item, (row, col) in zip(run, cells):
            grid[row][col] = item
    return grid


def _check_offset(offset: int) -> None:
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 1:
        raise ValueError(f"offset must be a whole number of columns, 1 or more; got {offset!r}")


def derived_road(road: BigRoad, offset: int) -> list[Colour]:
    """The marks of the derived road comparing columns `offset` apart
    (1 big eye boy, 2 small road, 3 cockroach pig), in order."""
    _check_offset(offset)
    lengths = road.lengths
    marks = []
    for c, length in enumerate(lengths):
        for k in range(length):  # row, from 0
            if k == 0:
                if c - 1 - offset >= 0:
                    marks.append(
                        Colour.RED if lengths[c - 1] == lengths[c - 1 - offset] else Colour.BLUE
                    )
            elif c - offset >= 0:
                # the compared column ends just above row k: blue; else red
                marks.append(Colour.BLUE if lengths[c - offset] == k else Colour.RED)
    return marks


def derived_grid(marks: Sequence[Colour], rows: int = ROWS) -> Grid[Colour]:
    """A derived road drawn like the big road: a new column on each change of colour."""
    runs: list[list[Colour]] = []
    for mark in marks:
        if runs and runs[-1][0] is mark:
            runs[-1].append(mark)
        else:
            runs.append([mark])
    return _fill(runs, rows)


def _side(side: int | str) -> int:
    if isinstance(side, Winner):
        code = side.code
    elif isinstance(side, str):
        code = _LETTERS.find(side.upper()) if len(side) == 1 else -1
    else:
        code = int(side)
    if code not in (PLAYER, BANKER):
        raise ValueError(
            f"side must be the player or the banker (a tie adds no mark), got {side!r}"
        )
    return code


def _next(lengths: Sequence[int], last_side: int, offset: int, side: int) -> Colour | None:
    n = len(lengths)
    if n - offset < 1:
        return None
    compared = lengths[n - 1 - offset]
    if side == last_side:
        # a further row of the last column: row lengths[-1] + 1, counted from 1
        return Colour.BLUE if compared == lengths[-1] else Colour.RED
    return Colour.RED if compared == lengths[-1] else Colour.BLUE


def next_colour(
    columns: Sequence[Sequence[RoadEntry]], offset: int, side: int | str
) -> Colour | None:
    """The mark the derived road of `offset` would add if the next result were
    `side` (Winner.PLAYER/BANKER, 0/1, or "P"/"B"), given the big road's
    `columns`; None while that road has not started."""
    _check_offset(offset)
    code = _side(side)
    if not columns:
        return None
    return _next([len(c) for c in columns], columns[-1][0].winner, offset, code)


def derived_signals(
    winners: Sequence[int] | np.ndarray, offsets: Sequence[int] = (1, 2, 3)
) -> np.ndarray:
    """For each hand i, the mark each derived road would add if hand i were a
    Banker win, from the hands before it: +1 red, -1 blue, 0 not started.

    Shape (n, len(offsets)), int8; one column per offset (big eye boy, small
    road, cockroach pig by default). A Player win would add the opposite mark,
    so the Player's signal is the negation. This is what a live table shows
    before hand i is dealt, and what a strategy deciding hand i may read.
    """
    for offset in offsets:
        _check_offset(offset)
    codes = _codes(winners)
    out = np.zeros((len(codes), len(offsets)), dtype=np.int8)
    lengths: list[int] = []
    last = -1
    for i, code in enumerate(codes):
        for j, offset in enumerate(offsets):
            mark = _next(lengths, last, offset, BANKER) if lengths else None
            out[i, j] = mark.signal if mark is not None else 0
        if code == TIE:
            continue
        if code == last:
            lengths[-1] += 1
        else:
            lengths.append(1)
            last = code
    return out

"""The big road under the table, drawn by `backtest.shoes.roads`, as text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from backtest.shoes import roads

#: rows of the big road
ROAD_ROWS = 6
#: columns of the big road shown under the table (the latest ones)
ROAD_COLUMNS_SHOWN = 24


def big_road(winners: Iterable[str]) -> list[list[str]]:
    """The big road of a shoe's results: a grid of 6 rows, `grid[row][column]`.

    `winners` are Winner values or the letters P, B and T. A cell holds P or
    B; a new column starts at the top each time the winner changes; a streak
    that reaches the bottom row (or a cell already taken) turns right along
    its row, the dragon tail. A tie is not a cell: it is counted on the cell
    before it, as a number after the letter. Ties before the first P or B are
    counted before the letter of the first cell (`2B`: two ties, then Banker),
    and while there are only ties the one cell reads `T` and their number.

    >>> big_road("BTTP")[0]
    ['B2', 'P']
    >>> [row[0] for row in big_road("TT")]
    ['T2', '', '', '', '', '']
    """
    codes = []
    for w in winners:
        letter = str(w)[:1].upper()
        if letter not in ("P", "B", "T"):
            raise ValueError(f"not a result: {w!r} (expected P, B or T, or a Winner)")
        codes.append("PBT".index(letter))
    # drawn by `backtest.shoes.roads`, as `backtest roads` draws it
    road = roads.big_road(codes, rows=ROAD_ROWS)
    if not road.columns:
        if road.leading_ties:
            return [[f"T{road.leading_ties}"]] + [[""] for _ in range(ROAD_ROWS - 1)]
        return [[] for _ in range(ROAD_ROWS)]
    return [
        [
            "" if entry is None else f"{entry.leading_ties or ''}{entry.letter}{entry.ties or ''}"
            for entry in row
        ]
        for row in road.grid
    ]


def render_big_road(
    grid: Sequence[Sequence[str]], max_columns: int | None = None, width: int | None = None
) -> str:
    """The grid as text, one line per row, `.` for an empty cell; with
    `max_columns`, or where `width` (characters) holds fewer, only the latest
    columns (a note says how many are hidden).

    >>> print(render_big_road(big_road("BBP")))
    B  P
    B  .
    .  .
    .  .
    .  .
    .  .
    """
    columns = max((len(row) for row in grid), default=0)
    if columns == 0:
        return "(no hands yet)"
    cell = max(max(len(cell) for row in grid for cell in row) + 1, 3)
    if width is not None:
        fit = max(1, (width + 1) // cell)
        max_columns = fit if max_columns is None else min(max_columns, fit)
    hidden = 0
    if max_columns is not None and columns > max_columns:
        hidden = columns - max_columns
    lines = []
    for row in grid:
        cells = [(text or ".").ljust(cell) for text in row[hidden:]]
        lines.append("".join(cells).rstrip())
    if hidden:
        lines.append(f"({hidden} earlier column{'s' if hidden > 1 else ''} not shown)")
    return "\n".join(lines)

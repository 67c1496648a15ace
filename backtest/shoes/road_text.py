"""Roads as text: the grids of a shoe's bead plate, big road and derived roads
drawn in a terminal's width (a grid keeps its last columns that fit; the words
wrap), in colour or not (the roads themselves are built in `roads`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from backtest.core import tables
from backtest.core.errors import UsageError
from backtest.core.hands import Hands
from backtest.shoes.roads import (
    BANKER,
    DERIVED_ROADS,
    PLAYER,
    TIE,
    Bead,
    Colour,
    Grid,
    RoadEntry,
    bead_plate,
    big_road,
    derived_grid,
    derived_road,
)

T = TypeVar("T")

_RESET = "\x1b[0m"
_ANSI = {"red": "\x1b[31m", "blue": "\x1b[34m", "green": "\x1b[32m"}
_SIDE_COLOUR = {PLAYER: "blue", BANKER: "red", TIE: "green"}


def _paint(text: str, colour: str, on: bool) -> str:
    return f"{_ANSI[colour]}{text}{_RESET}" if on and text else text


def _pairs(player_pair: bool, banker_pair: bool, colour: bool) -> tuple[str, str]:
    """(plain, painted) pair marks: b banker pair, p player pair."""
    plain = ("b" if banker_pair else "") + ("p" if player_pair else "")
    painted = (_paint("b", "red", colour) if banker_pair else "") + (
        _paint("p", "blue", colour) if player_pair else ""
    )
    return plain, painted


def _bead_text(bead: Bead, colour: bool) -> tuple[str, str]:
    plain, painted = _pairs(bead.player_pair, bead.banker_pair, colour)
    return bead.letter + plain, _paint(bead.letter, _SIDE_COLOUR[bead.winner], colour) + painted


def _entry_text(entry: RoadEntry, colour: bool) -> tuple[str, str]:
    plain, painted = _pairs(entry.player_pair, entry.banker_pair, colour)
    ties = str(entry.marked_ties) if entry.marked_ties else ""
    return (
        entry.letter + plain + ties,
        _paint(entry.letter, _SIDE_COLOUR[entry.winner], colour)
        + painted
        + _paint(ties, "green", colour),
    )


def _mark_text(mark: Colour, colour: bool) -> tuple[str, str]:
    return mark.value, _paint(mark.value, "red" if mark is Colour.RED else "blue", colour)


def _fit(cell_width: int, text_width: int) -> int:
    """Columns of cells `cell_width` wide (one space between) in `text_width` characters."""
    return max(1, (text_width + 1) // (cell_width + 1))


def render_grid(
    grid: Grid[T],
    cell: Callable[[T, bool], tuple[str, str]],
    *,
    colour: bool = False,
    width: int | None = None,
    text_width: int | None = None,
) -> tuple[list[str], int]:
    """The lines of `grid` (a cell's text from `cell(value, colour)` as (plain,
    painted)), keeping its last `width` columns (default: what fits in
    `text_width` characters, the terminal's by default); also how many
    columns were left out."""
    texts = [[cell(v, colour) if v is not None else ("", "") for v in row] for row in grid]
    cell_width = max((len(plain) for row in texts for plain, _ in row), default=1) or 1
    columns = len(grid[0]) if grid else 0
    if width is None:
        width = _fit(cell_width, tables.terminal_width() if text_width is None else text_width)
    keep = min(columns, width)
    lines = []
    for row in texts:
        shown = row[columns - keep :]
        line = " ".join(painted + " " * (cell_width - len(plain)) for plain, painted in shown)
        lines.append(line.rstrip())
    return lines, columns - keep


def _section(
    title: str,
    grid: Grid[T],
    cell: Callable[[T, bool], tuple[str, str]],
    colour: bool,
    width: int | None,
    empty: str,
    text_width: int,
) -> list[str]:
    if not grid or not grid[0]:
        return [tables.paragraphs([f"{title}: {empty}"], text_width)]
    lines, left_out = render_grid(grid, cell, colour=colour, width=width, text_width=text_width)
    columns = len(grid[0])
    note = f", the first {left_out} not shown" if left_out else ""
    head = f"{title} ({columns} column{'s' if columns != 1 else ''}{note}):"
    return [tables.paragraphs([head], text_width), *lines]


def _shoe_numbers(hands: Hands) -> list[int]:
    return [int(s) for s in np.unique(hands.shoe)]


def render(
    hands: Hands,
    *,
    title: str = "",
    colour: bool = False,
    width: int | None = None,
    text_width: int | None = None,
) -> str:
    """Every road of `hands` (one shoe), labelled, as text fitted to
    `text_width` (default: the terminal's); `width`: the last columns of each
    grid shown (default: what fits); `colour` adds ANSI colours (red
    Banker/red, blue Player/blue, green Tie)."""
    if width is not None and width < 1:
        raise UsageError(f"--width must be at least 1 column, got {width}")
    text_width = tables.terminal_width() if text_width is None else text_width
    winners = hands.winner
    pairs = "player_pair" in hands.known and "banker_pair" in hands.known
    counts = [int(np.count_nonzero(winners == code)) for code in (PLAYER, BANKER, TIE)]
    lines = [
        tables.paragraphs(
            [
                f"{title}{': ' if title else ''}{len(hands)} hands (Player {counts[0]}, "
                f"Banker {counts[1]}, Tie {counts[2]})"
            ],
            text_width,
        ),
        "",
    ]
    lines += _section(
        "Bead plate",
        bead_plate(winners, hands.player_pair, hands.banker_pair),
        _bead_text,
        colour,
        width,
        "no hands",
        text_width,
    )
    lines.append("")
    road = big_road(winners, hands.player_pair, hands.banker_pair)
    lines += _section(
        "Big road",
        road.grid,
        _entry_text,
        colour,
        width,
        f"no Player or Banker win yet ({road.leading_ties} ties)",
        text_width,
    )
    for name, offset in DERIVED_ROADS:
        lines.append("")
        marks = derived_road(road, offset)
        lines += _section(
            f"{name}: {marks.count(Colour.RED)} red, {marks.count(Colour.BLUE)} blue",
            derived_grid(marks),
            _mark_text,
            colour,
            width,
            "not started",
            text_width,
        )
    lines.append("")
    legend = (
        "Bead plate and big road: B banker, P player, T tie; b banker pair, p player pair"
        if pairs
        else "Bead plate and big road: B banker, P player, T tie (pairs not recorded)"
    )
    lines.append(
        tables.paragraphs(
            [
                legend,
                "Big road: a number counts the ties marked on the cell (ties before the "
                "first win go on the first cell)",
                "Derived roads: R red, B blue",
            ],
            text_width,
        )
    )
    return "\n".join(lines) + "\n"


def render_shoe(
    hands: Hands,
    shoe: int = 1,
    *,
    source: str = "",
    colour: bool = False,
    width: int | None = None,
    all_shoes: bool = True,
) -> str:
    """The roads of the `shoe`-th shoe (from 1) of `hands`, headed by its
    place (`all_shoes`: `hands` holds every shoe of the file, so the header
    says how many there are; else the file was read only as far as `shoe`)."""
    numbers = _shoe_numbers(hands)
    if isinstance(shoe, bool) or not isinstance(shoe, int) or not 1 <= shoe <= len(numbers):
        have = (
            f"shoes 1 to {len(numbers)}"
            if len(numbers) > 1
            else "one shoe"
            if numbers
            else "no shoes"
        )
        raise UsageError(f"--shoe {shoe}: {source or 'the file'} has {have}")
    place = f"{shoe} of {len(numbers)}" if all_shoes or len(numbers) > shoe else f"{shoe}"
    if hands.labels:  # the file's own id, then its place
        place = f"{hands.shoe_name(numbers[shoe - 1])} ({place})"
    title = f"{source + ', ' if source else ''}shoe {place}"
    return render(hands.shoe_slice(numbers[shoe - 1]), title=title, colour=colour, width=width)

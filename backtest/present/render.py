"""Hands as text for people and programs: a table, CSV, or JSON.

Every format shows only what the hands record: an outcome-level shoe has no
card columns, a road has only winners. Shoe numbers count from 1.

>>> from backtest.core.cards import parse_cards
>>> from backtest.shoes.recorded import deal_cards
>>> columns, _ = deal_cards(parse_cards("5 K 9 2 3 8"))
>>> one = Hands.from_columns(1, shoe=[0], hand=[1], **columns)
>>> print(hands(one, "csv"), end="")
shoe,hand,player_cards,banker_cards,player_total,banker_total,winner,natural,player_pair,banker_pair,player_card_count,banker_card_count
1,1,5 9 3,K 2 8,7,0,player,false,false,false,3,3
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import polars as pl

from backtest.core import tables
from backtest.core.errors import UsageError
from backtest.core.hands import Hands

#: the formats `hands` renders
FORMATS = ("table", "csv", "json")


#: hands rendered at a time by `pieces` (text for them is a few hundred bytes a hand)
BLOCK_HANDS = 50_000


def hands(hands: Hands, fmt: str) -> str:
    """Render `hands` as "table", "csv" (header and one row per hand) or "json"
    (a list of objects, one per hand)."""
    return "".join(pieces(hands, fmt))


def pieces(hands: Hands, fmt: str) -> Iterator[str]:
    """`hands(hands, fmt)` a block of about BLOCK_HANDS hands at a time (whole
    shoes), for a caller to write as they come: the text of a big record is
    never held whole. The pieces join to exactly `hands`' text."""
    return block_pieces(lambda: _blocks(hands), hands.known, fmt)


def block_pieces(
    blocks: Callable[[], Iterable[Hands]], known: frozenset[str], fmt: str
) -> Iterator[str]:
    """`pieces` of hands that come in blocks of whole shoes (in order, each
    shoe in one block) that know the columns `known`: `blocks()` gives them,
    and again for each further pass (a table's widths are found first), so
    the hands need never be held at once."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "table":
        yield from _table_pieces(blocks, known)
    elif fmt == "csv":
        for k, block in enumerate(blocks()):
            yield block.to_frame().write_csv(include_header=k == 0)
    else:  # a JSON list, indented as every command's JSON, written a block of items at a time
        import json

        yield "["
        n = 0
        for block in blocks():
            items = json.dumps(json.loads(block.to_frame().write_json()), indent=2)
            if items != "[]":
                yield ("," if n else "") + items[1:-2]
            n += len(block)
        yield "\n]\n" if n else "]\n"


def _blocks(hands: Hands) -> list[Hands]:
    """The hands in blocks of whole shoes of about BLOCK_HANDS hands (one
    block, the hands themselves, when they are fewer)."""
    if len(hands) <= BLOCK_HANDS:
        return [hands]
    starts = np.flatnonzero(np.r_[True, hands.shoe[1:] != hands.shoe[:-1]])
    cuts = [0]
    for start in starts.tolist():
        if start - cuts[-1] >= BLOCK_HANDS:
            cuts.append(start)
    cuts.append(len(hands))
    return [hands.take(np.arange(a, b)) for a, b in zip(cuts, cuts[1:]) if b > a]


def table(hands: Hands) -> str:
    """A fixed-width table per shoe, then a line counting the wins."""
    return "".join(_table_pieces(lambda: _blocks(hands), hands.known))


def _table_pieces(
    blocks: Callable[[], Iterable[Hands]], k: frozenset[str], width: int | None = None
) -> Iterator[str]:
    """`table`, a block at a time: the columns' widths from a first pass over
    the blocks (so every block is laid out alike), then the rows; fitted to
    `width` (default: the terminal's), the columns that do not fit beside the
    hand's number stacked below, each part led by it again."""
    columns: list[tuple[str, str, bool]] = [("hand", "hand", True)]  # (title, key, right-aligned)
    if "cards" in k:
        columns += [("player", "player_cards", False), ("banker", "banker_cards", False)]
    elif "card_counts" in k:
        columns += [("cards", "cards", False)]
    if "player_total" in k:
        columns.append(("P", "player_total", True))
    if "banker_total" in k:
        columns.append(("B", "banker_total", True))
    columns += [("winner", "winner", False), ("", "flags", False)]

    widths = {key: len(title) for title, key, _ in columns}
    for block in blocks():
        cells = block.to_frame().select(_cell_exprs(columns, k))
        longest = cells.select(pl.all().str.len_chars().max()).row(0, named=True)
        for key, n in longest.items():
            widths[key] = max(widths[key], n or 0)
    # the columns after the hand's number, stacked below it where they do not fit
    width = tables.terminal_width() if width is None else width
    room = width - widths["hand"]
    parts = tables.column_parts([widths[key] + 2 for _, key, _ in columns[1:]], 1, room)
    layouts: list[tuple[pl.Expr, str]] = []  # (a part's rows, its titles)
    for part in parts:
        shown = [columns[0], *(columns[i] for i in part)]
        padded = [
            (pl.col(key).str.pad_start if right else pl.col(key).str.pad_end)(widths[key])
            for _, key, right in shown
        ]
        titles = "  ".join(
            title.rjust(widths[key]) if right else title.ljust(widths[key])
            for title, key, right in shown
        ).rstrip()
        layouts.append(
            (
                pl.concat_str(padded, separator="  ")
                .str.strip_chars_end()
                .alias(str(len(layouts))),
                titles,
            )
        )

    first = True
    counts = _Counts()
    for block in blocks():
        counts.add(block)
        frame = block.to_frame()
        cells = frame.select(_cell_exprs(columns, k)).select([row for row, _ in layouts])
        texts = [cells.to_series(i).to_list() for i in range(len(layouts))]
        shoes = frame["shoe"].to_numpy()
        starts = np.flatnonzero(np.r_[True, shoes[1:] != shoes[:-1]]).tolist()
        out: list[str] = []
        for a, b in zip(starts, [*starts[1:], len(shoes)]):
            if not first:
                out.append("")
            first = False
            n = b - a
            name = block.shoe_name(int(block.shoe[a]))
            out.append(f"shoe {name}: {n} hand{'s' if n != 1 else ''}")
            for i, (_, titles) in enumerate(layouts):
                if i:
                    out.append("")
                out.append(titles)
                out.extend(texts[i][a:b])
        if out:
            yield "\n".join(out) + "\n"
    yield ("\n" if not first else "") + tables.paragraphs([counts.line(k)], width) + "\n"


def _cell_exprs(columns: list[tuple[str, str, bool]], known: frozenset[str]) -> list[pl.Expr]:
    """The text of each of the table's `columns` (title, key, right-aligned)
    for a frame of hands that know `known` (`Hands.to_frame`): a number as
    written, the cards' counts as `2/3`, the flags set by name."""
    out = []
    for _, key, _ in columns:
        if key == "cards":  # (the cards' counts, where the cards are not known)
            expr = pl.format("{}/{}", "player_card_count", "banker_card_count")
        elif key == "flags":
            flags = [
                pl.when(pl.col(name).fill_null(False)).then(pl.lit(name.replace("_", " ")))
                for name in ("natural", "player_pair", "banker_pair")
                if name in known
            ]
            expr = pl.concat_str(flags, separator=", ", ignore_nulls=True) if flags else pl.lit("")
        else:
            expr = pl.col(key).cast(pl.String).fill_null("")
        out.append(expr.alias(key))
    return out


def summary(hands: Hands, width: int | None = None) -> str:
    """One line: hands, shoes, and wins of each side (and pairs when recorded),
    wrapped to `width` when given."""
    counts = _Counts()
    counts.add(hands)
    line = counts.line(hands.known)
    return line if width is None else tables.paragraphs([line], width)


class _Counts:
    """What `summary` counts, added up a block of whole shoes at a time."""

    def __init__(self) -> None:
        self.hands = self.shoes = self.player_pairs = self.banker_pairs = 0
        self.wins = np.zeros(3, np.int64)

    def add(self, hands: Hands) -> None:
        self.hands += len(hands)
        self.shoes += hands.n_shoes
        self.wins += np.bincount(hands.winner.astype(np.int64), minlength=3)[:3]
        self.player_pairs += int(hands.player_pair.sum())
        self.banker_pairs += int(hands.banker_pair.sum())

    def line(self, known: frozenset[str]) -> str:
        n, shoes, wins = self.hands, self.shoes, self.wins
        text = (
            f"{n} hand{'s' if n != 1 else ''} in {shoes} shoe{'s' if shoes != 1 else ''}: "
            f"player {wins[0]}, banker {wins[1]}, tie {wins[2]}"
        )
        pairs = [
            f"{side} pairs {getattr(self, side + '_pairs')}"
            for side in ("player", "banker")
            if f"{side}_pair" in known
        ]
        return text + ("; " + ", ".join(pairs) if pairs else "")


__all__ = ["BLOCK_HANDS", "FORMATS", "block_pieces", "hands", "pieces", "summary", "table"]

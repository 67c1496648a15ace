"""A big card-level text file, or road file, read a shoe at a time.

One pass over the file checks and deals every shoe as `read_shoes` does (the
same errors and warnings) but keeps only an index: where each shoe's line is
and how many hands it deals, a few dozen bytes a shoe. (A road file is
indexed when it is a shoe a line: see `road_strings.a_shoe_a_line`.) Any of the shoes are
then read again by the index, so that a run holds at once only the shoes of
the sessions it is playing, and a printout only a block of them: memory is
bounded by those and the index, not by the file.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "shoes.txt"
>>> _ = path.write_text("# two shoes\\n5 K 9 2 3 8\\n\\n2 9 3 K 8 9 K K\\n", encoding="utf-8")
>>> index = index_shoes(path, decks=8, burn=False)
>>> index.hands.tolist(), index.line.tolist()
([1, 2], [2, 4])
>>> hands = read_indexed(index, np.array([1]))
>>> hands.shoe.tolist(), hands.hand.tolist()
([1, 1], [1, 2])
"""

from __future__ import annotations

import os
import warnings
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from backtest.core.errors import ShoeFormatError
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.shoes.recorded.card_level import (
    Growing,
    card_text_shoes,
    dealt_shoes,
)
from backtest.shoes.recorded.options import check_options
from backtest.shoes.recorded.road_strings import a_shoe_a_line, line_shoes, road_shoe_hands
from backtest.shoes.recorded.sniff import PARQUET_MAGIC, sniff
from backtest.shoes.recorded.text import (
    HEAD_BYTES,
    STDIN,
    IncompleteHandWarning,
    Place,
    StrPath,
    load_head,
    placed_lines,
    source_name,
)

#: files larger than this are read a line at a time (smaller ones are read whole)
STREAMED_BYTES = HEAD_BYTES

#: the formats of the files indexed a shoe at a time when they are big
INDEXED_KINDS = ("card-text", "road")


def streamable(
    path: StrPath, fmt: str | None = None, columns: Mapping[str, str] | None = None
) -> str | None:
    """The format (one of INDEXED_KINDS: `fmt`, or else as its first megabyte
    reads) of a file of more than STREAMED_BYTES to be indexed a shoe at a
    time: card-level text, or roads a shoe a line; None for standard input,
    a column mapping (which is for CSV), another format, or a file that
    cannot be read (its reader says why)."""
    if columns or fmt not in (None, *INDEXED_KINDS):
        return None
    kind = streamed_kind(path, fmt, None)
    return kind if kind in INDEXED_KINDS else None


#: the formats read from the file a line at a time when it is big
STREAMED_KINDS = ("card-text", "card-csv", "outcome-csv", "road")


def streamed_kind(
    path: StrPath, fmt: str | None = None, columns: Mapping[str, str] | None = None
) -> str | None:
    """The format of a file of more than STREAMED_BYTES to be read a line at
    a time (one of STREAMED_KINDS: `fmt`, or else as its first megabyte
    reads); None for standard input, Parquet, another format, or a file that
    cannot be read (its reader says why)."""
    if fmt not in (None, *STREAMED_KINDS):
        return None
    kind = _big_kind(path, fmt, columns)
    return kind if kind in STREAMED_KINDS else None


def streamed_json(
    path: StrPath, fmt: str | None = None, columns: Mapping[str, str] | None = None
) -> bool:
    """Whether a file of more than STREAMED_BYTES is JSON (`fmt`, or else as
    its first megabyte reads), to be tried as JSON Lines read a line at a
    time (`live_json.json_lines_hands`); False for standard input, another
    format, or a file that cannot be read."""
    return fmt in (None, "json") and _big_kind(path, fmt, columns) == "json"


def _big_kind(path: StrPath, fmt: str | None, columns: Mapping[str, str] | None) -> str | None:
    """`fmt`, or the format the first megabyte of a file of more than
    STREAMED_BYTES reads as; None for standard input, Parquet, a smaller
    file, one that cannot be read, or roads whose first megabyte may be a
    column of results (a result a line: only the whole file tells)."""
    if os.fspath(path) == STDIN:
        return None
    try:
        if os.path.getsize(path) <= STREAMED_BYTES:
            return None
        with open(path, "rb") as fh:
            data = fh.read(HEAD_BYTES + 1)
    except OSError:
        return None
    if data.startswith(PARQUET_MAGIC):
        return None
    if fmt not in (None, "road"):
        return fmt
    source, head, _ = load_head(path, data)
    kind = fmt or sniff(source, head, columns)[0]
    if kind == "road" and not a_shoe_a_line(head, source):
        return None
    return kind


@dataclass(frozen=True)
class ShoeIndex:
    """The shoes with a hand in them of a card-level text file (or a road
    file: `kind`), in order: the stretch of the file that holds each one's
    line (its first byte and end byte, and the lines before it there: see
    `text.Place`), its line number, and its hands. `whole`: every shoe of
    the file is indexed (else its first, as far as the pass was asked to
    read)."""

    path: str
    source: str
    decks: int
    burn: bool
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    before: np.ndarray  # int32
    line: np.ndarray  # int64
    hands: np.ndarray  # int64
    whole: bool
    kind: str = "card-text"

    def __len__(self) -> int:
        return int(self.hands.shape[0])

    @property
    def known(self) -> frozenset[str]:
        """What the shoes' hands record (a road's, only the winner)."""
        return ALL_KNOWN if self.kind == "card-text" else frozenset()


def index_shoes(
    path: StrPath,
    decks: int,
    burn: bool,
    until: Callable[[int], bool] | None = None,
    kind: str = "card-text",
) -> ShoeIndex:
    """Index the shoes of a card-level text file (or of roads a shoe a line:
    `kind`, as `streamable` tells) in one pass, each checked and dealt as
    `read_shoes` deals it (its errors, and a warning for a shoe that ends in
    the middle of a hand) and then let go. `until` is told the hands of each
    shoe in turn: the pass stops after the shoe it answers True for (the
    file is not read further)."""
    source = source_name(path)
    check_options(source, kind, None, burn)
    start, end, before, line, hands = (array("q") for _ in range(5))
    place: list[tuple[int, Place]] = [(0, (0, 0, 0))]

    def lines() -> Iterator[tuple[int, str]]:
        seen_text = False
        for number, text, where in placed_lines(path):
            place[0] = number, where
            seen_text = seen_text or bool(text.strip())
            yield number, text
        if not seen_text:
            raise ShoeFormatError(f"{source}: no shoes: the file is empty")

    whole = True
    counts: Iterator[int]
    if kind == "card-text":
        dealt = dealt_shoes(card_text_shoes(lines(), source), source, decks, burn)
        counts = (int(shoe.columns["winner"].shape[0]) for shoe in dealt)
    else:
        counts = (int(codes.shape[0]) for _, codes in line_shoes(lines(), source, decks))
    for n in counts:
        # (the readers give a line's shoe as soon as they have read the line)
        number, (first, last, k) = place[0]
        start.append(first)
        end.append(last)
        before.append(k)
        line.append(number)
        hands.append(n)
        if until is not None and until(n):
            whole = False
            break
    return ShoeIndex(
        os.fspath(path),
        source,
        decks,
        burn,
        np.frombuffer(start, np.int64),
        np.frombuffer(end, np.int64),
        np.frombuffer(before, np.int64).astype(np.int32),
        np.frombuffer(line, np.int64),
        np.frombuffer(hands, np.int64),
        whole,
        kind,
    )


def first_shoes(count: int) -> Callable[[int], bool]:
    """An `until` for `index_shoes`: stop after `count` shoes."""
    seen = [0]

    def until(_: int) -> bool:
        seen[0] += 1
        return seen[0] >= count

    return until


def read_indexed(index: ShoeIndex, shoes: np.ndarray) -> Hands:
    """The hands of the indexed shoes `shoes` (their places in the index, in
    increasing order), read again from the file: each keeps its place in
    the index as its shoe number, and its hands are those `read_shoes` deals
    from it. A run of consecutive shoes is read in one stretch."""
    shoes = np.asarray(shoes, np.int64)
    if index.kind == "road":
        codes = [
            c
            for lines in _runs(index, shoes)
            for _, c in line_shoes(lines, index.source, index.decks)
        ]
        return road_shoe_hands(
            np.concatenate(codes) if codes else np.zeros(0, np.int8),
            index.hands[shoes],
            shoes,
            index.source,
        )
    total = int(index.hands[shoes].sum()) if shoes.size else 0
    out = Growing(total)
    burned: list[tuple[int, ...]] = []
    for a, lines in zip(_firsts(shoes), _runs(index, shoes)):
        with warnings.catch_warnings():  # (the index's pass gave them)
            warnings.simplefilter("ignore", IncompleteHandWarning)
            for shoe in dealt_shoes(
                card_text_shoes(lines, index.source),
                index.source,
                index.decks,
                index.burn,
                checked=True,
            ):
                columns = shoe.columns
                n = columns["winner"].shape[0]
                columns["shoe"] = np.full(n, a + shoe.number, dtype=np.int64)
                columns["hand"] = np.arange(1, n + 1, dtype=np.int32)
                out.add(columns)
                burned.append(shoe.burned)
    return Hands.from_columns(
        out.n,
        known=ALL_KNOWN,
        source=index.source,
        burned=tuple(burned) if index.burn else (),
        **out.filled(),
    )


def _firsts(shoes: np.ndarray) -> list[int]:
    """The first shoe of each run of consecutive shoes."""
    cuts = np.flatnonzero(np.diff(shoes) != 1) + 1
    return [int(run[0]) for run in np.split(shoes, cuts)] if shoes.size else []


def _runs(index: ShoeIndex, shoes: np.ndarray) -> Iterator[Iterator[tuple[int, str]]]:
    """For each run of consecutive shoes, the numbered lines of their shoes,
    read in one stretch of the file."""
    cuts = np.flatnonzero(np.diff(shoes) != 1) + 1
    for run in np.split(shoes, cuts) if shoes.size else []:
        a, b = int(run[0]), int(run[-1])
        wanted = set(index.line[a : b + 1].tolist())
        yield (
            (number, text)
            for number, text, _ in placed_lines(
                index.path,
                int(index.start[a]),
                int(index.end[b]),
                int(index.line[a]) - int(index.before[a]),
            )
            if number in wanted
        )


def shoe_blocks(index: ShoeIndex, hands: int) -> Iterator[Hands]:
    """Every indexed shoe, read again in blocks of whole shoes of about
    `hands` hands (at least a shoe a block)."""
    first = 0
    ends = np.cumsum(index.hands)
    while first < len(index):
        done = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, done + hands, side="right")))
        yield read_indexed(index, np.arange(first, min(last, len(index))))
        first = last

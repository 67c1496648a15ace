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
from typing import Any

import numpy as np

from backtest.core.errors import ShoeFormatError
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.shoes.recorded.card_level import (
    Growing,
    card_csv_shoes,
    card_text_shoes,
    dealt_shoes,
)
from backtest.shoes.recorded.options import check_options
from backtest.shoes.recorded.outcome_csv import outcome_csv_shoes
from backtest.shoes.recorded.outcomes import HANDS_PER_DECK, too_many_hands
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
    stream_lines,
)

#: files larger than this are read a line at a time (smaller ones are read whole)
STREAMED_BYTES = HEAD_BYTES

#: the formats of the files indexed a shoe at a time when they are big
INDEXED_KINDS = ("card-text", "road", "card-csv", "outcome-csv")


def streamable(
    path: StrPath, fmt: str | None = None, columns: Mapping[str, str] | None = None
) -> str | None:
    """The format (one of INDEXED_KINDS: `fmt`, or else as its first megabyte
    reads) of a file of more than STREAMED_BYTES to be indexed a shoe at a
    time: card-level text or CSV, an outcome-level CSV, or roads a shoe a
    line; None for standard input, another format, or a file that cannot be
    read (its reader says why)."""
    if fmt not in (None, *INDEXED_KINDS):
        return None
    kind = streamed_kind(path, fmt, columns)
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
    """The shoes with a hand in them of a big file (of one of INDEXED_KINDS:
    `kind`), in order: the stretch of the file that holds each one's lines
    (the first byte of its first line's stretch and the end byte of its
    last's, and the lines before its first there: see `text.Place`), its
    first and last line numbers, and its hands. `whole`: every shoe of the
    file is indexed (else its first, as far as the pass was asked to read).
    A CSV's `header` (its line number and text) and column mapping are kept
    to read its rows again; `known` is what the shoes' hands record."""

    path: str
    source: str
    decks: int
    burn: bool
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    before: np.ndarray  # int32
    line: np.ndarray  # int64
    last: np.ndarray  # int64
    hands: np.ndarray  # int64
    whole: bool
    kind: str = "card-text"
    known: frozenset[str] = ALL_KNOWN
    header: tuple[int, str] | None = None
    columns: tuple[tuple[str, str], ...] = ()

    def __len__(self) -> int:
        return int(self.hands.shape[0])


def index_shoes(
    path: StrPath,
    decks: int,
    burn: bool,
    until: Callable[[int], bool] | None = None,
    kind: str = "card-text",
    columns: Mapping[str, str] | None = None,
) -> ShoeIndex:
    """Index the shoes of a big file (card-level text, or another of
    INDEXED_KINDS: `kind`, as `streamable` tells; `columns` a CSV's column
    mapping) in one pass, each checked and dealt as `read_shoes` deals it
    (its errors, and a warning for a shoe that ends in the middle of a hand)
    and then let go. `until` is told the hands of each shoe in turn: the
    pass stops after the shoe it answers True for (the file is not read
    further)."""
    done: list[ShoeIndex] = []
    for _ in _indexing(path, decks, burn, until, kind, columns, done):
        pass
    return done[0]


def _indexing(
    path: StrPath,
    decks: int,
    burn: bool,
    until: Callable[[int], bool] | None,
    kind: str,
    columns: Mapping[str, str] | None,
    done: list[ShoeIndex],
) -> Iterator[tuple[int, int, Any]]:
    """`index_shoes`, giving each shoe as it is read (its place in the index,
    its hands, and the shoe read: see `_shoes`); the index is put in `done`
    once the pass is over."""
    source = source_name(path)
    check_options(source, kind, columns, burn)
    start, end, before, line, last, hands = (array("q") for _ in range(6))
    places: dict[int, Place] = {}  # (of the lines read since the last shoe)
    header: list[tuple[int, str]] = []

    def lines() -> Iterator[tuple[int, str]]:
        seen_text = False
        for number, text, where in placed_lines(path):
            places[number] = where
            seen_text = seen_text or bool(text.strip())
            if not header and text.strip() and not text.lstrip().startswith("#"):
                header.append((number, text))
            yield number, text
        if not seen_text:
            raise ShoeFormatError(f"{source}: no shoes: the file is empty")

    whole = True
    known: frozenset[str] = frozenset() if kind == "road" else ALL_KNOWN
    too_long: tuple[int, int] | None = None  # (an outcome-level CSV's first: shoe, hands)
    shoes = _shoes(kind, lines(), source, decks, burn, columns, again=lambda: stream_lines(path))
    for n, (first, final), read in shoes:
        begin, stop = places[first], places[final]
        start.append(begin[0])
        end.append(stop[1])
        before.append(begin[2])
        line.append(first)
        last.append(final)
        hands.append(n)
        for number in [k for k in places if k <= final]:
            del places[number]
        if kind == "outcome-csv":
            known = read.known
            if too_long is None and n > HANDS_PER_DECK * decks:
                too_long = len(hands), n
        yield len(hands) - 1, n, read
        if until is not None and until(n):
            whole = False
            break
    if too_long is not None:  # (as a whole read refuses it, once it has read the shoes)
        raise too_many_hands(source, f"shoe {too_long[0]}", too_long[1], decks)
    index = ShoeIndex(
        os.fspath(path),
        source,
        decks,
        burn,
        np.frombuffer(start, np.int64),
        np.frombuffer(end, np.int64),
        np.frombuffer(before, np.int64).astype(np.int32),
        np.frombuffer(line, np.int64),
        np.frombuffer(last, np.int64),
        np.frombuffer(hands, np.int64),
        whole,
        kind,
        known,
        header[0] if header and kind in ("card-csv", "outcome-csv") else None,
        tuple((columns or {}).items()),
    )
    done.append(index)


def _shoes(
    kind: str,
    lines: Iterator[tuple[int, str]],
    source: str,
    decks: int,
    burn: bool,
    columns: Mapping[str, str] | None,
    first: int = 0,
    checked: bool = False,
    again: Callable[[], Iterator[tuple[int, str]]] | None = None,
) -> Iterator[tuple[int, tuple[int, int], Any]]:
    """(hands, (first line, last line), the shoe read) for each shoe with a
    hand in it of numbered lines of a file of `kind`, in turn: the shoe read
    is a `DealtShoe` (card-level), the codes of its results (road) or its
    hands (outcome-level CSV, numbered from `first`). `checked`: the shoes
    were checked before (read again), and need not be again where that can
    be skipped. `again()`: a CSV's lines again (see `text.group_shoes`)."""
    if kind in ("card-text", "card-csv"):
        read = (
            card_text_shoes(lines, source)
            if kind == "card-text"
            else card_csv_shoes(lines, source, columns, again)
        )
        for shoe in dealt_shoes(read, source, decks, burn, checked=checked):
            yield int(shoe.columns["winner"].shape[0]), shoe.read.lines, shoe
    elif kind == "road":
        for number, codes in line_shoes(lines, source, decks):
            yield int(codes.shape[0]), (number, number), codes
    else:
        for part, where in outcome_csv_shoes(lines, source, decks, columns, first, again):
            yield len(part), where, part


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
    kind, source = index.kind, index.source
    block = _Block(index.kind, index.known, source, index.burn)
    columns = dict(index.columns) or None
    for a, lines in zip(_firsts(shoes), _runs(index, shoes)):
        with warnings.catch_warnings():  # (the index's pass gave them)
            warnings.simplefilter("ignore", IncompleteHandWarning)
            read = _shoes(kind, lines, source, index.decks, index.burn, columns, a, checked=True)
            for k, (n, _, shoe) in enumerate(read):
                block.add(a + k, n, shoe)
    return block.hands()


class _Block:
    """The hands of shoes read from a file of `kind`, added a shoe at a time
    (its number, hands and what `_shoes` read)."""

    def __init__(self, kind: str, known: frozenset[str], source: str, burn: bool) -> None:
        self.kind, self.known, self.source, self.burn = kind, known, source, burn
        self.out = Growing(0)
        self.burned: list[tuple[int, ...]] = []
        self.codes: list[np.ndarray] = []  # (a road's results)
        self.numbers: list[int] = []
        self.n = 0

    def add(self, number: int, n: int, read: Any) -> None:
        self.n += n
        if self.kind == "road":
            self.codes.append(read)
            self.numbers.append(number)
        elif self.kind == "outcome-csv":
            self.known = read.known
            self.out.add({name: getattr(read, name) for name in self.out.columns})
        else:
            part = dict(read.columns)
            part["shoe"] = np.full(n, number, dtype=np.int64)
            part["hand"] = np.arange(1, n + 1, dtype=np.int32)
            self.out.add(part)
            self.burned.append(read.burned)

    def hands(self) -> Hands:
        if self.kind == "road":
            return road_shoe_hands(
                np.concatenate(self.codes) if self.codes else np.zeros(0, np.int8),
                np.array([len(c) for c in self.codes], np.int64),
                np.array(self.numbers, np.int64),
                self.source,
            )
        return Hands.from_columns(
            self.out.n,
            known=self.known,
            source=self.source,
            burned=tuple(self.burned) if self.burn else (),
            **self.out.filled(),
        )


def indexed_blocks(
    path: StrPath,
    decks: int,
    burn: bool,
    kind: str,
    columns: Mapping[str, str] | None,
    hands: int,
    index_first: bool = False,
) -> tuple[Callable[[], Iterator[Hands]], frozenset[str]]:
    """Every shoe of a big file (of `kind`, as `streamable` tells), in blocks
    of whole shoes of about `hands` hands, as `blocks()` gives them: the
    first call indexes the file, giving the shoes as that pass reads them,
    and later calls read them again by the index (`shoe_blocks`); with
    `index_first`, the file is indexed (every shoe checked) now, and every
    call reads them again. With what the hands record."""
    done: list[ShoeIndex] = []
    if index_first:
        done.append(index_shoes(path, decks, burn, None, kind, columns))
    if done:
        known = done[0].known
    else:
        with warnings.catch_warnings():  # (the first pass gives them)
            warnings.simplefilter("ignore")
            known = index_shoes(path, decks, burn, first_shoes(1), kind, columns).known

    def first_pass() -> Iterator[Hands]:
        block = _Block(kind, known, source_name(path), burn)
        for k, n, read in _indexing(path, decks, burn, None, kind, columns, done):
            block.add(k, n, read)
            if block.n >= hands:
                yield block.hands()
                block = _Block(kind, known, source_name(path), burn)
        if block.n:
            yield block.hands()

    def blocks() -> Iterator[Hands]:
        return shoe_blocks(done[0], hands) if done else first_pass()

    return blocks, known


def _firsts(shoes: np.ndarray) -> list[int]:
    """The first shoe of each run of consecutive shoes."""
    cuts = np.flatnonzero(np.diff(shoes) != 1) + 1
    return [int(run[0]) for run in np.split(shoes, cuts)] if shoes.size else []


def _runs(index: ShoeIndex, shoes: np.ndarray) -> Iterator[Iterator[tuple[int, str]]]:
    """For each run of consecutive shoes, the numbered lines of their shoes
    (a CSV's header first), read in one stretch of the file."""
    cuts = np.flatnonzero(np.diff(shoes) != 1) + 1
    for run in np.split(shoes, cuts) if shoes.size else []:
        a, b = int(run[0]), int(run[-1])
        yield _run_lines(index, a, b)


def _run_lines(index: ShoeIndex, a: int, b: int) -> Iterator[tuple[int, str]]:
    """The numbered lines of shoes a..b (a CSV's header first)."""
    if index.header is not None:
        yield index.header
    firsts = index.line[a : b + 1].tolist()
    lasts = index.last[a : b + 1].tolist()
    k = 0  # (the shoe a line may be of)
    for number, text, _ in placed_lines(
        index.path,
        int(index.start[a]),
        int(index.end[b]),
        firsts[0] - int(index.before[a]),
    ):
        while k < len(lasts) and number > lasts[k]:
            k += 1
        if k == len(lasts):
            return
        if number >= firsts[k]:
            yield number, text


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

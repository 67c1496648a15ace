"""A big file's shoes read again by its index (`stream.ShoeIndex`): the
shoes a chunk of a run plays (`read_indexed`), or every shoe in blocks for
a printout (`indexed_blocks`, `shoe_blocks`), reading only the stretches of
the file that hold them.

>>> import pathlib, tempfile
>>> from backtest.shoes.recorded.stream import index_shoes
>>> path = pathlib.Path(tempfile.mkdtemp()) / "shoes.txt"
>>> _ = path.write_text("# two shoes\\n5 K 9 2 3 8\\n\\n2 9 3 K 8 9 K K\\n", encoding="utf-8")
>>> hands = read_indexed(index_shoes(path, decks=8, burn=False), np.array([1]))
>>> hands.shoe.tolist(), hands.hand.tolist()
([1, 1], [1, 2])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from backtest.core.hands import Hands
from backtest.shoes.recorded.card_level import Growing
from backtest.shoes.recorded.parquet_lines import placed_parquet_lines
from backtest.shoes.recorded.road_strings import road_shoe_hands
from backtest.shoes.recorded.stream import (
    JSON_KINDS,
    ShoeIndex,
    first_shoes,
    index_shoes,
    indexing,
    shoes_of,
)
from backtest.shoes.recorded.text import (
    JSON_LINE_BYTES,
    IncompleteHandWarning,
    StrPath,
    placed_lines,
    source_name,
)


def read_indexed(index: ShoeIndex, shoes: np.ndarray) -> Hands:
    """The hands of the indexed shoes `shoes` (their places in the index, in
    increasing order), read again from the file: each keeps its place in
    the index as its shoe number, and its hands are those `read_shoes` deals
    from it. A run of consecutive shoes is read in one stretch, from the
    shoe the index keeps at or before its first (`ShoeIndex.stride`)."""
    shoes = np.asarray(shoes, np.int64)
    kind, source = index.kind, index.source
    block = _Block(index.kind, index.known, source, index.burn)
    columns = dict(index.columns) or None
    for a, b in _spans(shoes):
        head = a - a % index.stride
        with warnings.catch_warnings():  # (the index's pass gave them)
            warnings.simplefilter("ignore", IncompleteHandWarning)
            read = shoes_of(
                kind,
                _lines_from(index, head),
                source,
                index.decks,
                index.burn,
                columns,
                head,
                checked=True,
                skip=index.skip,
            )
            for k, (n, _, shoe) in enumerate(read, head):
                if k >= a:
                    block.add(k, n, shoe)
                if k >= b:
                    read.close()  # (the lines after shoe b are not read)
                    break
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
        elif self.kind in ("outcome-csv", "json-rounds", "json-snapshots"):
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
        for k, n, read in indexing(path, decks, burn, None, kind, columns, done):
            block.add(k, n, read)
            if block.n >= hands:
                yield block.hands()
                block = _Block(kind, known, source_name(path), burn)
        if block.n:
            yield block.hands()

    def blocks() -> Iterator[Hands]:
        return shoe_blocks(done[0], hands) if done else first_pass()

    return blocks, known


def _spans(shoes: np.ndarray) -> list[tuple[int, int]]:
    """The first and last shoe of each run of consecutive shoes."""
    cuts = np.flatnonzero(np.diff(shoes) != 1) + 1
    return [(int(run[0]), int(run[-1])) for run in np.split(shoes, cuts)] if shoes.size else []


def _lines_from(index: ShoeIndex, head: int) -> Iterator[tuple[int, str]]:
    """The numbered lines of the file from the first of shoe `head` (one the
    index keeps: a multiple of its stride) to the last of the last shoe indexed
    (a CSV's header first)."""
    if index.header is not None:
        yield index.header
    g = head // index.stride
    first = int(index.line[g])
    placed = (
        placed_parquet_lines(index.source, index.path, int(index.start[g]))
        if index.parquet
        else placed_lines(
            index.path,
            int(index.start[g]),
            None,
            first - int(index.before[g]),
            **({"most": JSON_LINE_BYTES} if index.kind in JSON_KINDS else {"decks": index.decks}),
        )
    )
    for number, text, _ in placed:
        if number > index.last_line:
            return
        if number >= first:
            yield number, text


def shoe_blocks(index: ShoeIndex, hands: int) -> Iterator[Hands]:
    """Every indexed shoe, read again in blocks of whole shoes of about
    `hands` hands (at least a shoe a block)."""
    first = 0
    ends = np.cumsum(index.hands, dtype=np.int64)
    while first < len(index):
        done = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, done + hands, side="right")))
        yield read_indexed(index, np.arange(first, min(last, len(index))))
        first = last

"""A big shoe file (card-level text or CSV, outcome CSV, roads, JSON Lines
of rounds or of shoe-state snapshots) read a shoe at a time.

One pass over the file checks and deals every shoe as `read_shoes` does (the
same errors and warnings) but keeps only an index: each shoe's hands, and
where every few shoes begin, about 9 bytes a shoe. (A road file is
indexed when it is a shoe a line: see `road_strings.a_shoe_a_line`. Of JSON
Lines of per-round records, the index also keeps the line of each round
recorded twice, 8 bytes each: which repeats are skipped depends on every
round before, so a read again skips those lines rather than look. Of JSON
Lines of shoe-state snapshots, a shoe begins at the snapshot that starts it,
after which nothing of the shoes before counts.) Any of the shoes are
then read again by the index (`stream_read`), so that a run holds at once
only the shoes of the sessions it is playing, and a printout only a block
of them: memory is bounded by those and the index, not by the file.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "shoes.txt"
>>> _ = path.write_text("# two shoes\\n5 K 9 2 3 8\\n\\n2 9 3 K 8 9 K K\\n", encoding="utf-8")
>>> index = index_shoes(path, decks=8, burn=False)
>>> index.hands.tolist(), index.line.tolist(), index.last_line
([1, 2], [2], 4)
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from backtest.core.errors import ShoeFormatError, UsageError
from backtest.core.hands import ALL_KNOWN
from backtest.shoes.recorded.card_level import (
    card_csv_shoes,
    card_text_shoes,
    dealt_shoes,
)
from backtest.shoes.recorded.live_json import (
    json_lines_kind,
    round_line_shoes,
    snapshot_line_shoes,
)
from backtest.shoes.recorded.options import check_options
from backtest.shoes.recorded.outcome_csv import outcome_csv_shoes
from backtest.shoes.recorded.outcomes import HANDS_PER_DECK, too_many_hands
from backtest.shoes.recorded.parquet_lines import (
    in_rows,
    is_parquet,
    parquet_kind,
    parquet_lines,
    placed_parquet_lines,
)
from backtest.shoes.recorded.road_strings import a_shoe_a_line, line_shoes
from backtest.shoes.recorded.sniff import PARQUET_MAGIC, sniff
from backtest.shoes.recorded.text import (
    HEAD_BYTES,
    JSON_LINE_BYTES,
    Place,
    StrPath,
    is_piped,
    load_head,
    placed_lines,
    source_name,
    stream_lines,
)

#: files larger than this are read a line at a time (smaller ones are read whole)
STREAMED_BYTES = HEAD_BYTES

#: the index keeps where every STRIDEth shoe begins (and every shoe's hands):
#: a read of shoe k starts at the one before it, reading on over at most
#: STRIDE - 1 shoes it does not keep, for about 9 bytes a shoe in all
STRIDE = 32

#: the formats of the files indexed a shoe at a time when they are big
#: (json-rounds: JSON Lines of per-round records; json-snapshots: of
#: shoe-state snapshots)
INDEXED_KINDS = ("card-text", "road", "card-csv", "outcome-csv", "json-rounds", "json-snapshots")

#: the JSON Lines among INDEXED_KINDS
JSON_KINDS = ("json-rounds", "json-snapshots")


def streamable(
    path: StrPath, fmt: str | None = None, columns: Mapping[str, str] | None = None
) -> str | None:
    """The format (one of INDEXED_KINDS: `fmt`, or else as its first megabyte
    reads) of a file of more than STREAMED_BYTES to be indexed a shoe at a
    time: card-level text or CSV, an outcome-level CSV, roads a shoe a
    line, JSON Lines of per-round records or of shoe-state snapshots (read
    as far as the first), or a
    Parquet file of more than INDEXED_PARQUET_BYTES (as the CSV
    its columns make); None for standard
    input, another format, or a file that cannot be read (its reader says
    why)."""
    if fmt in (None, "parquet") and _big_parquet(path):
        return parquet_kind(path, dict(columns) if columns else None)
    if streamed_json(path, fmt, columns):
        lines_of = json_lines_kind(stream_lines(path, most=JSON_LINE_BYTES))
        return f"json-{lines_of}" if lines_of else None
    if fmt not in (None, *INDEXED_KINDS):
        return None
    kind = streamed_kind(path, fmt, columns)
    return kind if kind in INDEXED_KINDS else None


#: Parquet files larger than this (compressed: about half a million hands)
#: are indexed; a smaller one's hands are held (26 bytes a hand), which is
#: about twice as fast as reading each chunk's rows again, but a 30 MB file's
#: whole-file run then peaked at 406 MB (296 MB indexed)
INDEXED_PARQUET_BYTES = 1 << 22


def _big_parquet(path: StrPath) -> bool:
    """Whether `path` is a Parquet file of more than INDEXED_PARQUET_BYTES."""
    try:
        big = not is_piped(path) and os.path.getsize(path) > INDEXED_PARQUET_BYTES
    except (OSError, UsageError):
        return False
    return big and is_parquet(path)


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
    try:
        if is_piped(path) or os.path.getsize(path) <= STREAMED_BYTES:
            return None
        with open(path, "rb") as fh:
            data = fh.read(HEAD_BYTES + 1)
    except (OSError, UsageError):
        return None
    if data.startswith(PARQUET_MAGIC):
        return None
    if fmt not in (None, "road"):
        return fmt
    source, head, _ = load_head(path, data)
    kind = fmt or sniff(source, head, columns)[0]
    if not head.strip() and Path(source).suffix.lower() in (".json", ".jsonl", ".ndjson"):
        kind = "json"  # (no line ends in the first megabyte: told by the name)
    if kind == "road" and not a_shoe_a_line(head, source):
        return None
    return kind


@dataclass(frozen=True)
class ShoeIndex:
    """The shoes with a hand in them of a big file (of one of INDEXED_KINDS:
    `kind`), in order: each one's hands, and where every `STRIDE`th one's
    lines begin (`stride`: the first byte of the stretch of the file that holds its
    first line, the lines before that one there: see `text.Place`, and its
    line number), from which the shoes after it are read on; `last_line`,
    the last line of the last shoe indexed (no read goes past it: the lines
    after a partial index were never checked). `whole`: every shoe of the
    file is indexed (else its first, as far as the pass was asked to read).
    A CSV's `header` (its line number and text) and column mapping are kept
    to read its rows again; `known` is what the shoes' hands record."""

    path: str
    source: str
    decks: int
    burn: bool
    stride: int  # (STRIDE when it was made)
    start: np.ndarray  # int64, every stride-th shoe
    before: np.ndarray  # int32, every stride-th shoe
    line: np.ndarray  # int64, every stride-th shoe
    last_line: int
    hands: np.ndarray  # int32, a shoe each
    whole: bool
    kind: str = "card-text"
    known: frozenset[str] = ALL_KNOWN
    header: tuple[int, str] | None = None
    columns: tuple[tuple[str, str], ...] = ()
    #: a Parquet file, read as the CSV its columns make (`parquet_lines`):
    #: its places are rows, and its errors name rows
    parquet: bool = False
    #: JSON Lines of rounds: the lines of the rounds read once that were
    #: recorded twice, skipped when shoes are read again (int64, increasing)
    skip: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

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
    for _ in indexing(path, decks, burn, until, kind, columns, done):
        pass
    return done[0]


def indexing(
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
    check_options(source, "json" if kind in JSON_KINDS else kind, columns, burn)
    start, before, line, repeats = (array("q") for _ in range(4))
    hands = array("i")  # (a shoe's hands: 4 bytes a shoe, the index's one column a shoe)
    last_line = 0
    stride = STRIDE
    places: dict[int, Place] = {}  # (of the lines read since the last shoe)
    header: list[tuple[int, str]] = []

    parquet = is_parquet(path)
    bound: dict[str, Any] = {"most": JSON_LINE_BYTES} if kind in JSON_KINDS else {"decks": decks}

    def lines() -> Iterator[tuple[int, str]]:
        seen_text = False
        placed = placed_parquet_lines(source, path) if parquet else placed_lines(path, **bound)
        for number, text, where in placed:
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

    def again() -> Iterator[tuple[int, str]]:
        return parquet_lines(source, path) if parquet else stream_lines(path, **bound)

    shoes = shoes_of(kind, lines(), source, decks, burn, columns, again=again, repeats=repeats)
    if parquet:
        shoes = _in_rows(shoes, source)
    for n, (first, final), read in shoes:
        if len(hands) % stride == 0:
            begin = places[first]
            start.append(begin[0])
            before.append(begin[2])
            line.append(first)
        last_line = final
        hands.append(n)
        for number in [k for k in places if k <= final]:
            del places[number]
        if kind in ("outcome-csv", *JSON_KINDS):
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
        stride,
        np.frombuffer(start, np.int64),
        np.frombuffer(before, np.int64).astype(np.int32),
        np.frombuffer(line, np.int64),
        last_line,
        np.frombuffer(hands, np.int32),
        whole,
        kind,
        known,
        header[0] if header and kind in ("card-csv", "outcome-csv") else None,
        tuple((columns or {}).items()),
        parquet,
        np.frombuffer(repeats, np.int64),
    )
    done.append(index)


def _in_rows(
    shoes: Iterator[tuple[int, tuple[int, int], Any]], source: str
) -> Generator[tuple[int, tuple[int, int], Any], None, None]:
    """A Parquet file's shoes, its errors naming its rows (`in_rows`)."""
    try:
        yield from shoes
    except ShoeFormatError as exc:
        raise in_rows(exc, source) from None


def shoes_of(
    kind: str,
    lines: Iterator[tuple[int, str]],
    source: str,
    decks: int,
    burn: bool,
    columns: Mapping[str, str] | None,
    first: int = 0,
    checked: bool = False,
    again: Callable[[], Iterator[tuple[int, str]]] | None = None,
    repeats: array[int] | None = None,
    skip: np.ndarray | None = None,
) -> Generator[tuple[int, tuple[int, int], Any], None, None]:
    """(hands, (first line, last line), the shoe read) for each shoe with a
    hand in it of numbered lines of a file of `kind`, in turn: the shoe read
    is a `DealtShoe` (card-level), the codes of its results (road) or its
    hands (outcome-level CSV or JSON Lines of rounds or snapshots, numbered from
    `first`). `checked`: the shoes were checked before (read again), and
    need not be again where that can be skipped. `again()`: the lines again
    (see `text.group_shoes`, `rounds.RoundShoes`). Of JSON Lines of rounds:
    the lines of rounds recorded twice are added to `repeats` (a first
    read), or skipped (`skip`, as `ShoeIndex.skip`: a read again)."""
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
    elif kind == "json-rounds":
        rounds = round_line_shoes(lines, source, decks, first, again, repeats, skip)
        for part, where in rounds:
            yield len(part), where, part
    elif kind == "json-snapshots":
        for part, where in snapshot_line_shoes(lines, source, first, checked):
            yield len(part), where, part
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

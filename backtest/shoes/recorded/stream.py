"""Which files are big enough to be read a line at a time, and in what
format (`streamable`), and the shoes of such a file's lines, one at a time
(`shoes_of`): card-level text or CSV, an outcome CSV, roads a shoe a line,
JSON Lines of rounds or of shoe-state snapshots, and a big Parquet file as
the CSV its columns make. Such a file is read whole into Parquet in the
cache (`cache`), or its first shoes by `read_shoes`.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from backtest.core.errors import UsageError
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
from backtest.shoes.recorded.outcome_csv import outcome_csv_shoes
from backtest.shoes.recorded.parquet_lines import (
    is_parquet,
    parquet_kind,
)
from backtest.shoes.recorded.road_strings import a_shoe_a_line, line_shoes
from backtest.shoes.recorded.sniff import PARQUET_MAGIC, sniff
from backtest.shoes.recorded.text import (
    HEAD_BYTES,
    JSON_LINE_BYTES,
    StrPath,
    is_piped,
    load_head,
    stream_lines,
)

#: files larger than this are read a line at a time (smaller ones are read whole)
STREAMED_BYTES = HEAD_BYTES

#: the formats of the big files read a shoe at a time (json-rounds: JSON
#: Lines of per-round records; json-snapshots: of shoe-state snapshots)
INDEXED_KINDS = ("card-text", "road", "card-csv", "outcome-csv", "json-rounds", "json-snapshots")

#: the JSON Lines among INDEXED_KINDS
JSON_KINDS = ("json-rounds", "json-snapshots")


def streamable(
    path: StrPath, fmt: str | None = None, columns: Mapping[str, str] | None = None
) -> str | None:
    """The format (one of INDEXED_KINDS: `fmt`, or else as its first megabyte
    reads) of a file of more than STREAMED_BYTES to be read a shoe at a
    time: card-level text or CSV, an outcome-level CSV, roads a shoe a
    line, JSON Lines of per-round records or of shoe-state snapshots (read
    as far as the first), or a Parquet file of more than
    INDEXED_PARQUET_BYTES (as the CSV its columns make); None for standard
    input or a pipe, another format, or a file that cannot be read (its
    reader says why)."""
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
#: are read into the cache; a smaller one's hands are held (26 bytes a hand)
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


def shoes_of(
    kind: str,
    lines: Iterator[tuple[int, str]],
    source: str,
    decks: int,
    burn: bool,
    columns: Mapping[str, str] | None,
) -> Generator[tuple[int, Any], None, None]:
    """(hands, the shoe read) for each shoe with a hand in it of numbered
    lines of a file of `kind`, in turn: the shoe read is a `DealtShoe`
    (card-level), the codes of its results (road) or its hands
    (outcome-level CSV or JSON Lines of rounds or snapshots)."""
    if kind in ("card-text", "card-csv"):
        read = (
            card_text_shoes(lines, source)
            if kind == "card-text"
            else card_csv_shoes(lines, source, columns)
        )
        for shoe in dealt_shoes(read, source, decks, burn):
            yield int(shoe.columns["winner"].shape[0]), shoe
    elif kind == "road":
        for _, codes in line_shoes(lines, source, decks):
            yield int(codes.shape[0]), codes
    elif kind == "json-rounds":
        for part, _ in round_line_shoes(lines, source, decks):
            yield len(part), part
    elif kind == "json-snapshots":
        for part, _ in snapshot_line_shoes(lines, source, 0):
            yield len(part), part
    else:
        for part, _, label in outcome_csv_shoes(lines, source, decks, columns):
            yield len(part), replace(part, labels=(label,))

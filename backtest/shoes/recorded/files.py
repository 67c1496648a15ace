"""Reading a recorded shoe file: the reader for its format (told by
`sniff`), Parquet read as the CSV it holds, and the checks of what was read."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator, Mapping

from backtest.core.errors import ShoeFormatError, UsageError
from backtest.core.hands import Hands
from backtest.shoes.recorded.card_level import card_csv_shoes, card_text_shoes, deal_card_shoes
from backtest.shoes.recorded.live_json import json_lines_hands, live_json_hands
from backtest.shoes.recorded.options import check_columns, check_decks, check_options, shoe_decks
from backtest.shoes.recorded.outcome_csv import outcome_csv_hands
from backtest.shoes.recorded.outcomes import HANDS_PER_DECK, too_many_hands
from backtest.shoes.recorded.parquet_lines import in_rows, parquet_lines
from backtest.shoes.recorded.road_strings import road_hands, road_line_hands
from backtest.shoes.recorded.sniff import KIND_WORDS, PARQUET_MAGIC, sniff
from backtest.shoes.recorded.stream import streamed_json, streamed_kind
from backtest.shoes.recorded.text import (
    JSON_LINE_BYTES,
    StrPath,
    content_lines,
    is_piped,
    load_bytes,
    load_text,
    source_name,
    stream_lines,
)

#: the formats `read_shoes` reads (its `fmt` argument)
FORMATS = ("card-text", "card-csv", "outcome-csv", "json", "road", "parquet")


def read_shoes(
    path: StrPath,
    decks: int | None = None,
    burn: bool = False,
    fmt: str | None = None,
    columns: Mapping[str, str] | None = None,
    shoes: int | None = None,
) -> Hands:
    """Read every shoe of a recorded file, in any of `FORMATS`; `-` is standard input.

    The format is told from the extension and the content when `fmt` is None:
    Parquet by its magic bytes; `.json`/`.jsonl` or text starting with `{`/`[`
    (or a `[time] ` stamp) is JSON; `.csv` or a first line with commas is a
    CSV (a `card` column: card level; a `winner` column: outcome level) unless
    it is a road with commas (`P,B,T`); other text is road strings if it is
    mostly results (B, P, T, words, 庄/闲/和), else cards. Text that is
    neither is refused with the formats tried and why each gave up.
    `decks` is the size of the shoe the records came from (cards are checked
    against it): by default what the file declares (`shoe_decks`), else 8;
    `burn` applies the burn rule to card-level shoes. `columns` maps a CSV's
    or Parquet file's columns to ours (`{"winner": "Result"}`).

    Card-level text, CSV, JSON Lines of rounds and roads a shoe a line in a
    file larger than a megabyte (`text.HEAD_BYTES`) are read a line at a
    time, never held whole as text (a CSV's rows a shoe at a time), and with `shoes` (so many are
    wanted) no further than the line of the last; the format is told from
    the first megabyte. A Parquet file is read in batches of rows, as far
    as `shoes` too. Other files are read whole (with all of their shoes).
    """
    if decks is not None:
        check_decks(decks)
    decks = shoe_decks(path, decks)
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown shoe file format {fmt!r}; known formats: {', '.join(FORMATS)}")
    if columns:
        check_columns(columns, "columns")
    streamed = _streamed(path, fmt, columns, decks, burn, shoes)
    if streamed is not None:
        return streamed
    if fmt in (None, "parquet") and _is_parquet_file(path):
        return _read_parquet(source_name(path), path, decks, burn, columns, shoes)
    source, data = load_bytes(path)
    if data.startswith(PARQUET_MAGIC) and fmt in (None, "parquet"):
        return _read_parquet(source, data, decks, burn, columns)
    if fmt == "parquet":
        raise ShoeFormatError(f"{source}: not a Parquet file (it does not start with PAR1)")
    source, text = load_text(path, data)
    confident = True
    if fmt is not None:
        kind = fmt
    else:
        kind, confident = sniff(source, text, columns)
    check_options(source, kind, columns, burn)
    try:
        return _read_kind(kind, text, source, decks, burn, columns)
    except ShoeFormatError as exc:
        if confident:
            raise
        raise _tried_all(text, source, decks, exc) from None


def _is_parquet_file(path: StrPath) -> bool:
    """Whether `path` is a file (not standard input) that starts as Parquet does."""
    try:
        if is_piped(path):
            return False  # (read once, as bytes: see `read_shoes`)
        with open(path, "rb") as fh:
            return fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
    except (OSError, UsageError):
        return False  # (read whole, the reader says why)


#: the largest JSON file read whole (a document, not JSON Lines): its values
#: take about 10 times its size in memory
JSON_DOCUMENT_BYTES = 16 << 20


def _streamed(
    path: StrPath,
    fmt: str | None,
    columns: Mapping[str, str] | None,
    decks: int,
    burn: bool,
    shoes: int | None,
) -> Hands | None:
    """The shoes of a card-level text file, a CSV, roads or JSON Lines of round
    records larger than `stream.STREAMED_BYTES`, read a line at a time (as
    far as `shoes` shoes, if given); None for any other file (standard input, Parquet, a smaller
    file, another format), which is read whole."""
    kind = streamed_kind(path, fmt, columns)
    source = source_name(path)
    if kind is None and streamed_json(path, fmt, columns):
        check_options(source, "json", columns, burn)
        hands = json_lines_hands(
            lambda: stream_lines(path, most=JSON_LINE_BYTES), source, decks, shoes
        )
        if hands is None and os.path.getsize(path) > JSON_DOCUMENT_BYTES:
            raise ShoeFormatError(
                f"{source}: {os.path.getsize(path) / 2**20:,.0f} MB of JSON that is not "
                "JSON Lines of round records or shoe-state snapshots (one object a line, "
                f"read a line at a time), and a JSON document is read whole only up to "
                f"{JSON_DOCUMENT_BYTES >> 20} MB (it takes about 10 times its size in "
                "memory); write it as JSON Lines, a record or a snapshot a line, or as "
                "an outcome-level CSV"
            )
        if hands is not None:
            _check_hands_fit(hands, decks, source, None)
        return hands  # (None: not JSON Lines, a document read whole by the caller)
    if kind is None:
        return None  # a file the head holds whole is read once, whole, by the caller
    check_options(source, kind, columns, burn)
    return _read_kind(
        kind,
        stream_lines(path, decks),
        source,
        decks,
        burn,
        columns,
        shoes,
        capacity=os.path.getsize(path) // 8 + 1,
    )


def _read_kind(
    kind: str,
    text: str | Iterable[tuple[int, str]],
    source: str,
    decks: int,
    burn: bool,
    columns: Mapping[str, str] | None,
    limit: int | None = None,
    capacity: int = 0,
) -> Hands:
    """The hands of a file of a known format: its text, or (card text, CSV,
    roads a shoe a line) its numbered lines, read as far as `limit` shoes;
    `again()` gives a CSV's lines again (see `text.group_shoes`)."""
    if kind == "card-text":
        if isinstance(text, str):
            capacity = len(text) // 8 + 1
        return deal_card_shoes(
            card_text_shoes(text, source), source, decks, burn, limit, capacity=capacity
        )
    if kind == "card-csv":
        read = card_csv_shoes(text, source, columns)
        return deal_card_shoes(read, source, decks, burn, limit)
    if kind == "outcome-csv":
        hands = outcome_csv_hands(text, source, decks, columns, limit)
    elif kind == "road" and not isinstance(text, str):
        return road_line_hands(text, source, decks, limit)  # (its shoes checked as read)
    else:
        assert isinstance(text, str)  # (JSON and roads are read whole)
        if kind == "json":
            hands = live_json_hands(text, source, decks)
        else:
            hands = road_hands(text, source)
    _check_hands_fit(
        hands, decks, source, text if kind == "road" and isinstance(text, str) else None
    )
    return hands


def _check_hands_fit(hands: Hands, decks: int, source: str, road: str | None) -> None:
    """Refuse a shoe of more hands than `decks` decks can deal (of an
    outcome-level record, whose cards are not there to be checked);
    `road`: the text of a road file, whose shoes are its lines."""
    import numpy as np

    most = HANDS_PER_DECK * decks
    _, counts = np.unique(hands.shoe, return_counts=True)
    over = np.flatnonzero(counts > most)
    if not over.size:
        return
    k = int(over[0])
    where = f"shoe {k + 1}"
    lines = [n for n, _ in content_lines(road)] if road is not None else []
    if len(lines) == len(counts):  # a shoe a line
        where = f"line {lines[k]}"
    raise too_many_hands(source, where, int(counts[k]), decks)


def _shortened(text: str, most: int) -> str:
    """`text`, or its words that fit in `most` characters and an ellipsis."""
    if len(text) <= most:
        return text
    return text[: most - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def _tried_all(text: str, source: str, decks: int, first: ShoeFormatError) -> ShoeFormatError:
    """The error for text no format reads: each format tried, and the first
    reason it gave up."""
    reasons = []
    for kind in ("card-text", "road", "json", "outcome-csv"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _read_kind(kind, text, source, decks, False, None)
            reason = "read, but not the format the content suggested"
        except ShoeFormatError as exc:
            reason = ": ".join(str(exc).removeprefix(source).lstrip(", :").split(": ")[:2])
        reasons.append(f"{KIND_WORDS[kind]}: {_shortened(reason, 80)}")
    return ShoeFormatError(
        f"{source}: cannot tell what kind of shoe file this is; tried "
        + "; ".join(reasons)
        + "; see data/README.md for the formats"
    )


def _read_parquet(
    source: str,
    file: StrPath | bytes,
    decks: int,
    burn: bool,
    columns: Mapping[str, str] | None,
    shoes: int | None = None,
) -> Hands:
    """A Parquet file of the columns a CSV has, read as that CSV (its rows
    counted from 1, under the header): `file` is its path, read
    PARQUET_BATCH rows at a time (as far as `shoes` shoes, if given), or
    its bytes (standard input)."""
    lines = parquet_lines(source, file)
    try:
        _, first = next(lines)
        header = {c.strip().lower() for c in first.split(",")}
        if columns:
            header = (header - {c.strip().lower() for c in columns.values()}) | set(columns)
        kind = "card-csv" if "card" in header and "winner" not in header else "outcome-csv"
        if burn and kind != "card-csv":
            raise UsageError(
                f"{source}: the burn rule applies to card-level shoes, and this file is "
                "an outcome-level record with no cards to burn"
            )
        rows = _chained((1, first), lines)
        return _read_kind(kind, rows, source, decks, burn, columns, shoes)
    except ShoeFormatError as exc:
        raise in_rows(exc, source) from None
    finally:
        lines.close()


def _chained(first: tuple[int, str], rest: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    yield first
    yield from rest


def read_card_text(path: StrPath, decks: int | None = None, burn: bool = False) -> Hands:
    """Card-level text: one shoe per line, cards such as `KS 9h 10♦ a` in order."""
    return read_shoes(path, decks=decks, burn=burn, fmt="card-text")


def read_card_csv(path: StrPath, decks: int | None = None, burn: bool = False) -> Hands:
    """Card-level CSV: columns `shoe,card`, one card per row, a shoe's rows together."""
    return read_shoes(path, decks=decks, burn=burn, fmt="card-csv")


def read_outcome_csv(path: StrPath, decks: int | None = None) -> Hands:
    """Outcome-level CSV: `shoe,winner` and any of the optional columns in
    `OUTCOME_COLUMNS`; with `player_cards,banker_cards` every column is known."""
    return read_shoes(path, decks=decks, fmt="outcome-csv")


def read_live_json(path: StrPath) -> Hands:
    """The live-table shoe-state message (`args.history_v2`), a list of its hand
    entries, a list of such messages or JSON Lines of them (snapshots, merged
    into shoes), a list of lists of entries, or per-round results."""
    return read_shoes(path, fmt="json")


def read_road(path: StrPath) -> Hands:
    """Road strings: one shoe per line, B (banker), P (player), T (tie), run
    together or separated, as words or in Chinese."""
    return read_shoes(path, fmt="road")

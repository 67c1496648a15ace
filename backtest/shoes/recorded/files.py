"""Reading a recorded shoe file: the reader for its format (told by
`sniff`), and the checks of what was read."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping

import numpy as np

from backtest.core.errors import ShoeFormatError, UsageError
from backtest.core.hands import Hands
from backtest.shoes.recorded.cache import (
    big_kind,
    collect,
    first_hands,
    parquet_kind,
    parquet_lines,
    shoes_of,
)
from backtest.shoes.recorded.live_json import json_lines_of, live_json_hands
from backtest.shoes.recorded.options import (
    KIND_WORDS,
    PARQUET_MAGIC,
    check_columns,
    check_decks,
    check_options,
    shoe_decks,
    sniff,
)
from backtest.shoes.recorded.outcomes import HANDS_PER_DECK, too_many_hands
from backtest.shoes.recorded.road_strings import a_shoe_a_line, road_hands
from backtest.shoes.recorded.text import (
    StrPath,
    load_bytes,
    load_text,
    numbered_lines,
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

    A big file (`cache.big_kind`) is read a shoe at a time, and with
    `shoes` (so many are wanted) no further than the last; other files are
    read whole, with all of their shoes.
    """
    if decks is not None:
        check_decks(decks)
    decks = shoe_decks(path, decks)
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown shoe file format {fmt!r}; known formats: {', '.join(FORMATS)}")
    if columns:
        check_columns(columns, "columns")
    kind = big_kind(path, fmt, columns)
    if kind is not None:
        count = itertools.count(1)
        until = None if shoes is None else lambda _: next(count) >= shoes
        return first_hands(path, decks, burn, kind, columns, until)[0]
    source, data = load_bytes(path)
    if data.startswith(PARQUET_MAGIC) and fmt in (None, "parquet"):
        kind = parquet_kind(data, columns)
        check_options(source, kind, columns, burn)
        lines = parquet_lines(source, data)
        shoes_read = shoes_of(kind, lines, source, decks, burn, columns, True)
        return collect(kind, shoes_read, source, burn)[0]
    if fmt == "parquet":
        raise ShoeFormatError(f"{source}: not a Parquet file (it does not start with PAR1)")
    source, text = load_text(path, data)
    kind, confident = (fmt, True) if fmt is not None else sniff(source, text, columns)
    check_options(source, kind, columns, burn)
    try:
        return _read_kind(kind, text, source, decks, burn, columns)
    except ShoeFormatError as exc:
        if confident:
            raise
        raise _tried_all(text, source, decks, exc) from None


def _read_kind(
    kind: str,
    text: str,
    source: str,
    decks: int,
    burn: bool,
    columns: Mapping[str, str] | None,
) -> Hands:
    """The hands of the text of a file of a known format."""
    lines_of = json_lines_of(text, source) if kind == "json" else None
    if lines_of:
        kind = f"json-{lines_of}"
    if kind == "json":
        hands = live_json_hands(text, source, decks)
    elif kind == "road" and not a_shoe_a_line(text, source):
        hands = road_hands(text, source)
    else:
        lines = numbered_lines(text)
        return collect(kind, shoes_of(kind, lines, source, decks, burn, columns), source, burn)[0]
    # (an outcome-level record has no cards to check: refuse a shoe of more
    # hands than the decks deal)
    _, counts = np.unique(hands.shoe, return_counts=True)
    over = np.flatnonzero(counts > HANDS_PER_DECK * decks)
    if over.size:
        raise too_many_hands(source, f"shoe {over[0] + 1}", int(counts[over[0]]), decks)
    return hands


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

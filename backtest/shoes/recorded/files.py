"""Reading a recorded shoe file: which format it is (sniffed by its
content), the decks it says it was dealt from, and the reader for it."""

from __future__ import annotations

import difflib
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from backtest.core.errors import ShoeFormatError, UsageError, shown
from backtest.core.hands import Hands
from backtest.core.rules import Winner
from backtest.shoes.recorded.card_level import (
    card_code,
    card_csv_shoes,
    card_text_shoes,
    deal_card_shoes,
)
from backtest.shoes.recorded.live_json import live_json_hands
from backtest.shoes.recorded.outcome_csv import OUTCOME_COLUMNS, outcome_csv_hands
from backtest.shoes.recorded.road_strings import ROAD_CHARS, TOKEN, road_hands, token_results
from backtest.shoes.recorded.text import (
    HEAD_BYTES,
    STDIN,
    StrPath,
    content_lines,
    csv_cells,
    decks_words,
    load_bytes,
    load_head,
    load_text,
    numbered_lines,
    source_name,
    stdin_bytes,
    stream_lines,
)
from backtest.shoes.shoe import MAX_DECKS

#: the formats `read_shoes` reads (its `fmt` argument)
FORMATS = ("card-text", "card-csv", "outcome-csv", "json", "road", "parquet")


#: `decks=N` in a comment before a file's first shoe (as `shoe generate` writes)
_DECLARED_DECKS = re.compile(r"(?<![\w-])decks\s*=\s*(\d+)\b")


def declared_decks(path: StrPath) -> tuple[int, int] | None:
    """(decks, line) if the comment lines (`#`) that open a text shoe file
    say `decks=N`, as `backtest shoe generate` writes them; else None."""
    try:
        if os.fspath(path) == STDIN:
            lines: Iterable[str] = stdin_bytes().decode("utf-8", "replace").splitlines()
        else:
            lines = _text_lines(path)
        for number, line in enumerate(lines, start=1):
            text = line.strip().removeprefix("\ufeff")
            if not text:
                continue
            if not text.startswith("#") or number > 100:
                return None
            found = _DECLARED_DECKS.search(text)
            if found:
                return int(found.group(1)), number
    except OSError:
        return None
    return None


def _text_lines(path: StrPath) -> Iterator[str]:
    with open(path, encoding="utf-8", errors="replace") as f:
        yield from f


def shoe_decks(path: StrPath, decks: int | None, asked: str = "decks") -> int:
    """The decks of the shoes in `path`: `decks` if given, else what the file
    declares (`declared_decks`), else 8. A file that declares other decks
    than `decks` is an error naming `asked` (the key or option that gave them)."""
    declared = declared_decks(path)
    if declared and not 1 <= declared[0] <= MAX_DECKS:
        raise ShoeFormatError(
            f"{source_name(path)}, line {declared[1]}: decks={shown(declared[0])}: "
            f"a shoe is dealt from 1 to {MAX_DECKS} decks"
        )
    if decks is None:
        return declared[0] if declared else 8
    if declared and declared[0] != decks:
        raise ShoeFormatError(
            f"{asked} is {decks}, but {source_name(path)}, line {declared[1]} says its shoes were "
            f"dealt from {decks_words(declared[0])}; give {declared[0]}, or leave {asked} out"
        )
    return decks


def decks_option(path: StrPath | None, decks: int | None) -> int:
    """A command's --decks, beside the shoe file it reads (if any): checked,
    then resolved as `shoe_decks` resolves it (8 without either); an error
    names the option (a usage error)."""
    if decks is not None and (
        isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS
    ):
        raise UsageError(
            f"--decks must be a whole number from 1 to {MAX_DECKS}, got {shown(decks)}"
        )
    if path is None:
        return 8 if decks is None else decks
    try:
        return shoe_decks(path, decks, "--decks")
    except ShoeFormatError as exc:
        if not str(exc).startswith("--decks"):  # what the file says is wrong: its error
            raise
        raise UsageError(str(exc)) from None


#: the keys a column mapping may give: our columns, read from the file's
MAPPED_COLUMNS = (*OUTCOME_COLUMNS, "card")


def parse_columns(text: str, option: str = "--columns") -> dict[str, str]:
    """`winner=Result,shoe=Shoe` as a mapping of our columns to the file's; a
    usage error names `option`.

    >>> parse_columns("winner=Result, shoe=Shoe")
    {'winner': 'Result', 'shoe': 'Shoe'}
    """
    mapping: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        ours, eq, theirs = part.partition("=")
        if not part or not eq or not ours.strip() or not theirs.strip():
            raise UsageError(
                f"{option}: expected OURS=THEIRS pairs separated by commas, such "
                f"as winner=Result,shoe=Shoe; got {shown(part)}"
            )
        mapping[ours.strip()] = theirs.strip()
    check_columns(mapping, option)
    return mapping


def check_columns(mapping: Mapping[str, Any], where: str) -> None:
    """Refuse a mapping key that is not one of `MAPPED_COLUMNS`, or a value
    that is not a column name (a usage error naming `where`)."""
    for ours, theirs in mapping.items():
        if ours not in MAPPED_COLUMNS:
            close = difflib.get_close_matches(str(ours), MAPPED_COLUMNS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise UsageError(
                f"{where}: unknown column {shown(ours)}{hint}; a mapping gives the "
                f"file's column for any of {', '.join(MAPPED_COLUMNS)}"
            )
        if not isinstance(theirs, str) or not theirs.strip():
            raise UsageError(
                f"{where}: {ours}: expected the name of the file's column, got {shown(theirs)}"
            )


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

    Card-level text in a file larger than a megabyte (`text.HEAD_BYTES`) is
    read a line at a time, never held whole as text, and with `shoes` (so
    many are wanted) no further than the line of the last; its format is
    told from its first megabyte. Other files are read whole (with all of
    their shoes).
    """
    if decks is not None:
        _check_decks(decks)
    decks = shoe_decks(path, decks)
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown shoe file format {fmt!r}; known formats: {', '.join(FORMATS)}")
    if columns:
        check_columns(columns, "columns")
    streamed = _streamed_card_text(path, fmt, columns, decks, burn, shoes)
    if streamed is not None:
        return streamed
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
        kind, confident = _sniff(source, text, columns)
    if columns and kind not in ("card-csv", "outcome-csv"):
        raise UsageError(
            f"{source}: a column mapping is for CSV and Parquet files, and this "
            f"file is {_KIND_WORDS[kind]}"
        )
    if burn and kind not in ("card-text", "card-csv"):
        raise UsageError(
            f"{source}: the burn rule applies to card-level shoes, and this file is "
            f"an outcome-level record ({kind}) with no cards to burn"
        )
    try:
        return _read_kind(kind, text, source, decks, burn, columns)
    except ShoeFormatError as exc:
        if confident:
            raise
        raise _tried_all(text, source, decks, exc) from None


def _streamed_card_text(
    path: StrPath,
    fmt: str | None,
    columns: Mapping[str, str] | None,
    decks: int,
    burn: bool,
    shoes: int | None,
) -> Hands | None:
    """The shoes of a card-level text file larger than `text.HEAD_BYTES`, read
    a line at a time (as far as `shoes` shoes, if given); None for any other
    file (standard input, Parquet, a smaller file, another format), which is
    read whole."""
    if os.fspath(path) == STDIN or columns or fmt not in (None, "card-text"):
        return None
    try:  # a file the head holds whole is read once, whole, by the caller
        if os.path.getsize(path) <= HEAD_BYTES:
            return None
        with open(path, "rb") as fh:
            if fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC:
                return None
    except OSError:
        return None  # load_bytes says what is wrong
    source, head, _ = load_head(path)
    if fmt is None and _sniff(source, head, None)[0] != "card-text":
        return None
    return deal_card_shoes(
        card_text_shoes(stream_lines(path), source),
        source,
        decks,
        burn,
        shoes,
        capacity=os.path.getsize(path) // 8 + 1,
    )


_KIND_WORDS = {
    "card-text": "card text",
    "card-csv": "a card CSV",
    "outcome-csv": "an outcome CSV",
    "json": "JSON",
    "road": "a road",
    "parquet": "Parquet",
}
PARQUET_MAGIC = b"PAR1"


def _read_kind(
    kind: str, text: str, source: str, decks: int, burn: bool, columns: Mapping[str, str] | None
) -> Hands:
    if kind == "card-text":
        return deal_card_shoes(
            card_text_shoes(text, source), source, decks, burn, capacity=len(text) // 8 + 1
        )
    if kind == "card-csv":
        return deal_card_shoes(card_csv_shoes(text, source, columns), source, decks, burn)
    if kind == "outcome-csv":
        hands = outcome_csv_hands(text, source, decks, columns)
    elif kind == "json":
        hands = live_json_hands(text, source, decks)
    else:
        hands = road_hands(text, source)
    _check_hands_fit(hands, decks, source, text if kind == "road" else None)
    return hands


#: the most hands a deck's cards make: a hand takes at least four of its 52
HANDS_PER_DECK = 13


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
    raise ShoeFormatError(
        f"{source}, {where}: {int(counts[k]):,} hands in one shoe, more than "
        f"{decks_words(decks)} can deal (at most {most:,}: a hand takes at "
        f"least 4 of the {52 * decks:,} cards); give the decks the records "
        "came from"
    )


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
        reasons.append(f"{_KIND_WORDS[kind]}: {reason[:80]}")
    return ShoeFormatError(
        f"{source}: cannot tell what kind of shoe file this is; tried "
        + "; ".join(reasons)
        + "; see data/README.md for the formats"
    )


def _read_parquet(
    source: str, data: bytes, decks: int, burn: bool, columns: Mapping[str, str] | None
) -> Hands:
    """A Parquet file of the columns a CSV has, read as that CSV (its rows
    counted from 1, under the header)."""
    import io

    import polars as pl

    try:
        frame = pl.read_parquet(io.BytesIO(data))
    except Exception as exc:  # polars raises its own errors, and OSError
        raise ShoeFormatError(
            f"{source}: not a Parquet file polars can read: {shown(str(exc), 120)[1:-1]}"
        ) from None
    cast = []
    for name, dtype in frame.schema.items():
        col = pl.col(name)
        if isinstance(dtype, pl.List):
            col = col.cast(pl.List(pl.String)).list.join(" ")
        cast.append(col.cast(pl.String).fill_null("").alias(name))
    text = frame.select(cast).write_csv()
    header = {c.strip().lower() for c in text.split("\n", 1)[0].split(",")}
    if columns:
        header = (header - {c.strip().lower() for c in columns.values()}) | set(columns)
    kind = "card-csv" if "card" in header and "winner" not in header else "outcome-csv"
    if burn and kind != "card-csv":
        raise UsageError(
            f"{source}: the burn rule applies to card-level shoes, and this file is "
            "an outcome-level record with no cards to burn"
        )
    try:
        return _read_kind(kind, text, source, decks, burn, columns)
    except ShoeFormatError as exc:
        message = re.sub(
            rf"^{re.escape(source)}, line (\d+)",
            lambda m: (
                f"{source}, "
                + ("the header" if m.group(1) == "1" else f"row {int(m.group(1)) - 1}")
            ),
            str(exc),
        )
        raise ShoeFormatError(message) from None


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


def _check_decks(decks: int) -> None:
    if isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS:
        raise UsageError(f"decks must be a whole number from 1 to {MAX_DECKS}, got {shown(decks)}")


def _sniff(source: str, text: str, columns: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """The format the text is in, and whether that is sure (else a reader that
    fails lists every format tried)."""
    suffix = Path(source).suffix.lower()
    first = next(
        (
            (n, line)
            for n, line in numbered_lines(text)
            if line.strip() and not line.lstrip().startswith("#")
        ),
        None,
    )
    if first is None:
        return "card-text", True  # only comments: reported as a file with no shoes
    number, line = first
    if suffix in (".json", ".jsonl", ".ndjson") or (
        suffix != ".csv" and line.lstrip().startswith(("{", "["))
    ):
        return "json", True
    if suffix == ".csv" or "," in line:
        header = {c.strip().lower() for c in csv_cells(line, source, number)}
        if columns:
            header = (header - {c.strip().lower() for c in columns.values()}) | set(columns)
        if "card" in header and "winner" not in header:
            return "card-csv", True
        if "winner" in header and "card" not in header:
            return "outcome-csv", True
        cells = [c.strip() for c in csv_cells(line, source, number)]
        if not columns and all(c and token_results(c) is not None for c in cells):
            return "road", True  # P,B,B,P,T: no header is all results
        raise ShoeFormatError(
            f"{source}, line {number}: a CSV shoe file needs a header with shoe,card (card "
            f"level, one card per row) or shoe,winner (outcome level, one hand per row), or "
            f"a mapping of its columns (--columns winner=Result,shoe=Shoe); "
            f"got {shown(line.strip())}"
        )
    # No card token holds a B or a P; text that is mostly results is a road
    # (so that a stray character in it is reported as a bad result, not a bad card).
    content = "".join("".join(c.split()) for _, c in content_lines(text)).upper()
    if content and content.count("T") == len(content):
        # only T's: ties, or cards of ten? "TTT" is no card; "T T T" is either
        if any(len(token) > 1 for _, c in content_lines(text) for token in c.split()):
            return "road", True
        raise ShoeFormatError(
            f"{source}: the file holds only T's standing alone, which read as "
            "ties (a road) or as cards of ten: write ties run together (TTT), "
            "or tens as 10"
        )
    if _results_share(text) >= 0.5:
        return "road", True
    tokens = [t for _, c in content_lines(text) for t in c.split()]
    cards = sum(_is_card(t) for t in tokens[:2000])
    return "card-text", 2 * cards >= min(len(tokens), 2000)


def _is_card(token: str) -> bool:
    try:
        card_code(token)
    except ValueError:
        return False
    return True


def _results_share(text: str) -> float:
    """The share of the text's characters (outside comments, separators and
    space) that are results of a road, when it holds a Player or Banker win."""
    total = results = 0
    decisive = False
    for _, content in content_lines(text):
        for match in TOKEN.finditer(content):
            token = match.group()
            total += len(token)
            got = token_results(token)
            if got is None:  # partly a road: count its road characters
                got_chars = [ch for ch in token if ch.upper() in ROAD_CHARS]
                results += len(got_chars)
                decisive = decisive or any(
                    ROAD_CHARS[c.upper()] is not Winner.TIE for c in got_chars
                )
                continue
            results += len(token)
            decisive = decisive or any(w is not Winner.TIE for w in got)
    return results / total if total and decisive else 0.0

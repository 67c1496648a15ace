"""Which format a shoe file is in, told from its content (and its name), and
what a reader of a shoe file is told besides the file: the decks its shoes
were dealt from (given, or declared in the file's opening comments), and a
mapping of a CSV's columns to ours."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backtest.core.errors import ShoeFormatError, UsageError, shown
from backtest.core.rules import Winner
from backtest.shoes.recorded.card_level import card_code
from backtest.shoes.recorded.outcomes import OUTCOME_COLUMNS
from backtest.shoes.recorded.road_strings import ROAD_CHARS, TOKEN, token_results
from backtest.shoes.recorded.text import (
    HEAD_BYTES,
    StrPath,
    content_lines,
    csv_cells,
    decks_words,
    is_piped,
    numbered_lines,
    piped_bytes,
    source_name,
)
from backtest.shoes.shoe import MAX_DECKS

KIND_WORDS = {
    "card-text": "card text",
    "card-csv": "a card CSV",
    "outcome-csv": "an outcome CSV",
    "json": "JSON",
    "road": "a road",
    "parquet": "Parquet",
}
PARQUET_MAGIC = b"PAR1"


def sniff(source: str, text: str, columns: Mapping[str, str] | None = None) -> tuple[str, bool]:
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


#: `decks=N` in a comment before a file's first shoe (as `shoe generate` writes)
_DECLARED_DECKS = re.compile(r"(?<![\w-])decks\s*=\s*(\d+)\b")


def declared_decks(path: StrPath) -> tuple[int, int] | None:
    """(decks, line) if the comment lines (`#`) that open a text shoe file
    say `decks=N`, as `backtest shoe generate` writes them; else None."""
    try:
        if is_piped(path):
            head = piped_bytes(path)[:HEAD_BYTES]
        else:
            with open(path, "rb") as fh:
                head = fh.read(HEAD_BYTES)
    except (OSError, UsageError, ShoeFormatError):
        return None  # (the reader says why)
    lines = head.decode("utf-8", "replace").splitlines()
    if len(head) == HEAD_BYTES:
        lines = lines[:-1]  # (the last may be cut)
    for number, line in enumerate(lines, start=1):
        text = line.strip().removeprefix("\ufeff")
        if not text:
            continue
        if not text.startswith("#") or number > 100:
            return None
        found = _DECLARED_DECKS.search(text)
        if found:
            return int(found.group(1)), number
    return None


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
    if decks is not None:
        check_decks(decks, "--decks")
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


def check_decks(decks: int, name: str = "decks") -> None:
    if isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS:
        raise UsageError(f"{name} must be a whole number from 1 to {MAX_DECKS}, got {shown(decks)}")


def check_options(source: str, kind: str, columns: Mapping[str, str] | None, burn: bool) -> None:
    """Refuse a column mapping for a file that is not a CSV, and the burn rule
    for one without cards."""
    if columns and kind not in ("card-csv", "outcome-csv"):
        raise UsageError(
            f"{source}: a column mapping is for CSV and Parquet files, and this "
            f"file is {KIND_WORDS[kind]}"
        )
    if burn and kind not in ("card-text", "card-csv"):
        raise UsageError(
            f"{source}: the burn rule applies to card-level shoes, and this file is "
            f"an outcome-level record ({kind}) with no cards to burn"
        )

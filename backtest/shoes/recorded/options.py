"""What a reader of a shoe file is told besides the file: the decks its shoes
were dealt from (given, or declared in the file's opening comments), and a
mapping of a CSV's columns to ours."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from backtest.core.errors import ShoeFormatError, UsageError, shown
from backtest.shoes.recorded.outcome_csv import OUTCOME_COLUMNS
from backtest.shoes.recorded.sniff import KIND_WORDS
from backtest.shoes.recorded.text import (
    HEAD_BYTES,
    StrPath,
    decks_words,
    is_piped,
    piped_bytes,
    source_name,
)
from backtest.shoes.shoe import MAX_DECKS

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


def check_decks(decks: int) -> None:
    if isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS:
        raise UsageError(f"decks must be a whole number from 1 to {MAX_DECKS}, got {shown(decks)}")


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

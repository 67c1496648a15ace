"""Reading a recorded shoe file: which format it is (sniffed by its
content), the decks it says it was dealt from, and the reader for it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from backtest.errors import ShoeFormatError, UsageError, shown
from backtest.hands import Hands
from backtest.recorded.card_level import card_csv_shoes, card_text_shoes, deal_card_shoes
from backtest.recorded.live_json import live_json_hands
from backtest.recorded.outcome_csv import outcome_csv_hands
from backtest.recorded.road_strings import road_hands
from backtest.recorded.text import (
    StrPath,
    content_lines,
    csv_cells,
    decks_words,
    load_head,
    load_text,
    numbered_lines,
    stream_lines,
)
from backtest.shoe import MAX_DECKS

#: the formats `read_shoes` reads (its `fmt` argument)
FORMATS = ("card-text", "card-csv", "outcome-csv", "json", "road")



#: `decks=N` in a comment before a file's first shoe (as `shoe generate` writes)
_DECLARED_DECKS = re.compile(r"(?<![\w-])decks\s*=\s*(\d+)\b")


def declared_decks(path: StrPath) -> tuple[int, int] | None:
    """(decks, line) if the comment lines (`#`) that open a text shoe file
    say `decks=N`, as `backtest shoe generate` writes them; else None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, start=1):
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


def shoe_decks(path: StrPath, decks: int | None, asked: str = "decks") -> int:
    """The decks of the shoes in `path`: `decks` if given, else what the file
    declares (`declared_decks`), else 8. A file that declares other decks
    than `decks` is an error naming `asked` (the key or option that gave them)."""
    declared = declared_decks(path)
    if declared and not 1 <= declared[0] <= MAX_DECKS:
        raise ShoeFormatError(f"{os.fspath(path)}, line {declared[1]}: decks={shown(declared[0])}: "
                              f"a shoe is dealt from 1 to {MAX_DECKS} decks")
    if decks is None:
        return declared[0] if declared else 8
    if declared and declared[0] != decks:
        raise ShoeFormatError(
            f"{asked} is {decks}, but {os.fspath(path)}, line {declared[1]} says its shoes were "
            f"dealt from {decks_words(declared[0])}; give {declared[0]}, or leave {asked} out")
    return decks


def decks_option(path: StrPath | None, decks: int | None) -> int:
    """A command's --decks, beside the shoe file it reads (if any): checked,
    then resolved as `shoe_decks` resolves it (8 without either); an error
    names the option (a usage error)."""
    if decks is not None and (isinstance(decks, bool) or not isinstance(decks, int)
                              or not 1 <= decks <= MAX_DECKS):
        raise UsageError(f"--decks must be a whole number from 1 to {MAX_DECKS}, got {shown(decks)}")
    if path is None:
        return 8 if decks is None else decks
    try:
        return shoe_decks(path, decks, "--decks")
    except ShoeFormatError as exc:
        if not str(exc).startswith("--decks"):   # what the file says is wrong: its error
            raise
        raise UsageError(str(exc)) from None


def read_shoes(path: StrPath, decks: int | None = None, burn: bool = False,
               fmt: str | None = None, shoes: int | None = None) -> Hands:
    """Read every shoe of a recorded file, in any of `FORMATS`.

    The format is told from the extension and the content when `fmt` is None:
    `.json` or text starting with `{`/`[` is JSON; `.csv` or a first line with
    commas is a CSV (a `card` column: card level; a `winner` column: outcome
    level); other text is road strings if it is mostly B, P and T, else cards.
    `decks` is the size of the shoe the records came from (cards are checked
    against it): by default what the file declares (`shoe_decks`), else 8;
    `burn` applies the burn rule to card-level shoes.

    Card-level text is read a line at a time, so that a file larger than a
    megabyte (`text.HEAD_BYTES`) is never held whole as text, and with
    `shoes` (so many are wanted) is read no further than the line of the
    last; its format is told from its first megabyte. A smaller file, and
    other formats, are read whole (with all of their shoes).
    """
    if decks is not None:
        _check_decks(decks)
    decks = shoe_decks(path, decks)
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown shoe file format {fmt!r}; known formats: {', '.join(FORMATS)}")
    source, head, whole = load_head(path)
    kind = fmt if fmt is not None else _sniff(source, head)
    if burn and kind not in ("card-text", "card-csv"):
        raise UsageError(f"{source}: the burn rule applies to card-level shoes, and this file is "
                         f"an outcome-level record ({kind}) with no cards to burn")
    if kind == "card-text":
        if whole:
            return deal_card_shoes(card_text_shoes(head, source), source, decks, burn,
                                   capacity=len(head) // 8 + 1)
        return deal_card_shoes(card_text_shoes(stream_lines(path), source), source, decks, burn,
                               shoes, capacity=os.path.getsize(path) // 8 + 1)
    source, text = (source, head) if whole else load_text(path)
    if kind == "card-csv":
        return deal_card_shoes(card_csv_shoes(text, source), source, decks, burn)
    if kind == "outcome-csv":
        hands = outcome_csv_hands(text, source, decks)
    elif kind == "json":
        hands = live_json_hands(text, source)
    else:
        hands = road_hands(text, source)
    _check_hands_fit(hands, decks, source, text if kind == "road" else None)
    return hands


#: the most hands a deck's cards make: a hand takes at least four of its 52
HANDS_PER_DECK = 13


def _check_hands_fit(hands: Hands, decks: int, source: str, road: str | None) -> None:
    """Refuse an outcome-level shoe of more hands than `decks` decks can deal
    (its cards are not recorded, so this is what can be checked of them);
    `road`: the text of a road file, whose shoes are its lines."""
    import numpy as np

    most = HANDS_PER_DECK * decks
    _, counts = np.unique(hands.shoe, return_counts=True)
    over = np.flatnonzero(counts > most)
    if not over.size:
        return
    k = int(over[0])
    where = f"shoe {k + 1}"
    if road is not None:
        where = f"line {[n for n, _ in content_lines(road)][k]}"
    raise ShoeFormatError(f"{source}, {where}: {int(counts[k]):,} hands in one shoe, more than "
                          f"{decks_words(decks)} can deal (at most {most:,}: a hand takes at "
                          f"least 4 of the {52 * decks:,} cards); give the decks the records "
                          "came from")


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
    entries, a list of such messages (one shoe each), or a list of lists of entries."""
    return read_shoes(path, fmt="json")


def read_road(path: StrPath) -> Hands:
    """Road strings: one shoe per line, B (banker), P (player), T (tie)."""
    return read_shoes(path, fmt="road")


def _check_decks(decks: int) -> None:
    if isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS:
        raise UsageError(f"decks must be a whole number from 1 to {MAX_DECKS}, got {shown(decks)}")


def _sniff(source: str, text: str) -> str:
    suffix = Path(source).suffix.lower()
    first = next(((n, line) for n, line in numbered_lines(text)
                  if line.strip() and not line.lstrip().startswith("#")), None)
    if first is None:
        return "card-text"  # only comments: reported as a file with no shoes
    number, line = first
    if suffix == ".json" or (suffix != ".csv" and line.lstrip().startswith(("{", "["))):
        return "json"
    if suffix == ".csv" or "," in line:
        header = {c.strip().lower() for c in csv_cells(line, source, number)}
        if "card" in header and "winner" not in header:
            return "card-csv"
        if "winner" in header and "card" not in header:
            return "outcome-csv"
        raise ShoeFormatError(
            f"{source}, line {number}: a CSV shoe file needs a header with shoe,card (card "
            f"level, one card per row) or shoe,winner (outcome level, one hand per row); "
            f"got {shown(line.strip())}")
    # No card token holds a B or a P; text that is mostly B, P and T is a road
    # (so that a stray character in it is reported as a bad result, not a bad card).
    content = "".join("".join(c.split()) for _, c in content_lines(text)).upper()
    road = sum(content.count(ch) for ch in "BPT")
    if (content.count("B") or content.count("P")) and 2 * road >= len(content):
        return "road"
    if content and content.count("T") == len(content):
        # only T's: ties, or cards of ten? "TTT" is no card; "T T T" is either
        if any(len(token) > 1 for _, c in content_lines(text) for token in c.split()):
            return "road"
        raise ShoeFormatError(f"{source}: the file holds only T's standing alone, which read as "
                              "ties (a road) or as cards of ten: write ties run together (TTT), "
                              "or tens as 10")
    return "card-text"

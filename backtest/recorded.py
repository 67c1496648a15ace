"""Recorded shoes: read real shoes from files into `Hands`; write shoes as text.

Two levels of record are read:

* card level: the cards as dealt into hands, one shoe per line of a text
  file (`KS 9H 2C ...`) or one card per row of a `shoe,card` CSV. The hands
  are dealt from the cards by the rules, so every column is known.
* outcome level: what a table's scoreboard shows: a `shoe,winner,...` CSV,
  the live-table shoe-state JSON (`args.history_v2`), or road strings
  (`BPPBT`). Such a Hands knows only the columns recorded (`Hands.known`),
  and a bet that needs more fails with MissingDataError.

Every problem in a file is a ShoeFormatError naming the file, the place in
it (line and column, CSV field, or JSON path), what is wrong and what would
be valid. A card-level shoe that ends in the middle of a hand is only a
warning (IncompleteHandWarning): the hands before it are dealt.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "shoe.txt"
>>> _ = path.write_text("5 K 9 2 3 8   2 9 3 K\\n", encoding="utf-8")
>>> hands = read_shoes(path)
>>> hands.to_frame()["winner"].to_list(), format_card_text(hands)
(['player', 'banker'], '5 K 9 2 3 8 2 9 3 K\\n')
"""

from __future__ import annotations

import csv
import difflib
import functools
import json
import os
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from backtest import kernels
from backtest.cards import RANK_SYMBOLS, card_token, parse_card, value
from backtest.errors import RulesError, ShoeFormatError, UsageError, shown
from backtest.hands import ALL_KNOWN, Hands
from backtest.rules import (Hand, Winner, banker_draws, deal_hand, hand_total, is_natural,
                            outcome, player_draws)
from backtest.shoe import MAX_DECKS

#: the formats `read_shoes` reads (its `fmt` argument)
FORMATS = ("card-text", "card-csv", "outcome-csv", "json", "road")

StrPath = str | os.PathLike[str]


class IncompleteHandWarning(UserWarning):
    """A card-level shoe ended in the middle of a hand; that hand was not dealt."""


# --- reading ------------------------------------------------------------------------


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
            f"dealt from {_decks(declared[0])}; give {declared[0]}, or leave {asked} out")
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
        raise UsageError(str(exc)) from None


def _decks(n: int) -> str:
    return "1 deck" if n == 1 else f"{n} decks"


def read_shoes(path: StrPath, decks: int | None = None, burn: bool = False,
               fmt: str | None = None) -> Hands:
    """Read every shoe of a recorded file, in any of `FORMATS`.

    The format is told from the extension and the content when `fmt` is None:
    `.json` or text starting with `{`/`[` is JSON; `.csv` or a first line with
    commas is a CSV (a `card` column: card level; a `winner` column: outcome
    level); other text is road strings if it is mostly B, P and T, else cards.
    `decks` is the size of the shoe the records came from (cards are checked
    against it): by default what the file declares (`shoe_decks`), else 8;
    `burn` applies the burn rule to card-level shoes.
    """
    if decks is not None:
        _check_decks(decks)
    decks = shoe_decks(path, decks)
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown shoe file format {fmt!r}; known formats: {', '.join(FORMATS)}")
    source, text = _load(path)
    kind = fmt if fmt is not None else _sniff(source, text)
    if burn and kind not in ("card-text", "card-csv"):
        raise UsageError(f"{source}: the burn rule applies to card-level shoes, and this file is "
                         f"an outcome-level record ({kind}) with no cards to burn")
    if kind == "card-text":
        return _deal_card_shoes(_card_text_shoes(text, source), source, decks, burn)
    if kind == "card-csv":
        return _deal_card_shoes(_card_csv_shoes(text, source), source, decks, burn)
    if kind == "outcome-csv":
        return _outcome_csv(text, source, decks)
    if kind == "json":
        return _live_json(text, source)
    return _road(text, source)


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


def _load(path: StrPath) -> tuple[str, str]:
    """The file's name (for messages) and its text; a missing file is a usage error."""
    source = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{source}: is a directory, not a shoe file") from None
    except OSError as exc:
        raise UsageError(f"{source}: cannot read the file: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ShoeFormatError(f"{source}, line {line}: not UTF-8 text ({exc.reason} at byte "
                              f"{exc.start}); save the file as UTF-8") from None
    # every line ending (CR LF, LF, a lone CR as old Mac files have) is a line end
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise ShoeFormatError(f"{source}: no shoes: the file is empty")
    return source, text


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line of `_load`'s text (its line ends are LF)."""
    return enumerate(text.split("\n"), start=1)


def _csv_cells(line: str, source: str, number: int) -> list[str]:
    """The fields of one CSV line (a record is one line: a quote left open is an
    error; text after a closing quote, as in `"KS" ,`, is kept, as csv does)."""
    try:
        try:
            return next(csv.reader([line], strict=True))
        except csv.Error as exc:
            if "end of data" in str(exc):
                raise ShoeFormatError(f"{source}, line {number}: a quoted field is not closed "
                                      "on its line") from None
            return next(csv.reader([line]))
    except csv.Error as exc:
        problem = (f"a field is longer than {csv.field_size_limit():,} characters"
                   if "field limit" in str(exc) else f"not a CSV line ({exc})")
        raise ShoeFormatError(f"{source}, line {number}: {problem}") from None


def _content_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, text before any `#` comment) for lines with something on them."""
    for number, line in _lines(text):
        content = line.split("#", 1)[0]
        if content.strip():
            yield number, content


def _sniff(source: str, text: str) -> str:
    suffix = Path(source).suffix.lower()
    first = next(((n, line) for n, line in _lines(text)
                  if line.strip() and not line.lstrip().startswith("#")), None)
    if first is None:
        return "card-text"  # only comments: reported as a file with no shoes
    number, line = first
    if suffix == ".json" or (suffix != ".csv" and line.lstrip().startswith(("{", "["))):
        return "json"
    if suffix == ".csv" or "," in line:
        header = {c.strip().lower() for c in _csv_cells(line, source, number)}
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
    content = "".join("".join(c.split()) for _, c in _content_lines(text)).upper()
    road = sum(content.count(ch) for ch in "BPT")
    if (content.count("B") or content.count("P")) and 2 * road >= len(content):
        return "road"
    if content and content.count("T") == len(content):
        # only T's: ties, or cards of ten? "TTT" is no card; "T T T" is either
        if any(len(token) > 1 for _, c in _content_lines(text) for token in c.split()):
            return "road"
        raise ShoeFormatError(f"{source}: the file holds only T's standing alone, which read as "
                              "ties (a road) or as cards of ten: write ties run together (TTT), "
                              "or tens as 10")
    return "card-text"


# --- card level -----------------------------------------------------------------------

_CODES: dict[str, int] = {}


def _card_code(token: str) -> int:
    """parse_card, remembered: a shoe repeats the same few tokens thousands of times."""
    code = _CODES.get(token)
    if code is None:
        code = parse_card(token)
        _CODES[token] = code
    return code


@dataclass(frozen=True)
class _CardShoe:
    """The cards of one shoe as read, and where each one is in the file."""

    label: str
    cards: np.ndarray
    locate: Callable[[int], str]


def _card_text_shoes(text: str, source: str) -> list[_CardShoe]:
    shoes = []
    for number, content in _content_lines(text):
        tokens = content.split()

        def locate(k: int, number: int = number, content: str = content) -> str:
            column = [m.start() + 1 for m in re.finditer(r"\S+", content)][k]
            return f"{source}, line {number}, column {column} (card {k + 1} of the shoe)"

        codes = []
        for k, token in enumerate(tokens):
            try:
                codes.append(_card_code(token))
            except ValueError as exc:
                raise ShoeFormatError(f"{locate(k)}: {exc}") from None
        shoes.append(_CardShoe(f"line {number}", np.array(codes, dtype=np.uint8), locate))
    return shoes


def _card_csv_shoes(text: str, source: str) -> list[_CardShoe]:
    rows = _csv_table(text, source, "a card-level CSV", ("shoe", "card"), ("shoe", "card"))
    shoes = []
    for label, group in _group_shoes(rows, source):
        lines = [number for number, _ in group]

        def locate(k: int, lines: list[int] = lines, label: str = label) -> str:
            return f"{source}, line {lines[k]}, field card (card {k + 1} of shoe {shown(label)})"

        codes = []
        for k, (_, row) in enumerate(group):
            try:
                codes.append(_card_code(row["card"]))
            except ValueError as exc:
                raise ShoeFormatError(f"{locate(k)}: {exc}") from None
        shoes.append(_CardShoe(f"shoe {shown(label)} (lines {lines[0]}-{lines[-1]})",
                               np.array(codes, dtype=np.uint8), locate))
    return shoes


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _check_composition(cards: np.ndarray, decks: int, locate: Callable[[int], str]) -> None:
    """Refuse more copies of a rank (4 per deck), or of an exact suited card (1 per
    deck), than `decks` decks hold; the error points at the first card too many."""
    found: list[tuple[int, str]] = []
    ranks = cards & 0xF
    per_rank = 4 * decks
    for rank in np.flatnonzero(np.bincount(ranks, minlength=14) > per_rank):
        at = int(np.flatnonzero(ranks == rank)[per_rank])
        found.append((at, f"too many cards of rank {RANK_SYMBOLS[rank - 1]}: a {decks}-deck "
                          f"shoe holds {per_rank} of each rank, and this is the "
                          f"{_ordinal(per_rank + 1)}"))
    suited = np.where(cards > 0xF, cards, 0)
    for code in np.flatnonzero(np.bincount(suited, minlength=256)[16:] > decks) + 16:
        at = int(np.flatnonzero(cards == code)[decks])
        found.append((at, f"too many {card_token(int(code))}: a {decks}-deck shoe holds "
                          f"{decks} of each card (one per deck), and this is the "
                          f"{_ordinal(decks + 1)}"))
    if found:
        at, what = min(found)
        raise ShoeFormatError(f"{locate(at)}: {what}; is the shoe really {_decks(decks)}?")


def _burn_count(first: int) -> int:
    """Cards burned at the start of a shoe: the turned card and as many more as its
    value, ten for a ten or a face card."""
    v = value(first)
    return 1 + (v if v else 10)


def _deal_card_shoes(shoes: Sequence[_CardShoe], source: str, decks: int, burn: bool) -> Hands:
    if not shoes:
        raise ShoeFormatError(f"{source}: no shoes: the file holds only comments and blank lines")
    parts: list[dict[str, np.ndarray]] = []
    burned: list[tuple[int, ...]] = []
    for shoe in shoes:
        _check_composition(shoe.cards, decks, shoe.locate)
        cards = shoe.cards
        shoe_burn: tuple[int, ...] = ()
        if burn:
            n_burn = _burn_count(int(cards[0]))
            if n_burn > cards.shape[0]:
                raise ShoeFormatError(
                    f"{source}, {shoe.label}: the shoe ends during the burn: the first card, "
                    f"{card_token(int(cards[0]))}, burns {n_burn - 1} more, but the shoe has "
                    f"only {cards.shape[0]} cards")
            shoe_burn, cards = tuple(int(c) for c in cards[:n_burn]), cards[n_burn:]
        columns, used = deal_cards(cards)
        n = columns["winner"].shape[0]
        left = cards.shape[0] - used
        if left:
            warnings.warn(
                f"{source}, {shoe.label}: the shoe ends in the middle of a hand: "
                f"{left} card{'s' if left > 1 else ''} left over "
                f"{f'after hand {n} ' if n else ''}"
                f"{'were' if left > 1 else 'was'} not dealt",
                IncompleteHandWarning, stacklevel=3)
        if n == 0:
            continue
        columns["shoe"] = np.full(n, len(parts), dtype=np.int32)
        columns["hand"] = np.arange(1, n + 1, dtype=np.int32)
        parts.append(columns)
        burned.append(shoe_burn)
    if not parts:
        raise ShoeFormatError(f"{source}: no complete hand in any shoe (a hand takes 4 to 6 cards)")
    merged = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    return Hands.from_columns(int(merged["winner"].shape[0]), known=ALL_KNOWN, source=source,
                              burned=tuple(burned) if burn else (), **merged)


def _empty_columns(size: int) -> dict[str, np.ndarray]:
    return {
        "cards": np.zeros((size, 6), np.uint8), "player_total": np.zeros(size, np.int8),
        "banker_total": np.zeros(size, np.int8), "winner": np.zeros(size, np.int8),
        "natural": np.zeros(size, np.bool_), "player_pair": np.zeros(size, np.bool_),
        "banker_pair": np.zeros(size, np.bool_), "player_cards": np.zeros(size, np.int8),
        "banker_cards": np.zeros(size, np.int8),
    }


def deal_cards(cards: np.ndarray | Sequence[int]) -> tuple[dict[str, np.ndarray], int]:
    """Deal every complete hand from an ordered sequence of card codes.

    Returns the `Hands` columns of the hands dealt (all but shoe and hand) and
    the number of cards they used; cards after the last complete hand are left.

    >>> from backtest.cards import parse_cards
    >>> columns, used = deal_cards(parse_cards("5 K 9 2 3 8  2 9 3 K  4"))
    >>> columns["winner"].tolist(), used
    ([0, 1], 10)
    """
    seq = np.ascontiguousarray(np.asarray(cards, dtype=np.uint8))
    out = _empty_columns(seq.shape[0] // 4 + 1)
    dealt, used = kernels.deal_sequence(
        seq, kernels.HAND_TABLE, kernels.CARD_VALUE, out["cards"], out["player_total"],
        out["banker_total"], out["winner"], out["natural"], out["player_pair"],
        out["banker_pair"], out["player_cards"], out["banker_cards"])
    n, pos = int(dealt), int(used)
    # The kernel stops once it cannot see a fifth card, so a last hand that
    # stands on four cards is dealt here by the rules themselves.
    while True:
        try:
            hand = deal_hand(int(c) for c in seq[pos:pos + 6])
        except RulesError:
            break
        _put_hand(out, n, hand)
        n += 1
        pos += hand.cards_used
    return {name: column[:n].copy() for name, column in out.items()}, pos


def _put_hand(out: dict[str, np.ndarray], i: int, hand: Hand) -> None:
    out["cards"][i] = (hand.player_cards + (0,) * (3 - len(hand.player_cards))
                       + hand.banker_cards + (0,) * (3 - len(hand.banker_cards)))
    out["player_total"][i] = hand.player_total
    out["banker_total"][i] = hand.banker_total
    out["winner"][i] = hand.winner.code
    out["natural"][i] = hand.natural
    out["player_pair"][i] = hand.player_pair
    out["banker_pair"][i] = hand.banker_pair
    out["player_cards"][i] = hand.player_card_count
    out["banker_cards"][i] = hand.banker_card_count


# --- outcome level: what a record may say, and checking it -------------------------------

#: the fields of one outcome record, in the order `_possible` keys them
_FIELDS = ("winner", "player_total", "banker_total", "natural", "player_pair", "banker_pair",
           "player_card_count", "banker_card_count")


@functools.cache
def _all_outcomes() -> frozenset[tuple[Any, ...]]:
    """Every combination of `_FIELDS` some dealt hand has.

    A hand depends only on the two-card totals and the values of the cards
    drawn, so walking the tableau over those covers every hand; a pair is
    possible exactly when the two-card total is even (2v mod 10).
    """
    found = set()
    for p2 in range(10):
        for b2 in range(10):
            # (player total, banker total, player cards, banker cards)
            ends: list[tuple[int, int, int, int]] = []
            if is_natural(p2) or is_natural(b2):
                ends.append((p2, b2, 2, 2))
            elif not player_draws(p2):
                if banker_draws(b2, None):
                    ends += [(p2, (b2 + v) % 10, 2, 3) for v in range(10)]
                else:
                    ends.append((p2, b2, 2, 2))
            else:
                for v5 in range(10):
                    if banker_draws(b2, v5):
                        ends += [((p2 + v5) % 10, (b2 + v6) % 10, 3, 3) for v6 in range(10)]
                    else:
                        ends.append(((p2 + v5) % 10, b2, 3, 2))
            natural = is_natural(p2) or is_natural(b2)
            for pt, bt, pn, bn in ends:
                for pp in (False, True) if p2 % 2 == 0 else (False,):
                    for bp in (False, True) if b2 % 2 == 0 else (False,):
                        found.add((outcome(pt, bt), pt, bt, natural, pp, bp, pn, bn))
    return frozenset(found)


@functools.cache
def _possible(fields: tuple[str, ...]) -> frozenset[tuple[Any, ...]]:
    """The combinations of `fields` (a sub-sequence of `_FIELDS`) some hand has."""
    idx = [_FIELDS.index(f) for f in fields]
    return frozenset(tuple(t[i] for i in idx) for t in _all_outcomes())


_WIN_WORDS = {Winner.PLAYER: "a player win", Winner.BANKER: "a banker win", Winner.TIE: "a tie"}


def _show(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _check_hand(rec: Mapping[str, Any], where: str, names: Mapping[str, str]) -> None:
    """Refuse a record no dealt hand matches; `names` maps fields to the file's names."""
    def name(f: str) -> str:
        return names.get(f, f)

    winner, pt, bt = rec["winner"], rec.get("player_total"), rec.get("banker_total")
    if pt is not None and bt is not None and outcome(pt, bt) is not winner:
        raise ShoeFormatError(
            f"{where}: {name('winner')} is {winner}, but {name('player_total')} {pt} against "
            f"{name('banker_total')} {bt} is {_WIN_WORDS[outcome(pt, bt)]}")
    if rec.get("natural"):
        if pt is not None and bt is not None and max(pt, bt) < 8:
            raise ShoeFormatError(
                f"{where}: {name('natural')} is true, but a natural is a two-card 8 or 9 and "
                f"the totals are {pt} and {bt}")
        for side in ("player", "banker"):
            if rec.get(f"{side}_card_count") == 3:
                raise ShoeFormatError(
                    f"{where}: {name('natural')} is true, but the {side.title()} has three "
                    f"cards ({name(side + '_card_count')} 3); after a natural both hands stand")
    fields = tuple(f for f in _FIELDS if f in rec)
    if tuple(rec[f] for f in fields) not in _possible(fields):
        said = ", ".join(f"{name(f)} {_show(rec[f])}" for f in fields)
        raise ShoeFormatError(f"{where}: no hand the drawing rules deal has {said}")


_WINNER_WORDS = {"p": Winner.PLAYER, "player": Winner.PLAYER, "b": Winner.BANKER,
                 "banker": Winner.BANKER, "t": Winner.TIE, "tie": Winner.TIE}
_TRUE = frozenset({"true", "1", "yes", "y"})
_FALSE = frozenset({"false", "0", "no", "n"})


def _parse_winner(raw: Any, where: str) -> Winner:
    winner = _WINNER_WORDS.get(raw.strip().lower()) if isinstance(raw, str) else None
    if winner is None:
        raise ShoeFormatError(f"{where}: unknown winner {shown(raw)}: expected P, B or T "
                              "(or player, banker, tie; any case)")
    return winner


def _parse_total(raw: str, where: str) -> int:
    if raw.strip() not in tuple("0123456789"):
        raise ShoeFormatError(f"{where}: impossible total {shown(raw)}: a hand's total is a "
                              "whole number from 0 to 9")
    return int(raw)


def _parse_bool(raw: str, where: str) -> bool:
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ShoeFormatError(f"{where}: expected true or false (also 1/0, yes/no, y/n), "
                          f"got {shown(raw)}")


def _parse_count(raw: str, where: str) -> int:
    if raw.strip() not in ("2", "3"):
        raise ShoeFormatError(f"{where}: a hand has 2 or 3 cards, got {shown(raw)}")
    return int(raw)


def _outcome_hands(records: Sequence[Mapping[str, Any]], known: frozenset[str],
                   source: str) -> Hands:
    cols: dict[str, Any] = {
        "shoe": [r["shoe"] for r in records], "hand": [r["hand"] for r in records],
        "winner": [r["winner"].code for r in records],
    }
    for f in ("player_total", "banker_total", "natural", "player_pair", "banker_pair"):
        if f in known:
            cols[f] = [r[f] for r in records]
    if "card_counts" in known:
        cols["player_cards"] = [r["player_card_count"] for r in records]
        cols["banker_cards"] = [r["banker_card_count"] for r in records]
    if "cards" in known:
        cols["cards"] = np.array([r["cards"] for r in records], dtype=np.uint8).reshape(-1, 6)
    return Hands.from_columns(len(records), known=known, source=source, **cols)


# --- CSV ------------------------------------------------------------------------------------

#: the columns an outcome-level CSV may have (`shoe` and `winner` are required)
OUTCOME_COLUMNS = ("shoe", "hand", "winner", "player_total", "banker_total", "natural",
                   "player_pair", "banker_pair", "player_card_count", "banker_card_count",
                   "player_cards", "banker_cards")
_TOGETHER = (("player_card_count", "banker_card_count"), ("player_cards", "banker_cards"))

Row = tuple[int, dict[str, str]]


def _csv_table(text: str, source: str, kind: str, allowed: Sequence[str],
               required: Sequence[str]) -> list[Row]:
    """The rows (line number, cells by column) of a CSV after checking its header.
    Blank lines and lines starting with `#` are skipped."""
    header: list[str] | None = None
    header_line = 0
    rows: list[Row] = []
    for number, line in _lines(text):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = _csv_cells(line, source, number)
        if header is None:
            header, header_line = [c.strip().lower() for c in cells], number
            _check_columns(source, number, header, kind, allowed, required)
            continue
        if len(cells) != len(header):
            raise ShoeFormatError(
                f"{source}, line {number}: {len(cells)} fields, but the header (line "
                f"{header_line}) has {len(header)}: {','.join(header)}")
        rows.append((number, dict(zip(header, (c.strip() for c in cells)))))
    if header is None:
        raise ShoeFormatError(f"{source}: no shoes: the file holds only comments and blank lines")
    if not rows:
        raise ShoeFormatError(f"{source}: no shoes: the file has a header (line {header_line}) "
                              "but no rows")
    return rows


def _check_columns(source: str, line: int, header: Sequence[str], kind: str,
                   allowed: Sequence[str], required: Sequence[str]) -> None:
    seen: set[str] = set()
    for i, column in enumerate(header, start=1):
        if column in seen:
            raise ShoeFormatError(f"{source}, line {line}, column {i}: the column {shown(column)} "
                                  "appears twice in the header")
        if column not in allowed:
            close = difflib.get_close_matches(column, allowed, n=1)
            hint = f" (did you mean {shown(close[0])}?)" if close else ""
            raise ShoeFormatError(f"{source}, line {line}, column {i}: unknown column "
                                  f"{shown(column)}{hint}; {kind} has the columns "
                                  f"{', '.join(allowed)}")
        seen.add(column)
    for column in required:
        if column not in seen:
            optional = [c for c in allowed if c not in required]
            more = f" (optional: {', '.join(optional)})" if optional else ""
            raise ShoeFormatError(f"{source}, line {line}: the header has no {column!r} column; "
                                  f"{kind} needs the columns {','.join(required)}{more}")
    for a, b in _TOGETHER:
        if (a in seen) != (b in seen):
            has, lacks = (a, b) if a in seen else (b, a)
            raise ShoeFormatError(f"{source}, line {line}: the header has {shown(has)} but not "
                                  f"{shown(lacks)}; the two go together")


def _group_shoes(rows: Sequence[Row], source: str) -> Iterator[tuple[str, list[Row]]]:
    """The rows of each shoe (by the `shoe` label), refusing a label that comes back."""
    first_line: dict[str, int] = {}
    group: list[Row] = []
    label = ""
    for number, row in rows:
        this = row["shoe"]
        if not this:
            raise ShoeFormatError(f"{source}, line {number}, field shoe: the shoe label is empty")
        if group and this != label:
            yield label, group
            group = []
        if not group:
            if this in first_line:
                raise ShoeFormatError(
                    f"{source}, line {number}, field shoe: shoe {shown(this)} appears again after "
                    f"other shoes (it started on line {first_line[this]}); the rows of a shoe "
                    "must be together")
            first_line[this] = number
            label = this
        group.append((number, row))
    if group:
        yield label, group


def _outcome_csv(text: str, source: str, decks: int) -> Hands:
    rows = _csv_table(text, source, "an outcome-level CSV", OUTCOME_COLUMNS, ("shoe", "winner"))
    columns = set(rows[0][1])
    records = []
    for shoe, (label, group) in enumerate(_group_shoes(rows, source)):
        shoe_cards: list[int] = []
        card_places: list[str] = []
        for hand, (number, row) in enumerate(group, start=1):
            where = f"{source}, line {number}"
            rec: dict[str, Any] = {"shoe": shoe, "hand": hand,
                                   "winner": _parse_winner(row["winner"], f"{where}, field winner")}
            if "hand" in row and row["hand"] != str(hand):
                raise ShoeFormatError(
                    f"{where}, field hand: hand numbers count 1, 2, 3 ... within a shoe; "
                    f"expected {hand} for hand {hand} of shoe {shown(label)}, "
                    f"got {shown(row['hand'])}")
            for f in ("player_total", "banker_total"):
                if f in row:
                    rec[f] = _parse_total(row[f], f"{where}, field {f}")
            for f in ("natural", "player_pair", "banker_pair"):
                if f in row:
                    rec[f] = _parse_bool(row[f], f"{where}, field {f}")
            for f in ("player_card_count", "banker_card_count"):
                if f in row:
                    rec[f] = _parse_count(row[f], f"{where}, field {f}")
            if "player_cards" in row:
                p, b = _derive_from_cards(rec, row, where)
                shoe_cards += p + b
                card_places += ([f"{where}, field player_cards"] * len(p)
                                + [f"{where}, field banker_cards"] * len(b))
            else:
                _check_hand(rec, where, {})
            records.append(rec)
        if shoe_cards:
            _check_composition(np.array(shoe_cards, dtype=np.uint8), decks,
                               card_places.__getitem__)
    known: set[str] = {f for f in ("player_total", "banker_total", "natural", "player_pair",
                         "banker_pair") if f in columns}
    if "player_card_count" in columns:
        known.add("card_counts")
    if "player_cards" in columns:
        known = set(ALL_KNOWN)
    return _outcome_hands(records, frozenset(known), source)


def _parse_hand_cards(raw: str, where: str) -> list[int]:
    cards = []
    for k, token in enumerate(raw.split(), start=1):
        try:
            cards.append(_card_code(token))
        except ValueError as exc:
            raise ShoeFormatError(f"{where}, card {k}: {exc}") from None
    if not 2 <= len(cards) <= 3:
        raise ShoeFormatError(f"{where}: a hand has 2 or 3 cards, got {len(cards)} ({shown(raw)})")
    return cards


def _derive_from_cards(rec: dict[str, Any], row: Mapping[str, str],
                       where: str) -> tuple[list[int], list[int]]:
    """Fill `rec` from the hand's cards, refusing cards the rules would not deal
    and recorded fields that disagree with them; returns each side's cards."""
    p = _parse_hand_cards(row["player_cards"], f"{where}, field player_cards")
    b = _parse_hand_cards(row["banker_cards"], f"{where}, field banker_cards")
    order = [p[0], b[0], p[1], b[1], *p[2:], *b[2:]]
    try:
        hand: Hand | None = deal_hand(order)
    except RulesError:
        hand = None
    if hand is None or hand.player_cards != tuple(p) or hand.banker_cards != tuple(b):
        raise ShoeFormatError(
            f"{where}: Player {' '.join(map(card_token, p))} and Banker "
            f"{' '.join(map(card_token, b))} is not a hand the rules deal: {_draw_reason(p, b)}")
    derived = {"winner": hand.winner, "player_total": hand.player_total,
               "banker_total": hand.banker_total, "natural": hand.natural,
               "player_pair": hand.player_pair, "banker_pair": hand.banker_pair,
               "player_card_count": hand.player_card_count,
               "banker_card_count": hand.banker_card_count}
    for f, v in derived.items():
        if f in rec and rec[f] != v:
            raise ShoeFormatError(f"{where}, field {f}: {f} is {_show(rec[f])}, but the cards "
                                  f"give {_show(v)}")
    rec.update(derived)
    rec["cards"] = (p + [0] * (3 - len(p))) + (b + [0] * (3 - len(b)))
    return p, b


def _draw_reason(p: Sequence[int], b: Sequence[int]) -> str:
    """Why cards given per side are not what the tableau deals."""
    p2 = hand_total(value(c) for c in p[:2])
    b2 = hand_total(value(c) for c in b[:2])
    if is_natural(p2) or is_natural(b2):
        return f"a two-card {max(p2, b2)} is a natural, and both hands stand on two cards"
    if player_draws(p2) != (len(p) == 3):
        return f"the Player {'draws' if player_draws(p2) else 'stands'} on {p2}"
    third = value(p[2]) if len(p) == 3 else None
    verb = "draws" if banker_draws(b2, third) else "stands"
    when = "the Player stood" if third is None else f"the Player's third card is worth {third}"
    return f"the Banker {verb} on {b2} when {when}"


# --- live-table JSON --------------------------------------------------------------------

_JSON_SHAPES = ("a shoe-state message (an object with args.history_v2), a list of hand "
                "entries, a list of such messages, or a list of lists of entries")
_LIVE_NAMES = {"winner": "winner", "player_total": "playerScore", "banker_total": "bankerScore",
               "natural": "natural", "player_pair": "playerPair", "banker_pair": "bankerPair"}


def _json_type(v: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "true/false",
            type(None): "null"}.get(type(v), "number")


def _live_json(text: str, source: str) -> Hands:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ShoeFormatError(f"{source}, line {exc.lineno}, column {exc.colno}: not valid "
                              f"JSON: {exc.msg}") from None
    except RecursionError:
        raise ShoeFormatError(f"{source}: its JSON nests lists or objects too deeply to be a "
                              "shoe's records") from None
    records = []
    shoe = 0
    for path, entries in _json_shoes(data, source):
        for i, entry in enumerate(entries):
            records.append(_live_entry(entry, f"{source}, {path}[{i}]", shoe, i + 1))
        shoe += 1 if entries else 0
    if not records:
        raise ShoeFormatError(f"{source}: no shoes: no hand entries in the file")
    known = frozenset({"player_total", "banker_total", "natural", "player_pair", "banker_pair"})
    return _outcome_hands(records, known, source)


def _json_shoes(data: Any, source: str) -> list[tuple[str, list[Any]]]:
    """(JSON path of the entry list, entries) for each shoe in the document."""
    if isinstance(data, dict):
        return [("args.history_v2", _history(data, "", source))]
    if not isinstance(data, list):
        raise ShoeFormatError(f"{source}: expected {_JSON_SHAPES}; got a JSON {_json_type(data)}")
    if not data:
        raise ShoeFormatError(f"{source}: no shoes: the JSON list is empty")
    if isinstance(data[0], list):
        for i, item in enumerate(data):
            if not isinstance(item, list):
                raise ShoeFormatError(f"{source}, [{i}]: expected a list of hand entries like "
                                      f"the others, got a JSON {_json_type(item)}")
        return [(f"[{i}]", item) for i, item in enumerate(data)]
    messages = isinstance(data[0], dict) and "args" in data[0]
    if isinstance(data[0], dict) and {"shoe", "hand", "winner"} <= set(data[0]) \
            and "playerScore" not in data[0]:
        raise ShoeFormatError(f"{source}: this is the JSON that `backtest deal --format json` "
                              "writes, which is not read as shoes; write the hands with "
                              "`--format csv` instead, which reads back as an outcome CSV")
    if not messages:
        return [("", data)]
    shoes = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or "args" not in item:
            raise ShoeFormatError(f"{source}, [{i}]: expected a shoe-state message (an object "
                                  f"with args.history_v2) like [0], got a JSON "
                                  f"{_json_type(item)}")
        shoes.append((f"[{i}].args.history_v2", _history(item, f"[{i}].", source)))
    return shoes


def _history(message: Mapping[str, Any], prefix: str, source: str) -> list[Any]:
    args = message.get("args")
    if not isinstance(args, dict):
        raise ShoeFormatError(f"{source}, {prefix}args: expected {_JSON_SHAPES}; this object has "
                              "no args object")
    history = args.get("history_v2")
    if not isinstance(history, list):
        raise ShoeFormatError(f"{source}, {prefix}args.history_v2: expected the list of hand "
                              f"entries, got {'nothing' if history is None else 'a JSON ' + _json_type(history)}")
    return history


def _live_entry(entry: Any, where: str, shoe: int, hand: int) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ShoeFormatError(f"{where}: expected a hand entry (an object with winner, "
                              f"playerScore, bankerScore), got a JSON {_json_type(entry)}")
    if "winner" not in entry:
        raise ShoeFormatError(f"{where}: the entry has no winner (Player, Banker or Tie)")
    rec: dict[str, Any] = {"shoe": shoe, "hand": hand,
                           "winner": _parse_winner(entry["winner"], f"{where}.winner")}
    for field, key in (("player_total", "playerScore"), ("banker_total", "bankerScore")):
        if key not in entry:
            raise ShoeFormatError(f"{where}: the entry has no {key} (the hand's total, 0 to 9)")
        v = entry[key]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 9:
            raise ShoeFormatError(f"{where}.{key}: impossible total {json.dumps(v)}: a hand's "
                                  "total is a whole number from 0 to 9")
        rec[field] = v
    for field, key in (("natural", "natural"), ("player_pair", "playerPair"),
                       ("banker_pair", "bankerPair")):
        v = entry.get(key, False)
        if not isinstance(v, bool):
            raise ShoeFormatError(f"{where}.{key}: expected true or false, got {json.dumps(v)}")
        rec[field] = v
    _check_hand(rec, where, _LIVE_NAMES)
    return rec


# --- road strings --------------------------------------------------------------------------

_ROAD = {"B": Winner.BANKER, "P": Winner.PLAYER, "T": Winner.TIE}


def _road(text: str, source: str) -> Hands:
    records = []
    shoe = 0
    for number, content in _content_lines(text):
        hand = 0
        for column, ch in enumerate(content, start=1):
            if ch.isspace():
                continue
            winner = _ROAD.get(ch.upper())
            if winner is None:
                raise ShoeFormatError(f"{source}, line {number}, column {column}: unknown result "
                                      f"{shown(ch)}: a road is a string of B (banker), P (player) "
                                      "and T (tie)")
            hand += 1
            records.append({"shoe": shoe, "hand": hand, "winner": winner})
        shoe += 1
    if not records:
        raise ShoeFormatError(f"{source}: no shoes: the file holds only comments and blank lines")
    return _outcome_hands(records, frozenset(), source)


# --- writing ------------------------------------------------------------------------------


def format_card_text(hands: Hands, header: str | None = None) -> str:
    """The card-level text of `hands`: `# header` lines, then one line per shoe
    with the cards as dealt into hands (what `read_shoes` reads back to the same
    hands). Needs card-level hands (MissingDataError otherwise)."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()] if header else []
    order = hands.dealt_cards()  # refuses outcome-level hands
    if len(hands):
        per_hand = hands.cards[:, [0, 3, 1, 4, 2, 5]]
        codes = np.unique(order)
        lut = np.empty(256, dtype=object)
        lut[codes] = [card_token(int(c)) for c in codes]
        starts = np.flatnonzero(np.diff(hands.shoe)) + 1
        for rows in np.split(per_hand, starts):
            seq = rows.reshape(-1)
            lines.append(" ".join(lut[seq[seq != 0]].tolist()))
    return "\n".join(lines) + "\n"


def write_atomic(path: StrPath, text: str) -> None:
    """Write `text` (UTF-8) to `path` through `outputs.atomic_path`: never seen
    half-written, through a symbolic link, and straight to a device or pipe."""
    from backtest import outputs

    target = Path(path)
    try:
        with outputs.atomic_path(target) as tmp:
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                if tmp.is_file():
                    os.fsync(fh.fileno())
    except FileNotFoundError:
        raise UsageError(f"{target}: cannot write: no directory {target.parent}") from None
    except OSError as exc:
        raise UsageError(f"{target}: cannot write: {exc.strerror}") from None


__all__ = [
    "FORMATS", "IncompleteHandWarning", "OUTCOME_COLUMNS", "deal_cards", "format_card_text",
    "read_card_csv", "read_card_text", "read_live_json", "read_outcome_csv", "read_road",
    "read_shoes", "write_atomic",
]

"""Outcome-level records: what a record may say of a hand, checked to be
a hand the tableau can deal, the winner words, and the outcome-level CSV (a
row a hand, the columns its header names)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from backtest.core.cards import card_token, value
from backtest.core.errors import RulesError, ShoeFormatError, shown
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.core.rules import (
    Hand,
    Winner,
    banker_draws,
    deal_hand,
    hand_total,
    is_natural,
    outcome,
    player_draws,
)
from backtest.shoes.recorded.card_level import card_code, check_composition
from backtest.shoes.recorded.text import Row, csv_rows, decks_words, group_shoes

#: the fields of one outcome record, in the order `_possible` keys them
_FIELDS = (
    "winner",
    "player_total",
    "banker_total",
    "natural",
    "player_pair",
    "banker_pair",
    "player_card_count",
    "banker_card_count",
)


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


def shown_value(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def check_hand(rec: Mapping[str, Any], where: str, names: Mapping[str, str]) -> None:
    """Refuse a record no dealt hand matches; `names` maps fields to the file's names."""

    def name(f: str) -> str:
        return names.get(f, f)

    winner, pt, bt = rec["winner"], rec.get("player_total"), rec.get("banker_total")
    if pt is not None and bt is not None and outcome(pt, bt) is not winner:
        raise ShoeFormatError(
            f"{where}: {name('winner')} is {winner}, but {name('player_total')} {pt} against "
            f"{name('banker_total')} {bt} is {_WIN_WORDS[outcome(pt, bt)]}"
        )
    if rec.get("natural"):
        if pt is not None and bt is not None and max(pt, bt) < 8:
            raise ShoeFormatError(
                f"{where}: {name('natural')} is true, but a natural is a two-card 8 or 9 and "
                f"the totals are {pt} and {bt}"
            )
        for side in ("player", "banker"):
            if rec.get(f"{side}_card_count") == 3:
                raise ShoeFormatError(
                    f"{where}: {name('natural')} is true, but the {side.title()} has three "
                    f"cards ({name(side + '_card_count')} 3); after a natural both hands stand"
                )
    fields = tuple(f for f in _FIELDS if f in rec)
    if tuple(rec[f] for f in fields) not in _possible(fields):
        said = ", ".join(f"{name(f)} {shown_value(rec[f])}" for f in fields)
        raise ShoeFormatError(f"{where}: no hand the drawing rules deal has {said}")


#: a winner as records write it: a letter, a word, a word with "win", or Chinese
WINNER_WORDS = {
    "p": Winner.PLAYER,
    "player": Winner.PLAYER,
    "b": Winner.BANKER,
    "banker": Winner.BANKER,
    "t": Winner.TIE,
    "tie": Winner.TIE,
    "庄": Winner.BANKER,
    "莊": Winner.BANKER,
    "庄家": Winner.BANKER,
    "莊家": Winner.BANKER,
    "闲": Winner.PLAYER,
    "閒": Winner.PLAYER,
    "闲家": Winner.PLAYER,
    "閒家": Winner.PLAYER,
    "和": Winner.TIE,
    "和局": Winner.TIE,
}
_TRUE = frozenset({"true", "1", "yes", "y"})
_FALSE = frozenset({"false", "0", "no", "n"})
_WIN_SUFFIX = re.compile(r"[\s_-]*(wins?|won)$")


def winner_word(raw: str) -> Winner | None:
    """The winner a word names (`P`, `banker`, `PLAYER_WIN`, `Banker wins`, `庄`), or None.

    >>> [str(winner_word(w)) for w in ("b", "PLAYER_WIN", "Tie", "閒")]
    ['banker', 'player', 'tie', 'player']
    """
    text = raw.strip().lower()
    found = WINNER_WORDS.get(text)
    if found is None and len(text) > 3:
        found = WINNER_WORDS.get(_WIN_SUFFIX.sub("", text))
        found = found if found is not None and len(_WIN_SUFFIX.sub("", text)) > 1 else None
    return found


def parse_winner(raw: Any, where: str) -> Winner:
    winner = winner_word(raw) if isinstance(raw, str) else None
    if winner is None:
        raise ShoeFormatError(
            f"{where}: unknown winner {shown(raw)}: expected P, B or T "
            "(or player, banker, tie, PLAYER_WIN, 庄, 闲, 和; any case)"
        )
    return winner


def parse_total(raw: str, where: str) -> int:
    if raw.strip() not in tuple("0123456789"):
        raise ShoeFormatError(
            f"{where}: impossible total {shown(raw)}: a hand's total is a whole number from 0 to 9"
        )
    return int(raw)


def parse_bool(raw: str, where: str) -> bool:
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ShoeFormatError(
        f"{where}: expected true or false (also 1/0, yes/no, y/n), got {shown(raw)}"
    )


def parse_count(raw: str, where: str) -> int:
    if raw.strip() not in ("2", "3"):
        raise ShoeFormatError(f"{where}: a hand has 2 or 3 cards, got {shown(raw)}")
    return int(raw)


def outcome_hands(
    records: Sequence[Mapping[str, Any]], known: frozenset[str], source: str
) -> Hands:
    cols: dict[str, Any] = {
        "shoe": [r["shoe"] for r in records],
        "hand": [r["hand"] for r in records],
        "winner": [r["winner"].code for r in records],
    }
    for f in ("player_total", "banker_total", "natural", "player_pair", "banker_pair"):
        if f in known:
            cols[f] = [r[f] for r in records]
    if "card_counts" in known:
        cols["player_card_count"] = [r["player_card_count"] for r in records]
        cols["banker_card_count"] = [r["banker_card_count"] for r in records]
    if "cards" in known:
        cols["cards"] = np.array([r["cards"] for r in records], dtype=np.uint8).reshape(-1, 6)
    return Hands.from_columns(len(records), known=known, source=source, **cols)


#: the most hands a deck's cards make: a hand takes at least four of its 52
HANDS_PER_DECK = 13


def too_many_hands(source: str, where: str, count: int, decks: int) -> ShoeFormatError:
    """The error for a shoe (at `where`) of an outcome-level record that
    has more hands than `decks` decks can deal."""
    most = HANDS_PER_DECK * decks
    return ShoeFormatError(
        f"{source}, {where}: {count:,} hands in one shoe, more than "
        f"{decks_words(decks)} can deal (at most {most:,}: a hand takes at "
        f"least 4 of the {52 * decks:,} cards); give the decks the records "
        "came from"
    )


#: the columns an outcome-level CSV may have (`shoe` and `winner` are required)
OUTCOME_COLUMNS = ("shoe", "hand", *_FIELDS, "player_cards", "banker_cards")


def outcome_csv_shoes(
    lines: Iterable[tuple[int, str]],
    source: str,
    decks: int,
    mapping: Mapping[str, str] | None = None,
    first: int = 0,
) -> Iterator[tuple[Hands, tuple[int, int], str]]:
    """The hands of each shoe of an outcome-level CSV's numbered lines in
    turn, checked, numbered from `first`, with the lines of its first and
    last rows and its label (the shoe column's value); each is given once the next shoe's first row is read.
    """

    def rows(lines: Iterable[tuple[int, str]]) -> Iterator[Row]:
        return csv_rows(
            lines, source, "an outcome-level CSV", OUTCOME_COLUMNS, ("shoe", "winner"), mapping
        )

    known: frozenset[str] | None = None
    for shoe, (label, group) in enumerate(group_shoes(rows(lines), source), start=first):
        if known is None:
            known = _known(group[0][1])
        records = _shoe_records(shoe, label, group, source, decks)
        yield outcome_hands(records, known, source), (group[0][0], group[-1][0]), label


def _known(row: Mapping[str, str]) -> frozenset[str]:
    """What a CSV with the columns of `row` records of each hand (`Hands.known`)."""
    known = {
        f
        for f in ("player_total", "banker_total", "natural", "player_pair", "banker_pair")
        if f in row
    }
    if "player_card_count" in row:
        known.add("card_counts")
    if "player_cards" in row:
        known = set(ALL_KNOWN)
    return frozenset(known)


def _shoe_records(
    shoe: int, label: str, group: Sequence[Row], source: str, decks: int
) -> list[dict[str, Any]]:
    """The checked records of one shoe's rows (numbered `shoe` from 0)."""
    records = []
    shoe_cards: list[int] = []
    card_places: list[str] = []
    for hand, (number, row) in enumerate(group, start=1):
        where = f"{source}, line {number}"
        rec: dict[str, Any] = {
            "shoe": shoe,
            "hand": hand,
            "winner": parse_winner(row["winner"], f"{where}, field winner"),
        }
        if "hand" in row and row["hand"] != str(hand):
            raise ShoeFormatError(
                f"{where}, field hand: hand numbers count 1, 2, 3 ... within a shoe; "
                f"expected {hand} for hand {hand} of shoe {shown(label)}, "
                f"got {shown(row['hand'])}"
            )
        for f in ("player_total", "banker_total"):
            if f in row:
                rec[f] = parse_total(row[f], f"{where}, field {f}")
        for f in ("natural", "player_pair", "banker_pair"):
            if f in row:
                rec[f] = parse_bool(row[f], f"{where}, field {f}")
        for f in ("player_card_count", "banker_card_count"):
            if f in row:
                rec[f] = parse_count(row[f], f"{where}, field {f}")
        if "player_cards" in row:
            p, b = derive_from_cards(rec, row, where)
            shoe_cards += p + b
            card_places += [f"{where}, field player_cards"] * len(p) + [
                f"{where}, field banker_cards"
            ] * len(b)
        else:
            check_hand(rec, where, {})
        records.append(rec)
    if shoe_cards:
        check_composition(np.array(shoe_cards, dtype=np.uint8), decks, card_places.__getitem__)
    return records


def parse_hand_cards(raw: str, where: str) -> list[int]:
    cards = []
    for k, token in enumerate(raw.split(), start=1):
        try:
            cards.append(card_code(token))
        except ValueError as exc:
            raise ShoeFormatError(f"{where}, card {k}: {exc}") from None
    if not 2 <= len(cards) <= 3:
        raise ShoeFormatError(f"{where}: a hand has 2 or 3 cards, got {len(cards)} ({shown(raw)})")
    return cards


def _field(name: str) -> str:
    return f", field {name}"


def derive_from_cards(
    rec: dict[str, Any],
    row: Mapping[str, str],
    where: str,
    place: Callable[[str], str] = _field,
) -> tuple[list[int], list[int]]:
    """Fill `rec` from the hand's cards, refusing cards the rules would not deal
    and recorded fields that disagree with them; returns each side's cards.
    `place(field)` says where a field is, after `where` (`, field player_cards`)."""
    p = parse_hand_cards(row["player_cards"], f"{where}{place('player_cards')}")
    b = parse_hand_cards(row["banker_cards"], f"{where}{place('banker_cards')}")
    order = [p[0], b[0], p[1], b[1], *p[2:], *b[2:]]
    try:
        hand: Hand | None = deal_hand(order)
    except RulesError:
        hand = None
    if hand is None or hand.player_cards != tuple(p) or hand.banker_cards != tuple(b):
        raise ShoeFormatError(
            f"{where}: Player {' '.join(map(card_token, p))} and Banker "
            f"{' '.join(map(card_token, b))} is not a hand the rules deal: {_draw_reason(p, b)}"
        )
    derived = _derived(hand)
    for f, v in derived.items():
        if f in rec and rec[f] != v:
            raise ShoeFormatError(
                f"{where}{place(f)}: {f} is {shown_value(rec[f])}, but the cards "
                f"give {shown_value(v)}"
            )
    rec.update(derived)
    rec["cards"] = (p + [0] * (3 - len(p))) + (b + [0] * (3 - len(b)))
    return p, b


def _derived(hand: Hand) -> dict[str, Any]:
    """What a record says of a hand, as its cards give it."""
    return {
        "winner": hand.winner,
        "player_total": hand.player_total,
        "banker_total": hand.banker_total,
        "natural": hand.natural,
        "player_pair": hand.player_pair,
        "banker_pair": hand.banker_pair,
        "player_card_count": hand.player_card_count,
        "banker_card_count": hand.banker_card_count,
    }


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

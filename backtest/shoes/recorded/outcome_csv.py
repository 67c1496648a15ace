"""Outcome-level CSV: a row a hand, the columns its header names."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from backtest.core.cards import card_token, value
from backtest.core.errors import RulesError, ShoeFormatError, shown
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.core.rules import Hand, banker_draws, deal_hand, hand_total, is_natural, player_draws
from backtest.shoes.recorded.card_level import card_code, check_composition
from backtest.shoes.recorded.outcomes import (
    check_hand,
    outcome_hands,
    parse_bool,
    parse_count,
    parse_total,
    parse_winner,
    shown_value,
)
from backtest.shoes.recorded.text import Row, csv_rows, group_shoes

#: the columns an outcome-level CSV may have (`shoe` and `winner` are required)
OUTCOME_COLUMNS = (
    "shoe",
    "hand",
    "winner",
    "player_total",
    "banker_total",
    "natural",
    "player_pair",
    "banker_pair",
    "player_card_count",
    "banker_card_count",
    "player_cards",
    "banker_cards",
)


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

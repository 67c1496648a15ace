"""The mini-baccarat tableau: totals, who draws, a dealt hand and who wins.

Pure functions and frozen values: no I/O, no randomness, no globals that
change. The table's settings (payouts, which bets it takes) are `rules`'s,
which gives these names too.

>>> hand = deal_hand(parse_cards("5 K 9 2 3 8"))
>>> hand.player_total, hand.banker_total, hand.winner
(7, 0, <Winner.PLAYER: 'player'>)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from backtest.core.cards import card_token, parse_cards, value  # noqa: F401 (the doctests use parse_cards)
from backtest.core.errors import RulesError


class Winner(StrEnum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"

    @property
    def code(self) -> int:
        """0 player, 1 banker, 2 tie: the code used in arrays."""
        return _WINNER_CODES[self]

    @classmethod
    def from_code(cls, code: int) -> Winner:
        return _WINNERS[code]


_WINNERS = (Winner.PLAYER, Winner.BANKER, Winner.TIE)
_WINNER_CODES = {w: i for i, w in enumerate(_WINNERS)}

# --- totals and the tableau -------------------------------------------------


def hand_total(values: Iterable[int]) -> int:
    """Sum of card values modulo 10: 9 + 5 = 4."""
    return sum(values) % 10


def is_natural(two_card_total: int) -> bool:
    """An 8 or 9 on the first two cards; both hands then stand."""
    return two_card_total >= 8


def player_draws(player_total: int) -> bool:
    """The Player draws on 0 to 5 and stands on 6 or 7 (no natural)."""
    return player_total <= 5


#: banker total -> values of the Player's third card on which the Banker draws
BANKER_DRAWS_ON: Mapping[int, frozenset[int]] = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}),
    4: frozenset({2, 3, 4, 5, 6, 7}),
    5: frozenset({4, 5, 6, 7}),
    6: frozenset({6, 7}),
    7: frozenset(),
    8: frozenset(),
    9: frozenset(),
}


def banker_draws(banker_total: int, player_third_value: int | None) -> bool:
    """Whether the Banker draws (no natural on the table).

    `player_third_value` is the VALUE of the Player's third card (0 for a ten
    or face card), or None when the Player stood.
    """
    if player_third_value is None:
        return banker_total <= 5
    return player_third_value in BANKER_DRAWS_ON[banker_total]


def rule_reasons(hand: Hand) -> list[str]:
    """The tableau decisions of a dealt hand, in words, in the order made."""
    p2 = hand_total(value(c) for c in hand.player_cards[:2])
    b2 = hand_total(value(c) for c in hand.banker_cards[:2])
    if is_natural(p2) or is_natural(b2):
        who = "Player" if is_natural(p2) else "Banker"
        if is_natural(p2) and is_natural(b2):
            who = "Both hands"
        total = p2 if is_natural(p2) else b2
        return [f"{who} natural {total}: both hands stand"]
    reasons = []
    if len(hand.player_cards) == 3:
        third = value(hand.player_cards[2])
        reasons.append(f"Player {p2} draws")
        verb = "draws" if len(hand.banker_cards) == 3 else "stands"
        card = card_token(hand.player_cards[2])
        reasons.append(f"Banker {b2} {verb}: Player's third card is {card} (value {third})")
    else:
        reasons.append(f"Player {p2} stands")
        verb = "draws" if len(hand.banker_cards) == 3 else "stands"
        reasons.append(f"Banker {b2} {verb}: Player stood, Banker draws on 0 to 5")
    return reasons


# --- a dealt hand -------------------------------------------------------------


class HandResult(Protocol):
    """What settlement reads of a hand. Recorded outcome-level shoes may leave
    any field but `winner` as None (not recorded)."""

    @property
    def winner(self) -> Winner: ...
    @property
    def player_total(self) -> int | None: ...
    @property
    def banker_total(self) -> int | None: ...
    @property
    def player_pair(self) -> bool | None: ...
    @property
    def banker_pair(self) -> bool | None: ...
    @property
    def player_card_count(self) -> int | None: ...
    @property
    def banker_card_count(self) -> int | None: ...


@dataclass(frozen=True)
class Hand:
    """One dealt hand: the cards (codes) of each side and what follows."""

    player_cards: tuple[int, ...]
    banker_cards: tuple[int, ...]

    @property
    def player_total(self) -> int:
        return hand_total(value(c) for c in self.player_cards)

    @property
    def banker_total(self) -> int:
        return hand_total(value(c) for c in self.banker_cards)

    @property
    def winner(self) -> Winner:
        return outcome(self.player_total, self.banker_total)

    @property
    def natural(self) -> bool:
        return (
            len(self.player_cards) == 2
            and len(self.banker_cards) == 2
            and (is_natural(self.player_total) or is_natural(self.banker_total))
        )

    @property
    def player_pair(self) -> bool:
        return (self.player_cards[0] & 0xF) == (self.player_cards[1] & 0xF)

    @property
    def banker_pair(self) -> bool:
        return (self.banker_cards[0] & 0xF) == (self.banker_cards[1] & 0xF)

    @property
    def player_card_count(self) -> int:
        return len(self.player_cards)

    @property
    def banker_card_count(self) -> int:
        return len(self.banker_cards)

    @property
    def cards_used(self) -> int:
        return len(self.player_cards) + len(self.banker_cards)


def outcome(player_total: int, banker_total: int) -> Winner:
    """The hand closer to 9 wins; equal totals tie."""
    if player_total > banker_total:
        return Winner.PLAYER
    if banker_total > player_total:
        return Winner.BANKER
    return Winner.TIE


def deal_hand(cards: Iterable[int]) -> Hand:
    """Deal one hand from the front of `cards` (codes), P B P B, then the tableau.

    Raises RulesError if the cards run out before the hand is complete.
    """
    it: Iterator[int] = iter(cards)

    def draw() -> int:
        try:
            return next(it)
        except StopIteration:
            raise RulesError("the cards ran out in the middle of a hand") from None

    p = [draw()]
    b = [draw()]
    p.append(draw())
    b.append(draw())
    p2 = hand_total(value(c) for c in p)
    b2 = hand_total(value(c) for c in b)
    if not (is_natural(p2) or is_natural(b2)):
        third: int | None = None
        if player_draws(p2):
            p.append(draw())
            third = value(p[2])
        if banker_draws(b2, third):
            b.append(draw())
    return Hand(tuple(p), tuple(b))


def deal_hands(cards: Sequence[int]) -> list[Hand]:
    """Deal every complete hand from `cards`; an incomplete tail is not dealt."""
    hands: list[Hand] = []
    pos = 0
    while True:
        try:
            hand = deal_hand(cards[pos : pos + 6])
        except RulesError:
            return hands
        hands.append(hand)
        pos += hand.cards_used


__all__ = [
    "BANKER_DRAWS_ON",
    "Hand",
    "HandResult",
    "Winner",
    "banker_draws",
    "deal_hand",
    "deal_hands",
    "hand_total",
    "is_natural",
    "outcome",
    "player_draws",
    "rule_reasons",
]

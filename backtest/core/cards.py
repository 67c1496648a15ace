"""Ranks, suits and baccarat values; parsing and printing card tokens.

A card is a small integer code: the rank (1 = ace ... 10 = ten, 11 = jack,
12 = queen, 13 = king) in the low four bits, the suit (0 = not recorded,
1..4 = spades, hearts, diamonds, clubs) in the next three. Code 0 means
"no card". Suits never matter for totals or for any bet the rules core
settles; they are kept so that a recorded shoe prints back as it was read.

>>> parse_card("Kh")
45
>>> card_token(parse_card("10♠")), card_token(parse_card("sA")), card_token(parse_card("♦10"))
('TS', 'AS', 'TD')
>>> value(parse_card("Q")), value(parse_card("9d"))
(0, 9)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from backtest.core.errors import shown

NO_CARD = 0
RANKS = tuple(range(1, 14))
RANK_SYMBOLS = "A23456789TJQK"
SUIT_SYMBOLS = "SHDC"
_SUIT_ALIASES = {
    "S": 1,
    "H": 2,
    "D": 3,
    "C": 4,
    "♠": 1,
    "♥": 2,
    "♦": 3,
    "♣": 4,
    "♤": 1,
    "♡": 2,
    "♢": 3,
    "♧": 4,
}
_RANK_ALIASES = {s: i + 1 for i, s in enumerate(RANK_SYMBOLS)} | {"10": 10}

#: baccarat value of each rank, indexed by rank (index 0 unused)
RANK_VALUE = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0], dtype=np.int8)
DECK_SIZE = 52


def make_card(rank: int, suit: int = 0) -> int:
    """The code of a card of `rank` (1..13) and `suit` (0..4)."""
    return rank | (suit << 4)


def rank_of(card: int) -> int:
    return card & 0xF


def suit_of(card: int) -> int:
    return card >> 4


def value(card: int) -> int:
    """Baccarat value: ace 1, two to nine face value, ten and faces 0."""
    rank = card & 0xF
    return rank if rank < 10 else 0


def parse_card(token: str) -> int:
    """Parse a token such as `A`, `10`, `Td`, `K♥`, `qs` (case-insensitive), or
    one written suit first, as some tables publish them: `SA`, `h10`, `♦K`.
    No rank is a suit letter, so the two orders cannot be confused.

    Raises ValueError with the reason; callers add file and line.
    """
    # ASCII letters only: str.upper() would also make a long s (ſ) an S
    text = "".join(ch.upper() if ch.isascii() else ch for ch in token.strip())
    if not text:
        raise ValueError("empty card token")
    suit = 0
    if text[-1] in _SUIT_ALIASES and len(text) > 1:
        suit = _SUIT_ALIASES[text[-1]]
        text = text[:-1]
    elif text[0] in _SUIT_ALIASES and len(text) > 1:
        suit = _SUIT_ALIASES[text[0]]
        text = text[1:]
    rank = _RANK_ALIASES.get(text)
    if rank is None:
        raise ValueError(
            f"unknown card {shown(token)}: a card is a rank A 2-9 T/10 J Q K, "
            "optionally with a suit S H D C (or ♠ ♥ ♦ ♣) after it or before it"
        )
    return make_card(rank, suit)


def card_token(card: int) -> str:
    """Normalised token: rank symbol plus suit letter when the suit is known."""
    rank, suit = card & 0xF, card >> 4
    if not 1 <= rank <= 13 or suit > 4:
        raise ValueError(f"not a card code: {card}")
    return RANK_SYMBOLS[rank - 1] + (SUIT_SYMBOLS[suit - 1] if suit else "")


def cards_text(cards: Iterable[int]) -> str:
    """Space-separated tokens of the real cards in `cards` (zeros skipped)."""
    return " ".join(card_token(int(c)) for c in cards if c)


def parse_cards(text: str) -> list[int]:
    """Parse whitespace- or comma-separated card tokens."""
    return [parse_card(t) for t in text.replace(",", " ").split()]


def rank_counts(cards: Sequence[int] | np.ndarray) -> np.ndarray:
    """Counts of each rank (index 1..13; index 0 unused) among `cards`."""
    arr = np.asarray(cards, dtype=np.int64)
    return np.bincount(arr[arr != 0] & 0xF, minlength=14).astype(np.int64)


def full_shoe_counts(decks: int) -> np.ndarray:
    """Rank counts (index 1..13) of `decks` full 52-card decks."""
    counts = np.full(14, 4 * decks, dtype=np.int64)
    counts[0] = 0
    return counts


def a_shoe_of(decks: int) -> str:
    """'a 6-deck shoe', 'an 8-deck shoe': "an" before a number said with a vowel.

    >>> a_shoe_of(8), a_shoe_of(6), a_shoe_of(11)
    ('an 8-deck shoe', 'a 6-deck shoe', 'an 11-deck shoe')
    """
    vowel = str(decks).startswith("8") or decks in (11, 18)
    return f"{'an' if vowel else 'a'} {decks}-deck shoe"


def deck_cards(decks: int, suited: bool = True) -> np.ndarray:
    """Every card of `decks` decks in new-pack order, as codes (uint8)."""
    one = [make_card(r, s if suited else 0) for s in range(1, 5) for r in RANKS]
    return np.array(one * decks, dtype=np.uint8)

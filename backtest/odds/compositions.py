"""Shoe compositions: the rank counts left (index 1..13), checked, made
from a number of decks, with cards removed, or as they stand before a
hand of recorded shoes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from backtest.core.cards import (
    RANK_SYMBOLS,
    a_shoe_of,
    card_token,
    full_shoe_counts,
    parse_cards,
)
from backtest.core.errors import MissingDataError, RulesError, ShoeFormatError, shown
from backtest.shoes.shoe import MAX_DECKS

if TYPE_CHECKING:
    from backtest.core.hands import Hands


def check_counts(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    """The rank counts as an int64 array of 14 (index 0 unused, zero), or RulesError."""
    arr = np.asarray(counts)
    if arr.shape != (14,):
        raise RulesError(
            f"a composition is 14 rank counts (index 0 unused, then A 2-9 T J Q K), "
            f"got shape {arr.shape}"
        )
    if arr.dtype.kind not in "iu":
        whole = arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
        if not whole:
            raise RulesError(f"rank counts must be whole numbers, got {arr.tolist()}")
    out = arr.astype(np.int64)
    if out[0] != 0:
        raise RulesError(f"rank counts: index 0 is unused and must be 0, got {out[0]}")
    if (out < 0).any():
        bad = int(np.flatnonzero(out < 0)[0])
        raise RulesError(f"rank counts cannot be negative: {RANK_SYMBOLS[bad - 1]} has {out[bad]}")
    return out


def composition(decks: int = 8, remove: str | Iterable[int] | None = None) -> np.ndarray:
    """Rank counts of `decks` full decks less the cards in `remove`.

    `remove` is card text ("5 5 K Td") or card codes, counted by rank; a card
    given with its suit cannot be taken out more times than `decks` decks hold it.

    >>> composition(1, remove="A A K")[[1, 13]].tolist()
    [2, 3]
    """
    if (
        isinstance(decks, bool)
        or not isinstance(decks, (int, np.integer))
        or not 1 <= decks <= MAX_DECKS
    ):
        raise RulesError(f"decks must be a whole number from 1 to {MAX_DECKS}, got {shown(decks)}")
    counts = full_shoe_counts(int(decks))
    if remove is None:
        return counts
    if isinstance(remove, str):
        try:
            cards = parse_cards(remove)
        except ValueError as exc:
            raise RulesError(f"cards to remove: {exc}") from None
    else:
        cards = [int(c) for c in remove]
    check_suited(cards, int(decks))
    return remove_cards(counts, cards)


def remove_cards(counts: Sequence[int] | np.ndarray, cards: Iterable[int]) -> np.ndarray:
    """A copy of `counts` less `cards` (codes); a card the shoe has no more of is an error."""
    start = check_counts(counts)
    out = start.copy()
    for card in cards:
        rank = int(card) & 0xF
        if not 1 <= rank <= 13 or int(card) >> 4 > 4:
            raise RulesError(f"not a card code: {card}")
        if out[rank] == 0:
            raise RulesError(
                f"cannot remove {card_token(int(card))}: no {RANK_SYMBOLS[rank - 1]} "
                f"left in the shoe (it held {start[rank]})"
            )
        out[rank] -= 1
    return out


def check_suited(cards: Iterable[int], decks: int) -> None:
    """Refuse more copies of one suited card (`KS`) among `cards` than `decks`
    decks hold, one a deck; cards given without a suit are not counted."""
    seen: dict[int, int] = {}
    for card in cards:
        code = int(card)
        if code >> 4:
            seen[code] = seen.get(code, 0) + 1
            if seen[code] > decks:
                raise RulesError(
                    f"{card_token(code)} would be out {seen[code]} times, but "
                    f"{decks} deck{'s hold' if decks != 1 else ' holds'} "
                    f"{decks if decks != 1 else 'one'}"
                )


def composition_after(hands: Hands, k: int, decks: int = 8, shoe: int = 1) -> np.ndarray:
    """The composition before hand k + 1 of shoe number `shoe` (1 for the
    first, in the order `hands` holds them).

    The full `decks`-deck shoe less that shoe's burned cards (when `hands`
    records them) and every card dealt in its first `k` hands. A shoe
    recorded without cards raises MissingDataError; one that deals more of a
    rank than `decks` decks hold raises ShoeFormatError.
    """
    return remove_cards(composition(decks), cards_before(hands, k, decks, shoe))


def cards_before(hands: Hands, k: int, decks: int = 8, shoe: int = 1) -> list[int]:
    """The cards out of shoe number `shoe` of `hands` before its hand k + 1:
    its burned cards (when recorded) and the cards of its first `k` hands
    (`composition_after`'s errors)."""
    if "cards" not in hands.known:
        raise MissingDataError(
            f"{hands.source}: the composition after a hand needs the cards "
            "dealt, which this recorded shoe does not have"
        )
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise RulesError(f"after_hands must be a whole number of at least 0, got {k!r}")
    full = composition(decks)
    ids = np.unique(hands.shoe)  # sorted, as the readers number shoes in file order
    if (
        isinstance(shoe, bool)
        or not isinstance(shoe, (int, np.integer))
        or not 1 <= shoe <= max(1, len(ids))
    ):
        raise RulesError(
            f"shoe must be a whole number from 1 to {max(1, len(ids))} (the shoes "
            f"in {hands.source}), got {shoe!r}"
        )
    if len(hands) == 0:
        if k:
            raise RulesError(f"after_hands must be 0: {hands.source} has no hands")
        return []
    shoe_no = int(ids[shoe - 1])
    one = hands.shoe_slice(shoe_no)
    if k > len(one):
        raise RulesError(
            f"after_hands must be from 0 to {len(one)} (the hands in shoe "
            f"{shoe} of {hands.source}), got {k}"
        )
    burned = hands.burned[shoe_no] if shoe_no < len(hands.burned) else ()
    cards = [*burned, *one.select(np.arange(len(one)) < k).dealt_cards().tolist()]
    try:
        check_suited(cards, decks)
        remove_cards(full, cards)
    except RulesError as exc:
        raise ShoeFormatError(
            f"{hands.source}: shoe {shoe}, hands 1 to {k}: {exc}; is it really {a_shoe_of(decks)}?"
        ) from None
    return cards

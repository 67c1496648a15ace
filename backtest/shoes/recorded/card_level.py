"""Card-level records (one card after another, as text or CSV): the shoes
checked against their decks, and dealt through the tableau."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from backtest.core.cards import RANK_SYMBOLS, a_shoe_of, card_token, parse_card, value
from backtest.core.errors import RulesError, ShoeFormatError, shown
from backtest.core.rules import Hand, deal_hand
from backtest.shoes.recorded.text import (
    IncompleteHandWarning,
    Row,
    content_lines,
    csv_rows,
    decks_words,
    group_shoes,
    numbered_lines,
)

_CODES: dict[str, int] = {}


def card_code(token: str) -> int:
    """parse_card, remembered: a shoe repeats the same few tokens thousands of times."""
    code = _CODES.get(token)
    if code is None:
        code = parse_card(token)
        _CODES[token] = code
    return code


@dataclass(frozen=True)
class _CardShoe:
    """The cards of one shoe as read, where each one is in the file, and the
    lines of the file it is read from (the first and the last)."""

    label: str
    cards: np.ndarray
    locate: Callable[[int], str]
    lines: tuple[int, int]
    id: str = ""  # the file's own id of the shoe (a CSV's shoe column)


def card_text_shoes(text: str | Iterable[tuple[int, str]], source: str) -> Iterator[_CardShoe]:
    """The shoes of card-level text (or of its numbered lines, read as they
    come: `text.stream_lines`), one a line, as they are read."""
    for number, content in content_lines(text):
        tokens = content.split()

        def locate(k: int, number: int = number, content: str = content) -> str:
            column = [m.start() + 1 for m in re.finditer(r"\S+", content)][k]
            return f"{source}, line {number}, column {column} (card {k + 1} of the shoe)"

        try:  # the tokens seen before, at once; else one at a time, for the error
            codes = [_CODES[token] for token in tokens]
        except KeyError:
            codes = []
            for k, token in enumerate(tokens):
                try:
                    codes.append(card_code(token))
                except ValueError as exc:
                    raise ShoeFormatError(f"{locate(k)}: {exc}") from None
        yield _CardShoe(f"line {number}", np.array(codes, dtype=np.uint8), locate, (number, number))


def card_csv_shoes(
    text: str | Iterable[tuple[int, str]],
    source: str,
    mapping: Mapping[str, str] | None = None,
) -> Iterator[_CardShoe]:
    """The shoes of a card-level CSV (its text, or its numbered lines as
    `text.stream_lines` reads them), each given once its last row is read.
    """

    def rows(lines: Iterable[tuple[int, str]]) -> Iterator[Row]:
        return csv_rows(
            lines, source, "a card-level CSV", ("shoe", "card"), ("shoe", "card"), mapping
        )

    lines = numbered_lines(text) if isinstance(text, str) else text
    for label, group in group_shoes(rows(lines), source):
        numbers = [number for number, _ in group]

        def locate(k: int, lines: list[int] = numbers, label: str = label) -> str:
            return f"{source}, line {lines[k]}, field card (card {k + 1} of shoe {shown(label)})"

        codes = []
        for k, (_, row) in enumerate(group):
            try:
                codes.append(card_code(row["card"]))
            except ValueError as exc:
                raise ShoeFormatError(f"{locate(k)}: {exc}") from None
        yield _CardShoe(
            f"shoe {shown(label)} (lines {numbers[0]}-{numbers[-1]})",
            np.array(codes, dtype=np.uint8),
            locate,
            (numbers[0], numbers[-1]),
            label,
        )


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def check_composition(cards: np.ndarray, decks: int, locate: Callable[[int], str]) -> None:
    """Refuse more copies of a rank (4 per deck), or of an exact suited card (1 per
    deck), than `decks` decks hold; the error points at the first card too many."""
    found: list[tuple[int, str]] = []
    ranks = cards & 0xF
    per_rank = 4 * decks
    for rank in np.flatnonzero(np.bincount(ranks, minlength=14) > per_rank):
        at = int(np.flatnonzero(ranks == rank)[per_rank])
        found.append(
            (
                at,
                f"too many cards of rank {RANK_SYMBOLS[rank - 1]}: {a_shoe_of(decks)} "
                f"holds {per_rank} of each rank, and this is the "
                f"{ordinal(per_rank + 1)}",
            )
        )
    suited = np.where(cards > 0xF, cards, 0)
    for code in np.flatnonzero(np.bincount(suited, minlength=256)[16:] > decks) + 16:
        at = int(np.flatnonzero(cards == code)[decks])
        found.append(
            (
                at,
                f"too many {card_token(int(code))}: {a_shoe_of(decks)} holds "
                f"{decks} of each card (one per deck), and this is the "
                f"{ordinal(decks + 1)}",
            )
        )
    if found:
        at, what = min(found)
        raise ShoeFormatError(f"{locate(at)}: {what}; is the shoe really {decks_words(decks)}?")


def burn_count(first: int) -> int:
    """Cards burned at the start of a shoe: the turned card and as many more as its
    value, ten for a ten or a face card."""
    v = value(first)
    return 1 + (v if v else 10)


class Growing:
    """Hands' columns filled a shoe at a time, in arrays grown as needed."""

    def __init__(self) -> None:
        self.n = 0
        self.columns = {
            **empty_columns(1024),
            "shoe": np.zeros(1024, np.int64),
            "hand": np.zeros(1024, np.int32),
        }

    def add(self, part: dict[str, np.ndarray]) -> None:
        k = part["winner"].shape[0]
        if self.n + k > self.columns["winner"].shape[0]:
            for name, old in self.columns.items():
                new = np.empty((2 * (self.n + k), *old.shape[1:]), old.dtype)
                new[: self.n] = old[: self.n]
                self.columns[name] = new
        for name, column in part.items():
            self.columns[name][self.n : self.n + k] = column
        self.n += k

    def filled(self) -> dict[str, np.ndarray]:
        return {name: column[: self.n] for name, column in self.columns.items()}


@dataclass(frozen=True)
class DealtShoe:
    """A shoe's hands, dealt: its number among the shoes with a hand (from
    0), the shoe as read, its burned cards, and its hands' columns (all but
    shoe and hand)."""

    number: int
    read: _CardShoe
    burned: tuple[int, ...]
    columns: dict[str, np.ndarray]


def dealt_shoes(
    shoes: Iterable[_CardShoe],
    source: str,
    decks: int,
    burn: bool,
) -> Iterator[DealtShoe]:
    """Each shoe with a hand in it, checked and dealt as it comes (a shoe
    that ends in the middle of a hand warns). Errors once every shoe is
    read if there was none, or no hand in any."""
    any_shoe = False
    dealt = 0  # shoes with hands
    cards_dealt = 0
    for shoe in shoes:
        any_shoe = True
        check_composition(shoe.cards, decks, shoe.locate)
        cards = shoe.cards
        shoe_burn: tuple[int, ...] = ()
        if burn:
            n_burn = burn_count(int(cards[0]))
            if n_burn > cards.shape[0]:
                raise ShoeFormatError(
                    f"{source}, {shoe.label}: the shoe ends during the burn: the first card, "
                    f"{card_token(int(cards[0]))}, burns {n_burn - 1} more, but the shoe has "
                    f"only {cards.shape[0]} cards"
                )
            shoe_burn, cards = tuple(int(c) for c in cards[:n_burn]), cards[n_burn:]
        # many shoes: the compiled kernel (once loaded, far quicker a hand)
        columns, used = deal_cards(cards, compiled=cards_dealt > PYTHON_DEAL_CARDS or None)
        cards_dealt += used
        n = columns["winner"].shape[0]
        left = cards.shape[0] - used
        if left:
            warnings.warn(
                f"{source}, {shoe.label}: the shoe ends in the middle of a hand: "
                f"{left} card{'s' if left > 1 else ''} left over "
                f"{f'after hand {n} ' if n else ''}"
                f"{'were' if left > 1 else 'was'} not dealt",
                IncompleteHandWarning,
                stacklevel=4,
            )
        if n == 0:
            continue
        yield DealtShoe(dealt, shoe, shoe_burn, columns)
        dealt += 1
    if not any_shoe:
        raise ShoeFormatError(f"{source}: no shoes: the file holds only comments and blank lines")
    if not dealt:
        raise ShoeFormatError(f"{source}: no complete hand in any shoe (a hand takes 4 to 6 cards)")


def empty_columns(size: int) -> dict[str, np.ndarray]:
    return {
        "cards": np.zeros((size, 6), np.uint8),
        "player_total": np.zeros(size, np.int8),
        "banker_total": np.zeros(size, np.int8),
        "winner": np.zeros(size, np.int8),
        "natural": np.zeros(size, np.bool_),
        "player_pair": np.zeros(size, np.bool_),
        "banker_pair": np.zeros(size, np.bool_),
        "player_card_count": np.zeros(size, np.int8),
        "banker_card_count": np.zeros(size, np.int8),
    }


#: card sequences up to this long are dealt by `rules.deal_hand` (about 15 us
#: a hand), longer ones by the compiled kernel (loading it takes half a second)
PYTHON_DEAL_CARDS = 5_000


def deal_cards(
    cards: np.ndarray | Sequence[int], compiled: bool | None = None
) -> tuple[dict[str, np.ndarray], int]:
    """Deal every complete hand from an ordered sequence of card codes.

    Returns the `Hands` columns of the hands dealt (all but shoe and hand) and
    the number of cards they used; cards after the last complete hand are left.
    `compiled`: deal with the compiled kernel (None: for a long sequence);
    the hands are the same either way.

    >>> from backtest.core.cards import parse_cards
    >>> columns, used = deal_cards(parse_cards("5 K 9 2 3 8  2 9 3 K  4"))
    >>> columns["winner"].tolist(), used
    ([0, 1], 10)
    """
    seq = np.ascontiguousarray(np.asarray(cards, dtype=np.uint8))
    out = empty_columns(seq.shape[0] // 4 + 1)
    n = pos = 0
    if compiled or (compiled is None and seq.shape[0] > PYTHON_DEAL_CARDS):
        from backtest.shoes import kernels

        dealt, used = kernels.deal_sequence(
            seq,
            kernels.HAND_TABLE,
            kernels.CARD_VALUE,
            out["cards"],
            out["player_total"],
            out["banker_total"],
            out["winner"],
            out["natural"],
            out["player_pair"],
            out["banker_pair"],
            out["player_card_count"],
            out["banker_card_count"],
        )
        n, pos = int(dealt), int(used)
    # The rules themselves deal a short sequence (faster than loading the
    # compiled kernel), and the last hand of a long one: the kernel stops once
    # it cannot see a fifth card, so a last hand that stands on four is left.
    while True:
        try:
            hand = deal_hand(int(c) for c in seq[pos : pos + 6])
        except RulesError:
            break
        put_hand(out, n, hand)
        n += 1
        pos += hand.cards_used
    return {name: column[:n].copy() for name, column in out.items()}, pos


def put_hand(out: dict[str, np.ndarray], i: int, hand: Hand) -> None:
    out["cards"][i] = (
        hand.player_cards
        + (0,) * (3 - len(hand.player_cards))
        + hand.banker_cards
        + (0,) * (3 - len(hand.banker_cards))
    )
    out["player_total"][i] = hand.player_total
    out["banker_total"][i] = hand.banker_total
    out["winner"][i] = hand.winner.code
    out["natural"][i] = hand.natural
    out["player_pair"][i] = hand.player_pair
    out["banker_pair"][i] = hand.banker_pair
    out["player_card_count"][i] = hand.player_card_count
    out["banker_card_count"][i] = hand.banker_card_count

"""Shoe specification and seeded generation.

A generated shoe is fixed by the spec, the run's master seed and the shoe's
index: shoe i is the same whether it is dealt alone, in a chunk, or on another
worker or machine (see `rng.seed_state`).

>>> spec = ShoeSpec(decks=8)
>>> hands = generate_hands(spec, n_shoes=2, seed=7)
>>> hands.n_shoes, bool((generate_hands(spec, 2, seed=7).winner == hands.winner).all())
(2, True)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field, fields, replace
from functools import cache, lru_cache
from typing import Any, Literal

import numpy as np

from backtest.core.cards import deck_cards, full_shoe_counts
from backtest.core.errors import RulesError
from backtest.core.fields import Check
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.jit.buffers import Buffers
from backtest.jit.lazy_jit import interpreted
from backtest.shoes import rng

MAX_DECKS = 64


def _setting(check: Check) -> Any:
    """A field of `ShoeSpec`, with the check its value is held to."""
    return field(default=check.default, metadata={"check": check})


@dataclass(frozen=True)
class ShoeSpec:
    """How a generated shoe is made and dealt, each field declared with its
    check (`backtest.core.fields`), which `__post_init__` applies.

    decks: packs shuffled together. cut_card: cards left behind the cut card
    (0 = none: hands are dealt while six cards are left, enough for any
    hand). extra_hands: hands played after the one during which the cut
    card comes out. burn: turn the first card and burn as many more as
    its value (10 for a ten or face card). cut: None (no cut), a number of
    cards moved from the top to the bottom, or "random".

    >>> ShoeSpec(decks=1, cut_card=60)
    Traceback (most recent call last):
    ...
    backtest.core.errors.RulesError: shoe.cut_card: must be from 0 to 46 (1 deck's 52 cards less a hand's 6), got 60
    """

    decks: int = _setting(Check("whole", 8, minimum=1, maximum=MAX_DECKS))
    #: at most the shoe's cards less a hand's six (`__post_init__`)
    cut_card: int = _setting(Check("whole", 14, minimum=0))
    extra_hands: int = _setting(Check("whole", 1, minimum=0, maximum=1000))
    burn: bool = _setting(Check("flag", True))
    #: at most the shoe's cards, or "random"
    cut: int | Literal["random"] | None = _setting(Check("whole", None, minimum=0, optional=True))

    def __post_init__(self) -> None:
        for f in fields(self):
            value, check = getattr(self, f.name), f.metadata["check"]
            if f.name == "cut" and isinstance(value, str) and value == "random":
                continue
            if f.name in ("cut_card", "cut"):  # bounded by the shoe's cards
                n = self.n_cards
                deck = "1 deck's" if self.decks == 1 else f"{self.decks} decks'"
                check = (
                    replace(check, maximum=n - 6, about=f"{deck} {n} cards less a hand's 6")
                    if f.name == "cut_card"
                    else replace(check, maximum=n, about=f"{deck} {n} cards")
                )
            object.__setattr__(self, f.name, check.read(value, f"shoe.{f.name}", RulesError))

    @property
    def n_cards(self) -> int:
        return 52 * self.decks

    @property
    def max_hands(self) -> int:
        """An upper bound on the hands one shoe can give."""
        return self.n_cards // 4 + 1

    def counts(self) -> np.ndarray:
        """Rank counts of the full shoe (index 1..13)."""
        return full_shoe_counts(self.decks)


@lru_cache(maxsize=256)
def seed_key(seed: int) -> np.uint64:
    """The 64-bit key of a master seed (through numpy's SeedSequence)."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]


@cache
def _pack(decks: int) -> np.ndarray:
    """`deck_cards(decks)`, made once per number of decks (read-only)."""
    pack = deck_cards(decks)
    pack.flags.writeable = False
    return pack


#: a deal of at most this many cards runs as plain Python if the compiled
#: deal is not loaded (`generate_shoes`)
PLAIN_DEAL_CARDS = 50_000


def new_seed() -> int:
    """A fresh master seed, for runs that were given none (it is reported)."""
    return int(np.random.SeedSequence().generate_state(1, np.uint32)[0])


def generate_hands(
    spec: ShoeSpec, n_shoes: int, seed: int, first_shoe: int = 0, max_hands: int | None = None
) -> Hands:
    """Deal shoes first_shoe .. first_shoe + n_shoes - 1 of the run keyed by `seed`.

    max_hands caps the hands dealt per shoe (None: to the cut card).
    """
    if n_shoes < 0:
        raise RulesError(f"the number of shoes must not be negative, got {n_shoes}")
    return generate_shoes(
        spec, np.arange(first_shoe, first_shoe + n_shoes, dtype=np.int64), seed, max_hands
    )


#: the columns of dealt hands: (name, dtype, cards per hand or 0 for one value)
_COLUMNS = (
    ("shoe", np.int64, 0),
    ("hand", np.int32, 0),
    ("cards", np.uint8, 6),
    ("player_total", np.int8, 0),
    ("banker_total", np.int8, 0),
    ("winner", np.int8, 0),
    ("natural", np.bool_, 0),
    ("player_pair", np.bool_, 0),
    ("banker_pair", np.bool_, 0),
    ("player_card_count", np.int8, 0),
    ("banker_card_count", np.int8, 0),
)


def generate_shoes(
    spec: ShoeSpec,
    shoe_ids: np.ndarray,
    seed: int,
    max_hands: int | None = None,
    buffers: Buffers | None = None,
) -> Hands:
    """Deal the shoes numbered `shoe_ids` of the run keyed by `seed`; each shoe
    number is its own random stream, and becomes the `shoe` column.

    buffers: where the hands are written (the hands are then valid until the
    next call with the same buffers); by default, new arrays."""
    shoe_ids = np.ascontiguousarray(shoe_ids, dtype=np.int64)
    n_shoes = shoe_ids.shape[0]
    cap = spec.max_hands if max_hands is None else min(max_hands, spec.max_hands)
    size = n_shoes * spec.max_hands
    buffers = buffers or Buffers()
    out = {
        name: buffers.empty(f"hands.{name}", (size, width) if width else (size,), dtype)
        for name, dtype, width in _COLUMNS
    }
    from backtest.shoes import kernels

    # a few shoes are dealt as plain Python unless the compiled deal is loaded
    # already: loading it costs about half a second, the Python deal of a
    # shoe of eight decks about a millisecond (the same cards: `interpreted`)
    plain = n_shoes * spec.n_cards <= PLAIN_DEAL_CARDS and not kernels.deal_shoes.loaded

    burned = np.empty(max(n_shoes, 1), np.int64)
    cut_mode, cut_at = (
        (0, 0) if spec.cut is None else ((2, 0) if spec.cut == "random" else (1, int(spec.cut)))
    )
    with interpreted() if plain else nullcontext():
        n = kernels.deal_shoes(
            _pack(spec.decks),
            seed_key(seed),
            shoe_ids,
            spec.cut_card,
            spec.extra_hands,
            spec.burn,
            cut_mode,
            cut_at,
            kernels.HAND_TABLE,
            kernels.CODE_VALUE,
            cap,
            out["shoe"],
            out["hand"],
            out["cards"],
            out["player_total"],
            out["banker_total"],
            out["winner"],
            out["natural"],
            out["player_pair"],
            out["banker_pair"],
            out["player_card_count"],
            out["banker_card_count"],
            burned,
            np.empty(spec.n_cards, np.uint8),
            np.empty(spec.n_cards, np.uint8),
            np.empty(spec.n_cards, np.uint16),
            np.empty(4, np.uint64),
        )
    cols = {k: v[:n] for k, v in out.items()}
    return Hands.from_columns(n, known=ALL_KNOWN, source="generated", **cols)


def iter_generated(
    spec: ShoeSpec,
    n_shoes: int,
    seed: int,
    chunk_shoes: int = 2048,
    first_shoe: int = 0,
    max_hands: int | None = None,
) -> Iterator[Hands]:
    """Deal `n_shoes` shoes in chunks, so memory stays flat however many."""
    done = 0
    while done < n_shoes:
        k = min(chunk_shoes, n_shoes - done)
        yield generate_hands(spec, k, seed, first_shoe + done, max_hands)
        done += k


def shoe_order(spec: ShoeSpec, seed: int, index: int) -> np.ndarray:
    """Every card of shoe `index`, in the order it leaves the shoe (after the
    cut, before the burn): the pack as the dealer holds it."""
    from backtest.shoes import shuffle

    pack = _pack(spec.decks)
    order = np.arange(pack.shape[0], dtype=np.int64)
    state = np.empty(4, np.uint64)
    with interpreted():  # one shoe: faster as plain Python than loading the compiled shuffle
        rng.seed_state(seed_key(seed), np.uint64(index), state)
        shuffle.shuffle(order, state)
        if spec.cut is not None:
            c = rng.bounded(state, pack.shape[0] + 1) if spec.cut == "random" else int(spec.cut)
            order = np.roll(order, -c)
    return pack[order]

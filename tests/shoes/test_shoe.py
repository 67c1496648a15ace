"""Generated shoes: properties of every hand, cards conserved, the cut card,
reproducibility, spec validation, and convergence on the exact frequencies.

Expectations are computed here from the cards themselves (values, ranks,
positions in `shoe.shoe_order`), never read back from the kernel's own columns.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backtest.core.errors import RulesError
from backtest.core.hands import COLUMNS, Hands
from backtest.core.rules import Hand, Winner, deal_hand, deal_hands
from backtest.shoes import rng as generator
from backtest.shoes import shuffle
from backtest.shoes.shoe import ShoeSpec, generate_hands, iter_generated, shoe_order

#: columns of `Hands.cards` in the order the cards leave the shoe: P1 B1 P2 B2 P3 B3
DEAL_ORDER = [0, 3, 1, 4, 2, 5]
FIELDS = COLUMNS


def values_of(codes: np.ndarray) -> np.ndarray:
    """Baccarat values of card codes: rank in the low four bits; 10, J, Q, K and
    'no card' (0) are worth 0."""
    ranks = np.asarray(codes, dtype=np.int64) & 15
    return np.where((ranks >= 1) & (ranks <= 9), ranks, 0)


def full_pack(decks: int) -> Counter[int]:
    """Every code of `decks` 52-card decks: 13 ranks in each of 4 suits."""
    return Counter({rank | (suit << 4): decks for rank in range(1, 14) for suit in range(1, 5)})


def burn_count(spec: ShoeSpec, order: np.ndarray) -> int:
    """The turned card and as many more as its value (10 for a ten or face)."""
    if not spec.burn:
        return 0
    v = int(values_of(order[:1])[0])
    return 1 + (v if v else 10)


def dealt_in_order(hands: Hands, shoe: int) -> list[int]:
    rows = hands.cards[hands.shoe == shoe][:, DEAL_ORDER].astype(np.int64).reshape(-1)
    return rows[rows != 0].tolist()


@st.composite
def shoe_specs(draw: st.DrawFn, max_decks: int = 8) -> ShoeSpec:
    decks = draw(st.integers(1, max_decks))
    n = 52 * decks
    return ShoeSpec(
        decks=decks,
        cut_card=draw(st.integers(0, min(60, n - 6))),
        extra_hands=draw(st.integers(0, 3)),
        burn=draw(st.booleans()),
        cut=draw(st.one_of(st.none(), st.just("random"), st.integers(0, n))),
    )


seeds = st.integers(0, 2**63)
PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# --- every hand is a baccarat hand ----------------------------------------------------


@PROPERTY_SETTINGS
@given(spec=shoe_specs(), seed=seeds)
def test_every_generated_hand_is_consistent_with_its_cards(spec: ShoeSpec, seed: int) -> None:
    n_shoes = 3
    hands = generate_hands(spec, n_shoes, seed)
    cards = hands.cards.astype(np.int64)
    present = cards != 0
    ranks, vals = cards & 15, values_of(cards)

    assert set(np.unique(hands.shoe).tolist()) == set(range(n_shoes))
    for k in range(n_shoes):
        numbers = hands.hand[hands.shoe == k]
        assert numbers.tolist() == list(range(1, numbers.size + 1))

    assert ((hands.player_total >= 0) & (hands.player_total <= 9)).all()
    assert ((hands.banker_total >= 0) & (hands.banker_total <= 9)).all()
    assert present[:, [0, 1, 3, 4]].all()
    pn, bn = present[:, :3].sum(axis=1), present[:, 3:].sum(axis=1)
    assert np.isin(pn, (2, 3)).all() and np.isin(bn, (2, 3)).all()
    assert ((pn + bn >= 4) & (pn + bn <= 6)).all()
    assert np.array_equal(hands.player_card_count, pn) and np.array_equal(
        hands.banker_card_count, bn
    )
    assert ((ranks[present] >= 1) & (ranks[present] <= 13)).all()
    assert ((cards[present] >> 4 >= 1) & (cards[present] >> 4 <= 4)).all()

    pt, bt = vals[:, :3].sum(axis=1) % 10, vals[:, 3:].sum(axis=1) % 10
    assert np.array_equal(hands.player_total, pt)
    assert np.array_equal(hands.banker_total, bt)
    assert np.array_equal(hands.winner, np.where(pt > bt, 0, np.where(bt > pt, 1, 2)))

    assert np.array_equal(hands.player_pair, ranks[:, 0] == ranks[:, 1])
    assert np.array_equal(hands.banker_pair, ranks[:, 3] == ranks[:, 4])

    p2, b2 = (vals[:, 0] + vals[:, 1]) % 10, (vals[:, 3] + vals[:, 4]) % 10
    natural = (p2 >= 8) | (b2 >= 8)
    assert np.array_equal(hands.natural, natural)
    assert ((pn[natural] == 2) & (bn[natural] == 2)).all()
    # the Player draws exactly on a two-card 0 to 5 when there is no natural
    assert np.array_equal(pn == 3, ~natural & (p2 <= 5))


@PROPERTY_SETTINGS
@given(spec=shoe_specs(), seed=seeds)
def test_cards_are_conserved(spec: ShoeSpec, seed: int) -> None:
    n_shoes = 2
    hands = generate_hands(spec, n_shoes, seed)
    pack = full_pack(spec.decks)
    for k in range(n_shoes):
        order = shoe_order(spec, seed, k)
        assert order.size == 52 * spec.decks
        assert Counter(order.tolist()) == pack
        burn = burn_count(spec, order)
        dealt = dealt_in_order(hands, k)
        # the hands take the cards in the order they leave the shoe, after the burn
        assert dealt == order[burn : burn + len(dealt)].tolist()
        burned, rest = order[:burn].tolist(), order[burn + len(dealt) :].tolist()
        assert Counter(dealt) + Counter(burned) + Counter(rest) == pack
        assert max(Counter(dealt).values()) <= spec.decks


# --- the pure-Python deal agrees with the kernel --------------------------------------------


def rows_of(hand_list: list[Hand]) -> dict[str, np.ndarray]:
    """Hands columns computed from `rules.Hand` objects."""

    def padded(cs: tuple[int, ...]) -> tuple[int, ...]:
        return cs + (0,) * (3 - len(cs))

    return {
        "cards": np.array(
            [padded(h.player_cards) + padded(h.banker_cards) for h in hand_list], dtype=np.int64
        ).reshape(-1, 6),
        "player_total": np.array([h.player_total for h in hand_list]),
        "banker_total": np.array([h.banker_total for h in hand_list]),
        "winner": np.array([Winner(h.winner).code for h in hand_list]),
        "natural": np.array([h.natural for h in hand_list], dtype=bool),
        "player_pair": np.array([h.player_pair for h in hand_list], dtype=bool),
        "banker_pair": np.array([h.banker_pair for h in hand_list], dtype=bool),
        "player_card_count": np.array([len(h.player_cards) for h in hand_list]),
        "banker_card_count": np.array([len(h.banker_cards) for h in hand_list]),
    }


def assert_same_hands(kernel: Hands, shoe: int, expected: dict[str, np.ndarray]) -> None:
    mask = kernel.shoe == shoe
    for name, column in expected.items():
        got = getattr(kernel, name)[mask]
        assert np.array_equal(got.astype(np.int64), column.astype(np.int64)), (shoe, name)


SPECS = [
    ShoeSpec(),
    ShoeSpec(decks=8, cut_card=0, burn=False),
    ShoeSpec(decks=6, cut_card=16, extra_hands=0, cut="random"),
    ShoeSpec(decks=1, cut_card=10, extra_hands=2, burn=True, cut=17),
    ShoeSpec(decks=2, cut_card=3, extra_hands=3, burn=False, cut=104),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("seed", [0, 1, 2024, 2**40 + 7])
def test_rules_deal_hands_from_shoe_order_equals_kernel(spec: ShoeSpec, seed: int) -> None:
    n_shoes = 3
    kernel = generate_hands(spec, n_shoes, seed)
    for k in range(n_shoes):
        order = shoe_order(spec, seed, k).tolist()
        python = deal_hands(order[burn_count(spec, np.array(order)) :])
        n_kernel = int((kernel.shoe == k).sum())
        assert 0 < n_kernel <= len(python)
        assert_same_hands(kernel, k, rows_of(python[:n_kernel]))


# --- the cut card ------------------------------------------------------------------------------


def redeal(spec: ShoeSpec, seed: int, index: int) -> tuple[list[Hand], int | None, int]:
    """Deal shoe `index` from its card order in plain Python: stop `extra_hands`
    hands after the first hand that takes a card at position >= n - cut_card
    (positions from the top of the cut pack, burned cards included), or when
    fewer than six cards are left. Returns (hands, index of the cut hand, next position)."""
    order = shoe_order(spec, seed, index).tolist()
    n = len(order)
    pos = burn_count(spec, np.array(order))
    hands: list[Hand] = []
    cut_hand: int | None = None
    while n - pos >= 6:
        if cut_hand is not None and len(hands) - 1 - cut_hand == spec.extra_hands:
            break
        hand = deal_hand(order[pos : pos + 6])
        pos += hand.cards_used
        if spec.cut_card and cut_hand is None and pos - 1 >= n - spec.cut_card:
            cut_hand = len(hands)
        hands.append(hand)
    return hands, cut_hand, pos


def check_cut_card(spec: ShoeSpec, seed: int, n_shoes: int) -> Counter[str]:
    kernel = generate_hands(spec, n_shoes, seed)
    stops: Counter[str] = Counter()
    for k in range(n_shoes):
        hands, cut_hand, end = redeal(spec, seed, k)
        n_kernel = int((kernel.shoe == k).sum())
        assert n_kernel == len(hands), (spec, seed, k)
        assert_same_hands(kernel, k, rows_of(hands))
        if cut_hand is not None and n_kernel == cut_hand + 1 + spec.extra_hands:
            stops["cut card"] += 1
        else:
            # stopped early: only because fewer than six cards were left
            assert spec.n_cards - end < 6, (spec, seed, k)
            stops["end of the pack"] += 1
        if spec.cut_card == 0:
            assert cut_hand is None
    return stops


@PROPERTY_SETTINGS
@given(spec=shoe_specs(), seed=seeds)
def test_cut_card_property(spec: ShoeSpec, seed: int) -> None:
    check_cut_card(spec, seed, n_shoes=2)


def test_cut_card_on_many_seeds_both_stops_occur() -> None:
    stops: Counter[str] = Counter()
    for seed in range(40):
        stops += check_cut_card(ShoeSpec(decks=8, cut_card=14, extra_hands=1), seed, 2)
        stops += check_cut_card(ShoeSpec(decks=1, cut_card=4, extra_hands=2, cut="random"), seed, 4)
        stops += check_cut_card(ShoeSpec(decks=1, cut_card=0, burn=False), seed, 2)
    assert stops["cut card"] > 50 and stops["end of the pack"] > 50, stops


def test_cut_card_example_by_hand() -> None:
    # one deck, no burn, cut card 20 from the end: the hand that takes card 32
    # (0-based) is the cut hand, then exactly one more hand
    spec = ShoeSpec(decks=1, cut_card=20, extra_hands=1, burn=False)
    hands = generate_hands(spec, 1, seed=5)
    ends = np.cumsum(hands.player_card_count.astype(int) + hands.banker_card_count)
    cut_hand = int(np.flatnonzero(ends - 1 >= 52 - 20)[0])
    assert len(hands) == cut_hand + 2


# --- reproducibility -----------------------------------------------------------------------------


def same(a: Hands, b: Hands) -> bool:
    return len(a) == len(b) and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)


def joined(parts: list[Hands]) -> dict[str, Any]:
    return {f: np.concatenate([getattr(p, f) for p in parts]) for f in FIELDS}


REPRO_SPECS = [ShoeSpec(), ShoeSpec(decks=6, cut_card=20, burn=False, cut="random")]


@pytest.mark.parametrize("spec", REPRO_SPECS, ids=repr)
def test_same_seed_same_hands_in_any_chunking(spec: ShoeSpec) -> None:
    seed = 987654321
    full = generate_hands(spec, 100, seed)
    assert same(full, generate_hands(spec, 100, seed))
    for chunk in (1, 7, 100):
        parts = [
            generate_hands(spec, min(chunk, 100 - s), seed, first_shoe=s)
            for s in range(0, 100, chunk)
        ]
        got = joined(parts)
        for f in FIELDS:
            assert np.array_equal(got[f], getattr(full, f)), (chunk, f)
    for chunk in (1, 7, 33, 100, 2048):
        got = joined(list(iter_generated(spec, 100, seed, chunk_shoes=chunk)))
        for f in FIELDS:
            assert np.array_equal(got[f], getattr(full, f)), (chunk, f)
    # shoe 57 on its own, and its card order, are those of the run
    alone = generate_hands(spec, 1, seed, first_shoe=57)
    assert same(alone, full.shoe_slice(57))
    assert np.array_equal(shoe_order(spec, seed, 57), shoe_order(spec, seed, 57))


def test_different_seeds_and_shoes_differ() -> None:
    spec = ShoeSpec()
    a, b = generate_hands(spec, 5, seed=1), generate_hands(spec, 5, seed=2)
    assert not np.array_equal(a.cards[:50], b.cards[:50])
    assert not np.array_equal(shoe_order(spec, 1, 0), shoe_order(spec, 2, 0))
    orders = {shoe_order(spec, 1, k).tobytes() for k in range(20)}
    assert len(orders) == 20
    # a cut changes where the same shuffle is dealt from
    cut = ShoeSpec(cut=100)
    assert np.array_equal(np.roll(shoe_order(ShoeSpec(), 3, 0), -100), shoe_order(cut, 3, 0))


# --- spec validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"decks": 0}, "decks"),
        ({"decks": True}, "decks"),
        ({"decks": 2.5}, "decks"),
        ({"decks": 1, "cut_card": 47}, "cut_card"),
        ({"decks": 8, "cut_card": -1}, "cut_card"),
        ({"burn": 1}, "burn"),
        ({"burn": "yes"}, "burn"),
        ({"decks": 1, "cut": 53}, "cut"),
        ({"cut": -1}, "cut"),
        ({"cut": "randon"}, "cut"),
        ({"extra_hands": -1}, "extra_hands"),
    ],
)
def test_shoe_spec_validation_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    """One line in the form of every declared field's check (`core.fields`)."""
    with pytest.raises(RulesError, match=rf"^shoe\.{field}: (must|expected) .*, got "):
        ShoeSpec(**kwargs)


def test_shoe_spec_accepts_the_limits() -> None:
    ShoeSpec(decks=1, cut_card=46, cut=52)
    ShoeSpec(decks=1, cut_card=0, cut=0, burn=False)
    assert ShoeSpec(decks=2.0).decks == 2  # a whole number in its one form, as a config reads it
    with pytest.raises(RulesError, match="must not be negative"):
        generate_hands(ShoeSpec(), -1, seed=0)
    assert len(generate_hands(ShoeSpec(), 0, seed=0)) == 0


# --- convergence on the exact figures ----------------------------------------------------------------

EXACT = {Winner.PLAYER: 0.446247, Winner.BANKER: 0.458597, Winner.TIE: 0.095156}


def test_two_million_hands_converge_on_the_exact_frequencies() -> None:
    n = 2_000_000
    parts, total = [], 0
    for part in iter_generated(ShoeSpec(decks=8), 30_000, seed=20_240_601, chunk_shoes=5_000):
        parts.append(part.winner)
        total += len(part)
        if total >= n:
            break
    winners = np.concatenate(parts)[:n]
    assert winners.size == n
    counts = np.bincount(winners, minlength=3)
    for w, p in EXACT.items():
        freq = counts[w.code] / n
        se = math.sqrt(p * (1 - p) / n)
        assert abs(freq - p) < 4 * se, f"{w}: {freq:.6f} vs exact {p} ({(freq - p) / se:+.2f} SE)"


# --- the shuffle, against a reference written here ----------------------------------------------

M64 = (1 << 64) - 1


class RefStream:
    """xoshiro256** in Python integers (the published algorithm)."""

    def __init__(self, state: np.ndarray) -> None:
        self.s = [int(x) for x in state]

    def next(self) -> int:
        s = self.s
        result = (((s[1] * 5) & M64) << 7 | ((s[1] * 5) & M64) >> 57) & M64
        result = (result * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = ((s[3] << 45) | (s[3] >> 19)) & M64
        return result

    def pick(self, bits32: int, bound: int) -> int:
        """Uniform in [0, bound) from 32 bits, rejecting the biased few (Lemire)."""
        threshold = (2**32 - bound) % bound
        m = bits32 * bound
        while m & 0xFFFFFFFF < threshold:
            m = (self.next() >> 32) * bound
        return m >> 32


def reference_shuffle(n: int, state: np.ndarray) -> list[int]:
    """Fisher-Yates from the front; each output's high half picks for an even
    position, its low half for the next; the last position stays."""
    order, rng, i = list(range(n)), RefStream(state), 0
    while i < n - 1:
        r = rng.next()
        for half in (r >> 32, r & 0xFFFFFFFF)[: 2 if i + 1 < n - 1 else 1]:
            j = i + rng.pick(half, n - i)
            order[i], order[j] = order[j], order[i]
            i += 1
    return order


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 52, 53, 416])
def test_the_shuffle_is_the_reference_shuffle(n: int) -> None:
    for index in range(5):
        state = np.zeros(4, np.uint64)
        generator.seed_state(np.uint64(0xC0FFEE), np.uint64(index), state)
        order = np.arange(n, dtype=np.int64)
        expected = reference_shuffle(n, state)
        shuffle.shuffle(order, state)
        assert order.tolist() == expected


def test_a_rejected_pick_draws_again() -> None:
    """Bits that fall in the biased few are rejected: 0 for a bound of 3."""
    state = np.zeros(4, np.uint64)
    generator.seed_state(np.uint64(1), np.uint64(2), state)
    ref = RefStream(state)
    value, *after = generator.lemire(np.uint64(0), np.uint64(3), *state)
    assert value == ref.pick(0, 3) and [int(x) for x in after] == ref.s != state.tolist()


def test_the_shuffle_is_uniform() -> None:
    """All 24 orders of four cards, 48,000 shuffles: chi-square, 23 degrees of freedom."""
    seen: Counter[tuple[int, ...]] = Counter()
    state = np.zeros(4, np.uint64)
    generator.seed_state(np.uint64(7), np.uint64(0), state)
    for _ in range(48_000):
        order = np.arange(4, dtype=np.int64)
        shuffle.shuffle(order, state)
        seen[tuple(order.tolist())] += 1
    assert len(seen) == 24
    chi2 = sum((k - 2000) ** 2 / 2000 for k in seen.values())
    assert chi2 < 49.7  # the 0.999 quantile

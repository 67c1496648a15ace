"""The deal as plain Python (`lazy_jit.interpreted`): the compiled deal's
shoes, card for card, and its random stream, word for word."""

from __future__ import annotations

import numpy as np
import pytest

from backtest.core.hands import COLUMNS
from backtest.jit.lazy_jit import interpreted
from backtest.shoes import kernels, rng, shuffle
from backtest.shoes.shoe import ShoeSpec, _pack, generate_hands, generate_shoes, seed_key


def _shuffled(n: int, key: int, index: int, plain: bool) -> tuple[np.ndarray, np.ndarray]:
    state = np.empty(4, np.uint64)
    rng.seed_state(np.uint64(key), np.uint64(index), state)
    order = np.arange(n, dtype=np.int64)
    if plain:
        with interpreted():
            shuffle.shuffle(order, state)
    else:
        shuffle.shuffle(order, state)
    return order, state


@pytest.mark.parametrize("n", [*range(0, 14), 51, 52, 53, 104, 311, 312, 416])
def test_the_shuffle_in_python_is_the_compiled_shuffle(n: int) -> None:
    for key in (1, 2**63 + 5, 987654321):
        for index in range(6):
            order, state = _shuffled(n, key, index, plain=True)
            want_order, want_state = _shuffled(n, key, index, plain=False)
            assert order.tolist() == want_order.tolist(), (n, key, index)
            assert state.tolist() == want_state.tolist(), (n, key, index)


def test_the_shuffle_redraws_a_biased_pick_alike() -> None:
    """Stream 59,546 of key 12,345 draws, at its 175th pick of an 8-deck shoe,
    one of the few values Lemire's method throws away (found by a search over
    streams): both forms draw again from the same stream."""
    order, state = _shuffled(416, 12345, 59546, plain=True)
    want_order, want_state = _shuffled(416, 12345, 59546, plain=False)
    assert order.tolist() == want_order.tolist()
    assert state.tolist() == want_state.tolist()


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 13, 52, 53, 311, 416])
def test_many_shoes_shuffled_at_once_are_each_shuffled_alone(n: int) -> None:
    """`shuffle_lanes` (the Python deal's shuffle, over many shoes at once)
    and `seed_lanes`: each shoe's cards and its stream's state after, as the
    compiled shuffle gives them one stream at a time; the streams around the
    one with Lemire's rare redraw (stream 59,546 of key 12,345) included."""
    for key, indices in ((1, range(7)), (2**63 + 5, range(3, 9)), (12345, range(59540, 59552))):
        streams = np.array(list(indices), np.int64)
        lanes = rng.seed_lanes(np.uint64(key), streams)
        cards = np.tile(np.arange(n, dtype=np.int64), (len(streams), 1))
        shuffle.shuffle_lanes(cards, lanes)
        for j, index in enumerate(streams):
            want_order, want_state = _shuffled(n, key, int(index), plain=False)
            assert cards[j].tolist() == want_order.tolist(), (n, key, index)
            assert lanes[:, j].tolist() == want_state.tolist(), (n, key, index)


SPECS = [
    ShoeSpec(decks=8),
    ShoeSpec(decks=1),
    ShoeSpec(decks=2, cut_card=14, extra_hands=1),
    ShoeSpec(decks=6, burn=True, cut="random"),
    ShoeSpec(decks=8, burn=True, cut=100, cut_card=0),
    ShoeSpec(decks=4, cut_card=20, extra_hands=2),
    ShoeSpec(decks=8, burn=True, cut_card=14),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("max_hands", [None, 7, 1])
def test_the_deal_in_python_is_the_compiled_deal(spec: ShoeSpec, max_hands: int | None) -> None:
    with interpreted():
        plain = generate_hands(spec, 6, seed=31, first_shoe=3, max_hands=max_hands)
    # loaded, the compiled deal deals even a few shoes (`generate_shoes`)
    assert kernels.deal_shoes.dispatcher is not None and kernels.deal_shoes.loaded
    compiled = generate_hands(spec, 6, seed=31, first_shoe=3, max_hands=max_hands)
    assert len(plain) == len(compiled) > 0
    for name in COLUMNS:
        assert getattr(plain, name).tolist() == getattr(compiled, name).tolist(), name


def _whole_after_cut(spec: ShoeSpec, seed: int) -> int:
    """A shoe of `spec` (a random cut) that its cut leaves as it is (at 0, or
    at every card); shoe 0 is cut."""
    n = spec.n_cards
    ids = np.arange(4000, dtype=np.int64)
    lanes = rng.seed_lanes(seed_key(seed), ids)
    shuffle.shuffle_lanes(np.tile(_pack(spec.decks), (len(ids), 1)), lanes)
    cuts = rng.bounded_lanes(lanes, n + 1)
    assert 0 < cuts[0] < n
    return int(np.flatnonzero((cuts == 0) | (cuts == n))[0])


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_the_deal_in_python_leaves_every_array_as_the_compiled_deal(
    spec: ShoeSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`deal_shoes` called as `generate_shoes` calls it, in both forms, on
    copies of the same arrays: the same count, and every array it is given
    (the hands, the cards burned, the work arrays) the same after."""
    _alike_after(spec, np.arange(3, 9), monkeypatch)


def test_a_cut_shoe_then_a_whole_one_leave_the_work_arrays_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cut shoe's cards stay in the work array `cut` while the last shoe
    is not cut: in both forms."""
    spec = ShoeSpec(decks=1, cut="random")
    _alike_after(spec, np.array([0, _whole_after_cut(spec, 31)]), monkeypatch)


def _alike_after(spec: ShoeSpec, ids: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    real = kernels.deal_shoes
    assert real.dispatcher is not None  # (compiled outside `interpreted`)
    given: list[tuple[object, ...]] = []

    def record(*args: object) -> int:
        given.append(tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args))
        return int(real(*args))

    monkeypatch.setattr(kernels, "deal_shoes", record)
    record.loaded = True  # type: ignore[attr-defined]  # (as `generate_shoes` asks)
    generate_shoes(spec, ids, seed=31)
    (args,) = given

    def copied() -> list[object]:
        return [a.copy() if isinstance(a, np.ndarray) else a for a in args]

    plain_args, compiled_args = copied(), copied()
    with interpreted():
        plain = real(*plain_args)
    assert plain == real(*compiled_args) > 0
    for k, (a, b) in enumerate(zip(plain_args, compiled_args, strict=True)):
        if isinstance(a, np.ndarray):
            assert isinstance(b, np.ndarray) and a.tolist() == b.tolist(), k

"""The shuffle: a forward Fisher-Yates over a shoe, two picks from each
output of the random stream (`rng`); compiled, and in Python's integers for
`interpreted` runs (the same swaps, tested against each other).
"""

from __future__ import annotations

import numpy as np

from backtest.jit.lazy_jit import kernel
from backtest.shoes.rng import (
    MASK32,
    bounded_lanes,
    bounded_words,
    lemire,
    lemire_lanes,
    xoshiro,
    xoshiro_lanes,
)


@kernel(inline=True, nrt=False)
def shuffle(order: np.ndarray, state: np.ndarray) -> None:
    """Forward Fisher-Yates over all of `order`, in place: position i takes a
    uniform pick of positions i..n-1. Each 64-bit output of the stream gives
    two picks, its high half for an even position and its low half for the
    next one (`lemire`), which halves the generator's work; the last
    position is left as it is. `order` may hold indices or the cards
    themselves: the same swaps give the same permutation.
    """
    n = order.shape[0]
    last = n - 1
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    i = 0
    while i + 1 < last:
        r, s0, s1, s2, s3 = xoshiro(s0, s1, s2, s3)
        k, s0, s1, s2, s3 = lemire(r >> np.uint64(32), np.uint64(n - i), s0, s1, s2, s3)
        order[i], order[i + k] = order[i + k], order[i]
        k, s0, s1, s2, s3 = lemire(r & MASK32, np.uint64(n - i - 1), s0, s1, s2, s3)
        order[i + 1], order[i + 1 + k] = order[i + 1 + k], order[i + 1]
        i += 2
    if i < last:
        k, s0, s1, s2, s3 = bounded_words(n - i, s0, s1, s2, s3)
        order[i], order[i + k] = order[i + k], order[i]
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3


_M64 = (1 << 64) - 1


def _xoshiro_python(s0: int, s1: int, s2: int, s3: int) -> tuple[int, int, int, int, int]:
    """`rng.xoshiro` in Python's integers: (output, new state)."""
    x = (s1 * 5) & _M64
    result = ((((x << 7) | (x >> 57)) & _M64) * 9) & _M64
    t = (s1 << 17) & _M64
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    return result, s0, s1, s2, ((s3 << 45) | (s3 >> 19)) & _M64


@shuffle.in_python
def _shuffle_python(order: np.ndarray, state: np.ndarray) -> None:
    """`shuffle` (with `rng.lemire` written into it) in Python's integers,
    for `interpreted` runs: numpy's fixed-width scalars
    cost several times more per operation. The same swaps from the same
    stream, checked against the compiled form over many shoes and sizes."""
    s0, s1, s2, s3 = (int(x) for x in state)
    cards = order.tolist()
    n = len(cards)
    last = n - 1
    i = 0
    while i < last:
        r, s0, s1, s2, s3 = _xoshiro_python(s0, s1, s2, s3)
        # a pair of picks from r's two halves while two positions are left to
        # fill; the last one alone (`bounded_words`) takes the high half
        for half, j in ((r >> 32, i), (r & 0xFFFFFFFF, i + 1)):
            if j >= last:
                break
            b = n - j
            m = half * b
            if m & 0xFFFFFFFF < b:
                threshold = ((1 << 32) - b) % b
                while m & 0xFFFFFFFF < threshold:
                    r2, s0, s1, s2, s3 = _xoshiro_python(s0, s1, s2, s3)
                    m = (r2 >> 32) * b
            k = j + (m >> 32)
            cards[j], cards[k] = cards[k], cards[j]
        i += 2
    order[:] = cards
    state[:] = np.array([s0, s1, s2, s3], dtype=np.uint64)


def shuffle_lanes(cards: np.ndarray, s: np.ndarray) -> None:
    """`shuffle` of many shoes at once, for `interpreted` runs: each row of
    `cards` (m, n) by its own stream (`s`, (4, m), the states, advanced in
    place). The same picks from the same streams, Lemire's rare redraw
    included, in whole-array operations over the shoes (many times faster
    than one shoe at a time in Python's integers)."""
    m, n = cards.shape
    last = n - 1
    rows = np.arange(m)

    def swap(j: int, k: np.ndarray) -> None:
        other = j + k
        taken = cards[:, j].copy()
        cards[:, j] = cards[rows, other]
        cards[rows, other] = taken

    i = 0
    while i + 1 < last:
        r = xoshiro_lanes(s)
        swap(i, lemire_lanes(r >> np.uint64(32), n - i, s))
        swap(i + 1, lemire_lanes(r & MASK32, n - i - 1, s))
        i += 2
    if i < last:
        swap(i, bounded_lanes(s, n - i))

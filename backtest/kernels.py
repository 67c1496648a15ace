"""The compiled hot paths: a seeded generator, the shuffle, and the deal.

The deal's numba code lives here (the exact odds and the session loop have
their own, and go through `njit_nrt_free` for its one option). The generator is
xoshiro256** with its state seeded per shoe by splitmix64 from a 64-bit key
and the shoe's index, so shoe i of a run is the same whichever chunk or
worker deals it, on every machine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from numba import njit

from backtest import numba_cache
from backtest.cards import RANK_VALUE
from backtest.rules import banker_draws, is_natural, player_draws

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher

numba_cache.install()   # before this module's functions are decorated for numba's cache

U64 = np.uint64
_MASK32 = np.uint64(0xFFFFFFFF)

_FunctionT = TypeVar("_FunctionT", bound=Callable[..., object])


def njit_nrt_free(inline: bool = False) -> Callable[[_FunctionT], Dispatcher[_FunctionT]]:
    """`njit(cache=True)` compiled without reference counting (`_nrt=False`; see
    `jit`), and inlined where it is called if `inline`."""
    # `_nrt` is a private numba option, which numba's type stubs do not list
    if inline:
        return njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
    return njit(cache=True, _nrt=False)  # type: ignore[call-overload]


# --- random numbers --------------------------------------------------------------

@njit(cache=True, inline="always")
def _rotl(x: np.uint64, k: int) -> np.uint64:
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True)
def splitmix64(x: np.uint64) -> tuple[np.uint64, np.uint64]:
    """One splitmix64 step: (new state, output)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@njit_nrt_free()
def seed_state(key: np.uint64, index: np.uint64, state: np.ndarray) -> None:
    """Fill the 4-word xoshiro state for stream `index` of `key`."""
    x = key ^ (index * np.uint64(0xD1342543DE82EF95))
    for i in range(4):
        x, out = splitmix64(x)
        state[i] = out
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        state[0] = np.uint64(1)


@njit(cache=True, inline="always")
def _xoshiro(s0: np.uint64, s1: np.uint64, s2: np.uint64, s3: np.uint64
             ) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """xoshiro256** on a state held in four local words: (output, new state).

    A loop that keeps the state in locals keeps it in registers; through the
    state array every step would store and reload it (the compiler cannot tell
    that the arrays the loop writes are not the state)."""
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@njit(cache=True, inline="always")
def _lemire(x: np.uint64, b: np.uint64, s0: np.uint64, s1: np.uint64, s2: np.uint64,
            s3: np.uint64) -> tuple[np.int64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """Uniform integer in [0, b) from the 32 random bits `x` (b <= 2**32),
    unbiased (Lemire): in the rare case that `x` falls in the biased few, the
    high halves of fresh outputs of the state are drawn. (value, new state)."""
    m = x * b
    low = m & _MASK32
    if low < b:
        threshold = (np.uint64(0x100000000) - b) % b
        while low < threshold:
            r, s0, s1, s2, s3 = _xoshiro(s0, s1, s2, s3)
            m = (r >> np.uint64(32)) * b
            low = m & _MASK32
    # np.int64 keeps the compiled result signed (int() would leave it uint64)
    return np.int64(m >> np.uint64(32)), s0, s1, s2, s3


@njit(cache=True, inline="always")
def _bounded(bound: int, s0: np.uint64, s1: np.uint64, s2: np.uint64, s3: np.uint64
             ) -> tuple[np.int64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """`bounded` on a state held in four local words: (value, new state)."""
    r, s0, s1, s2, s3 = _xoshiro(s0, s1, s2, s3)
    return _lemire(r >> np.uint64(32), np.uint64(bound), s0, s1, s2, s3)


@njit(cache=True, inline="always")
def next_u64(s: np.ndarray) -> np.uint64:
    """xoshiro256**: the next 64 random bits (the state in `s`)."""
    result, s[0], s[1], s[2], s[3] = _xoshiro(s[0], s[1], s[2], s[3])
    return result


@njit(cache=True, inline="always")
def bounded(s: np.ndarray, bound: int) -> int:
    """Uniform integer in [0, bound) for bound < 2**32, unbiased (Lemire)."""
    value, s[0], s[1], s[2], s[3] = _bounded(bound, s[0], s[1], s[2], s[3])
    # numba hands a Python caller an int, which mypy cannot see
    return value  # type: ignore[return-value]


@njit(cache=True, inline="always")
def uniform(s: np.ndarray) -> float:
    """Uniform float in [0, 1) with 53 random bits."""
    return float(next_u64(s) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# --- the tableau as one lookup ---------------------------------------------------

def _build_hand_table() -> np.ndarray:
    """TABLE[p2, b2, v5, v6]: packed result of a hand from the two-card totals
    and the values of the fifth and sixth cards dealt.

    bits 0-3 Player total, 4-7 Banker total, 8 Player drew, 9 Banker drew,
    10 Banker's third card is the fifth card (the Player stood), 11 a natural,
    12-13 the winner (0 Player, 1 Banker, 2 tie).
    Built from the pure rules functions, so the two can never disagree.
    """
    table = np.zeros((10, 10, 10, 10), dtype=np.uint16)
    for p2 in range(10):
        for b2 in range(10):
            for v5 in range(10):
                for v6 in range(10):
                    pt, bt, pdrew, bdrew, b_fifth = p2, b2, 0, 0, 0
                    if not (is_natural(p2) or is_natural(b2)):
                        if player_draws(p2):
                            pdrew = 1
                            pt = (p2 + v5) % 10
                            if banker_draws(b2, v5):
                                bdrew = 1
                                bt = (b2 + v6) % 10
                        elif banker_draws(b2, None):
                            bdrew, b_fifth = 1, 1
                            bt = (b2 + v5) % 10
                    natural = 1 if is_natural(p2) or is_natural(b2) else 0
                    winner = 0 if pt > bt else (1 if bt > pt else 2)
                    table[p2, b2, v5, v6] = (pt | (bt << 4) | (pdrew << 8) | (bdrew << 9)
                                             | (b_fifth << 10) | (natural << 11) | (winner << 12))
    return table


HAND_TABLE = _build_hand_table()
CARD_VALUE = RANK_VALUE.astype(np.int64)
#: value of each card code (rank in the low four bits), for any uint8 code: indexed
#: by a code itself, unsigned, so compiled code needs no check for a negative index
CODE_VALUE = RANK_VALUE[np.minimum(np.arange(256) & 15, 13)].astype(np.uint8)
_U1, _U2, _U3, _U4, _U5, _U10 = (np.uint64(k) for k in (1, 2, 3, 4, 5, 10))


@njit_nrt_free(inline=True)
def _shuffle(order: np.ndarray, state: np.ndarray) -> None:
    """Forward Fisher-Yates over all of `order`, in place: position i takes a
    uniform pick of positions i..n-1. Each 64-bit output of the stream gives
    two picks, its high half for an even position and its low half for the
    next one (`_lemire`), which halves the generator's work; the last
    position is left as it is. `order` may hold indices or the cards
    themselves: the same swaps give the same permutation.
    """
    n = order.shape[0]
    last = n - 1
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    i = 0
    while i + 1 < last:
        r, s0, s1, s2, s3 = _xoshiro(s0, s1, s2, s3)
        k, s0, s1, s2, s3 = _lemire(r >> np.uint64(32), np.uint64(n - i), s0, s1, s2, s3)
        order[i], order[i + k] = order[i + k], order[i]
        k, s0, s1, s2, s3 = _lemire(r & _MASK32, np.uint64(n - i - 1), s0, s1, s2, s3)
        order[i + 1], order[i + 1 + k] = order[i + 1 + k], order[i + 1]
        i += 2
    if i < last:
        k, s0, s1, s2, s3 = _bounded(n - i, s0, s1, s2, s3)
        order[i], order[i + k] = order[i + k], order[i]
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3


@njit_nrt_free(inline=True)
def _write_hand(h: int, c1: int, c2: int, c3: int, c4: int, c5: int, c6: int, packed: int,
                out_cards: np.ndarray, out_pt: np.ndarray, out_bt: np.ndarray,
                out_win: np.ndarray, out_nat: np.ndarray, out_ppair: np.ndarray,
                out_bpair: np.ndarray, out_pn: np.ndarray, out_bn: np.ndarray) -> int:
    """Write hand h from its first six cards (c5, c6 used only as drawn) and its
    packed table entry; returns the number of cards it used."""
    i = np.uint64(h)  # an unsigned index: no negative-index wrap-around in compiled code
    pdrew = (packed >> 8) & 1
    bdrew = (packed >> 9) & 1
    pt = packed & 15
    bt = (packed >> 4) & 15
    out_cards[i, 0] = c1
    out_cards[i, 1] = c3
    out_cards[i, 2] = c5 if pdrew else 0
    out_cards[i, 3] = c2
    out_cards[i, 4] = c4
    out_cards[i, 5] = (c6 if pdrew else c5) if bdrew else 0
    out_pt[i] = pt
    out_bt[i] = bt
    out_win[i] = (packed >> 12) & 3
    out_nat[i] = (packed & 0x800) != 0
    out_ppair[i] = (c1 & 15) == (c3 & 15)
    out_bpair[i] = (c2 & 15) == (c4 & 15)
    out_pn[i] = 2 + pdrew
    out_bn[i] = 2 + bdrew
    return 4 + pdrew + bdrew


@njit(cache=True, inline="always")
def _card_value(code: np.uint8) -> np.uint64:
    """The value of a card code, by arithmetic (rank if below 10, else 0: the
    same as CODE_VALUE, checked below), so that a loop over cards vectorises."""
    rank = code & np.uint8(15)
    return np.uint64(rank) if rank < np.uint8(10) else np.uint64(0)


_ranks = np.arange(256) & 15
assert np.array_equal(CODE_VALUE, np.where(_ranks < 10, _ranks, 0)), "_card_value is CODE_VALUE"
del _ranks


@njit_nrt_free(inline=True)
def _deal_hand(dealt: np.ndarray, keys: np.ndarray, pos: int, h: int, table: np.ndarray,
               out_cards: np.ndarray, out_pt: np.ndarray, out_bt: np.ndarray,
               out_win: np.ndarray, out_nat: np.ndarray, out_ppair: np.ndarray,
               out_bpair: np.ndarray, out_pn: np.ndarray, out_bn: np.ndarray) -> int:
    """Deal hand h from dealt[pos:pos + 6], whose entry in the flattened hand
    table (`table`) is keys[pos]; returns the number of cards it used."""
    p = np.uint64(pos)
    c1 = dealt[p]
    c2 = dealt[p + _U1]
    c3 = dealt[p + _U2]
    c4 = dealt[p + _U3]
    c5 = dealt[p + _U4]
    c6 = dealt[p + _U5]
    packed = table[keys[p]]
    return _write_hand(h, c1, c2, c3, c4, c5, c6, packed, out_cards, out_pt, out_bt,
                       out_win, out_nat, out_ppair, out_bpair, out_pn, out_bn)


@njit_nrt_free()
def deal_shoes(pack: np.ndarray, key: np.uint64, shoe_ids: np.ndarray,
               cut_card: int, extra_hands: int, burn: bool, cut_mode: int, cut_at: int,
               table: np.ndarray, values: np.ndarray, max_hands: int,
               out_shoe: np.ndarray, out_hand: np.ndarray, out_cards: np.ndarray,
               out_pt: np.ndarray, out_bt: np.ndarray, out_win: np.ndarray,
               out_nat: np.ndarray, out_ppair: np.ndarray, out_bpair: np.ndarray,
               out_pn: np.ndarray, out_bn: np.ndarray, out_burn: np.ndarray,
               shuffled: np.ndarray, cut: np.ndarray, keys: np.ndarray,
               state: np.ndarray) -> int:
    """Shuffle and deal the shoes numbered `shoe_ids` (each its own random stream).

    pack: the unshuffled cards (codes). table: HAND_TABLE; values: CODE_VALUE
    (for the burn). cut_mode: 0 no cut, 1 cut `cut_at` cards from the top to
    the bottom, 2 cut at a random position. Dealing stops `extra_hands` hands
    after the hand during which the cut card (placed `cut_card` cards from the
    end; 0 = none) comes out, or when fewer than six cards are left.
    out_burn[k] receives the number of cards burned from shoe k. shuffled and
    cut (uint8, one per card), keys (uint16, one per card) and state (4
    uint64) are work arrays: compiled without reference counting, this
    allocates nothing. Returns the number of hands written.

    Where each hand starts depends on how many cards the one before took, a
    chain of loads and arithmetic from hand to hand. So the table entry of a
    hand starting at each position of the shoe is computed first, in one loop
    that vectorises, and the chain is one lookup per hand. Indices are
    unsigned throughout: numba checks a signed index for a negative value,
    which cost more here than the lookups.
    """
    n = pack.shape[0]
    limit = n - cut_card
    flat = table.reshape(table.size)
    h = 0
    for k in range(shoe_ids.shape[0]):
        shoe_index = shoe_ids[k]
        seed_state(key, np.uint64(shoe_index), state)
        for i in range(n):
            shuffled[i] = pack[i]
        _shuffle(shuffled, state)
        c = 0
        if cut_mode == 1:
            c = cut_at
        elif cut_mode == 2:
            c = bounded(state, n + 1)
        dealt = shuffled
        if 0 < c < n:
            # the top c cards go to the bottom
            for i in range(n - c):
                cut[i] = shuffled[c + i]
            for i in range(c):
                cut[n - c + i] = shuffled[i]
            dealt = cut
        # keys[i]: the flat table index of a hand starting at card i
        for i in range(np.uint64(n - 5)):
            v1 = _card_value(dealt[i])
            v2 = _card_value(dealt[i + _U1])
            v3 = _card_value(dealt[i + _U2])
            v4 = _card_value(dealt[i + _U3])
            v5 = _card_value(dealt[i + _U4])
            v6 = _card_value(dealt[i + _U5])
            p2 = v1 + v3
            p2 = p2 - _U10 if p2 >= _U10 else p2
            b2 = v2 + v4
            b2 = b2 - _U10 if b2 >= _U10 else b2
            keys[i] = ((p2 * _U10 + b2) * _U10 + v5) * _U10 + v6
        pos = 0
        if burn:
            v = values[dealt[0]]
            pos = 1 + (10 if v == 0 else v)
        out_burn[k] = pos
        h0 = h
        h_end = h + max_hands
        # hands while six cards are left, up to the one during which the cut
        # card comes out (noticed after a hand, so never before the first) ...
        top = n - 6
        while pos <= top and h < h_end:
            pos += _deal_hand(dealt, keys, pos, h, flat, out_cards, out_pt, out_bt, out_win,
                              out_nat, out_ppair, out_bpair, out_pn, out_bn)
            h += 1
            if pos > limit:
                break
        # ... then, if it came out, extra_hands more
        for _ in range(extra_hands):
            if pos + 6 > n or h >= h_end:
                break
            pos += _deal_hand(dealt, keys, pos, h, flat, out_cards, out_pt, out_bt, out_win,
                              out_nat, out_ppair, out_bpair, out_pn, out_bn)
            h += 1
        for i in range(np.uint64(h0), np.uint64(h)):
            out_shoe[i] = shoe_index
            out_hand[i] = i - np.uint64(h0) + _U1
    return h


@njit_nrt_free()
def deal_sequence(cards: np.ndarray, table: np.ndarray, values: np.ndarray,
                  out_cards: np.ndarray, out_pt: np.ndarray, out_bt: np.ndarray,
                  out_win: np.ndarray, out_nat: np.ndarray, out_ppair: np.ndarray,
                  out_bpair: np.ndarray, out_pn: np.ndarray, out_bn: np.ndarray) -> tuple[int, int]:
    """Deal every complete hand from an ordered card sequence.

    Returns (hands written, cards used); cards after the last complete hand
    are left (an incomplete hand is not dealt).
    """
    n = cards.shape[0]
    pos = 0
    h = 0
    while pos + 4 <= n:
        c1 = cards[pos]
        c2 = cards[pos + 1]
        c3 = cards[pos + 2]
        c4 = cards[pos + 3]
        p2 = (values[c1 & 15] + values[c3 & 15]) % 10
        b2 = (values[c2 & 15] + values[c4 & 15]) % 10
        c5 = 0
        c6 = 0
        packed = table[p2, b2, 0, 0]
        if p2 < 8 and b2 < 8 and (p2 <= 5 or b2 <= 5):
            if pos + 4 >= n:
                break
            c5 = cards[pos + 4]
            v5 = values[c5 & 15]
            packed = table[p2, b2, v5, 0]
            if (packed >> 8) & 1 and (packed >> 9) & 1:
                if pos + 5 >= n:
                    break
                c6 = cards[pos + 5]
                packed = table[p2, b2, v5, values[c6 & 15]]
        pos += _write_hand(h, c1, c2, c3, c4, c5, c6, packed, out_cards, out_pt, out_bt,
                           out_win, out_nat, out_ppair, out_bpair, out_pn, out_bn)
        h += 1
    return h, pos


def jit(fn: _FunctionT) -> Dispatcher[_FunctionT]:
    """Compile `fn` for the session loop (cached on disk). Strategies use this
    so that only this module names the compiler.

    Compiled without reference counting: the session loop calls these small
    functions once or twice a hand with several arrays each, and counting
    references to those arrays cost more than the functions' own work. So a
    function compiled here must not allocate arrays (it works in the arrays it
    is given). Inlined where it is called, so that the session loop compiled
    for one strategy holds all of that strategy's code."""
    return njit_nrt_free(inline=True)(fn)

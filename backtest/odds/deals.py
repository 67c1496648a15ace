"""The exact count of the deal: every ordered draw of six cards from a
composition, with Python integers, by what it ends in (the totals, who
drew, and whether each side's first two cards are a pair).

The deal reads card values, and a pair is of one rank; the two part only
for the four ten-value ranks (T J Q K). So the first four cards are walked
by value, and where a side's first two are both worth 0 the ways to deal
them are split by ten-value rank into pair and no pair (`_pair_splits`);
what follows reads values only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from backtest.core import settlement
from backtest.odds.events import (
    BANKER_DRAWS,
    E_B6_2,
    E_B7_3,
    E_BANKER,
    E_BN8,
    E_NATURAL,
    E_P8_3,
    E_PLAYER,
    E_PN8,
    E_TIE,
    N_DEAL_EVENTS,
    STAGE,
    Event,
)

#: the hands a joint count tells apart: each of the winner's kinds
#: (`settlement.WINNER_ATOMS`, in its order) with each state of the two pairs
#: (neither, the Banker's, the Player's, both): index 4 * kind + 2 * pp + bp
N_WINNER_KINDS = len(settlement.WINNER_ATOMS)
N_JOINT = 4 * N_WINNER_KINDS
K_PLAYER_THREE_CARD_EIGHT, K_PLAYER, K_BANKER_SIX, K_BANKER_THREE_CARD_SEVEN, K_BANKER, K_TIE = (
    range(N_WINNER_KINDS)
)


def ordered_draws(n: int, k: int) -> int:
    """n (n-1) ... (n-k+1): ordered draws of k cards from n."""
    out = 1
    for i in range(k):
        out *= n - i
    return out


def ten_rank_sums(counts: Sequence[int]) -> tuple[int, int, int]:
    """For the ten-value ranks' counts c (T J Q K): the sums of c (c - 1), of
    its square, and of c (c - 1) (c - 2) (c - 3)."""
    tens = [int(c) for c in counts[10:14]]
    pairs = [c * (c - 1) for c in tens]
    return sum(pairs), sum(p * p for p in pairs), sum(ordered_draws(c, 4) for c in tens)


def _pair_splits(
    a: int, c: int, b: int, d: int, w: int, v0: int, tens: tuple[int, int, int]
) -> list[tuple[int, int, int]]:
    """The `w` ways to deal the first four cards with values a, c (Player)
    and b, d (Banker), split by (player pair, banker pair): (pp, bp, ways).

    Two cards of one value from 1 to 9 are of one rank; of value 0, they are
    a pair in S2 of the (v0)_2 ways (S2 the sum of c (c - 1) over the ten
    ranks, v0 the ten-value cards in the shoe). `w` holds (v0)_z for its z
    ten-value cards, so each part is a whole number."""
    p0 = a == c == 0
    b0 = b == d == 0
    if not (p0 or b0):
        return [(int(a == c), int(b == d), w)]
    s2, sq, q4 = tens
    z = (a == 0) + (c == 0) + (b == 0) + (d == 0)
    rest = w // ordered_draws(v0, z)  # the ways of the cards of other values
    if p0 and b0:  # four ten-value cards
        both = s2 * s2 - sq + q4
        one = s2 * (v0 - 2) * (v0 - 3) - both
        neither = ordered_draws(v0, 4) - 2 * one - both
        parts = [(1, 1, both), (1, 0, one), (0, 1, one), (0, 0, neither)]
    else:
        pair = s2 * ordered_draws(v0 - 2, z - 2)
        other = ordered_draws(v0, z) - pair
        if p0:
            parts = [(1, int(b == d), pair), (0, int(b == d), other)]
        else:
            parts = [(int(a == c), 1, pair), (int(a == c), 0, other)]
    return [(pp, bp, rest * n) for pp, bp, n in parts if n]


def _deal_bins(v, tens, stage, draws, bins):
    """Add to bins[pt, bt, p3, b3, pp, bp] the ordered six-card draws from
    value counts `v` that end with those totals, third cards (p3, b3: 0 or 1)
    and pairs (`tens`: `ten_rank_sums` of the composition).

    Run on object arrays of Python ints, so it is exact for a shoe of any size.
    The first four cards are taken as unordered pairs per side -- (a, c) for
    the Player, (b, d) for the Banker -- counted twice when the two differ;
    the cards a hand does not use are counted by the ways to draw them.
    `v` is restored on return.
    """
    n4 = v.sum() - 4
    v0 = int(v[0])
    for a in range(10):
        if v[a] == 0:
            continue
        wa = v[a]
        v[a] -= 1
        for c in range(a, 10):
            if v[c] == 0:
                continue
            wc = wa * v[c] * (1 if c == a else 2)
            v[c] -= 1
            p2 = (a + c) % 10
            for b in range(10):
                if v[b] == 0:
                    continue
                wb = wc * v[b]
                v[b] -= 1
                for d in range(b, 10):
                    if v[d] == 0:
                        continue
                    w = wb * v[d] * (1 if d == b else 2)
                    v[d] -= 1
                    b2 = (b + d) % 10
                    s = stage[p2, b2]
                    for pp, bp, ws in _pair_splits(a, c, b, d, int(w), v0, tens):
                        if s == 0:
                            bins[p2, b2, 0, 0, pp, bp] += ws * n4 * (n4 - 1)
                        elif s == 1:
                            for e in range(10):
                                if v[e] != 0:
                                    bins[p2, (b2 + e) % 10, 0, 1, pp, bp] += ws * v[e] * (n4 - 1)
                        else:
                            for e in range(10):
                                if v[e] == 0:
                                    continue
                                w5 = ws * v[e]
                                pt = (p2 + e) % 10
                                if draws[b2, e]:
                                    v[e] -= 1
                                    for f in range(10):
                                        if v[f] != 0:
                                            bins[pt, (b2 + f) % 10, 1, 1, pp, bp] += w5 * v[f]
                                    v[e] += 1
                                else:
                                    bins[pt, b2, 1, 0, pp, bp] += w5 * (n4 - 1)
                    v[d] += 1
                v[b] += 1
            v[c] += 1
        v[a] += 1


def winner_kind(pt: int, bt: int, p3: int, b3: int) -> int:
    """The kind (`settlement.WINNER_ATOMS` index) of a hand ending in these
    totals and third cards."""
    if pt > bt:
        return K_PLAYER_THREE_CARD_EIGHT if p3 == 1 and pt == 8 else K_PLAYER
    if bt > pt:
        if bt == 6:
            return K_BANKER_SIX
        return K_BANKER_THREE_CARD_SEVEN if bt == 7 and b3 == 1 else K_BANKER
    return K_TIE


def _deal_events(bins, out):
    """Add the deal events (the first `N_DEAL_EVENTS` of Event) found in
    `bins` (totals and third cards: the pairs summed out)."""
    for pt in range(10):
        for bt in range(10):
            for p3 in range(2):
                for b3 in range(2):
                    x = bins[pt, bt, p3, b3]
                    if x == 0:
                        continue
                    if pt > bt:
                        out[E_PLAYER] += x
                        if p3 == 1 and pt == 8:
                            out[E_P8_3] += x
                    elif bt > pt:
                        out[E_BANKER] += x
                        if bt == 6:
                            out[E_B6_2 + b3] += x
                        elif bt == 7 and b3 == 1:
                            out[E_B7_3] += x
                    else:
                        out[E_TIE] += x
                    if p3 == 0 and b3 == 0 and (pt >= 8 or bt >= 8):
                        out[E_NATURAL] += x
                        if pt >= 8:
                            out[E_PN8 + pt - 8] += x
                        if bt >= 8:
                            out[E_BN8 + bt - 8] += x


def exact_deal(counts: Sequence[int]) -> tuple[list[int], tuple[int, ...]]:
    """For rank counts `counts` (index 0..13): the exact deal-event counts
    (the first `N_DEAL_EVENTS` of Event) and the joint counts (`N_JOINT`,
    indexed as there), as Python ints.

    Nested loops over the cards in the order they are dealt (an independent
    method from the fast path's polynomial, `ev_events`).
    """
    v = [sum(int(c) for c in counts[10:14]), *(int(c) for c in counts[1:10])]
    bins = np.zeros((10, 10, 2, 2, 2, 2), dtype=object)
    bins[...] = 0
    _deal_bins(np.array(v, dtype=object), ten_rank_sums(counts), STAGE, BANKER_DRAWS, bins)
    joint = [0] * N_JOINT
    for (pt, bt, p3, b3, pp, bp), x in np.ndenumerate(bins):
        if x:
            joint[4 * winner_kind(pt, bt, p3, b3) + 2 * pp + bp] += int(x)
    out = np.zeros(N_DEAL_EVENTS, dtype=object)
    out[...] = 0
    _deal_events(bins.sum(axis=(4, 5)), out)
    return [int(x) for x in out], tuple(joint)


def exact_pair_events(counts: Sequence[int]) -> dict[Event, int]:
    """Pair counts, normalised to six cards: only the first two cards of a side matter."""
    ranks = [int(c) for c in counts[1:14]]
    n = sum(ranks)
    pairs = [c * (c - 1) for c in ranks]
    s = sum(pairs)
    one = s * ordered_draws(n - 2, 4)
    # both pairs: (P1, P2) and (B1, B2) pairs, of the same rank or of two ranks
    both = (
        s * s - sum(p * p for p in pairs) + sum(c * (c - 1) * (c - 2) * (c - 3) for c in ranks)
    ) * ordered_draws(n - 4, 2)
    return {
        Event.PLAYER_PAIR: one,
        Event.BANKER_PAIR: one,
        Event.EITHER_PAIR: 2 * one - both,
        Event.BOTH_PAIRS: both,
    }

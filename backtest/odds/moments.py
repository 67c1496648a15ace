"""The variance of one hand's net given its stakes, for the composition it
is dealt from: what a card counter's hand-by-hand statistics need (compiled).

Every bet's net on a hand is a function of the hand's kind: the winner's
kind (`settlement.WINNER_ATOMS`) with the state of the two pairs, the
`N_JOINT` kinds of `OutcomeTable.joint`; `covariance.joint_nets_array`
gives each bet's net on each. So the net of stakes s is X = sum_b s_b
net_b, and its variance is sum_k p_k X_k^2 - (sum_k p_k X_k)^2 over the
kinds' chances p_k for the composition (`stake_variance`). The chances are
counted only as far as the stakes need them: the winner's kinds alone
(`fast.ev_events`, microseconds) for main bets, the pairs alone (a closed
form in the rank counts) for pair bets, and the two jointly
(`joint_fill`, the exact deal walked card by card, about a millisecond)
only for a hand that stakes both.

Up to 8 decks every count is a whole number below 2**53, so the chances
are the exact fractions rounded once; for a larger shoe the sums round.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from backtest.jit import numba_cache
from backtest.odds.deals import (
    K_BANKER,
    K_BANKER_SIX,
    K_BANKER_THREE_CARD_SEVEN,
    K_PLAYER,
    K_PLAYER_THREE_CARD_EIGHT,
    K_TIE,
    N_JOINT,
)
from backtest.odds.events import (
    B_BANKER_PAIR,
    B_PLAYER_PAIR,
    BANKER_DRAWS,
    EV_ROW,
    HAND_CARDS,
    N_BETS,
    STAGE,
)
from backtest.odds.fast import ev_events, wanted_events
from backtest.odds.polynomial import ALL_EVENTS

numba_cache.install()  # before this module's functions are decorated for numba's cache

#: the floats `stake_variance` works in: the kinds' chances, then
#: `joint_fill`'s value counts and a prefix's kinds (or the deal events)
MOMENTS_WORK = N_JOINT + 16

_STAGE = STAGE.copy()
_DRAWS = BANKER_DRAWS.copy()


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def _kind(pt, bt, p3, b3):  # type: ignore[no-untyped-def]
    """`deals.winner_kind`, compiled."""
    if pt > bt:
        return K_PLAYER_THREE_CARD_EIGHT if p3 and pt == 8 else K_PLAYER
    if bt > pt:
        if bt == 6:
            return K_BANKER_SIX
        return K_BANKER_THREE_CARD_SEVEN if bt == 7 and b3 else K_BANKER
    return K_TIE


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def _prefix_kinds(v, p2, b2, n4, stage, draws, tmp):  # type: ignore[no-untyped-def]
    """tmp[kind]: the ways to finish a deal whose first four cards total p2
    and b2 (the value counts left in v, n4 cards), unused cards included."""
    for k in range(6):
        tmp[k] = 0.0
    s = stage[p2, b2]
    if s == 0:
        tmp[_kind(p2, b2, False, False)] += n4 * (n4 - 1.0)
        return
    if s == 1:
        for e in range(10):
            if v[e] != 0.0:
                tmp[_kind(p2, (b2 + e) % 10, False, True)] += v[e] * (n4 - 1.0)
        return
    for e in range(10):
        ve = v[e]
        if ve == 0.0:
            continue
        pt = (p2 + e) % 10
        if draws[b2, e]:
            v[e] -= 1.0
            for f in range(10):
                if v[f] != 0.0:
                    tmp[_kind(pt, (b2 + f) % 10, True, True)] += ve * v[f]
            v[e] += 1.0
        else:
            tmp[_kind(pt, b2, True, False)] += ve * (n4 - 1.0)


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def joint_fill(counts, out, work):  # type: ignore[no-untyped-def]
    """out[4 * kind + 2 * pp + bp]: the chance of each of the `N_JOINT`
    kinds of hand (`OutcomeTable.joint`, as `deals.exact_deal` counts them,
    in floats) for rank counts `counts`; `work` holds 16 floats. The caller
    checks that at least six cards are left."""
    v = work[:10]
    tmp = work[10:16]
    v[0] = counts[10] + counts[11] + counts[12] + counts[13]
    for r in range(1, 10):
        v[r] = counts[r]
    n = 0.0
    for r in range(10):
        n += v[r]
    v0 = v[0]
    s2 = sq = q4 = 0.0
    for r in range(10, 14):
        c = float(counts[r])
        s2 += c * (c - 1.0)
        sq += (c * (c - 1.0)) ** 2
        q4 += c * (c - 1.0) * (c - 2.0) * (c - 3.0)
    for i in range(N_JOINT):
        out[i] = 0.0
    n4 = n - 4.0
    for a in range(10):
        if v[a] == 0.0:
            continue
        wa = v[a]
        v[a] -= 1.0
        for c in range(a, 10):
            if v[c] == 0.0:
                continue
            wc = wa * v[c] * (1.0 if c == a else 2.0)
            v[c] -= 1.0
            for b in range(10):
                if v[b] == 0.0:
                    continue
                wb = wc * v[b]
                v[b] -= 1.0
                for d in range(b, 10):
                    if v[d] == 0.0:
                        continue
                    w = wb * v[d] * (1.0 if d == b else 2.0)
                    v[d] -= 1.0
                    _prefix_kinds(v, (a + c) % 10, (b + d) % 10, n4, _STAGE, _DRAWS, tmp)
                    # the ways split by (pp, bp), as `deals._pair_splits`
                    pp = 1.0 if a == c else 0.0
                    bp = 1.0 if b == d else 0.0
                    w00 = w01 = w10 = w11 = 0.0
                    p0 = a == 0 and c == 0
                    b0 = b == 0 and d == 0
                    if not (p0 or b0):
                        w00 = w * (1.0 - pp) * (1.0 - bp)
                        w01 = w * (1.0 - pp) * bp
                        w10 = w * pp * (1.0 - bp)
                        w11 = w * pp * bp
                    else:
                        z = (a == 0) + (c == 0) + (b == 0) + (d == 0)
                        fz = 1.0
                        for i in range(z):
                            fz *= v0 - i
                        rest = w / fz
                        if p0 and b0:
                            w11 = s2 * s2 - sq + q4
                            w10 = w01 = s2 * (v0 - 2.0) * (v0 - 3.0) - w11
                            w00 = fz - 2.0 * w10 - w11
                        else:
                            f2 = 1.0
                            for i in range(z - 2):
                                f2 *= v0 - 2.0 - i
                            pair = s2 * f2
                            if p0:
                                w10 = pair * (1.0 - bp)
                                w11 = pair * bp
                                w00 = (fz - pair) * (1.0 - bp)
                                w01 = (fz - pair) * bp
                            else:
                                w01 = pair * (1.0 - pp)
                                w11 = pair * pp
                                w00 = (fz - pair) * (1.0 - pp)
                                w10 = (fz - pair) * pp
                        w00 *= rest
                        w01 *= rest
                        w10 *= rest
                        w11 *= rest
                    for k in range(6):
                        x = tmp[k]
                        if x != 0.0:
                            out[4 * k] += w00 * x
                            out[4 * k + 1] += w01 * x
                            out[4 * k + 2] += w10 * x
                            out[4 * k + 3] += w11 * x
                    v[d] += 1.0
                v[b] += 1.0
            v[c] += 1.0
        v[a] += 1.0
    deals = n * (n - 1.0) * (n - 2.0) * (n - 3.0) * (n - 4.0) * (n - 5.0)
    for i in range(N_JOINT):
        out[i] /= deals


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def stake_variance(stakes, counts, row, nets, payouts, nodes, coef, ev_work_, work):  # type: ignore[no-untyped-def]
    """The variance of the net of `stakes` (N_BETS, any unit) on the next
    hand dealt from rank counts `counts`: s' C s, C the bets' covariance for
    that composition (`covariance.unit_covariance`). `row`: the hand's row
    of EVs, where `ahead.keep_kinds` keeps the chances of the winner's kinds
    (a shorter array, or NaN there: they are counted here). `nets`:
    `covariance.joint_nets_array` (zero rows for the bets not offered);
    `payouts`: `fast.payout_vector`; nodes, coef and ev_work_: from
    `fast.ev_work`; `work`: MOMENTS_WORK floats. 0 when nothing is staked
    or fewer than six cards are left."""
    mains = False
    pairs = False
    for b in range(N_BETS):
        if stakes[b] != 0.0:
            if b == B_PLAYER_PAIR or b == B_BANKER_PAIR:
                pairs = True
            else:
                mains = True
    if not (mains or pairs):
        return 0.0
    kept = row.shape[0] >= EV_ROW and not np.isnan(row[N_BETS])
    n = 0.0
    for r in range(1, 14):
        n += counts[r]
    if n < HAND_CARDS and (pairs or not kept):
        return 0.0
    p = work[:N_JOINT]
    if mains and pairs:
        joint_fill(counts, p, work[N_JOINT:])
    else:
        for i in range(N_JOINT):
            p[i] = 0.0
    if mains and not pairs and kept:
        # the winner's kinds as kept, with no pair (the main bets do not read them)
        for k in range(6):
            p[4 * k] = row[N_BETS + k]
    elif mains and not pairs:
        e = work[N_JOINT : N_JOINT + 6]
        ev_events(counts, nodes, coef, ev_work_, e, wanted_events(payouts) & ALL_EVENTS)
        deals = n * (n - 1.0) * (n - 2.0) * (n - 3.0) * (n - 4.0) * (n - 5.0)
        p[4 * K_PLAYER_THREE_CARD_EIGHT] = e[5] / deals
        p[4 * K_PLAYER] = (e[0] - e[5]) / deals
        p[4 * K_BANKER_SIX] = e[3] / deals
        p[4 * K_BANKER_THREE_CARD_SEVEN] = e[4] / deals
        p[4 * K_BANKER] = (e[1] - e[3] - e[4]) / deals
        p[4 * K_TIE] = (deals - e[0] - e[1]) / deals
    if pairs and not mains:
        # the pairs, with the first kind (the pair bets do not read it)
        s2 = sq = q4 = 0.0
        for r in range(1, 14):
            c = float(counts[r])
            s2 += c * (c - 1.0)
            sq += (c * (c - 1.0)) ** 2
            q4 += c * (c - 1.0) * (c - 2.0) * (c - 3.0)
        one = s2 / (n * (n - 1.0))
        both = (s2 * s2 - sq + q4) / (n * (n - 1.0) * (n - 2.0) * (n - 3.0))
        p[3] = both
        p[2] = p[1] = one - both
        p[0] = 1.0 - 2.0 * one + both
    mean = 0.0
    second = 0.0
    for k in range(N_JOINT):
        if p[k] == 0.0:
            continue
        x = 0.0
        for b in range(N_BETS):
            if stakes[b] != 0.0:
                x += stakes[b] * nets[b, k]
        mean += p[k] * x
        second += p[k] * x * x
    return max(second - mean * mean, 0.0)


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def needs_counts(stakes, row):  # type: ignore[no-untyped-def]
    """Whether `stake_variance` reads the rank counts for these stakes and
    this row: a pair bet is staked, or the row keeps no chances of the
    winner's kinds."""
    if stakes[B_PLAYER_PAIR] != 0.0 or stakes[B_BANKER_PAIR] != 0.0:
        return True
    return row.shape[0] < EV_ROW or np.isnan(row[N_BETS])

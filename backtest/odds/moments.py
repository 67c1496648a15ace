"""The variance of one hand's net given its stakes, for the composition it
is dealt from: what a card counter's hand-by-hand statistics need (compiled).

Every bet's net on a hand is a function of one family of what the hand
shows: the winner's kind (`settlement.WINNER_ATOMS`), the Player pair or
the Banker pair; `covariance.joint_nets_array` gives each bet's net on each
kind of hand. So the variance of the net of stakes s needs the chances of
each family and of each two together (`stake_variance`), counted only as
far as the stakes need them, and read where `ahead.ev_fill_ahead` keeps
them beside the hand's EVs: the winner's kinds (as the EVs count them) for
main bets, the pairs (a closed form in the rank counts) for pair bets, and
the kinds with each pair (`cross_fill`, the deals that can hold a pair
walked card by card, a fraction of a millisecond) only for a hand that
stakes both, then kept in its row for the next seat that reads it.

Up to 8 decks every count is a whole number below 2**53, so the chances
are the exact fractions rounded once; for a larger shoe the sums round.
"""

from __future__ import annotations

import numpy as np

from backtest.jit.numba_cache import njit_plain
from backtest.odds.deals import (
    K_BANKER,
    K_BANKER_SIX,
    K_BANKER_THREE_CARD_SEVEN,
    K_PLAYER,
    K_PLAYER_THREE_CARD_EIGHT,
    K_TIE,
)
from backtest.odds.events import (
    B_BANKER,
    B_BANKER_PAIR,
    B_PLAYER,
    B_PLAYER_PAIR,
    B_TIE,
    BANKER_DRAWS,
    HAND_CARDS,
    N_BETS,
    N_KEPT,
    N_KINDS,
    P_ROW,
    Q_BANKER_WINS,
    Q_PLAYER_WINS,
    Q_TIE,
    ROW_CROSS,
    ROW_KINDS,
    ROW_PAIRS,
    STAGE,
)
from backtest.odds.fast import ev_events
from backtest.odds.polynomial import ALL_EVENTS
from backtest.odds.pricing import wanted_events

#: the floats `stake_variance` works in: the kinds' chances, the pairs',
#: the kinds' with each pair, then `cross_fill`'s value counts and a
#: prefix's kinds (or the deal events)
MOMENTS_WORK = 3 * N_KINDS + 2 + 16

#: for each bet that wins one payout or loses, a kind of hand
#: (`OutcomeTable.joint`'s index) on which it wins: Tie on a tie, a pair bet
#: on its pair, Dragon 7 on a Banker three-card 7, Panda 8 on a Player
#: three-card 8 (Player and Banker: unused)
_WINS_AT = np.array(
    [
        0,
        0,
        4 * K_TIE,
        2,
        1,
        4 * K_BANKER_THREE_CARD_SEVEN,
        4 * K_PLAYER_THREE_CARD_EIGHT,
    ]
)
_STAGE = STAGE.copy()
_DRAWS = BANKER_DRAWS.copy()


@njit_plain(inline="always")
def _kind(pt, bt, p3, b3):  # type: ignore[no-untyped-def]
    """`deals.winner_kind`, compiled."""
    if pt > bt:
        return K_PLAYER_THREE_CARD_EIGHT if p3 and pt == 8 else K_PLAYER
    if bt > pt:
        if bt == 6:
            return K_BANKER_SIX
        return K_BANKER_THREE_CARD_SEVEN if bt == 7 and b3 else K_BANKER
    return K_TIE


@njit_plain()
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


@njit_plain()
def cross_fill(counts, out, work):  # type: ignore[no-untyped-def]
    """out[kind] and out[N_KINDS + kind]: the chance of each of the winner's
    kinds with a Player pair, and with a Banker pair, for rank counts
    `counts` (as `deals.exact_deal`'s joint counts give them, in floats);
    `work` holds 16 floats. Only the deals whose first four cards can hold
    a pair are walked. The caller checks that at least six cards are left."""
    v = work[:10]
    tmp = work[10:16]
    v[0] = counts[10] + counts[11] + counts[12] + counts[13]
    for r in range(1, 10):
        v[r] = counts[r]
    n = 0.0
    for r in range(10):
        n += v[r]
    v0 = v[0]
    s2 = 0.0
    for r in range(10, 14):
        c = float(counts[r])
        s2 += c * (c - 1.0)
    for i in range(2 * N_KINDS):
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
                    if a != c and b != d:
                        continue  # no pair on either side
                    w = wb * v[d] * (1.0 if d == b else 2.0)
                    v[d] -= 1.0
                    _prefix_kinds(v, (a + c) % 10, (b + d) % 10, n4, _STAGE, _DRAWS, tmp)
                    # the ways with a pair, as `deals._pair_splits`: two cards
                    # of a value from 1 to 9 are a pair; of value 0, in S2 of
                    # every (v0)_2 ways, whatever the other side holds
                    z = (a == 0) + (c == 0) + (b == 0) + (d == 0)
                    fz = 1.0
                    for i in range(z):
                        fz *= v0 - i
                    f2 = 1.0
                    for i in range(z - 2):
                        f2 *= v0 - 2.0 - i
                    ten_pair = w / fz * s2 * f2 if z >= 2 else 0.0
                    wp = 0.0 if a != c else (ten_pair if a == 0 else w)
                    wq = 0.0 if b != d else (ten_pair if b == 0 else w)
                    for k in range(N_KINDS):
                        x = tmp[k]
                        out[k] += wp * x
                        out[N_KINDS + k] += wq * x
                    v[d] += 1.0
                v[b] += 1.0
            v[c] += 1.0
        v[a] += 1.0
    deals = n * (n - 1.0) * (n - 2.0) * (n - 3.0) * (n - 4.0) * (n - 5.0)
    for i in range(2 * N_KINDS):
        out[i] /= deals


@njit_plain(inline="always")
def _flags(stakes):  # type: ignore[no-untyped-def]
    """(a main bet is staked, a pair bet is)."""
    mains = False
    pairs = False
    for b in range(N_BETS):
        if stakes[b] != 0.0:
            if b == B_PLAYER_PAIR or b == B_BANKER_PAIR:
                pairs = True
            else:
                mains = True
    return mains, pairs


@njit_plain(inline="always")
def needs_counts(stakes, row):  # type: ignore[no-untyped-def]
    """Whether `stake_variance` reads the rank counts for these stakes and
    this row: what the stakes need is not kept in it (`events.N_KEPT`)."""
    mains, pairs = _flags(stakes)
    if row.shape[0] < N_KEPT:
        return mains or pairs
    return (
        (mains and np.isnan(row[ROW_KINDS]))
        or (pairs and np.isnan(row[ROW_PAIRS]))
        or (mains and pairs and np.isnan(row[ROW_CROSS]))
    )


@njit_plain()
def stake_variance(stakes, counts, row, nets, payouts, nodes, coef, ev_work_, work):  # type: ignore[no-untyped-def]
    """The variance of the net of `stakes` (N_BETS, any unit) on the next
    hand dealt from rank counts `counts`: s' C s, C the bets' covariance for
    that composition (`covariance.unit_covariance`).

    `row`: what is kept beside the hand's EVs (`events.N_KEPT`), where the
    chances the stakes need are read when kept there; what is not is worked out from
    `counts` (which must then be the hand's: `needs_counts`), and the chances
    of the kinds with each pair are kept in the row for the next reader. A
    shorter `row`: everything from `counts`. `nets`:
    `covariance.joint_nets_array` (zero rows for the bets not offered);
    `payouts`: `pricing.payout_vector`; nodes, coef and ev_work_: from
    `fast.ev_work`; `work`: MOMENTS_WORK floats. 0 when nothing is staked
    or fewer than six cards are left.

    Each bet reads one family of what a hand shows (the winner's kind, the
    Player pair, or the Banker pair: `settlement.outcome_atoms`), so the
    second moment needs the chances of each family and of each two of them
    together, not of all three at once."""
    mains, pairs = _flags(stakes)
    if not (mains or pairs):
        return 0.0
    n = 0.0
    kept = row.shape[0] >= N_KEPT
    kinds = work[:N_KINDS]
    two = work[N_KINDS : N_KINDS + 2]
    cross = work[N_KINDS + 2 : N_KINDS + 2 + 2 * N_KINDS]
    scratch = work[N_KINDS + 2 + 2 * N_KINDS :]
    need_kinds = mains and not (kept and not np.isnan(row[ROW_KINDS]))
    need_pairs = pairs and not (kept and not np.isnan(row[ROW_PAIRS]))
    need_cross = mains and pairs and not (kept and not np.isnan(row[ROW_CROSS]))
    if need_kinds or need_pairs or need_cross:
        for r in range(1, 14):
            n += counts[r]
        if n < HAND_CARDS:
            return 0.0
    if mains:
        if need_kinds:
            e = scratch[:6]
            ev_events(counts, nodes, coef, ev_work_, e, wanted_events(payouts) & ALL_EVENTS)
            deals = n * (n - 1.0) * (n - 2.0) * (n - 3.0) * (n - 4.0) * (n - 5.0)
            kinds[K_PLAYER_THREE_CARD_EIGHT] = e[5] / deals
            kinds[K_PLAYER] = (e[0] - e[5]) / deals
            kinds[K_BANKER_SIX] = e[3] / deals
            kinds[K_BANKER_THREE_CARD_SEVEN] = e[4] / deals
            kinds[K_BANKER] = (e[1] - e[3] - e[4]) / deals
            kinds[K_TIE] = (deals - e[0] - e[1]) / deals
        else:
            for k in range(N_KINDS):
                kinds[k] = row[ROW_KINDS + k]
    if pairs:
        if need_pairs:
            s2 = sq = q4 = 0.0
            for r in range(1, 14):
                c = float(counts[r])
                s2 += c * (c - 1.0)
                sq += (c * (c - 1.0)) ** 2
                q4 += c * (c - 1.0) * (c - 2.0) * (c - 3.0)
            two[0] = s2 / (n * (n - 1.0))
            two[1] = (s2 * s2 - sq + q4) / (n * (n - 1.0) * (n - 2.0) * (n - 3.0))
        else:
            two[0] = row[ROW_PAIRS]
            two[1] = row[ROW_PAIRS + 1]
    if mains and pairs:
        if need_cross:
            cross_fill(counts, cross, scratch)
            if kept:
                for i in range(2 * N_KINDS):
                    row[ROW_CROSS + i] = cross[i]
        else:
            for i in range(2 * N_KINDS):
                cross[i] = row[ROW_CROSS + i]
    # each family's net: w[kind] for the main bets (on a hand with no pair),
    # a[x] and q[y] for the Player and Banker pair bets (x, y: the pair shown)
    mean = second = 0.0
    one = two[0]
    both = two[1]
    pp = stakes[B_PLAYER_PAIR]
    bp = stakes[B_BANKER_PAIR]
    a0 = pp * nets[B_PLAYER_PAIR, 0]
    a1 = pp * nets[B_PLAYER_PAIR, 2]
    q0 = bp * nets[B_BANKER_PAIR, 0]
    q1 = bp * nets[B_BANKER_PAIR, 1]
    if pairs:
        p11 = both
        p10 = one - both
        p00 = 1.0 - 2.0 * one + both
        mean += one * (a1 + q1) + (1.0 - one) * (a0 + q0)
        second += (
            p11 * (a1 + q1) ** 2 + p10 * ((a1 + q0) ** 2 + (a0 + q1) ** 2) + p00 * (a0 + q0) ** 2
        )
    if mains:
        wk = scratch[:N_KINDS]  # the main bets' net on each kind (with no pair)
        for k in range(N_KINDS):
            wk[k] = 0.0
        for b in range(N_BETS):
            x = stakes[b]
            if x != 0.0 and b != B_PLAYER_PAIR and b != B_BANKER_PAIR:
                for k in range(N_KINDS):
                    wk[k] += x * nets[b, 4 * k]
        for k in range(N_KINDS):
            w = wk[k]
            mean += kinds[k] * w
            second += kinds[k] * w * w
            if pairs:
                with_a = cross[k]
                with_q = cross[N_KINDS + k]
                second += 2.0 * w * (with_a * a1 + (kinds[k] - with_a) * a0)
                second += 2.0 * w * (with_q * q1 + (kinds[k] - with_q) * q0)
    return max(second - mean * mean, 0.0)


@njit_plain(inline="always")
def one_bet_variance(b, x, evs, payouts, row, nets):  # type: ignore[no-untyped-def]
    """`stake_variance` of a stake `x` on bet `b` alone, for the hand a
    counter stakes one bet on (its most common): from the hand's EVs `evs`
    where they tell it (a bet that wins one payout or loses: p = (EV + 1) /
    (payout + 1); Player, and Banker at one payout, with the tie's chance
    from the Tie's EV), else from what `row` keeps; -1.0 when neither does.
    `payouts`: `pricing.payout_vector`."""
    ev = evs[b]
    tie = evs[B_TIE]
    if b == B_PLAYER or b == B_BANKER:
        # paid alike on every win of its side (one column of its row), and a
        # push on a tie
        pay = payouts[b * P_ROW + (Q_PLAYER_WINS if b == B_PLAYER else Q_BANKER_WINS)]
        flat = not np.isnan(pay) and payouts[b * P_ROW + Q_TIE] == 0.0
        if flat and not np.isnan(tie) and not np.isnan(ev):
            p_tie = (tie + 1.0) / (payouts[B_TIE * P_ROW + Q_TIE] + 1.0)
            p_win = (ev + 1.0 - p_tie) / (pay + 1.0)  # ev = pay p_win - p_lose
            second = pay * pay * p_win + (1.0 - p_tie - p_win)
            return x * x * max(second - ev * ev, 0.0)
    elif not np.isnan(ev):
        pay = nets[b, _WINS_AT[b]]
        return x * x * max((ev + 1.0) * (pay - ev), 0.0)  # (pay + 1)^2 p (1 - p)
    if row.shape[0] < N_KEPT:
        return -1.0
    if b == B_PLAYER_PAIR or b == B_BANKER_PAIR:
        one = row[ROW_PAIRS]
        if np.isnan(one):
            return -1.0
        spread = x * (nets[b, 3] - nets[b, 0])  # the pair shown, against not
        return spread * spread * one * (1.0 - one)
    if np.isnan(row[ROW_KINDS]):
        return -1.0
    mean = second = 0.0
    for k in range(N_KINDS):
        net = x * nets[b, 4 * k]
        p = row[ROW_KINDS + k]
        mean += p * net
        second += p * net * net
    return max(second - mean * mean, 0.0)


@njit_plain(inline="always")
def single_bet(stakes):  # type: ignore[no-untyped-def]
    """The bet of the only non-zero stake in `stakes`, or -1 (none, or several)."""
    found = -1
    for b in range(N_BETS):
        if stakes[b] != 0.0:
            if found >= 0:
                return -1
            found = b
    return found

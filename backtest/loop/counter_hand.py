"""A counter's work at the table, apart from the session loop's hot path:
the counts brought up to a hand (`count_up`), the exact EVs of the hands
ahead in a shoe (`price_ahead`), and the variance of a hand's stakes for
its composition (`hand_variance`; `stakes_variance` for stakes on several
bets). `price_ahead` and `stakes_variance` run once every several hands,
or only for mixed stakes, so the loop calls them rather than holding their
code: that leaves the registers to the hands every strategy plays.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from backtest.jit.lazy_jit import kernel
from backtest.odds import (
    ev_fill_ahead,
    needs_counts,
    one_bet_variance,
    pair_counts,
    single_bet,
    stake_variance,
)
from strategies.base import N_BETS


@kernel(inline=True, nrt=False)
def count_up(counts, cards, full_counts, counted, shoe_start, k, left, same):  # type: ignore[no-untyped-def]
    """Bring `counts` up to hand k (the cards before it taken out), from the
    shoe's first hand or from the last hand counted, `counted`; returns the
    cards left and the ordered pairs of one rank among them (`pair_counts`),
    kept as the cards come out. The caller then has `counted = k`."""
    if counted < shoe_start:
        for r in range(14):
            counts[r] = full_counts[r]
        left, same = pair_counts(full_counts)
        counted = shoe_start
    for h in range(counted, k):
        # each side's first two cards (slots 0, 1, 3, 4) are always there, in
        # every shoe whose cards are known (a test holds each source to it):
        # no mask for them
        for c in (0, 1, 3, 4):
            r = cards[h, c] & 15
            counts[r] -= 1
            same -= 2 * counts[r]
        left -= 4
        for c in (2, 5):
            # without a branch: whether a side drew a third card is a coin
            # toss to the processor (an empty slot is rank 0 and changes nothing)
            r = cards[h, c] & 15
            m = np.int64(r != 0)
            counts[r] -= m
            same -= 2 * m * counts[r]
            left -= m
    return left, same


@kernel(nrt=False)
def price_ahead(  # type: ignore[no-untyped-def]
    k,
    shared_rows,
    ev_rows,
    ev_done,
    ev_kept,
    ahead,
    ahead_k,
    ahead_lo,
    ahead_hi,
    counts,
    cards,
    hand_no,
    ev_table,
    evs,
    ev_nodes,
    ev_coef,
    ev_work,
):
    """The exact EVs of hand k into `evs`, for the cards not yet seen (`counts`
    brought up to it), with those of the hands after it in its shoe: into
    the table's shared rows (`ev_rows`, marked in `ev_done`), or a lone
    counter's `ahead` rows. Returns the hands `ahead` then holds,
    (ahead_lo, ahead_hi): hands ahead_lo..ahead_hi - 1."""
    rows_k = ev_rows[k:] if shared_rows else ahead
    priced = ev_fill_ahead(
        counts,
        cards,
        hand_no,
        k,
        ev_table,
        rows_k,
        ev_nodes,
        ev_coef,
        ev_work,
        True,
        ev_kept[k:] if shared_rows else ahead_k,
    )
    for b in range(N_BETS):
        evs[b] = rows_k[0, b]
    if shared_rows:
        for h in range(k, k + priced):
            ev_done[h] = True
        return ahead_lo, ahead_hi
    return k, k + priced


class Counted(NamedTuple):
    """How far a counter has counted its shoe's cards: its shoe's first
    hand, the hand `counts` is brought up to, and the cards left and the
    ordered pairs of one rank among them (`count_up`)."""

    shoe_start: int
    counted: int
    left: int
    same: int


@kernel(nrt=False)
def stakes_variance(k, at, row, cards, table, work):  # type: ignore[no-untyped-def]
    """s' C_k s for the stakes `work.var_s` on hand k (`stake_variance`),
    the counts brought up to the hand first where it needs them (from
    `at`, as `count_up`). Returns (the variance, the `Counted` after)."""
    counts, var_s = work.counts, work.var_s
    if needs_counts(var_s, row):
        left, same = count_up(
            counts, cards, table.full_counts, at.counted, at.shoe_start, k, at.left, at.same
        )
        at = Counted(at.shoe_start, k, left, same)
    var = stake_variance(
        var_s, counts, row, table.nets, table.ev_table, work.ev_nodes, work.ev_coef,
        work.ev_work, work.mom,
    )  # fmt: skip
    return var, at


@kernel(inline=True, nrt=False)
def hand_variance(k, one, cc, cents, active, evs, row, cards, table, work, at):  # type: ignore[no-untyped-def]
    """A counter's variance of hand k's net, s' C_k s, for its stakes (`cc`
    on bet `one`, or `cents`) and the hand's composition: from what is kept
    beside its EVs (`row`), and for one bet from the EVs alone, mostly.
    Returns (the variance, the `Counted` after)."""
    var_s = work.var_s
    for b in range(N_BETS):
        var_s[b] = 0.0
    if one >= 0:
        var_s[np.uint64(one)] = cc * 0.01
    else:
        for a in range(active.shape[0]):
            var_s[active[a]] = cents[active[a]] * 0.01
    return _variance_of(k, evs, row, cards, table, work, at)


@kernel(nrt=False)
def cross_variance(k, var_h, one, cc, cents, active, base_cents, evs, row, cards, table, work, at):  # type: ignore[no-untyped-def]
    """A counter's covariance of hand k's net with the baseline seat's, given
    both seats' stakes, for the hand's composition: s_base' C_k s, from the
    variances of the baseline's stakes and of the two seats' stakes together
    ((v(a + b) - v(a) - v(b)) / 2, `var_h` being v(b), this seat's). 0 where
    the baseline staked nothing. Returns (the covariance, the `Counted` after)."""
    var_s = work.var_s
    staked = False
    for b in range(N_BETS):
        staked = staked or base_cents[k, b] > 0
    if not staked:
        return 0.0, at
    for b in range(N_BETS):
        var_s[b] = base_cents[k, b] * 0.01
    v_a, at = _variance_of(k, evs, row, cards, table, work, at)
    for b in range(N_BETS):
        mine = (cc if b == one else 0) if one >= 0 else 0
        var_s[b] = (base_cents[k, b] + mine) * 0.01
    if one < 0:
        for a in range(active.shape[0]):
            b = active[a]
            var_s[b] = (base_cents[k, b] + cents[b]) * 0.01
    v_ab, at = _variance_of(k, evs, row, cards, table, work, at)
    return (v_ab - v_a - var_h) * 0.5, at


@kernel(inline=True, nrt=False)
def _variance_of(k, evs, row, cards, table, work, at):  # type: ignore[no-untyped-def]
    """s' C_k s for the stakes in `work.var_s` (currency, by bet): one bet
    from the EVs where they tell it, else `stakes_variance`."""
    var_s = work.var_s
    alone = single_bet(var_s)
    var_one = (
        one_bet_variance(alone, var_s[alone], evs, table.ev_table, row, table.nets)
        if alone >= 0
        else -1.0
    )
    if var_one >= 0.0:
        return var_one, at
    return stakes_variance(k, at, row, cards, table, work)

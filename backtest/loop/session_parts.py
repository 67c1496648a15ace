"""The session loop's smaller parts, inlined into it (`session_kernel`): a
seat's start (`start_seat`), a stake put where the general rules read it
(`put_stake`), a user's stakes checked (`undeclared`), what a strategy that
learns is told after a hand (`learn`) and one that reads the context
before it (`tell_context`), a hand's row of the ledger (`ledger_row`), and a
session's row of statistics (`end_session`).
"""

from __future__ import annotations

import numpy as np

from backtest.jit.lazy_jit import kernel
from backtest.loop.table_rules import (
    MAX_CENTS,
    S_BANKROLL_STOPS,
    S_BELOW_MIN,
    S_BETS,
    S_CUR_STREAK,
    S_DRAWDOWN,
    S_ENDED,
    S_FINAL,
    S_HANDS,
    S_LARGEST,
    S_LOSING_STREAK,
    S_LOSSES,
    S_MAX_HITS,
    S_NET,
    S_PEAK,
    S_PUSHES,
    S_WAGERED,
    S_WINS,
    short_path_bounds,
)
from strategies import dispatch
from strategies.base import (
    CTX_BANKROLL,
    CTX_HAND,
    CTX_LAST_NET,
    CTX_SESSION_HAND,
    CTX_SHOE,
    N_BETS,
    P_SIDE,
    SEVERAL,
)
from strategies.slots import CTX_INDEX, CTX_SHOE_START


@kernel(inline=True, nrt=False)
def start_seat(p, evs_full, evs, out, cents, stakes, unit_f, side_c, table, fast_c):  # type: ignore[no-untyped-def]
    """The seat's work arrays as its first session finds them: the full
    shoe's EVs, no stakes, its side bets in whole cents (`side_c`), and the
    bounds of the loop's short path for it (`short_path_bounds`)."""
    sides = 0  # side bets the strategy always places (a count: one test a hand)
    for b in range(N_BETS):
        evs[b] = evs_full[b]
        out[b] = 0.0
        cents[b] = 0
        stakes[b] = 0.0
        unit_f[b] = 0.0
        # whole cents, at most 2**52 as `limits` holds the main stakes
        side_c[b] = (
            np.int64(min(np.floor(p[P_SIDE + b] * 100.0 + 1e-6), float(MAX_CENTS)))
            if p[P_SIDE + b] > 0.0
            else 0
        )
        sides += 1 if side_c[b] > 0 else 0
    short_path_bounds(table.min_c, table.max_c, table.offered, table.pairs_need_main, sides, fast_c)


@kernel(inline=True, nrt=False)
def put_stake(out: np.ndarray, pick: int, x: float) -> None:
    """The stake `x` on bet `pick` into `out`, if `pick` is a bet."""
    if 0 <= pick < N_BETS:
        out[pick] = x


@kernel(inline=True, nrt=False)
def undeclared(pick: int, x: float, out: np.ndarray, allowed: np.ndarray) -> bool:
    """Whether a user's decide staked a bet outside `allowed` (its bet
    `pick` with stake x, or with SEVERAL its stakes in `out`)."""
    if pick == SEVERAL:
        for b in range(N_BETS):
            if out[b] != 0.0 and not allowed[b]:
                return True
        return False
    return x != 0.0 and not (0 <= pick < N_BETS and allowed[pick])


@kernel(inline=True, nrt=False)
def tell_context(ctx, bankroll, hand, session_hand, last_net, shoe, index, shoe_start):  # type: ignore[no-untyped-def]
    """What a strategy that reads the context is told before a hand (the
    hand's `index` in the run's columns and its shoe's first's: for a
    plain-Python strategy's View)."""
    ctx[CTX_BANKROLL] = bankroll
    ctx[CTX_HAND] = hand
    ctx[CTX_SESSION_HAND] = session_hand
    ctx[CTX_LAST_NET] = last_net
    ctx[CTX_SHOE] = shoe
    ctx[CTX_INDEX] = index
    ctx[CTX_SHOE_START] = shoe_start


@kernel(inline=True, nrt=False)
def ledger_row(outputs, row, k, cents, one, cc, net, final):  # type: ignore[no-untyped-def]
    """Hand k's row of the ledger: its stakes (`cc` on bet `one`, or `cents`
    when the general rules placed them), its net and the bankroll after it."""
    outputs.led_idx[row] = k
    for b in range(N_BETS):
        outputs.led_cents[row, b] = cents[b] if one < 0 else (cc if b == one else 0)
    outputs.led_net[row] = net
    outputs.led_bank[row] = final


@kernel(inline=True, nrt=False)
def learn(  # type: ignore[no-untyped-def]
    kind, fns, p, s, si, ctx, stakes, unit_f, unit, i, den, the_bet, one, cc, cents, active, net
):
    """A strategy's update after hand i: its stakes (`cc` on bet `one`, or
    `cents` when the general rules placed them) and unit results, in
    currency units; a progression (`the_bet` >= 0) reads its one bet alone.
    Answers the update's answer (0, or RAISED)."""
    if the_bet >= 0:
        ub = np.uint64(the_bet)
        stakes[ub] = cc * 0.01 if one >= 0 else cents[ub] * 0.01
        u = unit[ub, i]
        unit_f[ub] = u / den if u > -(2**62) else 0.0
    else:
        for a in range(active.shape[0]):
            b = active[a]
            if one < 0:
                stakes[b] = cents[b] * 0.01
            else:
                stakes[b] = cc * 0.01 if np.int64(b) == one else 0.0
            u = unit[b, i]
            unit_f[b] = u / den if u > -(2**62) else 0.0
    return dispatch.update_any(kind, fns, p, s, si, ctx, stakes, unit_f, net)


@kernel(inline=True, nrt=False)
def end_session(  # type: ignore[no-untyped-def]
    st,
    wag,
    den,
    evs,
    cards_seen,
    exp_net,
    hands,
    bets,
    final,
    bankroll0,
    peak,
    drawdown,
    longest,
    largest,
    max_hits,
    stops_n,
    ended,
    wins,
    losses,
    cur,
    below_min,
):
    """A session's row of statistics into `st` (the S_* columns), its stakes
    by bet (`wag`, summed in cents) turned to ticks; returns its expected
    net, worked out from the stakes once, unless the EVs change from hand
    to hand (a counter: `exp_net` was summed hand by hand)."""
    wag_total = 0
    for b in range(N_BETS):
        if not cards_seen and wag[b] != 0:
            exp_net += wag[b] * 0.01 * evs[b]
        wag_total += wag[b] * den
        wag[b] *= den
    st[S_HANDS] = hands
    st[S_BETS] = bets
    st[S_WAGERED] = wag_total
    st[S_NET] = final - bankroll0
    st[S_FINAL] = final
    st[S_PEAK] = peak
    st[S_DRAWDOWN] = drawdown
    st[S_LOSING_STREAK] = longest
    st[S_LARGEST] = largest * den
    st[S_MAX_HITS] = max_hits
    st[S_BANKROLL_STOPS] = stops_n
    st[S_ENDED] = ended
    st[S_WINS] = wins
    st[S_LOSSES] = losses
    st[S_PUSHES] = bets - wins - losses
    st[S_CUR_STREAK] = cur
    st[S_BELOW_MIN] = below_min
    return exp_net

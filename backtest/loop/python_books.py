"""What the plain-Python loop (`python_loop`) writes down: the stakes the
general path placed, settled (`book`), a session's statistics in the rows
`session_loop.run_sessions` fills (`write_session`) and the ledger's rows
(`Ledger`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from backtest.loop.table_rules import (
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
)
from strategies.base import N_BETS

if TYPE_CHECKING:
    from backtest.loop.python_counter import Counter


def write_session(
    st: np.ndarray,
    den: int,
    bankroll0: int,
    hands: int,
    wins: int,
    losses: int,
    pushes: int,
    wag: list[int],
    final: int,
    peak: int,
    drawdown: int,
    longest: int,
    largest: int,
    max_hits: int,
    stops: int,
    ended: int,
    cur: int,
    below_min: int,
) -> None:
    """A session's counts, as its hands were played, into its row of the
    stats array (S_*): money in ticks, stakes in cents (`wag` by bet, the
    `largest`), wins, losses and pushes (hands with a stake)."""
    st[S_HANDS], st[S_BETS], st[S_WAGERED], st[S_NET] = (
        hands,
        wins + losses + pushes,
        sum(wag) * den,
        final - bankroll0,
    )
    st[S_FINAL], st[S_PEAK], st[S_DRAWDOWN], st[S_LOSING_STREAK] = final, peak, drawdown, longest
    st[S_LARGEST], st[S_MAX_HITS], st[S_BANKROLL_STOPS], st[S_ENDED] = (
        largest * den,
        max_hits,
        stops,
        ended,
    )
    st[S_WINS], st[S_LOSSES], st[S_PUSHES], st[S_CUR_STREAK] = wins, losses, pushes, cur
    st[S_BELOW_MIN] = below_min


class Ledger:
    """The ledger's rows, kept as the hands are played (the loop appends to
    `i`, `c`, `n` and `b` itself: the hand, the cents placed on each bet, the
    net and the bankroll after) and written into the ledger's arrays at each
    session's end (`flush`)."""

    def __init__(
        self, idx: np.ndarray, cents: np.ndarray, net: np.ndarray, bank: np.ndarray
    ) -> None:
        self.arrays = (idx, cents, net, bank)
        self.rows = 0  # written so far
        self.i: list[int] = []
        self.c: list[list[int]] = []
        self.n: list[int] = []
        self.b: list[int] = []

    def flush(self) -> int:
        """Write the rows kept so far into the ledger's arrays; the rows written."""
        n = len(self.i)
        if n:
            rows = self.rows
            kept: tuple[list[Any], ...] = (self.i, self.c, self.n, self.b)
            for array, rows_kept in zip(self.arrays, kept, strict=True):
                array[rows : rows + n] = rows_kept
                rows_kept.clear()
            self.rows += n
        return self.rows


def book(
    cents: list[int],
    i: int,
    wag: list[int],
    cols: list[list[int] | None],
    unit: np.ndarray,
    evs_l: list[float],
    cov: list[list[float]],
    counter: Counter | None,
    exp_net: float,
    var_net: float,
) -> tuple[int, int, float, float]:
    """Settle the stakes `cents` (by bet) the general path placed on hand
    `i` and count them into `wag`: (the net in ticks, the cents staked, and
    the session's expected net and variance of the net so far, `exp_net`
    and `var_net`, with this hand's added in the loop's order)."""
    net = total = 0
    for b in range(N_BETS):
        c = cents[b]
        if c > 0:
            col = cols[b]
            if col is None:
                col = cols[b] = unit[b].tolist()
            net += c * col[i]
            total += c
            wag[b] += c
            if counter is not None:
                exp_net += c * 0.01 * evs_l[b]
                continue
            for b2 in range(N_BETS):
                c2 = cents[b2]
                if c2 > 0:
                    var_net += (c * 0.01) * (c2 * 0.01) * cov[b][b2]
    if counter is not None and total > 0:
        var_net += counter.variance(i, cents)
    return net, total, exp_net, var_net

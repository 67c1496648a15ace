"""What the plain-Python loop (`python_loop`) writes down: a session's
statistics in the rows `session_loop.run_sessions` fills (`write_session`)
and the ledger's rows (`Ledger`)."""

from __future__ import annotations

from typing import Any

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

"""A card counter's exact EVs and the variance of its stakes in the
plain-Python loop (`python_loop`), worked out as `session_kernel` works them
out: `Counter`."""

from __future__ import annotations

import numpy as np

from backtest import odds
from backtest.loop.inputs import SharedEvs, Table
from strategies.base import N_BETS, View


class Counter:
    """The cards a counting strategy has seen, the EVs it reads before each
    hand and the variance of what it stakes.

    The EVs of a hand are worked out by the first seat to play it, for it
    and the hands after it in its shoe (`odds.ev_fill_ahead`): into the
    table's rows when several seats count (`shared`), else into this
    counter's own. What the strategy sees of them and of the counts is
    read-only (other seats read the rows)."""

    def __init__(
        self, cards: np.ndarray, hand_no: np.ndarray, table: Table, shared: SharedEvs, view: View
    ) -> None:
        self.cards, self.hand_no = cards, hand_no
        self.full_counts = table.full_counts
        self.ev_table, self.nets = table.ev_table, table.nets
        self.rows, self.done, self.deals, self.kept = shared
        self.shared = self.rows.shape[0] != 0
        self.counts = table.full_counts.copy()
        self.evs = table.evs_full.copy()
        self.view = view
        view._evs = _read_only(self.evs)
        view._counts = _read_only(self.counts)
        self.rows_ro = _read_only(self.rows)
        self.tables = odds.ev_work(ahead=True)
        # a lone counter's EVs of hands ahead_lo .. ahead_hi - 1, and what is kept beside them
        self.ahead = odds.ahead_rows(self.tables[2]) if not self.shared else None
        self.ahead_kept = odds.ahead_kept(self.tables[2]) if not self.shared else None
        self.ahead_lo = self.ahead_hi = 0
        self.stakes = np.zeros(N_BETS)  # the stakes whose variance is asked for, in currency
        self.mom = np.zeros(odds.MOMENTS_WORK)

    def new_shoe(self) -> None:
        self.counts[:] = self.full_counts

    def evs_before(self, i: int) -> list[float]:
        """The EVs before hand `i`, as the strategy reads them (worked out if
        no seat has yet)."""
        if not self.shared:
            if not self.ahead_lo <= i < self.ahead_hi:
                self.ahead_hi = i + odds.ev_fill_ahead(
                    self.counts,
                    self.cards,
                    self.hand_no,
                    i,
                    self.ev_table,
                    self.ahead,
                    *self.tables,
                    self.deals,
                    self.ahead_kept,
                )
                self.ahead_lo = i
            self.evs[:] = self.ahead[i - self.ahead_lo]  # type: ignore[index]
        else:
            if not self.done[i]:
                priced = odds.ev_fill_ahead(
                    self.counts,
                    self.cards,
                    self.hand_no,
                    i,
                    self.ev_table,
                    self.rows[i:],
                    *self.tables,
                    self.deals,
                    self.kept[i:],
                )
                self.done[i : i + priced] = True
            self.view._evs = self.rows_ro[i]
        return self.view._evs.tolist()  # type: ignore[no-any-return]

    def one_variance(self, i: int, b: int, cents: int) -> float:
        """The variance of a stake of `cents` on bet `b` alone on hand `i`."""
        self.stakes[:] = 0.0
        self.stakes[b] = cents * 0.01
        return self._variance(i)

    def variance(self, i: int, cents: list[int]) -> float:
        """The variance of the stakes `cents` (by bet) on hand `i`."""
        self.stakes[:] = cents
        self.stakes *= 0.01
        return self._variance(i)

    def _variance(self, i: int) -> float:
        """s' C_h s for the stakes in `self.stakes`, as run_sessions works it
        out (one bet: from the EVs where they tell it)."""
        s = self.stakes
        row = self.kept[i] if self.shared else self.ahead_kept[i - self.ahead_lo]  # type: ignore[index]
        bet = int(odds.single_bet(s))
        if bet >= 0:
            now = self.rows[i] if self.shared else self.evs
            one = float(odds.one_bet_variance(bet, s[bet], now, self.ev_table, row, self.nets))
            if one >= 0.0:
                return one
        return float(
            odds.stake_variance(
                s, self.counts, row, self.nets, self.ev_table, *self.tables, self.mom
            )
        )

    def take_out(self, i: int) -> None:
        """Count the cards of hand `i` as seen."""
        counts = self.counts
        for card in self.cards[i]:
            if card:
                counts[card & 15] -= 1


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view

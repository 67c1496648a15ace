"""The rules' settlement, vectorised over `Hands`.

`unit_results` gives, for every hand and every bet, the net result of one
unit staked, as a whole number of 1/D units where D is the rules' money
denominator (e.g. D = 20 under a 5% commission: a Banker win is 19). The
engine multiplies stakes in cents by these to get exact money; nothing is
rounded. Each entry agrees with `rules.bet_result` (tested hand by hand, at
every preset and at tables drawn from every setting of `Rules`).
"""

from __future__ import annotations

from collections.abc import Collection
from fractions import Fraction

import numpy as np
from numba import njit

from backtest import numba_cache
from backtest.buffers import Buffers
from backtest.hands import BET_NEEDS, Hands
from backtest.rules import Bet, Rules

numba_cache.install()   # before this module's functions are decorated for numba's cache

#: marks a result the recorded shoe cannot give (a needed column is missing)
UNKNOWN = np.iinfo(np.int64).min


def _d(x: Fraction, den: int) -> int:
    return int(x * den)


def unit_results(hands: Hands, rules: Rules, bets: Collection[Bet] | None = None,
                 buffers: Buffers | None = None) -> np.ndarray:
    """(7, n) int64: row b is bet b's net per unit staked on every hand, in
    1/rules.money_denominator.

    One row per bet, so that a loop over the hands that reads one bet streams
    through 8 bytes a hand rather than a 56-byte row of every bet. A bet the
    table does not offer, or one the recorded shoe cannot settle (a needed
    column is missing), is UNKNOWN on every hand.

    `bets`: only these rows are worked out (default: all); the others are
    zero. The engine asks only for the bets its seats can place, and gives
    `buffers` to write in: the rows not asked for are then left as they
    were (whatever a chunk before wrote there), for no one reads them.
    """
    den = rules.money_denominator
    k = hands.known

    def pay(x: Fraction | None) -> int:
        return 0 if x is None else _d(x, den)

    payouts = np.array([den, pay(rules.banker_payout),
                        pay(rules.banker_six_payout if rules.banker_six_payout is not None
                            else rules.banker_payout),
                        0 if rules.banker_three_card_seven_push else pay(rules.banker_payout),
                        pay(rules.tie_payout), pay(rules.pair_payout), pay(rules.dragon7_payout),
                        pay(rules.panda8_payout)], dtype=np.int64)
    wanted = set(Bet) if bets is None else set(bets)
    # per row: 0 not wanted, 1 worked out, 2 UNKNOWN (not offered, or not settleable)
    rows = np.array([0 if b not in wanted else
                     2 if rules.payout(b) is None or missing_for(b, hands, rules) else 1
                     for b in Bet], dtype=np.int8)
    shape = (len(Bet), len(hands))
    out = np.zeros(shape, np.int64) if buffers is None else buffers.empty("unit", shape, np.int64)
    _unit_results(hands.winner, hands.player_total, hands.banker_total, hands.player_pair,
                  hands.banker_pair, hands.player_card_count, hands.banker_card_count, payouts, den,
                  rows, "card_counts" in k and "banker_total" in k, out)
    return out


@njit(cache=True)
def _unit_results(winner: np.ndarray, pt: np.ndarray, bt: np.ndarray, ppair: np.ndarray,
                  bpair: np.ndarray, pn: np.ndarray, bn: np.ndarray, payouts: np.ndarray,
                  den: int, rows: np.ndarray, seven_known: bool, out: np.ndarray) -> None:
    """payouts: player, banker, banker on 6, banker with a three-card 7, tie,
    pair, dragon 7, panda 8 (net per unit, in 1/den). A row at a time, each
    a loop without branches over every hand."""
    lose = -den
    for b in range(7):
        if rows[b] == 0:
            continue
        r = out[b]
        if rows[b] == 2:
            r[:] = UNKNOWN
        elif b == 0:
            for i in range(winner.shape[0]):
                w = winner[i]
                r[i] = den if w == 0 else (0 if w == 2 else lose)
        elif b == 1:
            for i in range(winner.shape[0]):
                w = winner[i]
                seven = seven_known and bn[i] == 3 and bt[i] == 7
                won = payouts[3] if seven else (payouts[2] if bt[i] == 6 else payouts[1])
                r[i] = won if w == 1 else (0 if w == 2 else lose)
        elif b == 2:
            for i in range(winner.shape[0]):
                r[i] = payouts[4] if winner[i] == 2 else lose
        elif b == 3:
            for i in range(winner.shape[0]):
                r[i] = payouts[5] if ppair[i] else lose
        elif b == 4:
            for i in range(winner.shape[0]):
                r[i] = payouts[5] if bpair[i] else lose
        elif b == 5:
            for i in range(winner.shape[0]):
                r[i] = payouts[6] if (seven_known and winner[i] == 1 and bn[i] == 3
                                      and bt[i] == 7) else lose
        else:
            for i in range(winner.shape[0]):
                r[i] = payouts[7] if (winner[i] == 0 and pn[i] == 3 and pt[i] == 8) else lose


def missing_for(bet: Bet, hands: Hands, rules: Rules) -> bool:
    """Whether settling `bet` on these hands needs a column they lack."""
    return bool(missing_columns(bet, hands, rules))


def missing_columns(bet: Bet, hands: Hands, rules: Rules) -> list[str]:
    """The columns settling `bet` under `rules` needs that these hands lack, sorted."""
    needs = set(BET_NEEDS.get(bet, ()))
    if bet is Bet.DRAGON_7:
        needs |= {"card_counts", "banker_total"}
    if bet is Bet.BANKER:
        if rules.banker_six_payout is not None:
            needs.add("banker_total")
        if rules.banker_three_card_seven_push:
            needs |= {"banker_total", "card_counts"}
    return sorted(needs - hands.known)

"""The rules' settlement, vectorised over `Hands`.

`unit_results` gives, for every hand and every bet, the net result of one
unit staked, as a whole number of 1/D units where D is the rules' money
denominator (e.g. D = 20 under a 5% commission: a Banker win is 19). The
engine multiplies stakes in cents by these to get exact money; nothing is
rounded. Each entry agrees with `rules.bet_result` (tested hand by hand).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numba import njit

from backtest.hands import BET_NEEDS, Hands
from backtest.rules import Bet, Rules

#: marks a result the recorded shoe cannot give (a needed column is missing)
UNKNOWN = np.iinfo(np.int64).min


def _d(x: Fraction, den: int) -> int:
    return int(x * den)


def unit_results(hands: Hands, rules: Rules) -> np.ndarray:
    """(7, n) int64: row b is bet b's net per unit staked on every hand, in
    1/rules.money_denominator.

    One row per bet, so that a loop over the hands that reads one bet streams
    through 8 bytes a hand rather than a 56-byte row of every bet. A bet the
    table does not offer, or one the recorded shoe cannot settle (a needed
    column is missing), is UNKNOWN on every hand.
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
    settleable = np.array([rules.payout(b) is not None and not missing_for(b, hands, rules)
                           for b in Bet])
    out = np.empty((len(Bet), len(hands)), dtype=np.int64)
    _unit_results(hands.winner, hands.player_total, hands.banker_total, hands.player_pair,
                  hands.banker_pair, hands.player_cards, hands.banker_cards, payouts, den,
                  settleable, "card_counts" in k and "banker_total" in k, out)
    return out


@njit(cache=True)
def _unit_results(winner: np.ndarray, pt: np.ndarray, bt: np.ndarray, ppair: np.ndarray,
                  bpair: np.ndarray, pn: np.ndarray, bn: np.ndarray, payouts: np.ndarray,
                  den: int, settleable: np.ndarray, seven_known: bool, out: np.ndarray) -> None:
    """payouts: player, banker, banker on 6, banker with a three-card 7, tie,
    pair, dragon 7, panda 8 (net per unit, in 1/den)."""
    for i in range(winner.shape[0]):
        w = winner[i]
        seven = seven_known and w == 1 and bn[i] == 3 and bt[i] == 7
        out[0, i] = den if w == 0 else (0 if w == 2 else -den)
        if w == 1:
            out[1, i] = payouts[3] if seven else (payouts[2] if bt[i] == 6 else payouts[1])
        else:
            out[1, i] = 0 if w == 2 else -den
        out[2, i] = payouts[4] if w == 2 else -den
        out[3, i] = payouts[5] if ppair[i] else -den
        out[4, i] = payouts[5] if bpair[i] else -den
        out[5, i] = payouts[6] if seven else -den
        out[6, i] = payouts[7] if (w == 0 and pn[i] == 3 and pt[i] == 8) else -den
        for b in range(7):
            if not settleable[b]:
                out[b, i] = UNKNOWN


def missing_for(bet: Bet, hands: Hands, rules: Rules) -> bool:
    """Whether settling `bet` on these hands needs a column they lack."""
    needs = set(BET_NEEDS.get(bet, ()))
    if bet is Bet.DRAGON_7:
        needs |= {"card_counts", "banker_total"}
    if bet is Bet.BANKER:
        if rules.banker_six_payout is not None:
            needs.add("banker_total")
        if rules.banker_three_card_seven_push:
            needs |= {"banker_total", "card_counts"}
    return not needs <= hands.known

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

from backtest.hands import BET_NEEDS, Hands
from backtest.rules import Bet, Rules

#: marks a result the recorded shoe cannot give (a needed column is missing)
UNKNOWN = np.iinfo(np.int64).min


def _d(x: Fraction, den: int) -> int:
    return int(x * den)


def unit_results(hands: Hands, rules: Rules) -> np.ndarray:
    """(n, 7) int64: each bet's net per unit staked, in 1/rules.money_denominator."""
    den = rules.money_denominator
    n = len(hands)
    out = np.full((n, len(Bet)), UNKNOWN, dtype=np.int64)
    w = hands.winner
    player, banker, tie = w == 0, w == 1, w == 2
    k = hands.known
    counts_known = "card_counts" in k

    out[:, Bet.PLAYER.code] = np.where(player, den, np.where(tie, 0, -den))
    out[:, Bet.TIE.code] = np.where(tie, _d(rules.tie_payout, den), -den)

    bank = np.where(banker, _d(rules.banker_payout, den), np.where(tie, 0, -den))
    can_banker = True
    if rules.banker_six_payout is not None:
        if "banker_total" in k:
            bank = np.where(banker & (hands.banker_total == 6), _d(rules.banker_six_payout, den), bank)
        else:
            can_banker = False
    banker_three_seven = None
    if counts_known and "banker_total" in k:
        banker_three_seven = banker & (hands.banker_cards == 3) & (hands.banker_total == 7)
    if rules.banker_three_card_seven_push:
        if banker_three_seven is not None:
            bank = np.where(banker_three_seven, 0, bank)
        else:
            can_banker = False
    if can_banker:
        out[:, Bet.BANKER.code] = bank

    if rules.pair_payout is not None:
        pay = _d(rules.pair_payout, den)
        if "player_pair" in k:
            out[:, Bet.PLAYER_PAIR.code] = np.where(hands.player_pair, pay, -den)
        if "banker_pair" in k:
            out[:, Bet.BANKER_PAIR.code] = np.where(hands.banker_pair, pay, -den)
    if rules.dragon7_payout is not None and banker_three_seven is not None:
        out[:, Bet.DRAGON_7.code] = np.where(banker_three_seven, _d(rules.dragon7_payout, den), -den)
    if rules.panda8_payout is not None and counts_known and "player_total" in k:
        panda = player & (hands.player_cards == 3) & (hands.player_total == 8)
        out[:, Bet.PANDA_8.code] = np.where(panda, _d(rules.panda8_payout, den), -den)
    # a bet the table does not offer is never settled
    for bet in Bet:
        if rules.payout(bet) is None:
            out[:, bet.code] = UNKNOWN
    return out


def missing_for(bet: Bet, hands: Hands, rules: Rules) -> bool:
    """Whether settling `bet` on these hands needs a column they lack."""
    needs = set(BET_NEEDS.get(bet, ()))
    if bet is Bet.BANKER:
        if rules.banker_six_payout is not None:
            needs.add("banker_total")
        if rules.banker_three_card_seven_push:
            needs |= {"banker_total", "card_counts"}
    return not needs <= hands.known

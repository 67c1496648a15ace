"""The compiled path's payout matrix: each bet priced from its settlement."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

from backtest import odds
from backtest.core.rules import PRESETS, Bet, Rules
from backtest.odds import events

#: tables beyond the presets: special payouts the presets never combine
CUSTOM = {
    "commission with Dragon 7 and Panda 8": dataclasses.replace(
        Rules.preset("commission"), dragon7_payout=Fraction(40), panda8_payout=Fraction(25)
    ),
    "ez with a 6 paying half": dataclasses.replace(
        Rules.preset("ez"), banker_six_payout=Fraction(1, 2)
    ),
    "Tie 9 to 1, pairs 25 to 1": dataclasses.replace(
        Rules.preset("no-commission"), tie_payout=Fraction(9), pair_payout=Fraction(25)
    ),
}
TABLES = {**PRESETS, **CUSTOM}
SHOES = ("", "5 5 5 5 6 6 7 7", "K K K Q Q J A A 2 3 8 8 9 9 9")


@pytest.mark.parametrize("name", TABLES)
def test_every_offered_bet_is_priced_as_the_exact_odds_price_it(name: str) -> None:
    rules = TABLES[name]
    payouts = odds.payout_vector(rules)
    for remove in SHOES:
        counts = odds.composition(6, remove=remove)
        got = odds.ev_array(counts, payouts)
        exact = odds.exact_odds(counts, rules)
        for bet in Bet:
            if rules.payout(bet) is None:
                assert math.isnan(got[bet.code]), bet
            else:
                assert got[bet.code] == pytest.approx(float(exact.bet(bet).ev), rel=1e-13), bet


def test_a_table_counts_only_the_special_wins_a_bet_pays_apart() -> None:
    """A tie is every other deal; a Banker 6 is counted only where it is paid
    apart from a plain Banker win, a three-card 7 where the Banker pushes
    on it or Dragon 7 pays it, a Player three-card 8 where Panda 8 pays it."""
    player_banker = 0b11
    assert odds.wanted_events(odds.payout_vector(PRESETS["commission"])) == player_banker
    assert odds.wanted_events(odds.payout_vector(PRESETS["no-commission"])) == 0b1011
    assert odds.wanted_events(odds.payout_vector(PRESETS["ez"])) == 0b110011


def test_a_side_paid_alike_is_read_as_one_chance() -> None:
    commission = odds.payout_vector(PRESETS["commission"]).reshape(odds.PAYOUT_SHAPE)
    banker = commission[Bet.BANKER.code]
    assert banker[events.Q_BANKER_WINS] == 0.95
    assert np.isnan(banker[events.Q_BANKER_PLAIN : events.Q_PLAYER_WINS]).all()
    assert banker[events.P_LOSS] == events.Q_PLAYER_WINS  # it loses on every Player win
    tie = commission[Bet.TIE.code]
    assert tie[events.Q_TIE] == 8 and tie[events.P_LOSS] == -1  # loses on every other hand
    ez = odds.payout_vector(PRESETS["ez"]).reshape(odds.PAYOUT_SHAPE)[Bet.BANKER.code]
    assert list(ez[: events.Q_PLAYER_PLAIN]) == [1.0, 1.0, 0.0]  # the three-card 7 pushes


def test_a_bet_on_both_pairs_is_priced_from_their_joint_chance() -> None:
    """No table offers a bet on either pair; a row that reads both pairs
    (here in the Player pair's place: 5 to 1 on either) is priced from the
    chance of both, as the exact count of either pair gives it."""
    rules = PRESETS["commission"]
    payouts = odds.payout_vector(rules)
    row = payouts.reshape(odds.PAYOUT_SHAPE)[Bet.PLAYER_PAIR.code]  # a view: the vector's row
    row[:] = np.nan
    row[[events.Q_BOTH_PAIRS, events.Q_PLAYER_PAIR_ONLY, events.Q_BANKER_PAIR_ONLY]] = 5.0
    row[events.P_LOSS] = -1
    row[events.P_FAMILY] = events.F_PAIRS
    payouts.reshape(odds.PAYOUT_SHAPE)[events.P_WANTED, 1] = 1.0  # a bet on both pairs
    for remove in SHOES:
        counts = odds.composition(6, remove=remove)
        table = odds.outcome_table(counts)
        either = table.probability(odds.Event.EITHER_PAIR)
        got = odds.ev_array(counts, payouts)[Bet.PLAYER_PAIR.code]
        assert got == pytest.approx(float(6 * either - 1), rel=1e-13)
        # the row needs the deals' pass: the pair-only pass leaves it out
        alone = np.full(odds.N_BETS, np.nan)
        odds.ev_fill(counts, payouts, alone, *odds.ev_work(), False)
        assert math.isnan(alone[Bet.PLAYER_PAIR.code])

"""The vectorised settlement (`payouts.unit_results`) against the rules core's
own `rules.bet_result`, hand by hand, at every preset table."""

from __future__ import annotations

from pathlib import Path

import pytest

from backtest import payouts
from backtest.recorded import read_shoes
from backtest.rules import PRESETS, Bet, bet_result
from backtest.shoe import ShoeSpec, generate_hands

ROADS = Path(__file__).resolve().parent.parent / "data" / "roads-8deck-seed1.txt"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_unit_results_are_the_rules_settlement_hand_by_hand(preset: str) -> None:
    rules = PRESETS[preset]
    hands = generate_hands(ShoeSpec(decks=8), 6, seed=11)
    unit = payouts.unit_results(hands, rules)
    den = rules.money_denominator
    assert unit.shape == (len(Bet), len(hands)) and unit.flags.c_contiguous
    for i in range(len(hands)):
        record = hands.record(i)
        for bet in Bet:
            expected = (payouts.UNKNOWN if rules.payout(bet) is None
                        else bet_result(bet, record, rules) * den)
            assert unit[bet.code, i] == expected, (preset, i, bet)


def test_an_outcome_level_shoe_settles_only_what_it_records() -> None:
    hands = read_shoes(ROADS)
    rules = PRESETS["commission"]
    unit = payouts.unit_results(hands, rules)
    for i in range(len(hands)):
        record = hands.record(i)
        for bet in (Bet.PLAYER, Bet.BANKER, Bet.TIE):
            assert unit[bet.code, i] == bet_result(bet, record, rules) * rules.money_denominator
    assert (unit[Bet.PLAYER_PAIR.code] == payouts.UNKNOWN).all()
    assert (unit[Bet.BANKER_PAIR.code] == payouts.UNKNOWN).all()


@pytest.mark.parametrize("preset", ["commission", "ez"])
def test_asked_bets_only_are_worked_out_and_the_rest_stay_zero(preset: str) -> None:
    rules = PRESETS[preset]
    hands = generate_hands(ShoeSpec(decks=8), 20, seed=5)
    full = payouts.unit_results(hands, rules)
    for asked in ({Bet.BANKER}, {Bet.PLAYER, Bet.TIE}, {Bet.DRAGON_7, Bet.PANDA_8},
                  {Bet.PLAYER_PAIR, Bet.BANKER_PAIR}, set()):
        part = payouts.unit_results(hands, rules, asked)
        for bet in Bet:
            row = part[bet.code]
            if bet in asked:
                assert (row == full[bet.code]).all(), (preset, bet)
            else:
                assert not row.any(), (preset, bet)

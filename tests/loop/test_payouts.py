"""The vectorised settlement (`payouts.unit_results`) against the rules core's
own `settlement.bet_result`, hand by hand, at every preset table and at tables
Hypothesis draws from every setting `Rules` accepts."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from backtest.core.fields import Check
from backtest.core.rules import MAX_PAYOUT, MAX_PAYOUT_DENOMINATOR, PRESETS, Bet, Rules
from backtest.core.settlement import bet_result
from backtest.jit.lazy_jit import interpreted
from backtest.loop import payouts
from backtest.shoes.recorded import read_shoes
from backtest.shoes.shoe import ShoeSpec, generate_hands

ROADS = Path(__file__).resolve().parents[2] / "data" / "roads-8deck-seed1.txt"


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
            expected = (
                payouts.UNKNOWN
                if rules.payout(bet) is None
                else bet_result(bet, record, rules) * den
            )
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
    for asked in (
        {Bet.BANKER},
        {Bet.PLAYER, Bet.TIE},
        {Bet.DRAGON_7, Bet.PANDA_8},
        {Bet.PLAYER_PAIR, Bet.BANKER_PAIR},
        set(),
    ):
        part = payouts.unit_results(hands, rules, asked)
        for bet in Bet:
            row = part[bet.code]
            if bet in asked:
                assert (row == full[bet.code]).all(), (preset, bet)
            else:
                assert not row.any(), (preset, bet)


# --- any table the rules accept, not only the presets ------------------------------------------

#: payouts real tables use, and the bounds `Rules` accepts (1/1000 to 1000 to 1)
COMMON_PAYOUTS = tuple(
    Fraction(x)
    for x in (
        "19/20",
        "39/40",
        "1",
        "1/2",
        "8",
        "9",
        "11",
        "25",
        "40",
        "1/1000",
        "1000",
        "999/1000",
    )
)


def payouts_strategy() -> st.SearchStrategy[Fraction]:
    """A payout `Rules` accepts: positive, at most MAX_PAYOUT, a denominator of
    at most MAX_PAYOUT_DENOMINATOR."""
    any_allowed = st.integers(1, MAX_PAYOUT_DENOMINATOR).flatmap(
        lambda d: st.integers(1, MAX_PAYOUT * d).map(lambda n: Fraction(n, d))
    )
    return st.one_of(st.sampled_from(COMMON_PAYOUTS), any_allowed)


def drawn(check: Check) -> st.SearchStrategy[Any]:
    """Any value a setting's declared check takes (boxes up to 5)."""
    if check.kind == "payout":
        return st.none() | payouts_strategy() if check.optional else payouts_strategy()
    if check.kind == "flag":
        return st.booleans()
    assert check.kind == "whole" and check.minimum is not None and check.maximum is not None
    return st.integers(int(check.minimum), min(int(check.maximum), 5))


@st.composite
def any_rules(draw: st.DrawFn) -> Rules:
    """A table drawn from every setting `Rules` declares, as its check takes it."""
    rules = Rules(
        name="drawn",
        **{
            f.name: draw(drawn(f.metadata["check"]))
            for f in dataclasses.fields(Rules)
            if "check" in f.metadata and f.name != "name"
        },
    )
    # the table is int64: a rules whose least common denominator is too large
    # for it is refused before a run (seats.check_money), never settled
    assume(rules.money_denominator * MAX_PAYOUT < 2**62)
    return rules


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=any_rules(), decks=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
def test_unit_results_are_the_rules_settlement_of_a_unit_stake_at_any_table(
    rules: Rules, decks: int, seed: int
) -> None:
    hands = generate_hands(ShoeSpec(decks=decks), 2, seed=seed)
    unit = payouts.unit_results(hands, rules)
    den = rules.money_denominator
    for i in range(len(hands)):
        record = hands.record(i)
        for bet in Bet:
            if rules.payout(bet) is None:
                assert unit[bet.code, i] == payouts.UNKNOWN, (rules, i, bet)
                continue
            expected = bet_result(bet, record, rules) * den
            assert expected.denominator == 1, (rules, bet)  # whole 1/D units: nothing rounded
            assert unit[bet.code, i] == expected.numerator, (rules, i, bet, record)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_unit_results_in_python_are_the_compiled_ones(preset: str) -> None:
    hands = generate_hands(ShoeSpec(decks=8), 20, seed=5)
    rules = PRESETS[preset]
    with interpreted():
        plain = payouts.unit_results(hands, rules)
    assert plain.tolist() == payouts.unit_results(hands, rules).tolist()

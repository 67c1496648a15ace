"""The settlement spec: each preset's terms as the rules state them, and
every form derived from it (one hand, every hand, the exact counts) agreeing."""

from __future__ import annotations

from fractions import Fraction

import pytest

from backtest import odds
from backtest.core import settlement
from backtest.core.rules import PRESETS, Bet, Rules
from backtest.core.settlement import E, Term

F = Fraction


def test_the_presets_settle_as_the_rules_state() -> None:
    """RULES.md: Banker pays 0.95 with commission; half on a winning 6 without
    it; EZ pushes a Banker win with a three-card 7 and offers Dragon 7 (40 to
    1) and Panda 8 (25 to 1); a tie pushes Player and Banker everywhere."""
    commission, no_commission, ez = (Rules.preset(n) for n in ("commission", "no-commission", "ez"))
    assert settlement.terms(Bet.BANKER, commission) == (
        Term(E.TIE, F(0)),
        Term(E.PLAYER_WINS, F(-1)),
        Term(E.BANKER_WINS, F(19, 20)),
    )
    assert settlement.terms(Bet.BANKER, no_commission)[2:] == (
        Term(E.BANKER_SIX, F(1, 2), "6 pays 0.5"),
        Term(E.BANKER_WINS, F(1)),
    )
    assert settlement.terms(Bet.BANKER, ez)[2:] == (
        Term(E.BANKER_THREE_CARD_SEVEN, F(0), "3-card 7 pushes"),
        Term(E.BANKER_WINS, F(1)),
    )
    assert settlement.terms(Bet.DRAGON_7, ez) == (Term(E.BANKER_THREE_CARD_SEVEN, F(40)),)
    assert settlement.terms(Bet.PANDA_8, ez) == (Term(E.PLAYER_THREE_CARD_EIGHT, F(25)),)
    assert settlement.terms(Bet.DRAGON_7, commission) == ()
    for name in PRESETS:
        rules = Rules.preset(name)
        assert settlement.terms(Bet.PLAYER, rules) == (Term(E.TIE, F(0)), Term(E.PLAYER_WINS, F(1)))
    assert settlement.payout_text(Bet.BANKER, no_commission) == "1 to 1 (6 pays 0.5)"
    assert settlement.payout_text(Bet.BANKER, ez) == "1 to 1 (3-card 7 pushes)"
    assert settlement.payout_text(Bet.DRAGON_7, commission) == "not offered"


def test_what_a_bet_needs_follows_the_rules() -> None:
    assert settlement.needs(Bet.BANKER, Rules.preset("commission")) == ()
    assert settlement.needs(Bet.BANKER, Rules.preset("no-commission")) == ("banker_total",)
    assert settlement.needs(Bet.BANKER, Rules.preset("ez")) == ("card_counts", "banker_total")
    # at any table: what the bet itself reads
    assert settlement.needs(Bet.DRAGON_7) == ("card_counts", "banker_total")
    assert settlement.needs(Bet.PLAYER_PAIR) == ("player_pair",)


@pytest.mark.parametrize("name", PRESETS)
def test_the_exact_counts_split_every_deal_once(name: str) -> None:
    """The kinds of hand an exact count tells apart cover every ordered deal
    once for every bet; each kind's net is the one-hand settlement's."""
    rules = Rules.preset(name)
    table = odds.outcome_table(odds.composition(1))
    for bet in rules.offered_bets():
        outcomes = odds.bet_outcomes(bet, table, rules)
        assert sum(n for _, n in outcomes) == table.combinations, bet
        assert all(n > 0 for _, n in outcomes)


def test_every_event_mask_settles_as_the_first_term_that_matches() -> None:
    """`unit_table` by a second reading: walk the terms by hand for every mask."""
    rules = Rules.preset("ez")
    den = rules.money_denominator
    table = settlement.unit_table(rules)
    for bet in Bet:
        spec = settlement.terms(bet, rules)
        for mask in range(1 << settlement.N_EVENTS):
            expected = F(-1)
            for t in spec:
                if mask >> int(t.event) & 1:
                    expected = t.net
                    break
            assert table[bet.code][mask] == (expected * den if spec else 0), (bet, mask)

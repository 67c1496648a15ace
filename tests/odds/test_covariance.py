"""The bets' covariance on the next hand, exact for every two bets.

The oracle below shares no code with `backtest.odds`: it walks the tree of
ordered ranks one card at a time until the rules core's `deal_hand` has a
whole hand, weights each hand by the ways to draw its cards (and the six-card
draws' unused cards), and settles every bet through `settlement.bet_result`.
"""

from __future__ import annotations

import doctest
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest

from backtest import odds
from backtest.core.cards import full_shoe_counts, make_card
from backtest.core.errors import RulesError
from backtest.core.rules import Bet, Hand, Rules, deal_hand
from backtest.core.settlement import bet_result
from backtest.odds import Event, covariance

COMMISSION = Rules.preset("commission")
NO_COMMISSION = Rules.preset("no-commission")
EZ = Rules.preset("ez")
#: every bet, a 6-pays-half Banker, a three-card 7 that pushes, Tie at 9 to 1
EVERYTHING = Rules(
    name="everything",
    banker_six_payout=Fraction(1, 2),
    banker_three_card_seven_push=True,
    tie_payout=Fraction(9),
    dragon7_payout=Fraction(40),
    panda8_payout=Fraction(25),
)
ALL_RULES = (COMMISSION, NO_COMMISSION, EZ, EVERYTHING)


def _counts(ranks: dict[str, int]) -> tuple[int, ...]:
    names = "A 2 3 4 5 6 7 8 9 T J Q K".split()
    out = [0] * 14
    for name, n in ranks.items():
        out[names.index(name) + 1] = n
    return tuple(out)


#: small shoes, each with ten-value cards of several ranks (K-Q is no pair)
SMALL = (
    _counts({"A": 2, "3": 1, "5": 2, "6": 1, "7": 2, "8": 1, "9": 1, "T": 2, "J": 1, "K": 2}),
    _counts({"T": 3, "K": 2, "4": 2, "6": 2, "8": 1, "3": 1}),
    _counts({"T": 2, "J": 2, "Q": 1, "K": 3, "A": 1, "5": 1, "9": 1, "2": 1}),
)


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


@lru_cache(maxsize=8)
def oracle_hands(counts: tuple[int, ...]) -> dict[Hand, int]:
    """Every hand the shoe deals, with the ordered six-card draws that deal
    it; hands that settle every bet alike (the same totals, cards and pairs)
    are kept as one of them."""
    total = sum(counts)
    out: dict[Hand, int] = {}
    seen: dict[tuple[object, ...], Hand] = {}

    def walk(prefix: list[int], left: list[int], ways: int) -> None:
        if len(prefix) >= 4:
            try:
                hand = deal_hand([make_card(r) for r in prefix])
            except RulesError:
                pass
            else:
                unused = _falling(total - len(prefix), 6 - len(prefix))
                kind = (
                    hand.player_total,
                    hand.banker_total,
                    hand.player_card_count,
                    hand.banker_card_count,
                    hand.player_pair,
                    hand.banker_pair,
                )
                one = seen.setdefault(kind, hand)
                out[one] = out.get(one, 0) + ways * unused
                return
        for rank in range(1, 14):
            if left[rank]:
                w = ways * left[rank]
                left[rank] -= 1
                prefix.append(rank)
                walk(prefix, left, w)
                prefix.pop()
                left[rank] += 1

    walk([], list(counts), 1)
    return out


def oracle_covariance(counts: tuple[int, ...], rules: Rules) -> list[list[Fraction]]:
    hands = oracle_hands(counts)
    draws = _falling(sum(counts), 6)
    assert sum(hands.values()) == draws
    offered = [bool(rules.payout(b) is not None) for b in Bet]
    nets = {
        hand: [bet_result(b, hand, rules) if offered[b.code] else Fraction(0) for b in Bet]
        for hand in hands
    }
    mean = [sum(w * nets[h][i] for h, w in hands.items()) / draws for i in range(7)]
    return [
        [
            sum(w * nets[h][i] * nets[h][j] for h, w in hands.items()) / draws - mean[i] * mean[j]
            for j in range(7)
        ]
        for i in range(7)
    ]


@pytest.mark.parametrize("counts", SMALL)
def test_the_covariance_is_the_oracle_s_to_the_last_fraction(counts: tuple[int, ...]) -> None:
    for rules in ALL_RULES:
        got = odds.unit_covariance_exact(np.array(counts), rules)
        want = oracle_covariance(counts, rules)
        assert [list(row) for row in got] == want, rules.name
        # the pair bets against the main bets are not uncorrelated
        if rules.payout(Bet.PLAYER_PAIR) is not None:
            assert got[Bet.PLAYER_PAIR.code][Bet.PLAYER.code] != 0


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_the_covariance_is_symmetric_positive_semidefinite(rules: Rules) -> None:
    for counts in (
        full_shoe_counts(8),
        full_shoe_counts(1),
        odds.composition(6, remove="T T T J J K 5 5 5 5 9"),
        np.array(SMALL[1]),
    ):
        exact = odds.unit_covariance_exact(counts, rules)
        assert all(exact[i][j] == exact[j][i] for i in range(7) for j in range(7))
        cov = odds.unit_covariance(counts, rules)
        scale = float(np.abs(cov).max())
        assert np.linalg.eigvalsh(cov).min() >= -1e-12 * scale, rules.name
        # a bet the table does not offer has no row
        for b in Bet:
            if rules.payout(b) is None:
                assert not cov[b.code].any()


def test_the_joint_counts_add_up_to_the_outcome_table() -> None:
    """Summed over the pairs, the joint counts are the winner's kinds; summed
    over the kinds, they are the pair counts."""
    table = odds.outcome_table(odds.composition(8, remove="K K Q 7"))
    j, e = table.joint, table.counts
    assert sum(j) == table.combinations
    kinds = [sum(j[4 * k : 4 * k + 4]) for k in range(6)]
    assert kinds[0] == e[Event.PLAYER_THREE_CARD_EIGHT]
    assert kinds[0] + kinds[1] == e[Event.PLAYER]
    assert kinds[2] == e[Event.BANKER_SIX]
    assert sum(kinds[2:5]) == e[Event.BANKER]
    assert kinds[5] == e[Event.TIE]
    assert sum(j[4 * k + 2] + j[4 * k + 3] for k in range(6)) == e[Event.PLAYER_PAIR]
    assert sum(j[4 * k + 1] + j[4 * k + 3] for k in range(6)) == e[Event.BANKER_PAIR]
    assert sum(j[4 * k + 3] for k in range(6)) == e[Event.BOTH_PAIRS]


def test_module_examples() -> None:
    assert doctest.testmod(covariance).failed == 0

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
from backtest.odds.events import ROW_CROSS, ROW_KINDS, ROW_PAIRS
from backtest.shoes.shoe import ShoeSpec, generate_hands

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


# --- one hand's variance for its composition, compiled ---------------------------------------

#: stakes on (Player, Banker, Tie, Player Pair, Banker Pair, Dragon 7, Panda 8)
STAKES = (
    (10, 0, 0, 0, 0, 0, 0),
    (0, 25, 0, 0, 0, 0, 0),
    (0, 10, 5, 0, 0, 0, 0),
    (0, 0, 0, 10, 0, 0, 0),
    (0, 0, 0, 10, 3, 0, 0),
    (10, 0, 0, 10, 0, 0, 0),
    (0, 10, 1, 2, 3, 4, 5),
)


def _quadratic(
    cov: list[list[Fraction]] | tuple[tuple[Fraction, ...], ...], s: np.ndarray
) -> float:
    x = [Fraction(float(v)) for v in s]
    return float(sum(x[i] * cov[i][j] * x[j] for i in range(7) for j in range(7)))


def _variance(counts: np.ndarray, stakes: np.ndarray, rules: Rules, row: np.ndarray) -> float:
    nodes, coef, work = odds.ev_work(ahead=True)
    nets = odds.joint_nets_array(rules)
    return odds.stake_variance(
        stakes,
        counts,
        row,
        nets,
        odds.payout_vector(rules),
        nodes,
        coef,
        work,
        np.zeros(odds.MOMENTS_WORK),
    )


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_a_hands_variance_is_the_oracle_s(rules: Rules) -> None:
    """s' C s for the composition, from the rank counts alone, against the
    oracle's covariance on small shoes and the exact covariance of 8-deck
    shoes with cards out."""
    offered = np.array([rules.payout(b) is not None for b in Bet])
    shoes = [(np.array(c), oracle_covariance(c, rules)) for c in SMALL[1:]]
    for removed in ("", "T T J 5 5 6 7 8 9 A 2 3", "K K K K Q Q Q J 9 9 8 8 8 8 2"):
        counts = odds.composition(8, remove=removed or None)
        shoes.append((counts, odds.unit_covariance_exact(counts, rules)))
    for counts, cov in shoes:
        for s in STAKES:
            stakes = np.array(s, float) * offered
            want = _quadratic(cov, stakes)
            got = _variance(counts, stakes, rules, np.zeros(0))
            assert got == pytest.approx(want, rel=1e-12), (rules.name, s)
        # one bet alone, from the hand's EVs: every bet that wins one payout,
        # Player, and Banker at a table that pays its wins alike
        evs = odds.ev_array(np.asarray(counts, np.int64), odds.payout_vector(rules))
        for b in np.flatnonzero(offered):
            stakes = np.zeros(7)
            stakes[b] = 10.0
            got = odds.one_bet_variance(
                int(b),
                10.0,
                evs,
                odds.payout_vector(rules),
                np.zeros(0),
                odds.joint_nets_array(rules),
            )
            flat_banker = rules.banker_six_payout is None and not rules.banker_three_card_seven_push
            if b != Bet.BANKER.code or flat_banker:
                assert got == pytest.approx(_quadratic(cov, stakes), rel=1e-11), (rules.name, b)
            else:
                assert got == -1.0


def test_a_hands_variance_reads_the_chances_kept_beside_its_evs() -> None:
    """The chances `ev_fill_ahead` keeps in each row (the winner's kinds,
    the pairs) give the same variance as counting them again, for each hand
    ahead; the kinds with each pair are worked out for the first hand that
    stakes a pair beside a main bet, and kept in the row for the next."""
    rules = EVERYTHING
    hands = generate_hands(ShoeSpec(decks=8, cut_card=14, burn=False), 1, seed=4)
    rows = np.zeros((len(hands.hand), odds.N_BETS))
    kept = np.zeros((len(hands.hand), odds.N_KEPT))
    nodes, coef, work = odds.ev_work(ahead=True)
    kinds, pairs, cross = slice(ROW_KINDS, ROW_PAIRS), slice(ROW_PAIRS, ROW_CROSS), ROW_CROSS
    k = 0
    while k < 40:
        counts = odds.remove_cards(odds.composition(8), _dealt(hands.cards[:k]))
        m = odds.ev_fill_ahead(
            counts,
            hands.cards,
            hands.hand,
            k,
            odds.payout_vector(rules),
            rows[k:],
            nodes,
            coef,
            work,
            True,
            kept[k:],
        )
        for h in range(k, k + m):
            here = odds.remove_cards(odds.composition(8), _dealt(hands.cards[:h]))
            assert kept[h, kinds].sum() == pytest.approx(1.0, abs=1e-15)
            assert not np.isnan(kept[h, pairs]).any() and np.isnan(kept[h, cross:]).all()
            for s in STAKES:
                stakes = np.array(s, float)
                counted = _variance(here, stakes, rules, np.zeros(0))
                assert _variance(here, stakes, rules, kept[h]) == pytest.approx(counted, rel=1e-12)
                # read again, from what the row keeps now
                assert not odds.needs_counts(stakes, kept[h])
                assert _variance(np.zeros(14, np.int64), stakes, rules, kept[h]) == pytest.approx(
                    counted, rel=1e-12
                )
            # one bet alone, from the EVs or the row
            nets = odds.joint_nets_array(rules)
            payouts = odds.payout_vector(rules)
            nothing = np.full(odds.N_BETS, np.nan)
            for b in range(7):
                stakes = np.zeros(7)
                stakes[b] = 25.0
                want = _variance(here, stakes, rules, np.zeros(0))
                for evs, row in ((rows[h], kept[h]), (rows[h], np.zeros(0)), (nothing, kept[h])):
                    got = odds.one_bet_variance(b, 25.0, evs, payouts, row, nets)
                    if got != -1.0:  # Banker at a 6-pays-half table: not from the EVs alone
                        assert got == pytest.approx(want, rel=1e-11), (b, row.shape)
                    else:
                        assert b == 1 and row.shape == (0,)
            # a row that keeps nothing: everything is counted
            empty = np.full(odds.N_KEPT, np.nan)
            assert odds.one_bet_variance(1, 25.0, nothing, payouts, empty, nets) == -1.0
            for s in STAKES:
                stakes = np.array(s, float)
                assert odds.needs_counts(stakes, empty)
                assert _variance(here, stakes, rules, empty) == pytest.approx(
                    _variance(here, stakes, rules, kept[h]), rel=1e-12
                )
        k += m


def _dealt(cards: np.ndarray) -> list[int]:
    return [int(c) for c in cards.ravel() if c]

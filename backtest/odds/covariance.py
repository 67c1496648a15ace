"""The covariance of the bets' unit results on the next hand, exact.

Every bet's net on a hand is read from what the hand shows: the winner's
kind (`settlement.WINNER_ATOMS`) and the two pairs. The outcome table counts
the hands of each kind with each state of the pairs jointly
(`OutcomeTable.joint`), so the second moments of any two bets, a pair bet
against a main bet included, are sums over those `N_JOINT` kinds of hand,
weighted by their nets (`joint_nets`).

>>> from backtest.odds import composition
>>> cov = unit_covariance(composition(8), Rules.preset("no-commission"))
>>> round(float(cov[Bet.PLAYER_PAIR.code, Bet.PLAYER.code]), 6)
-0.101854
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

import numpy as np

from backtest.core import settlement
from backtest.core.rules import Bet, Rules
from backtest.odds.compositions import check_counts
from backtest.odds.deals import N_JOINT
from backtest.odds.exact import outcome_table_of


@lru_cache(maxsize=64)
def joint_nets(rules: Rules) -> tuple[tuple[Fraction, ...], ...]:
    """For each bet (in `Bet` order), its net per unit on each of the
    `N_JOINT` kinds of hand of `OutcomeTable.joint` (zeros for a bet the
    table does not offer), from the settlement's terms."""
    out = []
    for bet in Bet:
        if not settlement.terms(bet, rules):
            out.append((Fraction(0),) * N_JOINT)
            continue
        row = []
        for shown, _, _ in settlement.WINNER_ATOMS:
            for pp in (False, True):
                for bp in (False, True):
                    events = set(shown)
                    events |= {settlement.E.PLAYER_PAIR} if pp else set()
                    events |= {settlement.E.BANKER_PAIR} if bp else set()
                    row.append(settlement.net_on(bet, events, rules))
        out.append(tuple(row))
    return tuple(out)


def joint_nets_array(rules: Rules) -> np.ndarray:
    """`joint_nets` as float64 (N_BETS, N_JOINT), for compiled code."""
    return _joint_nets_array(rules).copy()


@lru_cache(maxsize=64)
def _joint_nets_array(rules: Rules) -> np.ndarray:
    out = np.array([[float(x) for x in row] for row in joint_nets(rules)])
    out.flags.writeable = False
    return out


def unit_covariance_exact(
    counts: Sequence[int] | np.ndarray, rules: Rules
) -> tuple[tuple[Fraction, ...], ...]:
    """The covariance of the bets' unit results on the next hand from this
    composition, as Fractions (N_BETS x N_BETS, in `Bet` order; 0 for a bet
    the table does not offer): every pair of bets counted jointly over the
    ordered six-card draws, as the exact odds count them."""
    return _unit_covariance_exact(tuple(int(c) for c in check_counts(counts)), rules)


@lru_cache(maxsize=64)
def _unit_covariance_exact(
    counts: tuple[int, ...], rules: Rules
) -> tuple[tuple[Fraction, ...], ...]:
    table = outcome_table_of(counts)
    weights = [Fraction(n, table.combinations) for n in table.joint]
    nets = joint_nets(rules)
    means = [sum((w * x for w, x in zip(weights, row, strict=True)), Fraction(0)) for row in nets]
    return tuple(
        tuple(
            sum((w * x * y for w, x, y in zip(weights, nets[b], nets[c], strict=True)), Fraction(0))
            - means[b] * means[c]
            for c in range(len(nets))
        )
        for b in range(len(nets))
    )


def unit_covariance(counts: Sequence[int] | np.ndarray, rules: Rules) -> np.ndarray:
    """(N_BETS, N_BETS) float64: `unit_covariance_exact` rounded to doubles.

    Assumes only that the next hand is dealt from a well-shuffled shoe of
    this composition (every order of the cards left equally likely)."""
    return _unit_covariance(tuple(int(c) for c in check_counts(counts)), rules).copy()


@lru_cache(maxsize=64)
def _unit_covariance(counts: tuple[int, ...], rules: Rules) -> np.ndarray:
    out = np.array([[float(x) for x in row] for row in _unit_covariance_exact(counts, rules)])
    out.flags.writeable = False
    return out

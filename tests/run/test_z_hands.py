"""The hand-by-hand z: the net against its expectation given the stakes,
over the square root of its variance given them. Valid for any stake rule
(the martingale central limit theorem), where the per-session z is not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from backtest.core.cards import full_shoe_counts
from backtest.core.rules import Bet, Rules
from backtest.odds import shoe_odds, unit_covariance
from backtest.run import engine
from backtest.run.config import parse_config


def _run(
    seed: int,
    sessions: int,
    seats: list[dict],
    table_max: float = 1000,
    bankroll: float = 1000,
    rules: str = "commission",
    **session: object,
) -> dict:
    cfg = parse_config(
        {
            "seed": seed,
            "sessions": sessions,
            "rules": rules,
            "shoe": {"decks": 8},
            "table": {"min": 10, "max": table_max},
            "session": {"bankroll": bankroll, "max_shoes": 1, **session},
            "seats": seats,
        },
        source="z.yaml",
    )
    summary = engine.run(cfg, workers=1).summary
    return {r["seat"]: r for r in summary.iter_rows(named=True)}


def test_the_covariance_is_the_exact_variance_of_each_bet() -> None:
    """The diagonal against the exact odds' own distribution of each bet
    (Fractions, another path), and the main bets' covariances by hand."""
    rules = Rules.preset("ez")
    cov = unit_covariance(full_shoe_counts(8), rules)
    for odds in shoe_odds(rules, 8).bets:
        assert cov[odds.bet.code, odds.bet.code] == pytest.approx(odds.std_dev**2, rel=1e-12)
    # Player and Banker: each pushes on a tie, and one wins when the other loses:
    # E[P B] = -P(player) - P(banker) (Banker wins pay 1 in EZ, a three-card 7 pushes)
    p, b, _ = (shoe_odds(rules, 8).bet(x) for x in (Bet.PLAYER, Bet.BANKER, Bet.TIE))
    seven = float(shoe_odds(rules, 8).bet(Bet.DRAGON_7).p_win)
    e_pb = -float(p.p_win) - (float(b.p_win))
    assert cov[0, 1] == pytest.approx(e_pb - p.ev * b.ev, rel=1e-9)
    assert seven > 0 and cov == pytest.approx(cov.T)


def test_a_martingale_with_no_table_maximum_keeps_z_hands_in_bounds() -> None:
    """With a table maximum of 10**9 a Martingale's sessions are heavy-tailed
    (the per-session z ranged from +1 to +13 over seeds); z_hands stays
    within 3.5 in every one of 20 seeds."""
    seat = [{"strategy": "martingale", "params": {"bet": "banker", "base": 10}}]
    zs = [
        _run(seed, 300, seat, table_max=1e9, bankroll=1e7)["martingale"]["z_hands"]
        for seed in range(20)
    ]
    assert all(abs(z) < 3.5 for z in zs), zs


@pytest.mark.slow
def test_z_hands_is_standard_normal_over_many_runs() -> None:
    """Over 300 seeded runs of 200 one-shoe sessions, three seats (flat with a
    side bet, Martingale, a shoe reader), z_hands has mean about 0 and
    standard deviation about 1: a Kolmogorov-Smirnov test against N(0, 1) at
    the 1% level. (It is a large-sample statistic: over runs of 40 such
    sessions a Martingale's z_hands averaged +0.2, its per-session z +0.7
    with a standard deviation of 2.5.)"""
    seats = [
        {"strategy": "flat", "params": {"bets": {"banker": 10, "player_pair": 10}}},
        {"strategy": "martingale", "params": {"bet": "player", "base": 10}},
        {"strategy": "follow-the-shoe", "params": {"base": 10}},
    ]
    zs = {name: [] for name in ("flat", "martingale", "follow-the-shoe")}
    for seed in range(300):
        rows = _run(1000 + seed, 200, seats, table_max=5000, bankroll=5000)
        for name in zs:
            zs[name].append(rows[name]["z_hands"])
    for name, values in zs.items():
        x = np.array(values)
        assert abs(x.mean()) < 0.2 and 0.85 < x.std() < 1.15, (name, x.mean(), x.std())
        assert scipy_stats.kstest(x, "norm").pvalue > 0.01, name

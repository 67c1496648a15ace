"""The hand-by-hand z: the net against its expectation given the stakes,
over the square root of its variance given them. Valid for any stake rule
(the martingale central limit theorem), where the per-session z is not."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as scipy_stats

from backtest.core.cards import full_shoe_counts
from backtest.core.rules import Bet, Rules
from backtest.odds import remove_cards, shoe_odds, unit_covariance, unit_covariance_exact
from backtest.run import chunks, engine
from backtest.run.config import parse_config
from backtest.run.plan import hands_for


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
def test_z_hands_is_standard_normal_over_many_runs(monkeypatch: pytest.MonkeyPatch) -> None:
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


# --- a counter: the variance of each hand for the cards left -----------------------------------


def _counter_config(seats: list[dict], decks: int = 8) -> object:
    return parse_config(
        {
            "seed": 11,
            "sessions": 2,
            "rules": "ez",
            "shoe": {"decks": decks},
            "table": {"min": 1, "max": 1000},
            "session": {"bankroll": 10000, "max_shoes": 1, "max_hands": 12},
            "seats": seats,
        },
        source="counter.yaml",
    )


#: counters that bet on every hand (min_ev below every EV): main bets alone,
#: and main bets beside a pair bet (the two counted jointly)
MAINS = {
    "strategy": "counter",
    "name": "mains",
    "params": {"bets": ["player", "banker"], "min_ev": -0.5, "base": 10},
}
MIXED = {
    "strategy": "counter",
    "name": "mixed",
    "params": {"bets": ["banker", "tie", "player_pair", "dragon7"], "min_ev": -0.5, "base": 10},
}


def _oracle_variances(cfg: object, ledger: dict) -> np.ndarray:
    """Each session's sum over its hands of s' C s, C the exact covariance
    (Fractions, `unit_covariance_exact`) for the cards left before the hand:
    the full shoe less every card dealt in its shoe so far."""
    hands, bounds, _ = hands_for(cfg, 0, 2)
    out = np.zeros(2)
    row = 0
    for j in range(2):
        dealt: list[int] = []
        played = int((ledger["session"] == j).sum())  # the first hands of its shoe
        for k in range(int(bounds[j]), int(bounds[j]) + played):
            stakes = [Fraction(int(c), 100) for c in ledger["cents"][row]]
            row += 1
            if any(stakes):
                cov = unit_covariance_exact(remove_cards(full_shoe_counts(8), dealt), cfg.rules)
                out[j] += float(
                    sum(stakes[a] * cov[a][b] * stakes[b] for a in range(7) for b in range(7))
                )
            dealt += [int(c) for c in hands.cards[k] if c]
    return out


@pytest.mark.parametrize("together", [False, True], ids=["alone", "sharing-evs"])
def test_a_counter_s_variance_is_each_hand_s_for_the_cards_left(together: bool) -> None:
    """Counters that stake on every hand, alone (their EVs kept to
    themselves) or two at a table (the EVs shared): each session's variance
    is the sum of the exact s' C s for each hand's composition, and the
    plain-Python loop gives the same figures."""
    seats = [MAINS, MIXED] if together else [MIXED]
    cfg = _counter_config(seats)
    strategies = engine.build_strategies(cfg)
    fast, _ = chunks.run_chunk(cfg, strategies, 0, 2, ledger=True)
    slow, _ = chunks.run_chunk(cfg, strategies, 0, 2, ledger=True, force_python=True)
    for f, s in zip(fast, slow, strict=True):
        want = _oracle_variances(cfg, f.ledger)
        assert f.variance == pytest.approx(want, rel=1e-10)
        assert s.variance == pytest.approx(want, rel=1e-10)
        # not the full shoe's covariance
        full = unit_covariance(full_shoe_counts(8), cfg.rules)
        stakes = f.ledger["cents"] / 100
        assert not np.isclose(np.einsum("hi,ij,hj->", stakes, full, stakes), want.sum(), rtol=1e-4)


@pytest.mark.slow
def test_a_counter_s_z_hands_is_standard_normal_over_many_runs() -> None:
    """Over 200 seeded runs of 60 one-shoe sessions, counters that bet on
    every hand (main bets alone; a main bet beside a pair bet) and the
    default counter: z_hands against N(0, 1), a Kolmogorov-Smirnov test at
    the 1% level."""
    seats = [
        {**MAINS, "params": {**MAINS["params"], "min_ev": -0.02}},
        {**MIXED, "params": {"bets": ["banker", "player_pair"], "min_ev": -0.03, "base": 10}},
        {"strategy": "counter", "params": {"base": 10}},
    ]
    zs: dict[str, list[float]] = {"mains": [], "mixed": [], "counter": []}
    for seed in range(200):
        rows = _run(5000 + seed, 60, seats, table_max=5000, bankroll=100000)
        for name in zs:
            if rows[name]["z_hands"] is not None:
                zs[name].append(rows[name]["z_hands"])
    for name, values in zs.items():
        x = np.array(values)
        assert len(x) > 150, name
        assert abs(x.mean()) < 0.2 and 0.85 < x.std() < 1.15, (name, x.mean(), x.std())
        assert scipy_stats.kstest(x, "norm").pvalue > 0.01, name

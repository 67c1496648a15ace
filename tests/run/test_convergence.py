"""No system changes the edge: over ten million hands, every built-in
strategy's measured edge (net per unit wagered) has the exact expected edge
of the bets it placed inside its 95% confidence interval.

The seats share one table, so they play the same hands; the seed is fixed,
so each check is the same on every run (with another seed about one 95%
interval in twenty would miss, as such intervals do). A systematic error of
a few hundredths of a per cent in any seat's settlement or book-keeping
would put its exact edge outside: at 10^7 hands a flat seat's interval is
about +-0.06 per cent wide.
"""

from __future__ import annotations

from typing import Any

import pytest

from backtest.run import engine
from backtest.run.config import parse_config
from strategies.registry import BUILTIN_NAMES

# about 81.5 hands a shoe, one shoe a session: just over 10^7 hands per seat
SESSIONS = 123_000
# The bankroll never binds. The table maximum of 100,000 is reached by a
# Martingale only after 14 losses in a row (some 165 times in 10^7 hands): it
# cuts off a tail so heavy (a Martingale session loses more than x with
# probability about 1/x) that no run of this size samples it, and without it
# the standard error of the measured edge is understated.
TABLE = {"min": 1, "max": 100_000}
# the exact edges (8 decks, 5% commission)
BANKER, PLAYER, TIE = -0.010579, -0.012351, -0.143596

#: long statistical runs: the slow tier
pytestmark = pytest.mark.slow


def _run(seats: list[dict[str, Any]], sessions: int) -> dict[str, dict[str, Any]]:
    cfg = parse_config(
        {
            "seed": 2024,
            "sessions": sessions,
            "shoe": {"decks": 8},
            "session": {"bankroll": 1e9, "max_shoes": 1},
            "table": TABLE,
            "seats": seats,
        },
        source="convergence.yaml",
    )
    summary = engine.run(cfg, workers=1).summary
    assert summary.height == len(seats)
    return {r["seat"]: r for r in summary.iter_rows(named=True)}


def _converged(seat: str, row: dict[str, Any], hands: int) -> None:
    assert row["hands"] >= hands, seat
    assert row["bankroll_stops"] == 0 and row["ruin_rate"] == 0, seat
    assert row["edge_ci_low"] <= row["expected_edge"] <= row["edge_ci_high"], (
        seat,
        row["edge"],
        row["expected_edge"],
        row["z"],
    )


def test_every_system_s_measured_edge_holds_the_exact_edge_over_ten_million_hands() -> None:
    seats: list[dict[str, Any]] = [{"strategy": n} for n in BUILTIN_NAMES if n != "counter"]
    seats += [
        {"strategy": "flat", "name": "flat player", "params": {"bets": {"player": 10}}},
        {"strategy": "flat", "name": "flat tie", "params": {"bets": {"tie": 10}}},
        # the counter, on the bets whose exact EVs cost a division a hand
        {
            "strategy": "counter",
            "name": "counter on the pairs",
            "params": {"bets": ["player_pair", "banker_pair"]},
        },
    ]
    summary = _run(seats, SESSIONS)
    for seat, row in summary.items():
        _converged(seat, row, 10_000_000)
        assert row["max_hits"] <= row["hands"] // 10_000, seat
    for seat in (
        "flat",
        "martingale",
        "grand-martingale",
        "paroli",
        "fibonacci",
        "dalembert",
        "labouchere",
        "1-3-2-6",
        "oscars-grind",
    ):
        assert summary[seat]["expected_edge"] == pytest.approx(BANKER, abs=5e-7), seat
    assert summary["flat player"]["expected_edge"] == pytest.approx(PLAYER, abs=5e-7)
    assert summary["flat tie"]["expected_edge"] == pytest.approx(TIE, abs=5e-7)
    for seat in ("follow-the-shoe", "chop", "streak", "pattern", "random", "road-reader"):
        assert PLAYER < summary[seat]["expected_edge"] < BANKER, seat
    # the counter bets only when the cards left favour a pair bet, and wins
    # what the exact odds of those cards say it should
    pairs = summary["counter on the pairs"]
    assert pairs["bets"] > 100_000 and pairs["expected_edge"] > 0.05


def test_the_counter_wins_what_the_exact_odds_of_the_cards_left_say() -> None:
    """The counter on every bet works out every hand's exact EVs by counting
    the deals (about 2 us a hand), so it plays at a table of its own: over
    10^7 hands, the edge it measures is the positive edge the odds engine
    gives the bets it chose."""
    row = _run([{"strategy": "counter"}], SESSIONS)["counter"]
    _converged("counter", row, 10_000_000)
    assert row["bets"] > 100_000 and row["expected_edge"] > 0.05

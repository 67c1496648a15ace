"""The verdict in words says only what the numbers say: "yet" only for a
contrast, the ruined sessions paying for the wins only when they do, ruin
even for a seat that placed no bets, and an interval only where there is
one."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import polars as pl
import pytest

from backtest.present import verdict


def row(**changes: Any) -> dict[str, Any]:
    base = {
        "seat": "S",
        "strategy": "flat",
        "sessions": 100,
        "hands": 8000,
        "bets": 8000,
        "wagered": 80_000.0,
        "net": -800.0,
        "edge": -0.01,
        "edge_ci_low": -0.02,
        "edge_ci_high": 0.0,
        "expected_edge": -0.0106,
        "z": 0.1,
        "ruin_rate": 0.0,
        "ruined_net": 0.0,
        "win_goal_rate": 0.0,
        "winning_sessions": 0.45,
    }
    return base | changes


def said(**changes: Any) -> str:
    return verdict.verdict(pl.DataFrame([row(**changes)]), 1000.0)


@pytest.mark.parametrize(
    ("net", "won", "words"),
    [
        (-800.0, 0.45, "won money in 45.0% of 100 sessions, and lost 800.00 in all"),
        (-800.0, 0.70, "won money in 70.0% of 100 sessions, yet lost 800.00 in all"),
        (260.0, 0.14, "won money in 14.0% of 100 sessions, yet made 260.00 in all"),
        (260.0, 0.60, "won money in 60.0% of 100 sessions, and made 260.00 in all"),
        (0.0, 0.50, "won money in 50.0% of 100 sessions, and broke even on 80,000.00 wagered"),
    ],
)
def test_yet_only_where_the_sessions_and_the_total_disagree(
    net: float, won: float, words: str
) -> None:
    assert f"S: {words}" in said(net=net, winning_sessions=won)


def test_the_ruined_sessions_pay_for_the_wins_only_when_they_lost_more_than_the_others_won() -> (
    None
):
    # a Martingale: the others won 290, the ruined lost 310
    text = said(net=-20.0, winning_sessions=0.71, ruin_rate=0.29, ruined_net=-310.0)
    assert (
        "29.0% of sessions ended in ruin: the bankroll left could not cover the next stake "
        "(it starts at 1,000.00); those sessions lost 310.00, more than the 290.00 the "
        "others won."
    ) in text
    # a Tie bettor whose rare wins are large: it made money although most sessions were ruined
    text = said(net=260.0, winning_sessions=0.14, ruin_rate=0.86, ruined_net=-860.0)
    assert "86.0% of sessions ended in ruin" in text
    assert "more than" not in text


def test_a_seat_that_placed_no_bets_is_still_said_to_be_ruined() -> None:
    assert said(wagered=0.0, net=0.0, ruin_rate=1.0) == (
        "S: placed no bets; 100.0% of sessions ended in ruin: the bankroll left could not "
        "cover the next stake (it starts at 1,000.00)."
    )
    assert said(wagered=0.0, net=0.0) == "S: placed no bets."


def test_an_interval_only_where_there_is_spread_and_a_word_on_few_sessions() -> None:
    assert "(no spread to measure an interval); the exact edge" in said(
        edge_ci_low=None, edge_ci_high=None, z=None
    )
    assert "(95% CI over sessions -2.00% to +0.00%; rough with so few sessions)" in said(
        sessions=29
    )
    assert "(95% CI over sessions -2.00% to +0.00%);" in said(sessions=30)


def test_the_hand_by_hand_interval_and_z_come_first_and_the_sessions_one_is_named() -> None:
    text = said(
        edge_hands_ci_low=-0.015, edge_hands_ci_high=-0.005, z_hands=0.4, z=2.5, sessions=20
    )
    assert (
        "(95% CI -1.50% to -0.50%, from each hand's variance given its stakes; over "
        "sessions -2.00% to +0.00%, rough with so few); the exact edge of the bets it "
        "placed is -1.06%, 0.4 standard errors away."
    ) in text


def test_json_has_no_infinity_or_nan() -> None:
    frame = pl.DataFrame([row(z=math.inf, edge_ci_low=-math.inf, edge=math.nan)])
    data = json.loads(verdict.to_json(frame))
    assert data[0]["z"] is None and data[0]["edge_ci_low"] is None and data[0]["edge"] is None
    assert list(data[0]) == frame.columns


def test_the_t_quantile_agrees_with_scipy_on_both_sides_of_its_series() -> None:
    from scipy.special import stdtrit

    from backtest.run.intervals import t95

    # the closed form below 1,000 degrees of freedom to 1e-13 (far past any digit
    # printed), the series from there on to the last bit
    sessions = np.arange(2, 1001)
    assert np.allclose(t95(sessions), stdtrit(sessions - 1.0, 0.975), rtol=1e-13, atol=0)
    sessions = np.array([1001, 1002, 2000, 10**4, 10**6, 10**9])
    assert np.allclose(t95(sessions), stdtrit(sessions - 1.0, 0.975), rtol=2e-15, atol=0)
    assert np.isnan(t95(np.array([0, 1]))).all()


def test_the_stop_loss_and_the_table_maximum_are_said_when_they_acted() -> None:
    quiet = said()
    assert "stop-loss" not in quiet and "table maximum" not in quiet
    text = said(stop_loss_rate=0.428, max_hits=1486)
    assert "42.8% ended at the stop-loss." in text
    assert (
        "1,486 stakes were over the table maximum (capped, or the progression reset: "
        "on_max)." in text
    )
    assert "1 stake was over the table maximum" in said(max_hits=1)


def test_a_few_hands_carrying_the_variance_are_said_to_make_the_interval_rough() -> None:
    """Past `ROUGH_SHARE` of the variance sum in its largest hand, a seat's
    interval and z are said rough and two-sided, with what would make them
    hold; below it, nothing is said."""
    from backtest.run.intervals import ROUGH_SHARE

    hands = {"edge_hands_ci_low": -0.015, "edge_hands_ci_high": -0.005, "z_hands": 0.4}
    assert "a few hands" not in said(**hands, top_hand_share=ROUGH_SHARE / 2)
    assert said(**hands, top_hand_share=0.62).endswith(
        "0.4 standard errors away. A few hands carry most of the variance (the largest "
        "alone 62.0% of it), so the interval and z are rough and only two-sided: more "
        "sessions or a lower table maximum would make them hold."
    )


def pair(**changes: Any) -> dict[str, Any]:
    base = {
        "seat_a": "A",
        "seat_b": "B",
        "sessions": 2000,
        "edge_a": -0.0106,
        "edge_b": -0.0110,
        "edge_diff": -0.0004,
        "edge_diff_ci_low": -0.003,
        "edge_diff_ci_high": 0.0022,
        "edge_diff_p": 0.76,
        "edge_diff_top_share": 0.0001,
        "winning_sessions_a": 0.45,
        "winning_sessions_b": 0.70,
        "winning_sessions_diff_p": 1e-9,
        "ruin_rate_a": 0.0,
        "ruin_rate_b": 0.0,
        "ruin_rate_diff_p": 1.0,
    }
    return base | changes


def test_a_comparison_names_where_each_number_comes_from() -> None:
    """The edge difference from each hand's variance; the sessions won and
    ruin per session; a rough interval said so."""
    text = verdict.comparison_verdict(pl.DataFrame([pair()]))
    assert text == (
        "B against A on the same 2,000 sessions: no difference in edge beyond chance "
        "(-0.040%, 95% CI -0.300% to +0.220%, p = 0.760, from each hand's variance given "
        "both seats' stakes); per session (paired over sessions): it wins more sessions "
        "(70.0% against 45.0%, p < 0.001)."
    )
    rough = verdict.comparison_verdict(pl.DataFrame([pair(edge_diff_top_share=0.5)]))
    assert rough.endswith(
        "A few hands carry most of the variance (the largest alone 50.0% of it), so the "
        "difference's interval and p are rough and only two-sided: more sessions or a lower "
        "table maximum would make them hold."
    )

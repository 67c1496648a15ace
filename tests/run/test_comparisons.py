"""Paired comparisons between the seats of one table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli_helpers import backtest_here

from backtest.core.errors import ConfigError
from backtest.run import comparisons, engine
from backtest.run.config import parse_config

#: exact house edges of the full 8-deck shoe (RULES.md): Player 1.2351%, Banker 1.0579%
PLAYER_MINUS_BANKER = -(0.012351 - 0.010579)


@pytest.fixture(scope="module")
def three_seats() -> pl.DataFrame:
    cfg = parse_config(
        {
            "seed": 3,
            "sessions": 10_000,
            "rules": "commission",
            "shoe": {"decks": 8},
            "session": {"bankroll": 1000, "max_shoes": 1},
            "table": {"min": 10, "max": 1000},
            "seats": [
                {"strategy": "flat", "name": "Banker", "params": {"bets": {"banker": 10}}},
                {"strategy": "flat", "name": "Player", "params": {"bets": {"player": 10}}},
                {
                    "strategy": "martingale",
                    "name": "Martingale",
                    "params": {"bet": "banker", "base": 10},
                },
            ],
        },
        source="three.yaml",
    )
    result = engine.run(cfg, workers=1)
    assert isinstance(result.sessions, pl.DataFrame)
    return comparisons.compare(result.sessions, ["Banker", "Player", "Martingale"])


def test_each_seat_is_compared_with_the_baseline_on_the_same_sessions(
    three_seats: pl.DataFrame,
) -> None:
    assert three_seats["seat_a"].to_list() == ["Banker", "Banker"]
    assert three_seats["seat_b"].to_list() == ["Player", "Martingale"]
    assert three_seats["sessions"].to_list() == [10_000, 10_000]
    assert set(comparisons.COLUMNS) == set(three_seats.columns)


def test_the_edge_difference_interval_holds_the_exact_difference(three_seats: pl.DataFrame) -> None:
    """Martingale on Banker against flat Banker: the same bet, no difference in
    edge; flat Player against flat Banker: -0.1772% per unit."""
    player, martingale = three_seats.iter_rows(named=True)
    assert martingale["edge_diff_ci_low"] <= 0.0 <= martingale["edge_diff_ci_high"]
    assert player["edge_diff_ci_low"] <= PLAYER_MINUS_BANKER <= player["edge_diff_ci_high"]
    # a Martingale wins more sessions than flat betting, and is ruined in more
    assert (
        martingale["winning_sessions_diff"] > 0.1 and martingale["winning_sessions_diff_p"] < 1e-6
    )
    assert martingale["ruin_rate_diff"] > 0


def test_a_paired_interval_covers_the_mean_difference_as_often_as_it_says() -> None:
    """Drawn pairs with a known mean difference: the 95% intervals of the
    mean net and of the edge cover the truth in about 95% of 400 samples."""
    rng = np.random.default_rng(5)
    covered_mean = covered_edge = 0
    for _ in range(400):
        n = 60
        luck = rng.normal(0, 10, n)  # the shoes both seats saw
        net_a = luck + rng.normal(-1, 3, n)
        net_b = luck + rng.normal(-2, 3, n)  # B makes 1 less a session, on average
        frame = pl.DataFrame(
            {
                "seat": ["a"] * n + ["b"] * n,
                "session": list(range(n)) * 2,
                "net": np.r_[net_a, net_b],
                "wagered": np.full(2 * n, 100.0),
                "ended_by": ["limit"] * (2 * n),
            }
        )
        row = comparisons.compare(frame, ["a", "b"]).row(0, named=True)
        covered_mean += row["mean_net_diff_ci_low"] <= -1.0 <= row["mean_net_diff_ci_high"]
        covered_edge += row["edge_diff_ci_low"] <= -0.01 <= row["edge_diff_ci_high"]
    assert 0.92 <= covered_mean / 400 <= 0.98
    assert 0.91 <= covered_edge / 400 <= 0.98


def test_mcnemar_is_the_exact_binomial_split() -> None:
    a = np.array([True, True, True, False, False, True])
    b = np.array([False, False, False, False, True, True])
    # differ on 4 pairs, split 3 to 1: 2 * P(X <= 1), X ~ Bin(4, 1/2) = 2 * 5/16
    assert comparisons.mcnemar(a, b) == pytest.approx(0.625)
    assert comparisons.mcnemar(a, a) == 1.0


def test_one_seat_has_no_comparison() -> None:
    frame = pl.DataFrame(
        {"seat": ["a"], "session": [1], "net": [1.0], "wagered": [1.0], "ended_by": ["limit"]}
    )
    assert comparisons.compare(frame, ["a"]).height == 0


def test_the_run_command_prints_and_writes_the_comparisons(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "pair.yaml"
    config.write_text(
        "seed: 2\nsessions: 300\nshoe: {decks: 8}\nbaseline: Flat\n"
        "session: {bankroll: 500, max_shoes: 1}\n"
        "seats:\n  - {strategy: martingale, name: Doubling}\n"
        "  - {strategy: flat, name: Flat}\n"
    )
    code, out, err = backtest_here(
        monkeypatch, capsys, "run", str(config), "--out", str(tmp_path / "out")
    )
    assert code == 0, err
    words = " ".join(out.split())  # wrapped to the terminal's width
    assert "Doubling against Flat on the same 300 sessions:" in words
    assert "it is ruined more often" in words
    written = pl.read_parquet(tmp_path / "out" / "comparisons.parquet")
    assert written.select("seat_a", "seat_b", "sessions").row(0) == ("Flat", "Doubling", 300)
    for column in (
        "mean_net_diff",
        "mean_net_diff_ci_low",
        "mean_net_diff_ci_high",
        "mean_net_diff_p",
        "edge_diff",
        "edge_diff_ci_low",
        "edge_diff_ci_high",
        "ruin_rate_diff",
        "ruin_rate_diff_p",
        "winning_sessions_diff",
    ):
        assert column in written.columns


def test_a_baseline_that_names_no_seat_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"baseline: no seat is called 'Flt'; did you mean "
        r"'Flat'\? \(the seats are 'Flat', 'martingale'\)",
    ):
        parse_config(
            {
                "baseline": "Flt",
                "seats": [{"strategy": "flat", "name": "Flat"}, {"strategy": "martingale"}],
            }
        )

"""A sweep's cells against the exact edge, corrected for how many were tried."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from backtest.core import special
from backtest.sweep import family


def cells(zs: list[float]) -> pl.DataFrame:
    n = len(zs)
    return pl.DataFrame(
        {
            "cell": list(range(1, n + 1)),
            "seat": ["flat"] * n,
            "z_hands": zs,
            "edge": [-0.01] * n,
            "expected_edge": [-0.0106] * n,
        }
    )


def test_holm_steps_down_from_the_smallest_p() -> None:
    # m = 4: 4 p1, 3 p2, 2 p3, 1 p4, each at least the one before
    assert special.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert special.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_no_cell_beyond_chance_names_the_best_looking_and_what_tries_give() -> None:
    (line,) = family.closing_lines(cells([0.3, -2.4, 1.1, 0.9, -0.2, 1.7, 0.4, -1.0, 0.0, 2.1]))
    assert line.startswith("No cell's edge differs from the exact edge beyond chance")
    assert "cell 2 (flat) at z_hands -2.40" in line and "over 10 cells and seats" in line
    assert "about 2.1 standard errors" in line  # sqrt(2 ln 10)


def test_a_cell_beyond_chance_is_named() -> None:
    (line,) = family.closing_lines(cells([0.3, -6.0, 1.1, 0.9]))
    assert line.startswith("Beyond chance after Holm's correction over 4 cells and seats")
    assert "cell 2 (flat)" in line and "z_hands -6.00" in line and "cell 1" not in line


def test_cells_where_a_few_hands_carry_the_variance_are_said_rough() -> None:
    """Past `ROUGH_SHARE` of the variance sum in one hand, a cell's z_hands
    is rough: a line says in how many, and what would make them hold."""
    shares = cells([0.3, -1.4, 1.1]).with_columns(top_hand_share=pl.Series([0.001, 0.4, 0.06]))
    first, rough = family.closing_lines(shares)
    assert first.startswith("No cell's edge differs")
    assert rough == (
        "In 2 of the 3 cells and seats a few hands carry most of the variance, so their "
        "z_hands are rough and only two-sided: more sessions or a lower table maximum "
        "would make them hold."
    )
    assert len(family.closing_lines(shares.with_columns(top_hand_share=pl.lit(0.01)))) == 1


def test_the_family_holds_its_error_rate_on_null_cells() -> None:
    """Under the null (every z standard normal), Holm calls some cell in at
    most about 5% of 2,000 sweeps of 50 cells; uncorrected, in most of them."""
    rng = np.random.default_rng(7)
    called = naive = 0
    for _ in range(2000):
        ps = special.two_sided_p(rng.standard_normal(50).tolist())
        called += min(special.holm(ps)) < 0.05
        naive += min(ps) < 0.05
    assert called / 2000 < 0.065 and naive / 2000 > 0.9


def test_the_band_widens_with_the_tests() -> None:
    assert special.band_z(1) == pytest.approx(1.959963984540054)
    assert special.band_z(100) == pytest.approx(3.4807, abs=1e-4)

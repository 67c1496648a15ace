"""The special functions of `backtest.core.special`, against scipy's (the tests'
independent oracle: the package itself does not need scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import chdtrc, ndtr, ndtri, stdtr, stdtrit

from backtest.core import special


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 9, 10, 51, 150, 199])
def test_the_chi_squared_tail(k: int) -> None:
    for x in (0.0, 1e-3, 0.5, 1.0, 3.0, k - 1.0, k, k + 3.0 * math.sqrt(2 * k), 100.0, 700.0):
        expected = float(chdtrc(k, x))
        if expected > 1e-290:
            assert special.chi2_sf(k, x) == pytest.approx(expected, rel=1e-12, abs=0), (k, x)


def test_the_chi_squared_refuses_fractional_degrees_of_freedom() -> None:
    with pytest.raises(ValueError, match="whole number"):
        special.chi2_sf(2.5, 1.0)  # type: ignore[arg-type]


def test_the_normal_distribution_in_both_tails() -> None:
    for x in np.linspace(-37.0, 8.0, 451):
        assert special.normal_cdf(x) == pytest.approx(float(ndtr(x)), rel=1e-12, abs=0)
    for p in (1e-12, 0.005, 0.025, 0.5, 0.9, 0.975, 1 - 1e-9):
        assert special.normal_quantile(p) == pytest.approx(float(ndtri(p)), rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 30, 99, 100, 500, 999])
def test_student_t(df: int) -> None:
    for t in (0.0, 0.3, 1.0, 2.0, 4.5, 30.0):
        assert special.t_within(t, df) == pytest.approx(
            2 * float(stdtr(df, t)) - 1, rel=1e-13, abs=1e-16
        ), (df, t)
    for p in (0.5, 0.9, 0.975, 0.995):
        assert special.t_quantile(df, p) == pytest.approx(
            float(stdtrit(df, p)), rel=1e-13, abs=1e-15
        ), (df, p)

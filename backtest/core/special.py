"""The few special functions the statistics need, in plain Python.

The normal distribution is the standard library's (`math.erfc`, and
`statistics.NormalDist` for its quantile);
Student's t and the chi-squared distribution for whole degrees of freedom
have finite closed forms (Abramowitz and Stegun 26.7.3-4 and 26.4.4-5),
summed here with `math.fsum`. The tests check them against scipy, which
the package does not need: the chi-squared tail to 1e-12 relative, the t
quantile to 1e-13 (its series of up to 500 terms, each a product of the last).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

_NORMAL = NormalDist()


def normal_cdf(x: float) -> float:
    """P(Z <= x) for a standard normal Z (from erfc: as exact, relatively, in
    the far tails as near the centre, which 1 + erf is not).

    >>> round(normal_cdf(1.959963984540054), 6)
    0.975
    """
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """The x with P(Z <= x) = p, for 0 < p < 1.

    >>> round(normal_quantile(0.975), 6)
    1.959964
    """
    return _NORMAL.inv_cdf(p)


def chi2_sf(k: int, x: float) -> float:
    """P(X > x) for X chi-squared with k (a whole number, 1 or more) degrees
    of freedom.

    >>> round(chi2_sf(1, 3.841458820694124), 6), round(chi2_sf(4, 9.487729036781154), 6)
    (0.05, 0.05)
    """
    if k < 1 or k != int(k):
        raise ValueError(f"degrees of freedom must be a whole number from 1, got {k}")
    if x <= 0:
        return 1.0
    k = int(k)
    half = x / 2.0
    if k % 2 == 0:  # e^(-x/2) * sum over i < k/2 of (x/2)^i / i!
        terms, term = [], 1.0
        for i in range(k // 2):
            if i:
                term *= half / i
            terms.append(term)
        return min(1.0, math.exp(-half) * math.fsum(terms))
    root = math.sqrt(x)
    tail = 2.0 * normal_cdf(-root)
    if k == 1:
        return tail
    # 2 Q(sqrt x) + sqrt(2x/pi) e^(-x/2) * sum over i < (k-1)/2 of x^i / (3 * 5 * ... (2i+1))
    terms, term = [], 1.0
    for i in range((k - 1) // 2):
        if i:
            term *= x / (2 * i + 1)
        terms.append(term)
    return min(1.0, tail + math.sqrt(2.0 * x / math.pi) * math.exp(-half) * math.fsum(terms))


def t_within(t: float, df: int) -> float:
    """P(|T| <= t) for T Student's t with df (a whole number, 1 or more)
    degrees of freedom, t >= 0 (Abramowitz and Stegun 26.7.3-4).

    >>> round(t_within(12.706204736174707, 1), 12)
    0.95
    """
    theta = math.atan2(t, math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    c2 = c * c
    terms, term = [], 1.0
    if df % 2 == 0:  # sin(theta) (1 + c^2/2 + 1*3/(2*4) c^4 + ...), df/2 terms
        for i in range(df // 2):
            if i:
                term *= c2 * (2 * i - 1) / (2 * i)
            terms.append(term)
        return s * math.fsum(terms)
    if df == 1:
        return 2.0 * theta / math.pi
    # 2/pi (theta + sin c (1 + 2/3 c^2 + 2*4/(3*5) c^4 + ...)), (df-1)/2 terms
    for i in range((df - 1) // 2):
        if i:
            term *= c2 * (2 * i) / (2 * i + 1)
        terms.append(term)
    return 2.0 / math.pi * (theta + s * c * math.fsum(terms))


def t_quantile(df: int, p: float) -> float:
    """The t with P(T <= t) = p, for T Student's t with df (a whole number, 1
    or more) degrees of freedom and 1/2 <= p < 1: Newton's method on
    `t_within`, from the normal quantile, then the neighbouring doubles that
    come closer.

    >>> round(t_quantile(1, 0.975), 9), round(t_quantile(29, 0.975), 9)
    (12.706204736, 2.045229642)
    """
    target = 2.0 * p - 1.0
    if not 0.0 <= target < 1.0:
        raise ValueError(f"p must be from 1/2 to below 1, got {p}")
    t = normal_quantile(p)
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(100):
        density = 2.0 * math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df))
        step = (t_within(t, df) - target) / density
        t = max(t - step, t / 2)
        if abs(step) <= 1e-15 * t:
            break
    # the double whose probability is nearest the target
    best = t
    for candidate in (math.nextafter(t, 0.0), math.nextafter(t, math.inf)):
        if abs(t_within(candidate, df) - target) < abs(t_within(best, df) - target):
            best = candidate
    return best


#: the family-wise error rate `band_z` holds
ALPHA = 0.05


def two_sided_p(zs: Sequence[float]) -> list[float]:
    """P(|Z| >= |z|) for each z, Z standard normal."""
    return [2.0 * normal_cdf(-abs(z)) for z in zs]


def holm(ps: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: the k-th smallest is
    max over j <= k of (m - j + 1) p_(j), at most 1."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def band_z(tests: int) -> float:
    """The z that holds all `tests` intervals at once with 95% confidence
    (Bonferroni: Holm's first step)."""
    return normal_quantile(1.0 - ALPHA / (2 * max(tests, 1)))

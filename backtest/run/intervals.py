"""The 95% quantiles the intervals use: the normal's, and Student's t for a
number of sessions."""

from __future__ import annotations

import numpy as np

Z95 = 1.959963984540054


def t95(sessions: np.ndarray) -> np.ndarray:
    """The two-sided 95% quantile of Student's t with sessions - 1 degrees of
    freedom (NaN for fewer than two sessions): 12.71 for 2 sessions, 2.05
    for 30, 1.96 in the limit. Under 1,000 degrees of freedom from the t
    distribution's closed form (`special.t_quantile`); from there on the
    series of Abramowitz and Stegun 26.7.5, which agrees with scipy's to the
    last bit."""
    from backtest.core.special import t_quantile

    v = np.asarray(sessions, dtype=np.float64) - 1.0
    out = np.full(v.shape, np.nan)
    big = v >= 1000
    if big.any():
        z, w = Z95, v[big]
        out[big] = (
            z
            + (z**3 + z) / 4 / w
            + (5 * z**5 + 16 * z**3 + 3 * z) / 96 / w**2
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384 / w**3
            + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160 / w**4
        )
    small = (v >= 1) & ~big
    if small.any():
        quantiles = {df: t_quantile(df, 0.975) for df in np.unique(v[small]).astype(int).tolist()}
        out[small] = [quantiles[int(df)] for df in v[small]]
    return out

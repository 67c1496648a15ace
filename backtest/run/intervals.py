"""The 95% quantiles the intervals use: the normal's, and Student's t for a
number of sessions."""

from __future__ import annotations

import numpy as np

Z95 = 1.959963984540054

#: the share of the variance sum carried by the largest one hand
#: (`top_hand_share`, `edge_diff_top_share`) past which the hand-by-hand
#: interval and z are rough: the martingale central limit theorem that makes
#: z standard normal needs every hand's share to vanish (Lindeberg's
#: condition), and a progression whose stakes grow without bound puts most
#: of the variance on the rare hands after a long run of losses.
#:
#: Chosen by simulation: a Martingale on Banker (base 10, reset at the table
#: maximum T) over 2,000 sessions of 80 independent hands, 600 runs for each
#: T (300 for the last three), the largest hand's median share and z's
#: chance above +1.645 and below -1.645 (5% each for a standard normal):
#:
#:   T        share   mean z   above   below
#:   2,000    0.0009  +0.06    6.2%    3.8%
#:   20,000   0.0081  +0.04    6.2%    3.5%
#:   50,000   0.034   +0.09    5.0%    3.0%
#:   100,000  0.071   +0.07    5.3%    5.3%
#:   200,000  0.148   +0.19    10.3%   3.7%
#:   500,000  0.246   +0.21    10.3%   2.8%
#:   10^6     0.351   +0.32    8.3%    4.0%
#:   10^7     0.411   +0.65    9.0%    2.7%
#:   10^9     0.398   +0.73    8.0%    0.3%  (sd 0.57)
#:
#: Up to a share of about 0.07 z is standard normal within the runs' noise
#: (0.9 points); from about 0.15 its upper tail is twice what it says, and
#: at 10^9 it is never below -1.96. 0.05 keeps a margin below the first.
#: The two-sided interval stays near 95% throughout (it covered 92-98% of runs).
ROUGH_SHARE = 0.05


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

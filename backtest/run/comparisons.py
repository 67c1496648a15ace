"""Seats against a baseline, on the same hands: paired comparisons.

The seats of one table play the same shoes, session by session, so a
difference between two systems is measured on the same hands: session j of
seat A beside session j of seat B. Each statistic here is worked out from
those pairs of sessions, which is what makes it sharp (the luck of the
shoes cancels) and valid (the sessions are independent of one another, the
two seats of one session are not):

- the mean net per session: the mean of the paired differences, with a t
  interval and a two-sided t test (normal theory over sessions: with few
  sessions and a heavy-tailed system, such as a Martingale with a high
  table maximum, the interval is rough; the verdict says so below 30);
- the edge per unit wagered (net / wagered): the difference of the two
  ratios, with an interval from the paired sessions' influence on each
  ratio (the delta method over sessions);
- the ruin rate and the share of winning sessions: differences in
  proportion, with McNemar's exact test on the sessions where the two
  seats differ.

>>> import polars as pl
>>> frame = pl.DataFrame({"seat": ["a"] * 4 + ["b"] * 4, "session": [1, 2, 3, 4] * 2,
...                       "net": [10.0, -10, 10, -10, 20, -20, 20, -40],
...                       "wagered": [10.0] * 4 + [20.0, 20, 20, 40],
...                       "ended_by": ["limit"] * 7 + ["ruin"]})
>>> row = compare(frame, ["a", "b"]).row(0, named=True)
>>> row["seat_a"], row["seat_b"], row["sessions"], row["mean_net_diff"], row["ruin_rate_diff"]
('a', 'b', 4, -5.0, 0.25)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from backtest.core.special import t_within, two_sided_p

#: the columns of a comparison, one row per seat against the baseline
COLUMNS = (
    "seat_a",
    "seat_b",
    "sessions",
    "mean_net_a",
    "mean_net_b",
    "mean_net_diff",
    "mean_net_diff_ci_low",
    "mean_net_diff_ci_high",
    "mean_net_diff_p",
    "edge_a",
    "edge_b",
    "edge_diff",
    "edge_diff_ci_low",
    "edge_diff_ci_high",
    "edge_diff_p",
    "ruin_rate_a",
    "ruin_rate_b",
    "ruin_rate_diff",
    "ruin_rate_diff_p",
    "winning_sessions_a",
    "winning_sessions_b",
    "winning_sessions_diff",
    "winning_sessions_diff_p",
)


def compare(
    sessions: pl.DataFrame | pl.LazyFrame, seats: Sequence[str], baseline: str | None = None
) -> pl.DataFrame:
    """Each seat of `seats` (in order) but the baseline (`baseline`, or the
    first seat) against the baseline, over the sessions both played: one row
    per pair, the differences B - A with A the baseline (`COLUMNS`). Edges
    are per unit wagered, as in the summary: net / wagered."""
    if len(seats) < 2:
        return pl.DataFrame(schema={c: _dtype(c) for c in COLUMNS})
    base = seats[0] if baseline is None else baseline
    lazy = sessions.lazy() if isinstance(sessions, pl.DataFrame) else sessions
    wanted = lazy.select(
        "seat",
        "session",
        "net",
        "wagered",
        (pl.col("ended_by").cast(pl.String) == "ruin").alias("ruined"),
    )

    def seat_frame(name: str) -> pl.DataFrame:
        # a seat at a time: a spilled run's sessions are read for two seats at most
        return (
            wanted.filter(pl.col("seat").cast(pl.String) == name)
            .drop("seat")
            .collect()
            .sort("session")
        )

    a = seat_frame(base)
    rows = [
        _pair(base, seat, a.join(seat_frame(seat), on="session", suffix="_b"))
        for seat in seats
        if seat != base
    ]
    return pl.DataFrame(rows, schema={c: _dtype(c) for c in COLUMNS}, orient="row")


def _dtype(column: str) -> Any:
    if column in ("seat_a", "seat_b"):
        return pl.String
    return pl.Int64 if column == "sessions" else pl.Float64


def _pair(seat_a: str, seat_b: str, both: pl.DataFrame) -> tuple[Any, ...]:
    n = both.height
    net_a, net_b = both["net"].to_numpy(), both["net_b"].to_numpy()
    wag_a, wag_b = both["wagered"].to_numpy(), both["wagered_b"].to_numpy()
    diff = net_b - net_a
    mean, low, high, p = _t_interval(diff)
    edge_a, edge_b, edge_d, edge_low, edge_high, edge_p = _ratio_difference(
        net_a, wag_a, net_b, wag_b
    )
    ruin_a, ruin_b = both["ruined"].to_numpy(), both["ruined_b"].to_numpy()
    won_a, won_b = net_a > 0, net_b > 0
    return (
        seat_a,
        seat_b,
        n,
        _mean(net_a),
        _mean(net_b),
        mean,
        low,
        high,
        p,
        edge_a,
        edge_b,
        edge_d,
        edge_low,
        edge_high,
        edge_p,
        _mean(ruin_a),
        _mean(ruin_b),
        _mean(ruin_b) - _mean(ruin_a),
        mcnemar(ruin_a, ruin_b),
        _mean(won_a),
        _mean(won_b),
        _mean(won_b) - _mean(won_a),
        mcnemar(won_a, won_b),
    )


#: degrees of freedom from which a t test's p is the normal one (below 3e-4 apart)
_NORMAL_DF = 1000


def _t97(n: int) -> float:
    """The t quantile of a 95% interval over n sessions (`intervals.t95`)."""
    from backtest.run.intervals import t95

    return float(t95(np.array([n]))[0])


def _p_two_sided(t: float, df: int) -> float:
    """P(|T| >= t) for Student's T with df degrees of freedom (the normal's
    from _NORMAL_DF on: the series takes a term per two degrees)."""
    return 1.0 - t_within(t, df) if df < _NORMAL_DF else two_sided_p([t])[0]


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def _t_interval(d: np.ndarray) -> tuple[float, float, float, float]:
    """Mean of `d`, its 95% t interval and the two-sided p of a zero mean
    (NaN where there is no spread to measure)."""
    n = len(d)
    mean = _mean(d)
    if n < 2:
        return mean, math.nan, math.nan, math.nan
    se = float(np.std(d, ddof=1)) / math.sqrt(n)
    if se == 0:
        return mean, mean, mean, (1.0 if mean == 0 else 0.0)
    half = _t97(n) * se
    return mean, mean - half, mean + half, _p_two_sided(abs(mean) / se, n - 1)


def _ratio_difference(
    net_a: np.ndarray, wag_a: np.ndarray, net_b: np.ndarray, wag_b: np.ndarray
) -> tuple[float, float, float, float, float, float]:
    """(edge A, edge B, B - A, its 95% interval, its two-sided p): each edge
    the ratio net / wagered over all sessions; the interval from each
    session's influence on the difference (the delta method), a normal
    interval over sessions."""
    n = len(net_a)
    wa, wb = float(wag_a.sum()), float(wag_b.sum())
    if n == 0 or wa == 0 or wb == 0:
        ea = float(net_a.sum()) / wa if wa else math.nan
        eb = float(net_b.sum()) / wb if wb else math.nan
        return ea, eb, eb - ea, math.nan, math.nan, math.nan
    ea, eb = float(net_a.sum()) / wa, float(net_b.sum()) / wb
    d = eb - ea
    if n < 2:
        return ea, eb, d, math.nan, math.nan, math.nan
    # each session's share of the difference's error: (n_b - R_b w_b)/W_b - (n_a - R_a w_a)/W_a
    u = (net_b - eb * wag_b) / wb - (net_a - ea * wag_a) / wa
    se = math.sqrt(float(np.sum(u * u)) * n / (n - 1))
    if se == 0:
        return ea, eb, d, d, d, (1.0 if d == 0 else 0.0)
    half = _t97(n) * se
    return ea, eb, d, d - half, d + half, _p_two_sided(abs(d) / se, n - 1)


def mcnemar(a: np.ndarray, b: np.ndarray) -> float:
    """McNemar's exact two-sided p for paired yes/no outcomes: of the pairs
    where `a` and `b` differ, how unlikely the split is under even odds
    (1.0 where they never differ).

    >>> mcnemar(np.array([True] * 10 + [False] * 5), np.array([False] * 10 + [False] * 5))
    0.001953125
    """
    only_a = int(np.sum(a & ~b))
    only_b = int(np.sum(b & ~a))
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    # P(X <= k) for X ~ Binomial(n, 1/2), in logs (n may be large), doubled
    log_half = n * math.log(0.5)
    terms = [
        math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half)
        for i in range(k + 1)
    ]
    return min(1.0, 2.0 * math.fsum(terms))

"""Seats against a baseline, on the same hands: paired comparisons.

The seats of one table play the same shoes, session by session, so a
difference between two systems is measured on the same hands (the luck of
the shoes cancels):

- the edge per unit wagered (net / wagered): the difference of the two
  seats' edges, B's less A's, with an interval and a two-sided test from
  each hand's variance given the stakes, as each seat's own interval: on
  each hand, the two seats' stakes, each over its own total wagered,
  differenced, against the bets' covariance for the hand, summed over the
  hands. As sums over sessions: V_AA / W_A^2 + V_BB / W_B^2 - 2 V_AB /
  (W_A W_B), with V the seats' `net_variance` and the B seat's
  `baseline_covariance`, W each seat's total wagered. Its z (the
  difference less the exact difference of the bets placed, over the
  standard error) is standard normal by the martingale central limit
  theorem when no few hands carry the variance sum: `edge_diff_top_share`
  bounds the largest hand's share (`intervals.ROUGH_SHARE`). The covariance
  is the B seat's for each hand: its composition's where B counts cards,
  else the full shoe's; where only one of the two counts, the seats'
  variances are each its own, so the sum is an approximation;
- per session, from the pairs of sessions (session j of seat A beside
  session j of seat B: independent of one another, the two seats of one
  session are not): the mean net per session, the mean of the paired
  differences, with a t interval and a two-sided t test (normal theory
  over sessions: with few sessions and a heavy-tailed system, such as a
  Martingale with a high table maximum, the interval is rough; the verdict
  says so below 30); the ruin rate and the share of winning sessions,
  differences in proportion, with McNemar's exact test on the sessions
  where the two seats differ.

>>> import polars as pl
>>> frame = pl.DataFrame({"seat": ["a"] * 4 + ["b"] * 4, "session": [1, 2, 3, 4] * 2,
...                       "net": [10.0, -10, 10, -10, 20, -20, 20, -40],
...                       "wagered": [10.0] * 4 + [20.0, 20, 20, 40],
...                       "ended_by": ["limit"] * 7 + ["ruin"]})
>>> frame = frame.with_columns(expected_net=pl.lit(0.0), net_variance=pl.col("wagered") ** 2,
...                            largest_hand_variance=pl.col("wagered") ** 2,
...                            baseline_covariance=pl.lit(0.0))
>>> row = compare(frame, ["a", "b"]).row(0, named=True)
>>> row["seat_a"], row["seat_b"], row["sessions"], row["mean_net_diff"], row["ruin_rate_diff"]
('a', 'b', 4, -5.0, 0.25)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import polars as pl

from backtest.core.special import t_within, two_sided_p
from backtest.run.intervals import Z95
from backtest.run.order_stats import Blocks, ExactSum

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
    "exact_edge_diff",
    "edge_diff_z",
    "edge_diff_top_share",
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
    sessions: pl.DataFrame | pl.LazyFrame,
    seats: Sequence[str],
    baseline: str | None = None,
    blocks: Sequence[Blocks] | None = None,
) -> pl.DataFrame:
    """Each seat of `seats` (in order) but the baseline (`baseline`, or the
    first seat) against the baseline, over the sessions both played: one row
    per pair, the differences B - A with A the baseline (`COLUMNS`). Edges
    are per unit wagered, as in the summary: net / wagered; `exact_edge_diff`
    is the difference of the exact edges of the bets each placed,
    `edge_diff_z` the measured difference less it over the standard error,
    `edge_diff_top_share` a bound on the largest hand's share of the
    difference's variance (module docstring). The columns named `mean_net`,
    `ruin_rate` and `winning_sessions` are per session.

    With `blocks` (each seat's sessions a block at a time, in session order,
    as a run spilled to disk has them: `metrics.file_blocks`), two seats'
    blocks are read side by side, in two passes, and memory does not grow
    with the number of sessions. Every sum is exact, rounded once."""
    if len(seats) < 2:
        return pl.DataFrame(schema={c: _dtype(c) for c in COLUMNS})
    base = seats[0] if baseline is None else baseline
    if blocks is not None:
        by_seat = dict(zip(seats, blocks))
        rows = [
            _pair(base, seat, _side_by_side(by_seat[base], by_seat[seat]))
            for seat in seats
            if seat != base
        ]
        return pl.DataFrame(rows, schema={c: _dtype(c) for c in COLUMNS}, orient="row")
    lazy = sessions.lazy() if isinstance(sessions, pl.DataFrame) else sessions
    wanted = lazy.select("seat", *_READ)

    def seat_frame(name: str) -> pl.DataFrame:
        # a seat at a time: a spilled run's sessions are read for two seats at most
        return (
            wanted.filter(pl.col("seat").cast(pl.String) == name)
            .drop("seat")
            .collect()
            .sort("session")
        )

    a = seat_frame(base)
    rows = []
    for seat in seats:
        if seat != base:
            both = a.join(seat_frame(seat), on="session", suffix="_b")
            rows.append(_pair(base, seat, _one_block(both)))
    return pl.DataFrame(rows, schema={c: _dtype(c) for c in COLUMNS}, orient="row")


#: the columns a comparison reads of each seat's sessions
_READ = (
    "session",
    "net",
    "wagered",
    "ended_by",
    "expected_net",
    "net_variance",
    "largest_hand_variance",
    "baseline_covariance",
)

#: two seats' sessions, a block at a time: (A's, B's) frames of `_READ`, the
#: same sessions in the same order; called once for each pass
Pairs = Callable[[], Iterable[tuple[pl.DataFrame, pl.DataFrame]]]


def _one_block(both: pl.DataFrame) -> Pairs:
    """Two seats' sessions joined in one frame (B's columns with `_b`) as
    `Pairs` of one block."""
    a = both.select(_READ)
    b = both.select([pl.col(f"{c}_b").alias(c) if c != "session" else pl.col(c) for c in _READ])
    return lambda: [(a, b)]


def _side_by_side(blocks_a: Blocks, blocks_b: Blocks) -> Pairs:
    """Two seats' blocks read together; each pair of blocks must hold the
    same sessions (a run's seats play the same sessions, spilled in the
    same chunks)."""

    def read() -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
        for a, b in zip(blocks_a(_READ), blocks_b(_READ), strict=True):
            if not a["session"].equals(b["session"]):
                raise ValueError("compare: two seats' blocks hold different sessions")
            yield a, b

    return read


def _dtype(column: str) -> Any:
    if column in ("seat_a", "seat_b"):
        return pl.String
    return pl.Int64 if column == "sessions" else pl.Float64


def _pair(seat_a: str, seat_b: str, pairs: Pairs) -> tuple[Any, ...]:
    """One row of `COLUMNS`: seat B against seat A over their paired sessions,
    in two passes (the second for the spreads about the means)."""
    n = only_ruin_a = only_ruin_b = only_won_a = only_won_b = 0
    ruin_a = ruin_b = won_a = won_b = 0
    net_a, net_b, wag_a, wag_b, diff = (ExactSum() for _ in range(5))
    exp_a, exp_b, var_a, var_b, cross = (ExactSum() for _ in range(5))
    top_a = top_b = 0.0
    for a, b in pairs():
        n += a.height
        na, nb = a["net"].to_numpy(), b["net"].to_numpy()
        ra, rb = _ruined(a), _ruined(b)
        wa, wb = na > 0, nb > 0
        net_a.add(na)
        net_b.add(nb)
        wag_a.add(a["wagered"].to_numpy())
        wag_b.add(b["wagered"].to_numpy())
        diff.add(nb - na)
        exp_a.add(a["expected_net"].to_numpy())
        exp_b.add(b["expected_net"].to_numpy())
        var_a.add(a["net_variance"].to_numpy())
        var_b.add(b["net_variance"].to_numpy())
        cross.add(b["baseline_covariance"].to_numpy())
        if a.height:
            top_a = max(top_a, float(a["largest_hand_variance"].max()))  # type: ignore[arg-type]
            top_b = max(top_b, float(b["largest_hand_variance"].max()))  # type: ignore[arg-type]
        ruin_a, ruin_b = ruin_a + int(ra.sum()), ruin_b + int(rb.sum())
        won_a, won_b = won_a + int(wa.sum()), won_b + int(wb.sum())
        only_ruin_a += int(np.sum(ra & ~rb))
        only_ruin_b += int(np.sum(rb & ~ra))
        only_won_a += int(np.sum(wa & ~wb))
        only_won_b += int(np.sum(wb & ~wa))
    mean_a, mean_b = _per(net_a.value(), n), _per(net_b.value(), n)
    mean, low, high, p = _t_interval(n, diff.value(), pairs)
    edge = _edge_difference(
        (net_a.value(), wag_a.value(), exp_a.value(), var_a.value(), top_a),
        (net_b.value(), wag_b.value(), exp_b.value(), var_b.value(), top_b),
        cross.value(),
    )
    return (
        seat_a,
        seat_b,
        n,
        mean_a,
        mean_b,
        mean,
        low,
        high,
        p,
        *edge,
        _per(ruin_a, n),
        _per(ruin_b, n),
        _per(ruin_b, n) - _per(ruin_a, n),
        mcnemar_counts(only_ruin_a, only_ruin_b),
        _per(won_a, n),
        _per(won_b, n),
        _per(won_b, n) - _per(won_a, n),
        mcnemar_counts(only_won_a, only_won_b),
    )


def _ruined(frame: pl.DataFrame) -> np.ndarray:
    return (frame["ended_by"].cast(pl.String) == "ruin").to_numpy()


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


def _per(total: float, n: int) -> float:
    """A total over n sessions as a mean (NaN for none)."""
    return total / n if n else math.nan


def _t_interval(n: int, total: float, pairs: Pairs) -> tuple[float, float, float, float]:
    """The mean paired difference (B's net less A's: `total` over n sessions),
    its 95% t interval and the two-sided p of a zero mean (NaN where there
    is no spread to measure); the spread about the mean in a second pass."""
    mean = _per(total, n)
    if n < 2:
        return mean, math.nan, math.nan, math.nan
    squares = ExactSum()
    for a, b in pairs():
        d = b["net"].to_numpy() - a["net"].to_numpy() - mean
        squares.add(d * d)
    se = math.sqrt(squares.value() / (n - 1)) / math.sqrt(n)
    if se == 0:
        return mean, mean, mean, (1.0 if mean == 0 else 0.0)
    half = _t97(n) * se
    return mean, mean - half, mean + half, _p_two_sided(abs(mean) / se, n - 1)


def _edge_difference(
    a: tuple[float, float, float, float, float],
    b: tuple[float, float, float, float, float],
    cross: float,
) -> tuple[float, ...]:
    """(edge A, edge B, B - A, its 95% interval, its two-sided p of no
    difference, the exact difference, z, the largest hand's share bound)
    from each seat's (net, wagered, expected net, variance, largest hand's
    variance) and the covariance of B's net with A's, all given the stakes
    (module docstring): a normal interval from each hand's variance."""
    net_a, wa, exp_a, var_a, top_a = a
    net_b, wb, exp_b, var_b, top_b = b
    nan = math.nan
    if wa == 0 or wb == 0:
        ea = net_a / wa if wa else nan
        eb = net_b / wb if wb else nan
        return ea, eb, eb - ea, nan, nan, nan, nan, nan, nan
    ea, eb = net_a / wa, net_b / wb
    d, exact = eb - ea, exp_b / wb - exp_a / wa
    variance = var_a / (wa * wa) + var_b / (wb * wb) - 2.0 * cross / (wa * wb)
    # rounding of the three terms: two seats that stake alike differ by 0 (to it)
    if variance <= _NO_SPREAD * (var_a / (wa * wa) + var_b / (wb * wb)):
        return ea, eb, d, d, d, (1.0 if d == 0 else 0.0), exact, nan, nan
    se = math.sqrt(variance)
    half = Z95 * se
    # the largest hand's (a/W_A - b/W_B)' C (a/W_A - b/W_B) is at most
    # (sqrt(a' C a) / W_A + sqrt(b' C b) / W_B)^2 (Cauchy-Schwarz), and each
    # seat's largest hand at most its largest of all
    top = min(1.0, (math.sqrt(top_a) / wa + math.sqrt(top_b) / wb) ** 2 / variance)
    return (
        ea,
        eb,
        d,
        d - half,
        d + half,
        two_sided_p([abs(d) / se])[0],
        exact,
        (d - exact) / se,
        top,
    )


#: the share of the three terms' sum below which the difference's variance
#: is rounding (two seats that stake alike on every hand)
_NO_SPREAD = 1e-9


def mcnemar(a: np.ndarray, b: np.ndarray) -> float:
    """McNemar's exact two-sided p for paired yes/no outcomes: of the pairs
    where `a` and `b` differ, how unlikely the split is under even odds
    (1.0 where they never differ).

    >>> mcnemar(np.array([True] * 10 + [False] * 5), np.array([False] * 10 + [False] * 5))
    0.001953125
    """
    return mcnemar_counts(int(np.sum(a & ~b)), int(np.sum(b & ~a)))


def mcnemar_counts(only_a: int, only_b: int) -> float:
    """`mcnemar` from the counts of pairs where only A, and only B, said yes."""
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

"""Every statistic of a run as a polars expression.

`sessions_frame` turns the engine's per-session integer arrays into the
sessions frame; `summary` is one `group_by().agg()` over the expressions
below. Edges are from the player's side: net per unit wagered, negative when
the house wins (a measured edge of -0.0106 is a house edge of 1.06%).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from backtest.rules import Bet
from backtest.session_loop import (ENDED_BY, S_BANKROLL_STOPS, S_BELOW_MIN, S_BETS,
                                   S_DRAWDOWN, S_ENDED, S_FINAL, S_HANDS, S_LARGEST,
                                   S_LOSING_STREAK, S_LOSSES, S_MAX_HITS, S_NET, S_PEAK,
                                   S_PUSHES, S_WAGERED, S_WINS)

Z95 = 1.959963984540054
PERCENTILES = (5, 25, 50, 75, 95)
#: a standard error of the edge below this is rounding, not spread: sessions
#: that all end alike (one recorded shoe played again) measure no spread
_NO_SPREAD = 1e-10
_SE = "_edge_se"


ENDED = pl.Enum(list(ENDED_BY))
COUNT = pl.Int32


def sessions_frame(label: str, strategy: str, stats: np.ndarray, wagered: np.ndarray,
                   expected: np.ndarray, tick: float, first_session: int = 0) -> pl.DataFrame:
    """One row per session of one seat (money in currency units), sessions
    numbered from first_session + 1. Counts are 32-bit and names categorical:
    a run keeps this frame for every session, so its width is its memory."""
    n = stats.shape[0]
    data: dict[str, Any] = {
        "seat": pl.Series([label], dtype=pl.Categorical).extend_constant(label, n - 1)
        if n else pl.Series([], dtype=pl.Categorical),
        "strategy": pl.Series([strategy], dtype=pl.Categorical).extend_constant(strategy, n - 1)
        if n else pl.Series([], dtype=pl.Categorical),
        "session": np.arange(first_session + 1, first_session + n + 1, dtype=np.int64),
        "hands": stats[:, S_HANDS].astype(np.int32),
        "bets": stats[:, S_BETS].astype(np.int32),
        "wagered": stats[:, S_WAGERED] / tick,
        "net": stats[:, S_NET] / tick,
        "expected_net": expected,
        "final_bankroll": stats[:, S_FINAL] / tick,
        "peak_bankroll": stats[:, S_PEAK] / tick,
        "max_drawdown": stats[:, S_DRAWDOWN] / tick,
        "longest_losing_streak": stats[:, S_LOSING_STREAK].astype(np.int32),
        "largest_stake": stats[:, S_LARGEST] / tick,
        "max_hits": stats[:, S_MAX_HITS].astype(np.int32),
        "bankroll_stops": stats[:, S_BANKROLL_STOPS].astype(np.int32),
        "raised_to_min": stats[:, S_BELOW_MIN].astype(np.int32),
        "wins": stats[:, S_WINS].astype(np.int32),
        "losses": stats[:, S_LOSSES].astype(np.int32),
        "pushes": stats[:, S_PUSHES].astype(np.int32),
        "ended_by": pl.Series(ENDED_BY, dtype=ENDED).gather(stats[:, S_ENDED]),
    }
    for bet in Bet:
        data[f"wagered_{bet.value}"] = wagered[:, bet.code] / tick
    return pl.DataFrame(data)


def ledger_frame(label: str, parts: Sequence[dict[str, np.ndarray] | None]) -> pl.DataFrame:
    """One row per seat per hand played."""
    cols: dict[str, list[np.ndarray]] = {}
    for part in parts:
        if part is None:
            continue
        for key, arr in part.items():
            cols.setdefault(key, []).append(arr)
    joined = {k: np.concatenate(v) for k, v in cols.items()}
    n = len(joined["net"])
    data: dict[str, Any] = {
        "seat": pl.Series([label] * n, dtype=pl.String),   # typed even with no rows
        "session": joined["session"] + 1,
        "shoe": joined["shoe"],
        "hand": joined["hand"],
        "winner": pl.Series(joined["winner"].astype(np.int64)).replace_strict(
            {0: "player", 1: "banker", 2: "tie"}, return_dtype=pl.String),
    }
    for bet in Bet:
        data[f"stake_{bet.value}"] = joined["cents"][:, bet.code] / 100.0
    data["net"] = joined["net"]
    data["bankroll"] = joined["bankroll"]
    return pl.DataFrame(data)


# --- the metrics, as expressions over the sessions frame of one seat ---------------------

def edge() -> pl.Expr:
    """Measured edge: total net per unit wagered."""
    return pl.col("net").sum() / pl.col("wagered").sum()


def expected_edge() -> pl.Expr:
    """The exact expected edge of the bets actually placed (stake-weighted EV)."""
    return pl.col("expected_net").sum() / pl.col("wagered").sum()


def edge_se() -> pl.Expr:
    """Standard error of the measured edge: a ratio estimator over sessions,
    which are independent (each starts with a fresh shoe). None (no
    interval, no z) for a single session, or sessions that all end alike,
    which have no spread to measure."""
    n = pl.len()
    resid = pl.col("net") - edge() * pl.col("wagered")
    se = (resid.pow(2).sum() * n / (n - 1)).sqrt() / pl.col("wagered").sum()
    return pl.when((n > 1) & (se > _NO_SPREAD)).then(se)


def t95(sessions: np.ndarray) -> np.ndarray:
    """The two-sided 95% quantile of Student's t with sessions - 1 degrees of
    freedom (NaN for fewer than two sessions): 12.71 for 2 sessions, 2.05
    for 30, 1.96 in the limit. From scipy under 1,000 degrees of freedom;
    from there on the series of Abramowitz and Stegun 26.7.5, which agrees
    with it to the last bit and spares a large run scipy's import (a third
    of a second)."""
    v = np.asarray(sessions, dtype=np.float64) - 1.0
    out = np.full(v.shape, np.nan)
    big = v >= 1000
    if big.any():
        z, w = Z95, v[big]
        out[big] = (z + (z ** 3 + z) / 4 / w + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96 / w ** 2
                    + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384 / w ** 3
                    + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z)
                    / 92160 / w ** 4)
    small = (v >= 1) & ~big
    if small.any():
        from scipy.special import stdtrit

        out[small] = stdtrit(v[small], 0.975)
    return out


def share(condition: pl.Expr) -> pl.Expr:
    return condition.cast(pl.Float64).mean()


def metrics(bankroll: float) -> list[pl.Expr]:
    """The summary's aggregations, in column order."""
    out = [
        pl.len().alias("sessions"),
        pl.col("hands").cast(pl.Int64).sum().alias("hands"),
        pl.col("bets").cast(pl.Int64).sum().alias("bets"),
        pl.col("wagered").sum().alias("wagered"),
        pl.col("net").sum().alias("net"),
        edge().alias("edge"),
        # `summary` makes the interval from it, edge -+ Student's t for the
        # sessions times the standard error (a quantile polars cannot take)
        edge_se().alias(_SE),
        expected_edge().alias("expected_edge"),
        ((edge() - expected_edge()) / edge_se()).alias("z"),
        share(pl.col("ended_by") == "ruin").alias("ruin_rate"),
        pl.col("net").filter(pl.col("ended_by") == "ruin").sum().alias("ruined_net"),
        share(pl.col("ended_by") == "win-goal").alias("win_goal_rate"),
        share(pl.col("net") > 0).alias("winning_sessions"),
        pl.col("net").mean().alias("mean_net"),
        pl.col("net").median().alias("median_net"),
        pl.col("max_drawdown").mean().alias("mean_max_drawdown"),
        pl.col("longest_losing_streak").cast(pl.Int64).max().alias("longest_losing_streak"),
        pl.col("largest_stake").max().alias("largest_stake"),
        pl.col("max_hits").cast(pl.Int64).sum().alias("max_hits"),
        pl.col("bankroll_stops").cast(pl.Int64).sum().alias("bankroll_stops"),
        pl.col("raised_to_min").cast(pl.Int64).sum().alias("raised_to_min"),
    ]
    out += [pl.col("final_bankroll").quantile(q / 100, "linear").alias(f"final_bankroll_p{q}")
            for q in PERCENTILES]
    return out


def metric_names() -> list[str]:
    """The summary's columns after seat and strategy, in order."""
    names = []
    for expr in metrics(1.0):
        name = expr.meta.output_name()
        names += ["edge_ci_low", "edge_ci_high"] if name == _SE else [name]
    return names


def summary(sessions: pl.DataFrame | pl.LazyFrame, config: Any) -> pl.DataFrame:
    """One row per seat, in seat order. From a LazyFrame (sessions spilled to
    disk) only the columns the metrics need are read."""
    exprs = metrics(config.session.bankroll)
    used = sorted({"seat", "strategy"}.union(*(e.meta.root_names() for e in exprs)))
    # the columns read first, then summed: summed by the lazy engine as its
    # threads read the files, the last bit of a sum of squares changed from run
    # to run
    one = sessions.lazy().select(used).collect()
    query = (one.lazy().group_by("seat", "strategy")
             .agg(exprs)
             .with_columns(pl.col("seat", "strategy").cast(pl.String)))
    frame = query.collect()
    half = pl.Series(t95(frame["sessions"].to_numpy())) * pl.col(_SE)
    frame = frame.with_columns((pl.col("edge") - half).alias("edge_ci_low"),
                               (pl.col("edge") + half).alias("edge_ci_high"))
    frame = frame.select("seat", "strategy", *metric_names())
    order = {seat.label: i for i, seat in enumerate(config.seats)}
    frame = (frame.with_columns(pl.col("seat").replace_strict(order, default=len(order),
                                                              return_dtype=pl.Int64)
                                .alias("_o")).sort("_o", "seat").drop("_o"))
    return frame.with_columns(pl.col(pl.Float64).fill_nan(None))

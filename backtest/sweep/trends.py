"""Reading a sweep's result: what each varied key does to a metric, seat
by seat, stated only beyond the noise."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from backtest.run.paths import parse_path, top_key
from backtest.sweep.cells import short_value

#: a change is stated when chance alone would give one as large less often than this
SIGNIFICANCE = 0.01
_RATES = ("ruin_rate", "win_goal_rate", "stop_loss_rate", "winning_sessions")


def trends(summary: pl.DataFrame, keys: Sequence[str], metric: str) -> list[str]:
    """What each varied key does to `metric`, seat by seat (seats are told apart
    by their place in the run config), as a few lines for a person.

    A seat's line gives the metric's mean at each of the key's values (over
    the cells of the other keys' values), and a direction only where the
    change is larger than the noise, at `SIGNIFICANCE`, from the cells'
    standard errors (the edge's, from its interval from each hand's
    variance, as the run prints it, or over sessions; a rate's,
    binomial; a z score's, 1): for a key of numbers, "rises" or "falls" by
    the slope of a weighted least-squares line through the means against the
    values' order (one degree of freedom, so a steady change is found when
    each step is small), with no step back beyond the noise, and only where
    the means shown are monotone (else it says the change is not monotone
    across the cells); else a chi-squared test of the means. The cells are taken as independent; cells
    on common shoes are not (they move together), so there the test errs on
    the side of silence. Seats whose metric does not change beyond the
    noise share one line; a seat the key does not touch (`seats[1].params.base`
    for seat 0) has none; a metric without a standard error (`median_net`)
    gets its means and no verdict. Keys that vary together (a zip, or values
    the grid does not cross) are read together: the change is theirs, not one
    key's. The sweep's `seed`, when varied, makes replications, not a trend.
    """
    if summary.is_empty() or metric not in summary.columns or "cell" not in summary.columns:
        return []
    varied = [k for k in keys if k in summary.columns and top_key(k) != "seed"]
    ident = {k: f"{k}.json" if f"{k}.json" in summary.columns else k for k in varied}
    frame = summary.with_columns(
        pl.int_range(pl.len()).over("cell").alias("_seat"),
        _standard_error(summary, metric).alias("_se"),
    )
    seats = int(frame["_seat"].max()) + 1  # type: ignore[arg-type]
    lines: list[str] = []
    for group in _read_together(frame.unique("cell", keep="first"), varied, ident):
        touched = {_seat_of(k, seats) for k in group}
        places = range(seats) if None in touched else sorted(t for t in touched if t is not None)
        quiet: list[str] = []
        for place in places:
            rows = frame.filter(pl.col("_seat") == place)
            seat = _seat_name(rows, place, every_seat=None in touched)
            means = _means(rows, group, ident, metric)
            if means.height < 2 or means["_mean"].is_null().all():
                continue
            verdict = _judge(means, metric, group)
            if verdict == _QUIET:
                quiet.append(seat)
                continue
            values = [" & ".join(short_value(v) for v in row) for row in means.select(group).rows()]
            shown = ", ".join(
                f"{v}: {metric_text(metric, x)}" for v, x in zip(values, means["_mean"].to_list())
            )
            lines.append(
                f"{metric} by {' and '.join(group)}{_for(seat)}: {shown}"
                + (f" ({verdict})" if verdict else "")
            )
        if quiet:
            lines.append(
                f"{metric} by {' and '.join(group)}: {_QUIET}"
                + _for(", ".join(s for s in quiet if s))
            )
    return lines


#: a seat's verdict where the means differ by no more than the noise
_QUIET = "no change beyond the noise"


def _seat_name(rows: pl.DataFrame, place: int, every_seat: bool) -> str:
    """A seat's label, or where a key replaces the seat (its label changes from
    cell to cell) its place (`seats[1]`); none when the key names the seat."""
    names = rows["seat"].cast(pl.String).unique().to_list()
    if len(names) == 1:
        return str(names[0])
    return f"seats[{place}]" if every_seat else ""


def _means(
    rows: pl.DataFrame, group: Sequence[str], ident: Mapping[str, str], metric: str
) -> pl.DataFrame:
    """A seat's mean of `metric` at each value of the keys in `group` (over the
    cells of the other keys' values), with its standard error, from the cells
    where the metric has a value (a z is null for a cell without spread)."""
    known = pl.col(metric).is_not_null()
    return rows.group_by([ident[k] for k in group], maintain_order=True).agg(
        *[pl.col(k).first() for k in group if ident[k] != k],
        pl.col(metric).mean().alias("_mean"),
        (pl.col("_se").filter(known).pow(2).sum().sqrt() / known.sum()).alias("_se"),
        pl.col("_se").filter(known).is_null().any().alias("_unknown"),
    )


def _judge(means: pl.DataFrame, metric: str, group: Sequence[str]) -> str | None:
    """What the means do, in words (`_QUIET` within the noise), judged on the
    values that have a mean; None where the noise is not known."""
    judged = means.filter(pl.col("_mean").is_not_null())
    if judged["_unknown"].any() or judged.height < 2:
        return None
    return _verdict(
        judged["_mean"].to_list(),
        judged["_se"].to_list(),
        metric,
        group,
        judged[group[0]].to_list() if len(group) == 1 else None,
    )


def _for(seats: str) -> str:
    return f" for {seats}" if seats else ""


def _standard_error(summary: pl.DataFrame, metric: str) -> pl.Expr:
    """Each row's standard error of `metric` (null where the summary gives none)."""
    n = pl.col("sessions").cast(pl.Float64)
    if metric in ("edge", "edge_ci_low", "edge_ci_high") and "edge_ci_high" in summary.columns:
        from backtest.run.intervals import Z95, t95

        t = pl.Series(t95(summary["sessions"].cast(pl.Float64).to_numpy()))
        over_sessions = (pl.col("edge_ci_high") - pl.col("edge_ci_low")) / 2 / pl.lit(t)
        if "edge_hands_ci_high" not in summary.columns:
            return over_sessions
        # the edge's interval from each hand's variance, as the run prints it
        hands = (pl.col("edge_hands_ci_high") - pl.col("edge_hands_ci_low")) / 2 / Z95
        return pl.coalesce(hands, over_sessions)
    if metric in _RATES:
        # Agresti and Coull's: not 0 when no session (or every one) was ruined
        p = (pl.col(metric) * n + 2) / (n + 4)
        return (p * (1 - p) / (n + 4)).sqrt()
    if metric == "z":
        return pl.when(pl.col("z").is_not_null()).then(pl.lit(1.0))
    return pl.lit(None, dtype=pl.Float64)


def _verdict(
    means: list[float],
    errors: list[float],
    metric: str,
    group: Sequence[str],
    values: list[Any] | None,
) -> str | None:
    """What the means do, in words: `_QUIET` when they differ by no more than
    the noise; None when the noise is not known."""
    if max(means) == min(means):
        return _QUIET
    if min(errors) <= 0:
        return None
    from backtest.core.special import chi2_sf, normal_cdf, normal_quantile

    w = [1 / e**2 for e in errors]
    centre = sum(wi * m for wi, m in zip(w, means)) / sum(w)
    q = sum(wi * (m - centre) ** 2 for wi, m in zip(w, means))
    differ = chi2_sf(len(means) - 1, q) < SIGNIFICANCE
    key = group[0]
    if (
        len(group) == 1
        and values is not None
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    ):
        # the weighted least-squares slope of the means against the values' ranks
        # (their order, not their spacing: 500, 1000, 2000 are three steps)
        order = sorted(range(len(values)), key=lambda i: values[i])
        m = [means[i] for i in order]
        e = [errors[i] for i in order]
        ws = [w[i] for i in order]
        x_bar = sum(wi * x for x, wi in enumerate(ws)) / sum(ws)
        sxx = sum(wi * (x - x_bar) ** 2 for x, wi in enumerate(ws))
        slope = sum(wi * (x - x_bar) * (mi - centre) for x, (wi, mi) in enumerate(zip(ws, m)))
        z = slope / math.sqrt(sxx)  # the slope (sxy / sxx) over its error (1 / sqrt(sxx))
        # and no step back between neighbours beyond the noise
        turn = -normal_quantile(SIGNIFICANCE / 2)
        steps = [(b - a) / math.hypot(se_a, se_b) for a, b, se_a, se_b in zip(m, m[1:], e, e[1:])]
        sloped = 2 * normal_cdf(-abs(z)) < SIGNIFICANCE
        if sloped and (min(steps) > -turn if z > 0 else max(steps) < turn):
            # a rise (a fall) only where every mean shown is at least (at most) the one before
            pairs = list(zip(m, m[1:]))
            if all(b >= a for a, b in pairs) if z > 0 else all(b <= a for a, b in pairs):
                return f"{metric} rises with {key}" if z > 0 else f"{metric} falls as {key} rises"
            return f"{metric} changes with {key} beyond the noise, not monotone across the cells"
        return f"{metric} changes with {key} beyond the noise, not steadily" if differ else _QUIET
    if not differ:
        return _QUIET
    if len(group) > 1:
        return (
            f"it changes beyond the noise, but {' and '.join(group)} vary together, "
            "so either may be the cause"
        )
    return f"{metric} changes with {key} beyond the noise"


def _read_together(
    cells: pl.DataFrame, keys: Sequence[str], ident: Mapping[str, str]
) -> list[list[str]]:
    """The keys in groups that vary together, each group in the keys' order: two
    keys are together when the cells do not hold every pair of their values (a
    zip), so a change cannot be told apart between them."""
    counts = {k: cells[ident[k]].n_unique() for k in keys}

    def together(a: str, b: str) -> bool:
        return cells.select(ident[a], ident[b]).unique().height < counts[a] * counts[b]

    groups: list[list[str]] = []
    for k in keys:
        joined = [g for g in groups if any(together(j, k) for j in g)]
        groups = [g for g in groups if g not in joined] + [[j for g in joined for j in g] + [k]]
    order = {k: i for i, k in enumerate(keys)}
    return sorted((sorted(g, key=order.__getitem__) for g in groups), key=lambda g: order[g[0]])


def _seat_of(key: str, seats: int) -> int | None:
    """The one seat a key path sets (`seats[1].params.base`: 1), or None for all."""
    parts = parse_path(key)
    if parts[0] == "seats" and len(parts) > 1 and isinstance(parts[1], int):
        return parts[1] % seats if -seats <= parts[1] < seats else None
    return None


def metric_text(metric: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if metric in ("edge", "expected_edge", "edge_ci_low", "edge_ci_high", *_RATES):
        return f"{100 * value:.2f}%"
    return f"{value:,.4g}"

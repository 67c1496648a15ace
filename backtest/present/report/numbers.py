"""The numbers behind the plots, as frames: bankroll bands, the edge converging,
the ruin curve, histogram bins, a sweep's rows with their intervals and means."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from backtest.present.report.results import PATH_COLUMNS
from backtest.run.intervals import Z95


def with_start(paths: pl.DataFrame, bankroll: float) -> pl.DataFrame:
    """The paths with hand 0 (the starting bankroll) added to every seat's session."""
    starts = (
        paths.select("seat", "session")
        .unique(maintain_order=True)
        .with_columns(pl.lit(0, pl.Int64).alias("hand"), pl.lit(float(bankroll)).alias("bankroll"))
    )
    return pl.concat(
        [starts, paths.select(PATH_COLUMNS).cast({"hand": pl.Int64, "bankroll": pl.Float64})]
    ).sort("seat", "session", "hand", maintain_order=True)


def path_bands(paths: pl.DataFrame, bankroll: float) -> pl.DataFrame:
    """Per seat and hand of the session: the 5%, 50% and 95% points of the bankroll
    across sessions. A session that has ended counts at its final bankroll for
    every later hand, up to the seat's longest session."""
    full = with_start(paths, bankroll)
    sessions = paths.select("session").unique()
    grid = (
        full.group_by("seat")
        .agg(pl.col("hand").max().alias("last"))
        .join(sessions, how="cross")
        .with_columns(pl.int_ranges(0, pl.col("last") + 1).alias("hand"))
        .explode("hand")
        .drop("last")
    )
    filled = (
        grid.join(full, on=["seat", "session", "hand"], how="left")
        .sort("seat", "session", "hand")
        .with_columns(
            pl.col("bankroll").forward_fill().over("seat", "session").fill_null(float(bankroll))
        )
    )
    return (
        filled.group_by("seat", "hand")
        .agg(
            pl.col("bankroll").quantile(0.05, "linear").alias("p5"),
            pl.col("bankroll").median().alias("p50"),
            pl.col("bankroll").quantile(0.95, "linear").alias("p95"),
            pl.len().alias("sessions"),
        )
        .sort("seat", "hand")
    )


def edge_convergence(sessions: pl.DataFrame) -> pl.DataFrame:
    """Per seat, after each session (in session order): cumulative hands, the
    measured edge so far (cumulative net / cumulative wagered) and the half
    width of its 95% band around the exact edge, Z95 * s * sqrt(k) / W_k, where
    s is the standard deviation of a session's net around its exact expected
    net, k the sessions so far and W_k the amount wagered in them."""
    k = pl.int_range(1, pl.len() + 1).over("seat")
    spread = ((pl.col("net") - pl.col("expected_net")).pow(2).mean().sqrt()).over("seat")
    return (
        sessions.sort("session", maintain_order=True)
        .with_columns(
            pl.col("hands").cum_sum().over("seat").alias("cum_hands"),
            pl.col("wagered").cum_sum().over("seat").alias("cum_wagered"),
            pl.col("net").cum_sum().over("seat").alias("cum_net"),
            (Z95 * spread * k.cast(pl.Float64).sqrt()).alias("_z_spread"),
        )
        .filter(pl.col("cum_wagered") > 0)
        .select(
            "seat",
            "session",
            "cum_hands",
            "cum_wagered",
            (pl.col("cum_net") / pl.col("cum_wagered")).alias("edge"),
            (pl.col("_z_spread") / pl.col("cum_wagered")).alias("half_width"),
        )
    )


def sweep_rows(summary: pl.DataFrame, keys: Sequence[str] = ()) -> pl.DataFrame:
    """A sweep's summary with each seat's place at the table (`seat_no`, from 0) and a
    label for it: its name, or "seat N" when the sweep varies the name.

    A varied value that is a mapping (a whole seat, say) is shown by its name,
    which two values may share: those get "name (1)", "name (2)" in the order
    they first appear, so that each value is a point of its own."""
    frame = summary.with_columns(pl.int_range(pl.len()).over("cell").alias("seat_no"))
    for key in keys:
        if f"{key}.json" not in frame.columns:
            continue
        pairs = frame.select(key, f"{key}.json").unique(maintain_order=True).rows()
        shared = Counter(label for label, _ in pairs)
        if max(shared.values()) > 1:
            seen: Counter[str] = Counter()
            distinct = {}
            for label, value in pairs:
                seen[label] += 1
                distinct[value] = f"{label} ({seen[label]})" if shared[label] > 1 else label
            frame = frame.with_columns(pl.col(f"{key}.json").replace_strict(distinct).alias(key))
    names = frame.group_by("seat_no").agg(pl.col("seat").unique(maintain_order=True))
    labels = {no: _names(seats) for no, seats in names.iter_rows()}
    return frame.with_columns(
        pl.col("seat_no").replace_strict(labels, return_dtype=pl.String).alias("seat_label")
    )


def with_intervals(rows: pl.DataFrame) -> pl.DataFrame:
    """Each cell's 95% half-widths: the edge's (from its interval from each
    hand's variance, as the run prints it), and the ruin
    rate's (Wilson's score interval for a share of `sessions`; as half-widths
    below and above the rate: `ruin_low`, `ruin_high`)."""

    p = pl.col("ruin_rate")
    centre, spread = wilson(p, pl.col("sessions").cast(pl.Float64), lambda x: x.sqrt())
    return rows.with_columns(
        ((pl.col("edge_hands_ci_high") - pl.col("edge_hands_ci_low")) / 2).alias("edge_half"),
        (p - (centre - spread)).clip(lower_bound=0).alias("ruin_low"),
        (centre + spread - p).clip(lower_bound=0).alias("ruin_high"),
    )


def wilson(p: Any, n: Any, sqrt: Callable[[Any], Any] = np.sqrt) -> tuple[Any, Any]:
    """Wilson's 95% score interval for a share `p` of `n` independent trials,
    as (centre, half-width), for numbers, numpy arrays or polars expressions
    (`sqrt` the square root of their kind)."""
    z2 = Z95**2
    return (
        (p + z2 / (2 * n)) / (1 + z2 / n),
        Z95 * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n),
    )


def _names(seats: Sequence[str]) -> str:
    """A seat's label: its name, or the names it has in the cells (a sweep that
    varies the seat): `A / B / C`, or the first two and how many."""
    if len(seats) <= 3:
        return " / ".join(seats)
    return f"{seats[0]} / {seats[1]} / \u2026 ({len(seats)} seats)"


def by_key(rows: pl.DataFrame, key: str) -> pl.DataFrame:
    """Mean ruin rate, edge and exact edge per value of `key` and seat, over the
    other keys; with the 95% half-widths of the means, taking the cells as
    independent (root of the sum of squares over the number of cells)."""
    rows = with_intervals(rows)
    combined = lambda c: (pl.col(c).pow(2).sum().sqrt() / pl.len()).alias(c)  # noqa: E731
    return rows.group_by(key, "seat_no", "seat_label", maintain_order=True).agg(
        pl.col("ruin_rate").mean(),
        pl.col("edge").mean(),
        pl.col("expected_edge").mean(),
        pl.len().alias("cells"),
        combined("edge_half"),
        combined("ruin_low"),
        combined("ruin_high"),
    )


def key_values(column: pl.Series) -> list[Any]:
    """A key's distinct values, sorted when they are numbers, else in first-seen order."""
    values = column.unique(maintain_order=True).to_list()
    if all(isinstance(v, (int, float)) and v is not None for v in values):
        return sorted(values)
    return values


#: the most bars a histogram gets
MAX_BINS = 60


def bins(x: np.ndarray, span: tuple[float, float] | None = None) -> np.ndarray:
    """Histogram edges for amounts that come in steps (cents, or half units of a
    commission): each bin as wide as a whole number of the steps the data take,
    and its edges half a step off them, so every bin holds as many possible
    amounts as the next (no comb of full and empty bars). About as many bins as
    numpy's "auto" rule, at most MAX_BINS, over `span` (default: the data's range).

    >>> bins(np.array([990.5, 1000.0, 1009.5, 1019.0])).tolist()   # steps of 9.50
    [985.75, 995.25, 1004.75, 1014.25, 1023.75]
    """
    cents = np.unique(np.round(np.asarray(x, dtype=float) * 100).astype(np.int64))
    if cents.size == 0:
        return np.array([-0.5, 0.5])
    step = int(np.gcd.reduce(np.diff(cents))) if cents.size > 1 else 100
    step = max(step, 1)
    lo, hi = (
        (cents[0], cents[-1])
        if span is None
        else (int(round(span[0] * 100)), int(round(span[1] * 100)))
    )
    if hi == lo:
        return (np.array([lo - step / 2, lo + step / 2])) / 100
    auto = np.histogram_bin_edges(np.asarray(x, dtype=float), bins="auto")
    wanted = max((auto[-1] - auto[0]) * 100 / max(len(auto) - 1, 1), (hi - lo) / MAX_BINS)
    width = step * max(1, math.ceil(wanted / step - 1e-9))
    start = lo - step / 2
    count = math.ceil((hi + step / 2 - start) / width)
    return (start + width * np.arange(count + 1)) / 100


def ruin_curve(sessions: pl.DataFrame) -> pl.DataFrame:
    """Per seat, for each hand n from 1 to its longest session: the share of
    its sessions ruined by hand n (ruined, having played n hands or fewer),
    with a 95% Wilson interval (sessions are independent)."""
    out = []
    for (seat,), mine in sessions.partition_by("seat", as_dict=True, maintain_order=True).items():
        n = mine.height
        last = int(mine["hands"].max() or 0)  # type: ignore[arg-type]
        ruined = mine.filter(pl.col("ended_by").cast(pl.String) == "ruin")["hands"].to_numpy()
        by_hand = np.cumsum(np.bincount(ruined.astype(np.int64), minlength=last + 1))[1:]
        share_ = by_hand / n
        centre, half = wilson(share_, n)
        out.append(
            pl.DataFrame(
                {
                    "seat": [seat] * last,
                    "hand": np.arange(1, last + 1),
                    "ruined": share_,
                    "low": np.maximum(centre - half, 0.0),
                    "high": np.minimum(centre + half, 1.0),
                }
            )
        )
    return (
        pl.concat(out)
        if out
        else pl.DataFrame(
            schema={
                "seat": pl.String,
                "hand": pl.Int64,
                "ruined": pl.Float64,
                "low": pl.Float64,
                "high": pl.Float64,
            }
        )
    )


def heatmap_cells(rows: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Per pair of the first two keys and seat: the mean ruin rate and edge over
    any other keys, the edge's 95% half-width, the exact edge, and the z-score
    of the measured edge against the exact one (the cell's own z; for a mean over
    cells, the mean difference over its standard error, the cells taken as
    independent and each one's standard error its half-width / 1.96)."""
    key_y, key_x = keys[:2]
    rows = with_intervals(rows)
    return (
        rows.group_by(key_y, key_x, "seat_no")
        .agg(
            pl.col("ruin_rate").mean(),
            pl.col("edge").mean(),
            pl.col("expected_edge").mean(),
            (pl.col("edge_half").pow(2).sum().sqrt() / pl.len()).alias("edge_half"),
            pl.len().alias("cells"),
            pl.col("z_hands").first().alias("z1"),
        )
        .with_columns(
            pl.when(pl.col("cells") == 1)
            .then(pl.col("z1"))
            .otherwise((pl.col("edge") - pl.col("expected_edge")) / (pl.col("edge_half") / Z95))
            .alias("z")
        )
        .drop("z1")
    )

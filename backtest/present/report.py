"""The report of a run or a sweep: one self-contained HTML file, and its plots as PNG.

`write_report(DIR)` reads what `backtest run --out DIR` or `backtest sweep --out DIR`
wrote and writes `DIR/report.html` (or the file given as `out`): the verdict in
words, then the plots, embedded as base64 PNG data URIs (the file opens offline,
with no server and nothing beside it), then the summary table. The same plots
are written as PNG files in a folder named after the HTML file, beside it:
`report.html` -> `report-plots/`.

A run gets three plots, a panel per seat: bankroll paths (a sample of sessions,
the median and the 5%-95% band across sessions, from paths.parquet), the
distribution of the final bankroll (from sessions.parquet) and the measured
edge converging on the exact edge as hands accumulate. The seats' panels share
their axes, so systems compare by eye. A sweep gets its ruin rate and edge
against the varied keys, each with its 95% interval: a line plot for one key,
heatmaps for two (the edge coloured by its z-score against the exact edge),
and for more, a line plot per key averaged over the others. A plot whose values
are all the same is left out, and a line says so.

A run or a sweep written again into a directory removes the report there (it
told of the results replaced); a report written again replaces its plots.

matplotlib is an optional extra (`pip install 'baccarat-backtest[plot]'`): it
is imported only to draw, onto the Agg canvas (no pyplot, no window).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from backtest.core.errors import BacktestError, UsageError, shown
from backtest.core.files import atomic_path
from backtest.present.verdict import money, pct, share
from backtest.present.verdict import verdict as verdict_text

EXPECTED = (
    "expected the output of `backtest run --out DIR` (run.json, summary.parquet, "
    "sessions.parquet) or of `backtest sweep --out DIR` (sweep.json, summary.parquet)"
)
NEEDS_MATPLOTLIB = (
    "backtest report draws its plots with matplotlib, which is not installed: "
    "pip install 'baccarat-backtest[plot]'"
)
#: sample paths drawn thin per seat
SAMPLE_PATHS = 20
#: key names (the last part of a key path) whose values are money
MONEY_KEYS = frozenset({"bankroll", "win_goal", "stop_loss", "min", "max", "base", "stake", "unit"})

SUMMARY_COLUMNS = (
    "seat",
    "sessions",
    "hands",
    "wagered",
    "net",
    "edge",
    "edge_ci_low",
    "edge_ci_high",
    "expected_edge",
    "z",
    "ruin_rate",
    "win_goal_rate",
    "winning_sessions",
    "median_net",
)
SESSION_COLUMNS = (
    "seat",
    "session",
    "hands",
    "wagered",
    "net",
    "expected_net",
    "final_bankroll",
    "ended_by",
)
PATH_COLUMNS = ("seat", "session", "hand", "bankroll")


class ReportError(BacktestError):
    """A results directory cannot be reported on (incomplete, or unreadable)."""


@dataclass(frozen=True)
class Results:
    """What a run or a sweep wrote to its directory."""

    directory: Path
    kind: str  # "run" or "sweep"
    meta: dict[str, Any]  # run.json or sweep.json
    summary: pl.DataFrame
    sessions: pl.DataFrame | None = None  # a run's sessions
    paths: pl.DataFrame | None = None  # a run's bankroll paths, when written

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.directory.name)

    @property
    def bankroll(self) -> float:
        """A run's starting bankroll."""
        return float(self.meta["bankroll"])

    @property
    def keys(self) -> tuple[str, ...]:
        """A sweep's varied key paths (each a column of its summary)."""
        return tuple(k for k in self.meta.get("keys", ()) if k in self.summary.columns)


@dataclass(frozen=True)
class Plot:
    name: str  # the PNG file's name without .png
    title: str
    caption: str
    png: bytes


@dataclass(frozen=True)
class Report:
    """What `write_report` wrote."""

    html: Path
    plot_dir: Path
    plots: tuple[Path, ...] = field(default_factory=tuple)


# --- reading ----------------------------------------------------------------------------


def load_results(directory: str | Path) -> Results:
    """Read a run's or a sweep's output directory, checking it is complete."""
    directory = Path(directory)
    if not directory.exists():
        raise UsageError(f"{directory}: no such directory; {EXPECTED}")
    if not directory.is_dir():
        raise UsageError(f"{directory} is a file, not a directory; {EXPECTED}")
    run_json, sweep_json = directory / "run.json", directory / "sweep.json"
    if run_json.is_file() and sweep_json.is_file():
        raise ReportError(
            f"{directory} holds both run.json and sweep.json: write a run and a "
            "sweep to different directories"
        )
    if run_json.is_file():
        return _load_run(directory, _read_meta(run_json, "run"))
    if sweep_json.is_file():
        return _load_sweep(directory, _read_meta(sweep_json, "sweep"))
    found = (
        "summary.parquet but no run.json or sweep.json"
        if (directory / "summary.parquet").is_file()
        else "no run.json or sweep.json"
    )
    raise UsageError(f"{directory} holds {found}; {EXPECTED}")


def _read_meta(path: Path, kind: str) -> dict[str, Any]:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReportError(f"{path}: cannot be read as JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("kind") != kind:
        got = meta.get("kind") if isinstance(meta, dict) else None
        raise ReportError(f'{path}: expected "kind": "{kind}", got {got!r}')
    # what the report reads, if present, of the types the run or sweep wrote
    whole = "a whole number"
    for key, ok, what in (
        ("name", lambda v: isinstance(v, str), "text"),
        ("seed", _whole, whole),
        ("hands", _whole, whole),
        ("sessions", _whole, whole),
        ("cells", _whole, whole),
        (
            "keys",
            lambda v: isinstance(v, list) and all(isinstance(k, str) for k in v),
            "a list of key paths",
        ),
    ):
        if key in meta and not ok(meta[key]):
            raise ReportError(
                f"{path}: {key}: expected {what}, got {shown(meta[key])}; "
                "the file was not written by backtest, or was edited"
            )
    return meta


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _read_parquet(path: Path, columns: Sequence[str]) -> pl.DataFrame:
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # polars raises several kinds for a file that is not Parquet
        raise ReportError(f"{path}: cannot be read as Parquet: {exc}") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ReportError(f"{path}: lacks the column(s) {', '.join(missing)}")
    return frame


def _load_run(directory: Path, meta: dict[str, Any]) -> Results:
    if not isinstance(meta.get("bankroll"), (int, float)):
        raise ReportError(f'{directory / "run.json"}: lacks the starting bankroll ("bankroll")')
    summary_file = directory / "summary.parquet"
    if not summary_file.is_file():
        raise ReportError(
            f"{directory}: the run did not finish: summary.parquet (written last) "
            "is missing; run `backtest run CONFIG.yaml --out DIR` again"
        )
    sessions_file = directory / "sessions.parquet"
    if not sessions_file.is_file():
        raise ReportError(f"{directory}: sessions.parquet is missing; {EXPECTED}")
    summary = _read_parquet(summary_file, SUMMARY_COLUMNS)
    if summary.is_empty():
        raise ReportError(f"{summary_file}: has no seats")
    sessions = _read_parquet(sessions_file, SESSION_COLUMNS)
    paths_file = directory / "paths.parquet"
    paths = _read_parquet(paths_file, PATH_COLUMNS) if paths_file.is_file() else None
    return Results(directory, "run", meta, summary, sessions, paths)


def _load_sweep(directory: Path, meta: dict[str, Any]) -> Results:
    """The finished cells: cells/*.parquet (each written as its cell finished), else
    summary.parquet."""
    cells = sorted((directory / "cells").glob("*.parquet"))
    if cells:
        frames = [_read_parquet(f, ("cell", *SUMMARY_COLUMNS)) for f in cells]
        summary = pl.concat(frames, how="diagonal_relaxed").sort("cell", maintain_order=True)
    elif (directory / "summary.parquet").is_file():
        summary = _read_parquet(directory / "summary.parquet", ())
    else:
        summary = pl.DataFrame()
    if summary.is_empty():
        raise ReportError(
            f"{directory}: the sweep has no finished cells yet; finish it with "
            f"`backtest sweep SWEEP.yaml --out {directory} --resume`"
        )
    missing = [c for c in ("cell", *SUMMARY_COLUMNS) if c not in summary.columns]
    if missing:
        raise ReportError(
            f"{directory / 'summary.parquet'}: lacks the column(s) {', '.join(missing)}"
        )
    return Results(directory, "sweep", meta, summary)


# --- the numbers behind the plots -------------------------------------------------------


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
    # imported here: backtest.run.metrics loads the compiled session loop, which reading
    # a directory (and failing early on a bad one) does not need
    from backtest.run.metrics import Z95

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
    """Each cell's 95% half-widths: the edge's (from its interval), and the ruin
    rate's (Wilson's score interval for a share of `sessions`; as half-widths
    below and above the rate: `ruin_low`, `ruin_high`)."""

    p = pl.col("ruin_rate")
    centre, spread = wilson(p, pl.col("sessions").cast(pl.Float64), lambda x: x.sqrt())
    return rows.with_columns(
        ((pl.col("edge_ci_high") - pl.col("edge_ci_low")) / 2).alias("edge_half"),
        (p - (centre - spread)).clip(lower_bound=0).alias("ruin_low"),
        (centre + spread - p).clip(lower_bound=0).alias("ruin_high"),
    )


def wilson(p: Any, n: Any, sqrt: Callable[[Any], Any] = np.sqrt) -> tuple[Any, Any]:
    """Wilson's 95% score interval for a share `p` of `n` independent trials,
    as (centre, half-width), for numbers, numpy arrays or polars expressions
    (`sqrt` the square root of their kind)."""
    from backtest.run.metrics import Z95

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


def _values(column: pl.Series) -> list[Any]:
    """A key's distinct values, sorted when they are numbers, else in first-seen order."""
    values = column.unique(maintain_order=True).to_list()
    if all(isinstance(v, (int, float)) and v is not None for v in values):
        return sorted(values)
    return values


# --- drawing ----------------------------------------------------------------------------


def require_matplotlib() -> None:
    """Fail with the one-line install hint when matplotlib is missing."""
    _matplotlib()


def _matplotlib() -> Any:
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError(NEEDS_MATPLOTLIB) from None
    return matplotlib, Figure, FigureCanvasAgg


def _figure(
    panels: int, width: float = 6.0, height: float = 3.8, columns: int = 2, share: bool = False
) -> tuple[Any, list[Any]]:
    """A figure on the Agg canvas with a grid of `panels` axes (sharing both
    axes if `share`); three panels go in one row rather than leave a slot empty."""
    _, figure_class, canvas = _matplotlib()
    ncols = 1 if panels == 1 else 3 if panels == 3 else min(columns, panels)
    nrows = math.ceil(panels / ncols)
    fig = figure_class(figsize=(width * ncols, height * nrows + 0.6), layout="constrained")
    canvas(fig)
    axes = list(
        np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharex=share, sharey=share)).ravel()
    )
    for ax in axes[panels:]:
        ax.set_visible(False)
    return fig, axes[:panels]


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def _colour(i: int) -> str:
    return f"C{i % 10}"


def _money_axis(axis: Any) -> None:
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def _percent_axis(axis: Any) -> None:
    from matplotlib.ticker import PercentFormatter

    axis.set_major_formatter(PercentFormatter(xmax=100))


def _seats(results: Results) -> list[str]:
    return [str(s) for s in results.summary["seat"].to_list()]


def plot_paths(results: Results) -> Plot:
    assert results.paths is not None
    bankroll = results.bankroll
    full = with_start(results.paths, bankroll)
    bands = path_bands(results.paths, bankroll)
    n_sessions = results.paths["session"].n_unique()
    seats = _seats(results)
    fig, axes = _figure(len(seats), share=True)
    title = "Bankroll through the session"
    for i, (ax, seat) in enumerate(zip(axes, seats)):
        colour = _colour(i)
        mine = full.filter(pl.col("seat") == seat)
        sample = mine["session"].unique(maintain_order=True).to_list()[:SAMPLE_PATHS]
        for j, session in enumerate(sample):
            one = mine.filter(pl.col("session") == session)
            ax.plot(
                one["hand"],
                one["bankroll"],
                color=colour,
                lw=0.6,
                alpha=0.35,
                label=f"{len(sample)} sample sessions" if j == 0 else None,
            )
        band = bands.filter(pl.col("seat") == seat)
        ax.fill_between(
            band["hand"],
            band["p5"],
            band["p95"],
            color=colour,
            alpha=0.18,
            lw=0,
            label="5%-95% of sessions",
        )
        ax.plot(band["hand"], band["p50"], color=colour, lw=2.2, label="median")
        ax.axhline(bankroll, color="0.3", ls=":", lw=1, label="starting bankroll")
        ax.set_title(seat)
        ax.set_xlabel("hand of the session")
        ax.set_ylabel("bankroll (currency units)")
        ax.set_xlim(left=0)
        _money_axis(ax.yaxis)
        ax.tick_params(labelleft=True, labelbottom=True)
        ax.legend(fontsize="small", loc="best")
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title} ({results.name}; the seats share their axes)")
    caption = (
        f"Each seat's bankroll after every hand of the first {n_sessions} sessions: "
        f"{SAMPLE_PATHS} of them drawn thin, the median (thick) and the band holding "
        "90% of sessions (5% to 95%) at each hand. A session that ended (ruin, win "
        "goal, stop-loss) keeps its final bankroll for the later hands, so the median "
        "and the band flatten as sessions end. Every panel has the same scales."
    )
    return Plot("bankroll-paths", title, caption, _png(fig))


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


def plot_final_bankroll(results: Results) -> Plot:
    assert results.sessions is not None
    bankroll = results.bankroll
    seats = _seats(results)
    fig, axes = _figure(len(seats), share=True)
    title = "Final bankroll of each session"
    every = results.sessions["final_bankroll"].to_numpy().astype(float)
    span = (float(every.min()), float(every.max())) if every.size else None
    for i, (ax, seat) in enumerate(zip(axes, seats)):
        x = (
            results.sessions.filter(pl.col("seat") == seat)["final_bankroll"]
            .to_numpy()
            .astype(float)
        )
        # one set of bins for every seat: steps of the amounts all the seats end with
        ax.hist(x, bins=bins(every, span), color=_colour(i), alpha=0.85, edgecolor="white", lw=0.4)
        ax.axvline(
            bankroll, color="black", ls="--", lw=1.2, label=f"starting bankroll {money(bankroll)}"
        )
        if x.size:
            ax.axvline(
                float(np.median(x)),
                color="0.45",
                ls=":",
                lw=1.2,
                label=f"median {money(float(np.median(x)))}",
            )
        ax.set_title(seat)
        ax.set_xlabel("final bankroll (currency units)")
        ax.set_ylabel("sessions")
        _money_axis(ax.xaxis)
        ax.tick_params(labelleft=True, labelbottom=True)
        ax.legend(fontsize="small", loc="best")
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(f"{title} ({results.name}; the seats share their axes)")
    caption = (
        f"How the bankroll stood at the end of each of the "
        f"{results.sessions['session'].n_unique():,} sessions, per seat; the dashed "
        "line is the starting bankroll: every session right of it won money. Each bar "
        "spans a whole number of the steps the amounts come in, and every panel has "
        "the same bars and scales."
    )
    return Plot("final-bankroll", title, caption, _png(fig))


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


def plot_ruin(results: Results) -> Plot:
    assert results.sessions is not None
    curve = ruin_curve(results.sessions.with_columns(pl.col("seat").cast(pl.String)))
    seats = _seats(results)
    fig, axes = _figure(len(seats), share=True)
    title = "Ruin over time"
    for i, (ax, seat) in enumerate(zip(axes, seats)):
        mine = curve.filter(pl.col("seat") == seat)
        x = mine["hand"].to_numpy()
        ax.fill_between(
            x,
            100 * mine["low"].to_numpy(),
            100 * mine["high"].to_numpy(),
            step="post",
            color=_colour(i),
            alpha=0.2,
            lw=0,
            label="95% interval",
        )
        final = float(mine["ruined"][-1]) if mine.height else 0.0
        ax.step(
            x,
            100 * mine["ruined"].to_numpy(),
            where="post",
            color=_colour(i),
            lw=1.6,
            label=f"ruined by then: {100 * final:.1f}% at the end",
        )
        ax.set_title(seat)
        ax.set_xlabel("hands into the session")
        ax.set_ylabel("sessions ruined (%)")
        ax.tick_params(labelleft=True, labelbottom=True)
        _percent_axis(ax.yaxis)
        ax.legend(fontsize="small", loc="upper left")
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title} ({results.name}; the seats share their axes)")
    caption = (
        "The share of sessions ruined by each hand of the session (the bankroll left "
        "could not cover the next stake), with its 95% interval (Wilson's, over "
        "independent sessions). A session that ended otherwise, or ran out of hands, "
        "counts as not ruined throughout."
    )
    return Plot("ruin-over-time", title, caption, _png(fig))


def plot_edge(results: Results) -> Plot:
    assert results.sessions is not None
    curve = edge_convergence(results.sessions)
    exact = dict(zip(results.summary["seat"].to_list(), results.summary["expected_edge"]))
    every = _seats(results)
    # a seat that placed no bets has no edge: no panel (the caption names it)
    seats = [
        seat
        for i, seat in enumerate(every)
        if exact.get(seat) is not None and not curve.filter(pl.col("seat") == seat).is_empty()
    ]
    idle = [seat for seat in every if seat not in seats]
    fig, axes = _figure(max(len(seats), 1))
    title = "Measured edge converging on the exact edge"
    for ax, seat in zip(axes, seats):
        i = every.index(seat)
        mine = curve.filter(pl.col("seat") == seat)
        ax.set_title(seat)
        ax.set_xlabel("hands played, cumulative over sessions (log scale)")
        ax.set_ylabel("edge (% of amount wagered)")
        x = mine["cum_hands"].to_numpy()
        edge = 100 * mine["edge"].to_numpy()
        half = 100 * mine["half_width"].to_numpy()
        e = 100 * float(exact[seat])
        ax.fill_between(
            x,
            e - half,
            e + half,
            color="0.5",
            alpha=0.2,
            lw=0,
            label="95% band if the exact edge is true",
        )
        ax.plot(x, edge, color=_colour(i), lw=1.6, label=f"measured: {edge[-1]:+.2f}% at the end")
        ax.axhline(e, color="black", ls="--", lw=1.2, label=f"exact edge {e:+.2f}%")
        # the whole measured curve, from the first session on (the band may run out of
        # the frame at the start, where it is widest)
        reach = max(float(np.nanmax(np.abs(edge - e))), float(half[-1]), 0.05)
        ax.set_ylim(e - 1.15 * reach, e + 1.15 * reach)
        ax.plot(x[:1], edge[:1], marker="o", color=_colour(i), ms=4)
        if x[-1] > x[0]:
            ax.set_xscale("log")
        _percent_axis(ax.yaxis)
        ax.legend(fontsize="small", loc="best")
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title} ({results.name})")
    caption = (
        "Cumulative net / cumulative amount wagered, adding the sessions in order "
        "(x: hands played so far). The dashed line is the exact edge of the bets "
        "placed (from the odds engine); the grey band, exact edge \u00b1 1.96 \u00d7 "
        "s\u221ak / W (s: standard deviation of a session's net around its exact "
        "expected net, k: sessions so far, W: amount wagered so far), narrows as 1/\u221ak "
        "and holds the measured edge 95% of the time if the exact edge is the truth. "
        "The dot is the first session. Negative: the house wins."
        + (f" No panel for {', '.join(idle)}: placed no bets." if idle else "")
    )
    return Plot("edge-convergence", title, caption, _png(fig))


def _key_label(key: str) -> str:
    last = re.split(r"[.\[\]]+", key.strip("]"))[-1]
    return f"{key} (currency units)" if last in MONEY_KEYS else key


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def plot_sweep_key(results: Results, rows: pl.DataFrame, key: str, ruin: bool = True) -> Plot:
    """Ruin rate (if `ruin`) and edge against one key, a line per seat (averaged
    over the other keys), each point with its 95% interval."""
    means = by_key(rows, key)
    values = _values(rows[key])
    numeric = all(isinstance(v, (int, float)) for v in values)
    others = [k for k in results.keys if k != key]
    fig, axes = _figure(2 if ruin else 1, width=5.6)
    ax_ruin, ax_edge = (axes[0], axes[1]) if ruin else (None, axes[0])
    seat_list = rows.select("seat_no", "seat_label").unique(maintain_order=True).rows()
    from backtest.core.special import band_z
    from backtest.run.metrics import Z95

    # every cell's seat is a test: the band that holds all of them at once
    widen = band_z(rows.height) / Z95
    for no, label in seat_list:
        mine = means.filter(pl.col("seat_no") == no)
        at = {v: r for v, r in zip(mine[key].to_list(), mine.iter_rows(named=True))}
        shown = [v for v in values if v in at]
        # seats side by side at a value, so their intervals do not hide each other
        nudge = 0.0 if numeric else 0.12 * (no - (len(seat_list) - 1) / 2)
        xs = shown if numeric else [values.index(v) + nudge for v in shown]
        colour = _colour(no)
        # values that are names (a whole seat, a rules preset) are not joined by lines
        line = "-" if numeric else "none"
        if ax_ruin is not None:
            ax_ruin.errorbar(
                xs,
                [_percent(at[v]["ruin_rate"]) for v in shown],
                yerr=[
                    [_percent(at[v]["ruin_low"]) for v in shown],
                    [_percent(at[v]["ruin_high"]) for v in shown],
                ],
                marker="o",
                ls=line,
                color=colour,
                capsize=3,
                label=label,
            )
        ax_edge.errorbar(
            xs,
            [_percent(at[v]["edge"]) for v in shown],
            yerr=[widen * _percent(at[v]["edge_half"]) for v in shown],
            ls="none",
            color=colour,
            alpha=0.25,
            elinewidth=5,
            label=f"{label}: family-wise 95% band ({rows.height} tests)",
        )
        ax_edge.errorbar(
            xs,
            [_percent(at[v]["edge"]) for v in shown],
            yerr=[_percent(at[v]["edge_half"]) for v in shown],
            marker="o",
            ls=line,
            color=colour,
            capsize=3,
            label=f"{label}: measured, 95% interval",
        )
        ax_edge.plot(
            xs,
            [_percent(at[v]["expected_edge"]) for v in shown],
            ls="--" if numeric else "none",
            marker=None if numeric else "_",
            markersize=18,
            color=colour,
            alpha=0.8,
            label=f"{label}: exact",
        )
    panels = ([(ax_ruin, "ruin rate (% of sessions)")] if ax_ruin is not None else []) + [
        (ax_edge, "edge (% of amount wagered)")
    ]
    for ax, what in panels:
        ax.set_xlabel(_key_label(key))
        ax.set_ylabel(what)
        _percent_axis(ax.yaxis)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="best")
        if numeric:
            positive = all(v > 0 for v in values)
            if positive and len(values) > 2 and max(values) / min(values) >= 20:
                ax.set_xscale("log")
            ax.set_xticks(values, [f"{v:,g}" for v in values])
            ax.minorticks_off()
        else:
            ax.set_xticks(
                range(len(values)),
                [_tick(v) for v in values],
                rotation=30 if len(values) > 4 else 0,
                ha="right" if len(values) > 4 else "center",
            )
            ax.set_xlim(-0.5, len(values) - 0.5)
    if ax_ruin is not None:
        ax_ruin.set_ylim(bottom=0)
        ax_ruin.set_title(f"Ruin rate by {key}")
    ax_edge.set_title(f"Edge by {key}")
    title = f"Ruin rate and edge against {key}" if ruin else f"Edge against {key}"
    fig.suptitle(f"{title} ({results.name})")
    caption = (
        ("Each seat's share of sessions ended in ruin, and its" if ruin else "Each seat's")
        + f" measured edge (dots) beside the exact edge of the bets it placed (dashes), "
        f"at each value of {key}, with 95% intervals (the edge's: Student's t over the "
        "sessions; the ruin rate's: Wilson's score interval). The wide light bars are "
        f"the family-wise band over the sweep's {rows.height} cells and seats "
        "(Bonferroni): all of them hold the exact edge at once in 95% of sweeps, so a "
        "measured edge outside only its narrow interval is what many tries give"
        + (
            f"; each point is the mean over the cells of the other key(s) "
            f"({', '.join(others)}), its interval taking the cells as independent."
            if others
            else "."
        )
    )
    return Plot(f"sweep-{_slug(key)}", title, caption, _png(fig))


def _percent(x: Any) -> float:
    return math.nan if x is None else 100 * float(x)


def _tick(value: Any) -> str:
    text = (
        f"{value:,g}"
        if isinstance(value, (int, float)) and not isinstance(value, bool)
        else str(value)
    )
    return text if len(text) <= 18 else text[:16] + "\u2026"


def heatmap_cells(rows: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Per pair of the first two keys and seat: the mean ruin rate and edge over
    any other keys, the edge's 95% half-width, the exact edge, and the z-score
    of the measured edge against the exact one (the cell's own z; for a mean over
    cells, the mean difference over its standard error, the cells taken as
    independent and each one's standard error its half-width / 1.96)."""
    from backtest.run.metrics import Z95

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
            pl.col("z").first().alias("z1"),
        )
        .with_columns(
            pl.when(pl.col("cells") == 1)
            .then(pl.col("z1"))
            .otherwise((pl.col("edge") - pl.col("expected_edge")) / (pl.col("edge_half") / Z95))
            .alias("z")
        )
        .drop("z1")
    )


def plot_sweep_heatmap(results: Results, rows: pl.DataFrame, metric: str) -> Plot:
    """`metric` (ruin_rate or edge) over the two varied keys, a panel per seat.
    The ruin rate is coloured by its value; the edge by its z-score against the
    exact edge, on a diverging scale centred at 0 (sampling noise stays pale)."""
    key_y, key_x = results.keys[:2]
    ys, xs = _values(rows[key_y]), _values(rows[key_x])
    seats = rows.select("seat_no", "seat_label").unique(maintain_order=True).rows()
    means = heatmap_cells(rows, results.keys)
    what = "Ruin rate" if metric == "ruin_rate" else "Edge"
    unit = "% of sessions" if metric == "ruin_rate" else "% of amount wagered"
    edge = metric == "edge"
    fig, axes = _figure(
        len(seats),
        width=max(4.5, (1.6 if edge else 1.1) * len(xs) + 2.5),
        height=max(3.2, (0.9 if edge else 0.55) * len(ys) + 2.0),
    )
    top = max(1.0, 100 * float(rows.select(pl.col("ruin_rate").max()).item() or 0.0))
    zs = means["z"].drop_nulls().drop_nans()
    z_top = max(3.0, float(np.abs(zs.to_numpy()).max())) if len(zs) else 3.0
    for ax, (no, label) in zip(axes, seats):
        grid = np.full((len(ys), len(xs)), np.nan)
        colour_by = np.full_like(grid, np.nan)
        texts: dict[tuple[int, int], str] = {}
        for r in means.filter(pl.col("seat_no") == no).iter_rows(named=True):
            i, j = ys.index(r[key_y]), xs.index(r[key_x])
            if r[metric] is None:
                continue
            grid[i, j] = 100 * r[metric]
            if not edge:
                colour_by[i, j] = grid[i, j]
                texts[i, j] = f"{grid[i, j]:.1f}%"
                continue
            colour_by[i, j] = np.nan if r["z"] is None else r["z"]
            half = "" if r["edge_half"] is None else f" \u00b1 {100 * r['edge_half']:.2f}"
            exact = "n/a" if r["expected_edge"] is None else f"{100 * r['expected_edge']:+.2f}%"
            z = "" if r["z"] is None else f"\nz {r['z']:+.1f}"
            texts[i, j] = f"{grid[i, j]:+.2f}%{half}\nexact {exact}{z}"
        # ruin rates share one scale from 0, so seats compare by colour; edges are
        # coloured by how far from their exact edge they are, in standard errors
        scale = {"vmin": -z_top, "vmax": z_top} if edge else {"vmin": 0.0, "vmax": top}
        image = ax.imshow(
            colour_by, aspect="auto", origin="lower", cmap="RdBu_r" if edge else "Reds", **scale
        )
        bar = fig.colorbar(image, ax=ax)
        if edge:
            bar.set_label("z: (measured \u2212 exact edge) / standard error")
        else:
            bar.set_label(f"{what.lower()} ({unit})")
            _percent_axis(bar.ax.yaxis)
        for i in range(len(ys)):
            for j in range(len(xs)):
                if (i, j) not in texts:
                    ax.text(j, i, "\u2013", ha="center", va="center", color="0.4")
                    continue
                level = colour_by[i, j]
                light = (abs(level) > 0.6 * z_top) if edge else level > top / 2
                ax.text(
                    j,
                    i,
                    texts[i, j],
                    ha="center",
                    va="center",
                    fontsize="x-small" if edge else "small",
                    color="white" if light and not math.isnan(level) else "black",
                )
        ax.set_xticks(
            range(len(xs)),
            [_tick(v) for v in xs],
            rotation=30 if len(xs) > 4 else 0,
            ha="right" if len(xs) > 4 else "center",
        )
        ax.set_yticks(range(len(ys)), [_tick(v) for v in ys])
        ax.set_xlabel(_key_label(key_x))
        ax.set_ylabel(_key_label(key_y))
        ax.set_title(label)
    others = results.keys[2:]
    title = f"{what} by {key_y} and {key_x}"
    fig.suptitle(f"{title} ({results.name})")
    caption = (
        f"{what} ({unit}) of each seat in each cell of the sweep"
        + (
            "; measured \u00b1 the half-width of its 95% interval, the exact edge of "
            "the bets placed and z below it. The colour is z, the measured edge's "
            "distance from the exact edge in standard errors, on a scale centred at 0: "
            "pale is what sampling noise gives (|z| < 2), deep red above the exact edge, "
            "deep blue below it"
            if edge
            else ""
        )
        + (f"; each square is the mean over {', '.join(others)}." if others else ".")
        + " A dash marks a combination the sweep did not run."
    )
    return Plot(f"heatmap-{_slug(metric)}", title, caption, _png(fig))


def _all_equal(values: pl.Series) -> bool:
    return values.drop_nulls().n_unique() <= 1


def drawn(results: Results) -> tuple[list[Plot], list[str]]:
    """Every plot of the report, as PNG bytes (nothing is written), and a line
    for each plot left out because its values are all the same."""
    require_matplotlib()
    if results.kind == "run":
        plots = (
            [plot_paths(results)]
            if results.paths is not None and not results.paths.is_empty()
            else []
        )
        plots.append(plot_final_bankroll(results))
        notes = []
        if results.summary.filter(pl.col("ruin_rate") > 0).is_empty():
            notes.append("No ruin plot: no session was ruined.")
        else:
            plots.append(plot_ruin(results))
        if results.summary.filter(pl.col("wagered") > 0).is_empty():
            return plots, [*notes, "No edge plot: no seat placed a bet."]
        return plots + [plot_edge(results)], notes
    rows = sweep_rows(results.summary, results.keys)
    keys = results.keys
    notes = []
    ruin_varies = not _all_equal(rows["ruin_rate"])
    if not ruin_varies:
        notes.append(
            f"No ruin rate plot: the ruin rate is "
            f"{share(rows['ruin_rate'].drop_nulls().first())} in every cell."
        )
    if _all_equal(rows["edge"]):
        notes.append(
            f"No edge plot: the edge is {pct(rows['edge'].drop_nulls().first())} in every cell."
        )
        if not ruin_varies:
            return [], notes
        if len(keys) == 2:
            return [plot_sweep_heatmap(results, rows, "ruin_rate")], notes
        return [plot_sweep_key(results, rows, key) for key in keys], notes
    if len(keys) == 2:
        return ([plot_sweep_heatmap(results, rows, "ruin_rate")] if ruin_varies else []) + [
            plot_sweep_heatmap(results, rows, "edge")
        ], notes
    return [plot_sweep_key(results, rows, key, ruin=ruin_varies) for key in keys], notes


def draw(results: Results) -> list[Plot]:
    """Every plot of the report, as PNG bytes (nothing is written)."""
    return drawn(results)[0]


# --- words and the table ----------------------------------------------------------------


def verdict_lines(results: Results) -> list[str]:
    """The verdict in words: a paragraph per seat (per seat over all cells, for a sweep)."""
    if results.kind == "run":
        lines = verdict_text(results.summary, results.bankroll).splitlines()
        out = []
        for line, row in zip(lines, results.summary.iter_rows(named=True)):
            if row["wagered"] and not row["ruin_rate"]:
                line += " No session ended in ruin (ruin rate 0.0%)."
            out.append(line)
        return out
    rows = sweep_rows(results.summary, results.keys)
    keys = results.keys
    out = []
    for no, label in rows.select("seat_no", "seat_label").unique(maintain_order=True).iter_rows():
        mine = rows.filter(pl.col("seat_no") == no)
        betting = mine.filter(pl.col("wagered") > 0)
        if betting.is_empty():
            out.append(f"{label}: placed no bets in any cell.")
            continue
        worst = betting.sort("ruin_rate", descending=True, nulls_last=True).row(0, named=True)
        best = betting.sort("ruin_rate", nulls_last=True).row(0, named=True)
        text = (
            f"{label}: over {mine.height} cell(s), the measured edge per unit wagered "
            f"{_span(betting['edge'])}; the exact edge of the bets placed "
            f"{_span(betting['expected_edge'])}. "
        )
        if worst["ruin_rate"]:
            text += (
                f"Ruin rate from {share(best['ruin_rate'])} ({_cell(best, keys)}) to "
                f"{share(worst['ruin_rate'])} ({_cell(worst, keys)})."
            )
            what = "Ruin rate" if len(keys) == 1 else "Mean ruin rate"
            for key in keys:
                means = dict(by_key(mine, key).select(key, "ruin_rate").iter_rows())
                if len(means) > 1:
                    shown = ", ".join(f"{_tick(v)}: {share(means[v])}" for v in _values(mine[key]))
                    text += f" {what} by {key}: {shown}."
        else:
            text += "No session ended in ruin in any cell."
        out.append(text)
    return out


def _span(values: pl.Series) -> str:
    """`ran from -1.23% to +0.45%`, or `was -1.06% in every cell` when all are the same."""
    low, high = pct(values.min()), pct(values.max())
    return f"was {low} in every cell" if low == high else f"ran from {low} to {high}"


def _cell(row: dict[str, Any], keys: Sequence[str]) -> str:
    return ", ".join(f"{k}={_tick(row[k])}" for k in keys) or "the base config"


def _count(x: Any) -> str:
    return "n/a" if x is None else f"{x:,}"


def table_rows(
    summary: pl.DataFrame, keys: Sequence[str] = ()
) -> tuple[list[str], list[list[str]]]:
    """The summary as text cells, formatted as the report shows them: edges as signed
    percentages, rates as percentages, money with 2 decimals."""
    lead = ["cell", *keys] if "cell" in summary.columns else []
    headers = lead + [
        "seat",
        "sessions",
        "hands",
        "wagered",
        "net",
        "edge",
        "95% CI",
        "exact edge",
        "z",
        "won",
        "ruined",
        "win goal",
        "median net",
        "final p5",
        "final p50",
        "final p95",
    ]
    rows = []
    for r in summary.iter_rows(named=True):
        cells = [str(r["cell"]), *[_tick(r[k]) for k in keys]] if lead else []
        cells += [
            str(r["seat"]),
            _count(r["sessions"]),
            _count(r["hands"]),
            money(r["wagered"]),
            money(r["net"]),
            pct(r["edge"]),
            f"{pct(r['edge_ci_low'])} .. {pct(r['edge_ci_high'])}",
            pct(r["expected_edge"]),
            "n/a" if r["z"] is None else f"{r['z']:+.2f}",
            share(r["winning_sessions"]),
            share(r["ruin_rate"]),
            share(r["win_goal_rate"]),
            money(r["median_net"]),
            *[money(r.get(f"final_bankroll_p{q}")) for q in (5, 50, 95)],
        ]
        rows.append(cells)
    return headers, rows


STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
       max-width: 1200px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
.meta { color: #555; margin-top: 0; }
.verdict p { margin: .5em 0; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #444; font-size: .92em; max-width: 60em; }
table { border-collapse: collapse; font-size: .86em; font-variant-numeric: tabular-nums; }
th, td { padding: .25em .6em; border-bottom: 1px solid #e3e3e3; text-align: right;
         white-space: nowrap; }
th { background: #f4f4f4; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
.scroll { overflow-x: auto; }
"""

TEXT_COLUMNS = frozenset({"seat", "cell"})


#: marks a report's HTML as this tool's (a later run into its directory removes it)
GENERATOR = '<meta name="generator" content="backtest report">'


def render_html(
    results: Results, plots: Sequence[Plot], plot_dir: str, notes: Sequence[str] = ()
) -> str:
    """The whole report as one HTML document (plots embedded as data URIs), with
    a line for each plot left out (`notes`)."""
    e = html.escape
    meta = results.meta
    if results.kind == "run":
        sessions = results.summary["sessions"].max()
        rules = (
            meta.get("rules", {}).get("name", "?")
            if isinstance(meta.get("rules"), dict)
            else meta.get("rules", "?")
        )
        facts = (
            f"Run of {_count(sessions)} sessions, {_count(meta.get('hands'))} hands, seed "
            f"{meta.get('seed', '?')}, rules {rules}, starting bankroll "
            f"{money(results.bankroll)}."
        )
    else:
        done = results.summary["cell"].n_unique()
        facts = (
            f"Sweep of {done} finished cell(s) of {meta.get('cells', '?')}, seed "
            f"{meta.get('seed', '?')}, varying {', '.join(results.keys) or 'nothing'}."
        )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        GENERATOR,
        f"<title>{e(results.name)}: {results.kind} report</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{e(results.name)}: {results.kind} report</h1>",
        f'<p class="meta">{e(facts)} From {e(str(results.directory))}. Edges are the '
        "player's net per unit wagered: negative, the house wins.</p>",
        "<h2>Verdict</h2>",
        '<div class="verdict">',
    ]
    parts += [f"<p>{e(line)}</p>" for line in verdict_lines(results)]
    parts += ["</div>", "<h2>Plots</h2>"]
    if results.kind == "run" and results.paths is None:
        parts.append("<p>No bankroll paths: the directory holds no paths.parquet.</p>")
    parts += [f"<p>{e(note)}</p>" for note in notes]
    for plot in plots:
        data = base64.b64encode(plot.png).decode("ascii")
        parts += [
            "<figure>",
            f'<img src="data:image/png;base64,{data}" alt="{e(plot.title)}">',
            f"<figcaption><b>{e(plot.title)}.</b> {e(plot.caption)}</figcaption>",
            "</figure>",
        ]
    parts.append(f'<p class="meta">The plots are also saved as PNG files in {e(plot_dir)}/.</p>')
    headers, rows = table_rows(results.summary, results.keys if results.kind == "sweep" else ())
    cls = [' class="text"' if h in TEXT_COLUMNS or h in results.keys else "" for h in headers]
    parts += ["<h2>Summary</h2>", '<div class="scroll"><table>', "<thead><tr>"]
    parts += [f"<th{c}>{e(h)}</th>" for h, c in zip(headers, cls)]
    parts.append("</tr></thead><tbody>")
    for row in rows:
        parts.append("<tr>" + "".join(f"<td{c}>{e(v)}</td>" for v, c in zip(row, cls)) + "</tr>")
    parts += ["</tbody></table></div>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"


# --- writing ----------------------------------------------------------------------------


def report_path(directory: Path, out: Path | None) -> Path:
    """Where the HTML goes: `out`, or DIR/report.html; never over the results."""
    path = out if out is not None else directory / "report.html"
    if path.is_dir():
        raise UsageError(
            f"--out {path} is a directory: give the HTML file to write, e.g. report.html"
        )
    inside = path.resolve().parent in (directory.resolve(), (directory / "cells").resolve())
    # every file a run or a sweep writes (outputs.RUN_FILES, MARKERS) is one of these
    if inside and path.suffix.lower() in (".parquet", ".json"):
        raise UsageError(
            f"--out {path} is one of the results the report reads: give another "
            "file, e.g. report.html"
        )
    return path


def write_report(directory: str | Path, out: str | Path | None = None) -> Report:
    """Write the HTML report of a run's or a sweep's directory, and its plots as PNG
    files in `<name>-plots/` beside it. Everything is drawn before anything is
    written; each file is written atomically, the HTML last."""
    directory = Path(directory)
    results = load_results(directory)
    path = report_path(directory, Path(out) if out is not None else None)
    plots, notes = drawn(results)
    plot_dir = path.parent / f"{path.stem}-plots"
    page = render_html(results, plots, plot_dir.name, notes)
    try:
        plot_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {plot_dir}: {exc.strerror}") from None
    written = []
    for plot in plots:
        written.append(plot_dir / f"{plot.name}.png")
        _write(written[-1], plot.png)
    # an earlier report's plots that this one does not draw told of other results
    for old in plot_dir.glob("*.png"):
        if old not in written:
            old.unlink(missing_ok=True)
    _write(path, page.encode("utf-8"))
    return Report(path, plot_dir, tuple(written))


def remove_stale(directory: Path) -> None:
    """Remove the report in `directory` (report.html, if this tool wrote it, and
    its plots): new results replaced those it told of."""
    page = directory / "report.html"
    try:
        if page.is_file() and GENERATOR in page.read_text(encoding="utf-8", errors="replace"):
            page.unlink()
    except OSError:
        return
    plots = directory / "report-plots"
    if plots.is_dir() and not page.exists():
        for png in plots.glob("*.png"):
            png.unlink(missing_ok=True)
        try:
            plots.rmdir()
        except OSError:
            pass


def _write(path: Path, data: bytes) -> None:
    """Write atomically, readable as a file the user made would be (the temporary
    file starts private)."""
    umask = os.umask(0)
    os.umask(umask)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
        tmp.chmod(0o666 & ~umask)

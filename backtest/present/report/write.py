"""The report written: the plots a run or a sweep gets, drawn before anything is
written, then the PNG files and the HTML, each whole or not at all; and a stale
report removed when new results replace those it told of."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from backtest.core.errors import UsageError
from backtest.core.files import atomic_path
from backtest.present.report.canvas import Plot, require_matplotlib
from backtest.present.report.numbers import sweep_rows
from backtest.present.report.page import GENERATOR, render_html
from backtest.present.report.results import Results, load_results
from backtest.present.report.run_plots import plot_edge, plot_final_bankroll, plot_paths, plot_ruin
from backtest.present.report.sweep_plots import plot_sweep_heatmap, plot_sweep_key
from backtest.present.verdict import pct, share


@dataclass(frozen=True)
class Report:
    """What `write_report` wrote."""

    html: Path
    plot_dir: Path
    plots: tuple[Path, ...] = field(default_factory=tuple)


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

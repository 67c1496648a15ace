"""A sweep's plots: ruin rate and edge against one varied key, or heatmaps over
two, each value with its 95% interval."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import polars as pl

from backtest.present.report.canvas import (
    Plot,
    new_figure,
    percent_axis,
    png_bytes,
    seat_colour,
    tick_label,
)
from backtest.present.report.numbers import by_key, heatmap_cells, key_values
from backtest.present.report.results import Results

#: key names (the last part of a key path) whose values are money
MONEY_KEYS = frozenset({"bankroll", "win_goal", "stop_loss", "min", "max", "base", "stake", "unit"})


def _key_label(key: str) -> str:
    last = re.split(r"[.\[\]]+", key.strip("]"))[-1]
    return f"{key} (currency units)" if last in MONEY_KEYS else key


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def plot_sweep_key(results: Results, rows: pl.DataFrame, key: str, ruin: bool = True) -> Plot:
    """Ruin rate (if `ruin`) and edge against one key, a line per seat (averaged
    over the other keys), each point with its 95% interval."""
    means = by_key(rows, key)
    values = key_values(rows[key])
    numeric = all(isinstance(v, (int, float)) for v in values)
    others = [k for k in results.keys if k != key]
    fig, axes = new_figure(2 if ruin else 1, width=5.6)
    ax_ruin, ax_edge = (axes[0], axes[1]) if ruin else (None, axes[0])
    seat_list = rows.select("seat_no", "seat_label").unique(maintain_order=True).rows()
    from backtest.core.special import band_z
    from backtest.run.intervals import Z95

    # every cell's seat is a test: the band that holds all of them at once
    widen = band_z(rows.height) / Z95
    reach: list[float] = []  # every band's ends and exact edge: the edge axis shows them all
    for no, label in seat_list:
        mine = means.filter(pl.col("seat_no") == no)
        at = {v: r for v, r in zip(mine[key].to_list(), mine.iter_rows(named=True))}
        shown = [v for v in values if v in at]
        # seats side by side at a value, so their intervals do not hide each other
        nudge = 0.0 if numeric else 0.12 * (no - (len(seat_list) - 1) / 2)
        xs = shown if numeric else [values.index(v) + nudge for v in shown]
        colour = seat_colour(no)
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
        for v in shown:
            edge, half = _percent(at[v]["edge"]), widen * _percent(at[v]["edge_half"])
            reach += [edge - half, edge + half, _percent(at[v]["expected_edge"])]
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
        percent_axis(ax.yaxis)
        ax.grid(alpha=0.3)
        if ax is ax_edge:  # below the panel: inside, it would cover the tall bands
            below = -0.36 if not numeric and len(values) > 4 else -0.2  # under turned labels
            ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, below))
        else:
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
                [tick_label(v) for v in values],
                rotation=30 if len(values) > 4 else 0,
                ha="right" if len(values) > 4 else "center",
            )
            ax.set_xlim(-0.5, len(values) - 0.5)
    if ax_ruin is not None:
        ax_ruin.set_ylim(bottom=0)
        ax_ruin.set_title(f"Ruin rate by {key}")
    ends = [y for y in reach if math.isfinite(y)]
    if ends:  # the whole of every band, with a margin
        low, high = min(ends), max(ends)
        pad = 0.08 * (high - low) or 0.5
        ax_edge.set_ylim(low - pad, high + pad)
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
    return Plot(f"sweep-{_slug(key)}", title, caption, png_bytes(fig))


def _percent(x: Any) -> float:
    return math.nan if x is None else 100 * float(x)


def plot_sweep_heatmap(results: Results, rows: pl.DataFrame, metric: str) -> Plot:
    """`metric` (ruin_rate or edge) over the two varied keys, a panel per seat.
    The ruin rate is coloured by its value; the edge by its z-score against the
    exact edge, on a diverging scale centred at 0 (sampling noise stays pale)."""
    key_y, key_x = results.keys[:2]
    ys, xs = key_values(rows[key_y]), key_values(rows[key_x])
    seats = rows.select("seat_no", "seat_label").unique(maintain_order=True).rows()
    means = heatmap_cells(rows, results.keys)
    what = "Ruin rate" if metric == "ruin_rate" else "Edge"
    unit = "% of sessions" if metric == "ruin_rate" else "% of amount wagered"
    edge = metric == "edge"
    fig, axes = new_figure(
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
            percent_axis(bar.ax.yaxis)
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
            [tick_label(v) for v in xs],
            rotation=30 if len(xs) > 4 else 0,
            ha="right" if len(xs) > 4 else "center",
        )
        ax.set_yticks(range(len(ys)), [tick_label(v) for v in ys])
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
    return Plot(f"heatmap-{_slug(metric)}", title, caption, png_bytes(fig))

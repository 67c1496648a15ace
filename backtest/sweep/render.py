"""A sweep's summary as a table for a person."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from backtest.core import tables
from backtest.sweep.cells import short_value
from backtest.sweep.trends import metric_text


def render_table(
    summary: pl.DataFrame, keys: Sequence[str], metric: str, width: int | None = None
) -> str:
    """The sweep's summary sorted by `metric`, as a table fitted to `width`
    (default: the terminal's): on a narrow one the columns are stacked, each
    part led by the cell and the seat."""
    if summary.is_empty():
        return "no finished cells"
    cols = [
        "cell",
        "seat",
        *[k for k in keys if k in summary.columns],
        "sessions",
        "hands",
        "edge",
        "expected_edge",
        "z_hands",
        "ruin_rate",
        "win_goal_rate",
        "median_net",
    ]
    cols = [c for c in cols if c in summary.columns or c not in ("z_hands",)]
    if metric not in cols:
        cols.append(metric)
    frame = summary.sort(metric, descending=True, nulls_last=True).select(cols)
    rows = [[_cell_text(c, v) for c, v in zip(cols, r)] for r in frame.rows()]
    return tables.render(cols, rows, right=[c != "seat" for c in cols], key=2, width=width)


def _cell_text(col: str, v: Any) -> str:
    if isinstance(v, float):
        if col in ("z", "z_hands"):
            return f"{v:+.2f}"
        if col in ("hands", "sessions"):
            return f"{v:,.0f}"
        return metric_text(col, v) if col != "median_net" else f"{v:,.2f}"
    if isinstance(v, int) and col in ("hands", "sessions"):
        return f"{v:,}"
    return short_value(v) if v is not None else "n/a"

"""The drawing tools every plot shares: matplotlib on the Agg canvas (no pyplot,
no window), a grid of panels, PNG bytes, colours, axis formats, tick labels."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from backtest.core.errors import UsageError

NEEDS_MATPLOTLIB = (
    "backtest report draws its plots with matplotlib, which is not installed: "
    "pip install 'baccarat-backtest[plot]'"
)


@dataclass(frozen=True)
class Plot:
    name: str  # the PNG file's name without .png
    title: str
    caption: str
    png: bytes


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


def new_figure(
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


def png_bytes(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def seat_colour(i: int) -> str:
    return f"C{i % 10}"


def money_axis(axis: Any) -> None:
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def percent_axis(axis: Any) -> None:
    from matplotlib.ticker import PercentFormatter

    axis.set_major_formatter(PercentFormatter(xmax=100))


def tick_label(value: Any) -> str:
    text = (
        f"{value:,g}"
        if isinstance(value, (int, float)) and not isinstance(value, bool)
        else str(value)
    )
    return text if len(text) <= 18 else text[:16] + "\u2026"

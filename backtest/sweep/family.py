"""Many cells tried at once: which differ from the exact edge beyond chance.

A sweep of N cells measures N edges; the best-looking of them is off by
about sqrt(2 ln N) standard errors by chance alone. So each cell's seat is
tested against the exact edge of the bets it placed by its hand-by-hand z
(`z_hands`: standard normal while no few hands carry the variance sum, else
rough, which the lines say: `intervals.ROUGH_SHARE`), and the tests are
corrected for their
number by Holm's step-down method, which holds the chance of calling any
cell by mistake (the family-wise error) to 5% whatever the cells'
dependence.

>>> import polars as pl
>>> cells = pl.DataFrame({"cell": [1, 2, 3], "seat": ["a", "a", "a"],
...                       "z_hands": [0.5, -4.5, 1.9], "edge": [0.0, -0.03, 0.01],
...                       "expected_edge": [-0.01, -0.01, -0.01]})
>>> [round(p, 6) for p in holm(two_sided_p(cells["z_hands"].to_list()))]
[0.617075, 2e-05, 0.114866]
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from backtest.core.special import ALPHA, holm, two_sided_p
from backtest.run.intervals import ROUGH_SHARE

#: the most cells named in a line
SHOWN = 5


def adjusted(summary: pl.DataFrame) -> pl.DataFrame:
    """The cells' seats that have a hand-by-hand z, with `p` (two-sided) and
    `p_holm` (Holm-adjusted over all of them)."""
    if summary.is_empty() or "z_hands" not in summary.columns:
        return pl.DataFrame()
    rows = summary.filter(pl.col("z_hands").is_not_null() & pl.col("z_hands").is_finite())
    ps = two_sided_p(rows["z_hands"].to_list())
    return rows.with_columns(
        pl.Series("p", ps, pl.Float64), pl.Series("p_holm", holm(ps), pl.Float64)
    )


def closing_lines(summary: pl.DataFrame) -> list[str]:
    """Which cells differ from the exact edge beyond chance, after Holm's
    correction for the number of cells and seats tried; or that none does,
    and that the best-looking one is what so many tries give by chance."""
    rows = adjusted(summary)
    m = rows.height
    if m < 2:
        return []
    return _called(rows, m) + _rough(rows)


def _rough(rows: pl.DataFrame) -> list[str]:
    """A line where a few hands carry the variance of some cells' seats."""
    if "top_hand_share" not in rows.columns:
        return []
    rough = rows.filter(pl.col("top_hand_share") > ROUGH_SHARE).height
    if not rough:
        return []
    return [
        f"In {rough:,} of the {rows.height:,} cells and seats a few hands carry most of the "
        "variance, so their z_hands are rough and only two-sided: more sessions or a lower "
        "table maximum would make them hold."
    ]


def _called(rows: pl.DataFrame, m: int) -> list[str]:
    """The cells called beyond chance, or the best-looking one."""
    called = rows.filter(pl.col("p_holm") < ALPHA).sort("p_holm")
    tries = f"{m:,} cells and seats"
    if called.height:
        named = "; ".join(_named(r) for r in called.head(SHOWN).iter_rows(named=True))
        more = f"; and {called.height - SHOWN:,} more" if called.height > SHOWN else ""
        return [
            f"Beyond chance after Holm's correction over {tries} (5% family-wise): "
            f"{named}{more}. Their edge is not the exact edge of the bets they placed: "
            "look for a rule, limit or stop that changes what is staked or settled."
        ]
    best = rows.sort(pl.col("z_hands").abs(), descending=True).row(0, named=True)
    expect = math.sqrt(2.0 * math.log(m))
    return [
        f"No cell's edge differs from the exact edge beyond chance (Holm's correction "
        f"over {tries}, 5% family-wise). The best-looking, {_where(best)} at "
        f"z_hands {best['z_hands']:+.2f}, is what {m:,} tries give by chance (the largest "
        f"of {m:,} is about {expect:.1f} standard errors)."
    ]


def _where(r: dict[str, Any]) -> str:
    return f"cell {r['cell']} ({r['seat']})"


def _named(r: dict[str, Any]) -> str:
    return (
        f"{_where(r)} edge {100 * r['edge']:+.2f}% against exact "
        f"{100 * r['expected_edge']:+.2f}%, z_hands {r['z_hands']:+.2f}, "
        f"adjusted p {r['p_holm']:.2g}"
    )

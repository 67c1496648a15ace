"""Run results as a person reads them: a table and a verdict in words."""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl

JSON_COLUMNS = ("seat", "strategy", "sessions", "hands", "bets", "wagered", "net", "edge",
                "edge_ci_low", "edge_ci_high", "expected_edge", "z", "ruin_rate",
                "win_goal_rate", "winning_sessions", "mean_net", "median_net",
                "final_bankroll_p5", "final_bankroll_p50", "final_bankroll_p95")


def _pct(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:+.{digits}f}%"


def _share(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:.1f}%"


def _money(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:,.2f}"


def table(summary: pl.DataFrame) -> str:
    """The summary as a fixed-width table, one row per seat."""
    headers = ("seat", "sessions", "hands", "wagered", "net", "edge", "95% CI", "exact edge",
               "z", "won", "ruined", "goal", "median net")
    rows = []
    for r in summary.iter_rows(named=True):
        ci = f"{_pct(r['edge_ci_low'])} .. {_pct(r['edge_ci_high'])}"
        z = "n/a" if r["z"] is None else f"{r['z']:+.2f}"
        rows.append((r["seat"], f"{r['sessions']:,}", f"{r['hands']:,}", _money(r["wagered"]),
                     _money(r["net"]), _pct(r["edge"]), ci, _pct(r["expected_edge"]), z,
                     _share(r["winning_sessions"]), _share(r["ruin_rate"]),
                     _share(r["win_goal_rate"]), _money(r["median_net"])))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [fmt(headers), fmt(tuple("-" * w for w in widths))]
    lines += [fmt(row) for row in rows]
    return "\n".join(lines)


def verdict(summary: pl.DataFrame, bankroll: float) -> str:
    """One paragraph per seat, in words."""
    out = []
    for r in summary.iter_rows(named=True):
        if not r["wagered"]:
            out.append(f"{r['seat']}: placed no bets.")
            continue
        parts = [f"{r['seat']}: won money in {_share(r['winning_sessions'])} of {r['sessions']:,} "
                 f"sessions, yet {'lost' if r['net'] < 0 else 'made'} {_money(abs(r['net']))} "
                 f"in all on {_money(r['wagered'])} wagered."]
        parts.append(f"Measured edge {_pct(r['edge'])} per unit wagered "
                     f"(95% CI {_pct(r['edge_ci_low'])} to {_pct(r['edge_ci_high'])}); "
                     f"the exact edge of the bets it placed is {_pct(r['expected_edge'])}"
                     + (f", {abs(r['z']):.1f} standard errors away." if r["z"] is not None else "."))
        if r["ruin_rate"]:
            parts.append(f"{_share(r['ruin_rate'])} of sessions ended in ruin "
                         f"(bankroll {_money(bankroll)}), which pays for the small wins.")
        if r["win_goal_rate"]:
            parts.append(f"{_share(r['win_goal_rate'])} reached the win goal.")
        out.append(" ".join(parts))
    return "\n".join(out)


def to_json(summary: pl.DataFrame) -> str:
    rows = summary.select([c for c in JSON_COLUMNS if c in summary.columns]).to_dicts()
    return json.dumps(rows, indent=2)


def to_csv(summary: pl.DataFrame) -> str:
    return summary.write_csv()

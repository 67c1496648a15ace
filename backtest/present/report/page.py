"""The report's page: the verdict in words, the summary table, and the whole
HTML document with the plots embedded."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from typing import Any

import polars as pl

from backtest.present.report.canvas import Plot, tick_label
from backtest.present.report.numbers import by_key, key_values, sweep_rows
from backtest.present.report.results import Results
from backtest.present.verdict import comparison_verdict, money, pct, share
from backtest.present.verdict import verdict as verdict_text


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
                    shown = ", ".join(
                        f"{tick_label(v)}: {share(means[v])}" for v in key_values(mine[key])
                    )
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
    return ", ".join(f"{k}={tick_label(row[k])}" for k in keys) or "the base config"


def _count(x: Any) -> str:
    return "n/a" if x is None else f"{x:,}"


def table_rows(
    summary: pl.DataFrame, keys: Sequence[str] = ()
) -> tuple[list[str], list[list[str]]]:
    """The summary as text cells, formatted as the report shows them: edges as signed
    percentages, rates as percentages, money with 2 decimals; the interval
    and z from each hand's variance, as `backtest run` prints them."""
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
        cells = [str(r["cell"]), *[tick_label(r[k]) for k in keys]] if lead else []
        cells += [
            str(r["seat"]),
            _count(r["sessions"]),
            _count(r["hands"]),
            money(r["wagered"]),
            money(r["net"]),
            pct(r["edge"]),
            f"{pct(r['edge_hands_ci_low'])} .. {pct(r['edge_hands_ci_high'])}",
            pct(r["expected_edge"]),
            "n/a" if r["z_hands"] is None else f"{r['z_hands']:+.2f}",
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
th, td { padding: .25em .45em; border-bottom: 1px solid #e3e3e3; text-align: right;
         white-space: nowrap; }
th { background: #f4f4f4; position: sticky; top: 0; white-space: normal;
     vertical-align: bottom; }
td.text, th.text { text-align: left; }
td.text { white-space: normal; min-width: 8em; }
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
    parts.append("</tbody></table></div>")
    if results.comparisons is not None and results.comparisons.height:
        parts += ["<h2>Paired comparisons</h2>"]
        parts += [
            f"<p>{e(line)}</p>" for line in comparison_verdict(results.comparisons).splitlines()
        ]
        headers, rows = comparison_rows(results.comparisons)
        text = ' class="text"'
        parts += ['<div class="scroll"><table>', "<thead><tr>"]
        parts += [f"<th{text if k < 2 else ''}>{e(h)}</th>" for k, h in enumerate(headers)]
        parts.append("</tr></thead><tbody>")
        for row in rows:
            cells = [f"<td{text if k < 2 else ''}>{e(v)}</td>" for k, v in enumerate(row)]
            parts.append("<tr>" + "".join(cells) + "</tr>")
        parts.append("</tbody></table></div>")
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def comparison_rows(comparisons: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The paired comparisons as text cells: each seat against the baseline on
    the same sessions, the edge difference with its interval from each
    hand's variance (as `backtest run` prints it), then the per-session
    comparisons (mean net per session, sessions won, ruin)."""
    headers = [
        "seat",
        "against",
        "sessions",
        "edge diff",
        "95% CI",
        "p",
        "mean net diff per session",
        "95% CI",
        "p",
        "won",
        "p",
        "ruined",
        "p",
    ]
    rows = []
    for r in comparisons.iter_rows(named=True):
        rows.append(
            [
                str(r["seat_b"]),
                str(r["seat_a"]),
                _count(r["sessions"]),
                pct(r["edge_diff"], 3),
                f"{pct(r['edge_diff_ci_low'], 3)} .. {pct(r['edge_diff_ci_high'], 3)}",
                _p(r["edge_diff_p"]),
                money(r["mean_net_diff"]),
                f"{money(r['mean_net_diff_ci_low'])} .. {money(r['mean_net_diff_ci_high'])}",
                _p(r["mean_net_diff_p"]),
                f"{share(r['winning_sessions_b'])} vs {share(r['winning_sessions_a'])}",
                _p(r["winning_sessions_diff_p"]),
                f"{share(r['ruin_rate_b'])} vs {share(r['ruin_rate_a'])}",
                _p(r["ruin_rate_diff_p"]),
            ]
        )
    return headers, rows


def _p(p: Any) -> str:
    if p is None or p != p:  # (NaN)
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"

"""Run results as a person reads them: a table and a verdict in words."""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl

from backtest.core import tables
from backtest.run.intervals import ROUGH_SHARE


def pct(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:+.{digits}f}%"


def share(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:.1f}%"


def money(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:,.2f}"


def table(summary: pl.DataFrame, width: int | None = None) -> str:
    """The summary as a table, one row per seat, fitted to `width` (default:
    the terminal's): on a narrow one the columns are stacked, each part led by
    the seat. The interval and z are the hand-by-hand ones (`_hands`); the
    verdict says where a few hands carry the variance (`rough_words`); the
    per-session ones are in the frame."""
    headers = (
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
        "goal",
        "median net",
    )
    rows = []
    for r in summary.iter_rows(named=True):
        ci = f"{pct(r['edge_hands_ci_low'])} .. {pct(r['edge_hands_ci_high'])}"
        z = "n/a" if r["z_hands"] is None else f"{r['z_hands']:+.2f}"
        rows.append(
            (
                r["seat"],
                f"{r['sessions']:,}",
                f"{r['hands']:,}",
                money(r["wagered"]),
                money(r["net"]),
                pct(r["edge"]),
                ci,
                pct(r["expected_edge"]),
                z,
                share(r["winning_sessions"]),
                share(r["ruin_rate"]),
                share(r["win_goal_rate"]),
                money(r["median_net"]),
            )
        )
    return tables.render(headers, rows, key=1, width=width)


def verdict(summary: pl.DataFrame, bankroll: float, width: int | None = None) -> str:
    """One paragraph per seat, in words, each claim checked against the numbers;
    wrapped at word boundaries to `width` (a blank line between seats) when given."""
    texts = [_seat_verdict(r, bankroll) for r in summary.iter_rows(named=True)]
    return "\n".join(texts) if width is None else tables.paragraphs(texts, width, gap=True)


def _edge_words(r: dict[str, Any]) -> str:
    """The measured edge against the exact one: the hand-by-hand interval and
    z (the net against its expectation given the stakes placed: standard
    normal while no few hands carry the variance, else said rough by
    `rough_words`), and the interval over sessions beside it, which a
    heavy-tailed system can make misleading."""
    text = f"Measured edge {pct(r['edge'])} per unit wagered"
    if r.get("edge_hands_ci_low") is not None:
        text += (
            f" (95% CI {pct(r['edge_hands_ci_low'])} to {pct(r['edge_hands_ci_high'])}, "
            "from each hand's variance given its stakes"
        )
        if r["edge_ci_low"] is not None:
            text += f"; over sessions {pct(r['edge_ci_low'])} to {pct(r['edge_ci_high'])}" + (
                ", rough with so few" if r["sessions"] < 30 else ""
            )
        text += ")"
    elif r["edge_ci_low"] is not None:
        text += (
            f" (95% CI over sessions {pct(r['edge_ci_low'])} to {pct(r['edge_ci_high'])}"
            + ("; rough with so few sessions" if r["sessions"] < 30 else "")
            + ")"
        )
    else:
        text += " (no spread to measure an interval)"
    text += f"; the exact edge of the bets it placed is {pct(r['expected_edge'])}"
    z = r.get("z_hands")
    if z is None:
        z = r["z"]
    text += f", {abs(z):.1f} standard errors away." if z is not None else "."
    rough = rough_words(r.get("top_hand_share"), "the interval and z")
    return f"{text} {rough}" if rough else text


def rough_words(top_share: Any, what: str) -> str:
    """One sentence where the largest hand carries more of the variance sum
    than `ROUGH_SHARE` (`top_share`): `what` (the interval and z) is then
    rough and only to be read two-sided; empty otherwise."""
    if top_share is None or (isinstance(top_share, float) and math.isnan(top_share)):
        return ""
    if top_share <= ROUGH_SHARE:
        return ""
    return (
        f"A few hands carry most of the variance (the largest alone {share(top_share)} of it), "
        f"so {what} are rough and only two-sided: more sessions or a lower table maximum "
        "would make them hold."
    )


def _seat_verdict(r: dict[str, Any], bankroll: float) -> str:
    sessions = f"{r['sessions']:,} session{'s' if r['sessions'] != 1 else ''}"
    ruin = r.get("ruin_rate") or 0.0
    ruined = (
        f"{share(ruin)} of sessions ended in ruin: the bankroll left could not cover "
        f"the next stake (it starts at {money(bankroll)})"
    )
    if not r["wagered"]:
        return f"{r['seat']}: placed no bets" + (f"; {ruined}." if ruin else ".")
    won, net = r["winning_sessions"], r["net"]
    if net == 0:
        result = f"broke even on {money(r['wagered'])} wagered"
    else:
        result = (
            f"{'lost' if net < 0 else 'made'} {money(abs(net))} in all on "
            f"{money(r['wagered'])} wagered"
        )
    # "yet" only where the sessions and the total disagree
    contrast = (net < 0 and won > 0.5) or (net > 0 and won < 0.5)
    parts = [
        f"{r['seat']}: won money in {share(won)} of {sessions}, "
        f"{'yet' if contrast else 'and'} {result}."
    ]
    parts.append(_edge_words(r))
    if ruin:
        text = ruined
        if r.get("median_ruin_hand") is not None:
            text += f"; half of those were ruined by hand {r['median_ruin_hand']:,.0f}"
        lost = -(r.get("ruined_net") or 0.0)
        others = net + lost  # what the sessions not ruined made
        if others > 0 and lost > others:
            text += (
                f"; those sessions lost {money(lost)}, more than the {money(others)} the others won"
            )
        parts.append(text + ".")
    if r["win_goal_rate"]:
        parts.append(f"{share(r['win_goal_rate'])} reached the win goal.")
    if r.get("stop_loss_rate"):
        parts.append(f"{share(r['stop_loss_rate'])} ended at the stop-loss.")
    hits = r.get("max_hits") or 0
    if hits:
        parts.append(
            f"{hits:,} stake{'s were' if hits != 1 else ' was'} over the table "
            "maximum (capped, or the progression reset: on_max)."
        )
    raised = r.get("raised_to_min") or 0
    if raised:
        parts.append(
            f"{raised:,} stake{'s were' if raised != 1 else ' was'} under the table "
            "minimum and raised to it, so the system did not run as written."
        )
    return " ".join(parts)


def to_json(summary: pl.DataFrame) -> str:
    """Every column of every row, as a list of objects; a number that is not
    finite is null (strict JSON has no NaN or Infinity)."""
    rows = [{k: _finite(v) for k, v in row.items()} for row in summary.to_dicts()]
    return json.dumps(rows, indent=2, default=str, allow_nan=False)


def _finite(x: Any) -> Any:
    return None if isinstance(x, float) and not math.isfinite(x) else x


def to_csv(summary: pl.DataFrame) -> str:
    return summary.write_csv()


def comparison_verdict(comparisons: pl.DataFrame | None, width: int | None = None) -> str:
    """One sentence per seat against the baseline, on the same sessions
    (`comparisons.compare`), wrapped to `width` when given; empty for a
    table of one seat. A difference is called one only where its test says
    it is beyond chance at 5%."""
    if comparisons is None or comparisons.height == 0:
        return ""
    texts = [_pair_verdict(r) for r in comparisons.iter_rows(named=True)]
    return "\n".join(texts) if width is None else tables.paragraphs(texts, width, gap=True)


def _p_text(p: Any) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "p n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _beyond(p: Any) -> bool:
    return p is not None and not (isinstance(p, float) and math.isnan(p)) and p < 0.05


def _pair_verdict(r: dict[str, Any]) -> str:
    n = r["sessions"]
    head = f"{r['seat_b']} against {r['seat_a']} on the same {n:,} session{'s' if n != 1 else ''}"
    low, high = r["edge_diff_ci_low"], r["edge_diff_ci_high"]
    if low is None or (isinstance(low, float) and math.isnan(low)):
        edge = f"edge {pct(r['edge_b'])} against {pct(r['edge_a'])} (no interval)"
    else:
        spread = f"{pct(r['edge_diff'], 3)}, 95% CI {pct(low, 3)} to {pct(high, 3)}"
        edge = (
            f"{'a different' if _beyond(r['edge_diff_p']) else 'no difference in'} edge "
            f"beyond chance ({spread}, {_p_text(r['edge_diff_p'])}, from each hand's variance "
            "given both seats' stakes)"
        )
    parts = [f"{head}: {edge}"]
    sessions = []
    for what, a, b, p, more, fewer in (
        (
            "sessions won",
            r["winning_sessions_a"],
            r["winning_sessions_b"],
            r["winning_sessions_diff_p"],
            "it wins more sessions",
            "it wins fewer sessions",
        ),
        (
            "ruin",
            r["ruin_rate_a"],
            r["ruin_rate_b"],
            r["ruin_rate_diff_p"],
            "it is ruined more often",
            "it is ruined less often",
        ),
    ):
        if a == b:
            continue
        said = (
            (more if b > a else fewer) if _beyond(p) else f"no difference in {what} beyond chance"
        )
        sessions.append(f"{said} ({share(b)} against {share(a)}, {_p_text(p)})")
    if sessions:
        few = ", rough with so few" if n < 30 else ""
        parts.append(f"per session (paired over sessions{few}): " + "; ".join(sessions))
    rough = rough_words(r.get("edge_diff_top_share"), "the difference's interval and p")
    return "; ".join(parts) + "." + (f" {rough}" if rough else "")

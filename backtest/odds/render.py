"""The exact odds as a table, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
import math

from backtest.core import tables
from backtest.core.errors import RulesError
from backtest.core.settlement import number_text, payout_text
from backtest.odds.events import Event
from backtest.odds.exact import OddsResult

_COLUMNS = (
    "bet",
    "payout",
    "p_win",
    "p_push",
    "p_loss",
    "ev",
    "house_edge",
    "edge_per_resolved",
    "std_dev",
    "terms",
)


def render_table(result: OddsResult) -> str:
    """The odds as a person reads them: a header, the main probabilities, one row per bet."""
    t = result.table
    prob = {e: float(t.probability(e)) for e in (Event.PLAYER, Event.BANKER, Event.TIE)}
    head = [
        "Bet",
        "Payout",
        "P(win)",
        "P(push)",
        "P(loss)",
        "EV per unit",
        "House edge",
        "Edge per resolved bet",
        "Std dev",
    ]
    rows = [
        [
            b.bet.value,
            payout_text(b.bet, result.rules),
            f"{float(b.p_win):.6f}",
            f"{float(b.p_push):.6f}",
            f"{float(b.p_loss):.6f}",
            f"{float(b.ev):+.6f}",
            f"{b.house_edge * 100:.4f}%",
            _percent(b.edge_per_resolved),
            f"{b.std_dev:.4f}",
        ]
        for b in result.bets
    ]
    width = tables.terminal_width()
    return (
        "\n".join(
            [
                tables.paragraphs(
                    [
                        f"Exact odds -- shoe: {result.shoe_description}; rules: {result.rules.name}",
                        f"Hands counted as ordered draws of six cards: {t.combinations:,}",
                        f"Player wins {prob[Event.PLAYER]:.6f}, Banker wins {prob[Event.BANKER]:.6f}, "
                        f"Tie {prob[Event.TIE]:.6f}",
                    ],
                    width,
                ),
                "",
                tables.render(
                    head, rows, right=[i >= 2 for i in range(len(head))], key=1, width=width
                ),
            ]
        )
        + "\n"
    )


def _percent(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:.4f}%"


def render_json(result: OddsResult) -> str:
    return json.dumps(result.to_json_dict(), indent=2) + "\n"


def render_csv(result: OddsResult) -> str:
    """One row per bet; probabilities, EV and edges as fractions of a unit, full
    precision. `payout` is the bet's usual payout (a decimal) and `terms` says it in words
    with its exceptions ("1 to 1 (6 pays 0.5)")."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(_COLUMNS)
    for b in result.bets:
        resolved = b.edge_per_resolved
        # the payout as a decimal: "19/20" reads as a date in a spreadsheet
        writer.writerow(
            [
                b.bet.value,
                number_text(b.payout),
                repr(float(b.p_win)),
                repr(float(b.p_push)),
                repr(float(b.p_loss)),
                repr(float(b.ev)),
                repr(b.house_edge),
                "" if math.isnan(resolved) else repr(resolved),
                repr(b.std_dev),
                payout_text(b.bet, result.rules),
            ]
        )
    return buf.getvalue()


RENDERERS = {"table": render_table, "json": render_json, "csv": render_csv}


def render(result: OddsResult, fmt: str = "table") -> str:
    """Render in one of RENDERERS' formats."""
    try:
        return RENDERERS[fmt](result)
    except KeyError:
        raise RulesError(f"unknown odds format {fmt!r} (known: {', '.join(RENDERERS)})") from None

"""Hands as text for people and programs: a table, CSV, or JSON.

Every format shows only what the hands record: an outcome-level shoe has no
card columns, a road has only winners. Shoe numbers count from 1.

>>> from backtest.core.cards import parse_cards
>>> from backtest.shoes.recorded import deal_cards
>>> columns, _ = deal_cards(parse_cards("5 K 9 2 3 8"))
>>> one = Hands.from_columns(1, shoe=[0], hand=[1], **columns)
>>> print(hands(one, "csv"), end="")
shoe,hand,player_cards,banker_cards,player_total,banker_total,winner,natural,player_pair,banker_pair,player_card_count,banker_card_count
1,1,5 9 3,K 2 8,7,0,player,false,false,false,3,3
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backtest.core.errors import UsageError
from backtest.core.hands import Hands

#: the formats `hands` renders
FORMATS = ("table", "csv", "json")


def hands(hands: Hands, fmt: str) -> str:
    """Render `hands` as "table", "csv" (header and one row per hand) or "json"
    (a list of objects, one per hand)."""
    if fmt == "table":
        return table(hands)
    if fmt == "csv":
        return hands.to_frame().write_csv()
    if fmt == "json":   # indented, as every command's JSON
        import json

        return json.dumps(json.loads(hands.to_frame().write_json()), indent=2) + "\n"
    raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")


def table(hands: Hands) -> str:
    """A fixed-width table per shoe, then a line counting the wins."""
    frame = hands.to_frame()
    k = hands.known
    columns: list[tuple[str, str, bool]] = [("hand", "hand", True)]  # (title, key, right-aligned)
    if "cards" in k:
        columns += [("player", "player_cards", False), ("banker", "banker_cards", False)]
    elif "card_counts" in k:
        columns += [("cards", "cards", False)]
    if "player_total" in k:
        columns.append(("P", "player_total", True))
    if "banker_total" in k:
        columns.append(("B", "banker_total", True))
    columns += [("winner", "winner", False), ("", "flags", False)]

    rows = [_cells(r, k) for r in frame.iter_rows(named=True)]
    widths = {key: max([len(title)] + [len(r[key]) for r in rows]) for title, key, _ in columns}

    def line(cells: dict[str, str]) -> str:
        parts = [cells[key].rjust(widths[key]) if right else cells[key].ljust(widths[key])
                 for _, key, right in columns]
        return "  ".join(parts).rstrip()

    out: list[str] = []
    shoes = frame["shoe"].to_list()
    for i, cells in enumerate(rows):
        if i == 0 or shoes[i] != shoes[i - 1]:
            if out:
                out.append("")
            n = shoes.count(shoes[i])
            out.append(f"shoe {shoes[i]}: {n} hand{'s' if n != 1 else ''}")
            out.append(line({key: title for title, key, _ in columns}))
        out.append(line(cells))
    if out:
        out.append("")
    out.append(summary(hands))
    return "\n".join(out) + "\n"


def _cells(row: dict[str, Any], known: frozenset[str]) -> dict[str, str]:
    cells = {key: "" if v is None else str(v) for key, v in row.items()}
    if "card_counts" in known and "cards" not in known:
        cells["cards"] = f"{row['player_card_count']}/{row['banker_card_count']}"
    flags = [name.replace("_", " ") for name in ("natural", "player_pair", "banker_pair")
             if row.get(name)]
    cells["flags"] = ", ".join(flags)
    return cells


def summary(hands: Hands) -> str:
    """One line: hands, shoes, and wins of each side (and pairs when recorded)."""
    wins = np.bincount(hands.winner.astype(np.int64), minlength=3)
    n, shoes = len(hands), hands.n_shoes
    text = (f"{n} hand{'s' if n != 1 else ''} in {shoes} shoe{'s' if shoes != 1 else ''}: "
            f"player {wins[0]}, banker {wins[1]}, tie {wins[2]}")
    pairs = [f"{side} pairs {int(getattr(hands, side + '_pair').sum())}"
             for side in ("player", "banker") if f"{side}_pair" in hands.known]
    return text + ("; " + ", ".join(pairs) if pairs else "")


__all__ = ["FORMATS", "hands", "summary", "table"]

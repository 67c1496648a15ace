"""Road strings: a shoe a line, a letter a hand (P, B, T)."""

from __future__ import annotations

from backtest.errors import ShoeFormatError, shown
from backtest.hands import Hands
from backtest.recorded.outcomes import outcome_hands
from backtest.recorded.text import content_lines
from backtest.rules import Winner

_ROAD = {"B": Winner.BANKER, "P": Winner.PLAYER, "T": Winner.TIE}


def road_hands(text: str, source: str) -> Hands:
    records = []
    shoe = 0
    for number, content in content_lines(text):
        hand = 0
        for column, ch in enumerate(content, start=1):
            if ch.isspace():
                continue
            winner = _ROAD.get(ch.upper())
            if winner is None:
                raise ShoeFormatError(f"{source}, line {number}, column {column}: unknown result "
                                      f"{shown(ch)}: a road is a string of B (banker), P (player) "
                                      "and T (tie)")
            hand += 1
            records.append({"shoe": shoe, "hand": hand, "winner": winner})
        shoe += 1
    if not records:
        raise ShoeFormatError(f"{source}: no shoes: the file holds only comments and blank lines")
    return outcome_hands(records, frozenset(), source)

"""Road strings: the winners of a shoe as letters (`BPPBT`), separated or not
(`P,B,B,P,T`, `P;B`), as words (`Banker Player Tie`), or in Chinese
(庄/莊 banker, 闲/閒 player, 和 tie).

A line is a shoe; but a file whose every line holds one result is a column
of results, one shoe, with a blank line between shoes.
"""

from __future__ import annotations

import re

from backtest.core.errors import ShoeFormatError, shown
from backtest.core.hands import Hands
from backtest.core.rules import Winner
from backtest.shoes.recorded.outcomes import outcome_hands, winner_word
from backtest.shoes.recorded.text import numbered_lines

#: a result as one character of a road
ROAD_CHARS = {
    "B": Winner.BANKER,
    "P": Winner.PLAYER,
    "T": Winner.TIE,
    "庄": Winner.BANKER,
    "莊": Winner.BANKER,
    "闲": Winner.PLAYER,
    "閒": Winner.PLAYER,
    "和": Winner.TIE,
}
#: what stands between results: space, comma, semicolon, bar, slash
TOKEN = re.compile(r"[^\s,;|/]+")


def token_results(token: str) -> list[Winner] | None:
    """The results one token of a road holds: a word (`banker`, `PLAYER_WIN`, `莊`)
    is one, a run of road characters (`BPPT`, `庄闲`) one a character; None
    if it is neither."""
    word = winner_word(token)
    if word is not None:
        return [word]
    chars = [ROAD_CHARS.get(ch.upper()) for ch in token]
    return None if None in chars else chars  # type: ignore[return-value]


def road_hands(text: str, source: str) -> Hands:
    lines: list[tuple[int, list[Winner]] | None] = []  # None: a blank line
    for number, line in numbered_lines(text):
        content = line.split("#", 1)[0]
        if not content.strip():
            lines.append(None if not line.strip() else (number, []))
            continue
        results: list[Winner] = []
        for match in TOKEN.finditer(content):
            got = token_results(match.group())
            if got is None:
                bad = next(
                    (i for i, ch in enumerate(match.group()) if ch.upper() not in ROAD_CHARS), 0
                )
                what = match.group() if len(match.group()) > 1 and bad == 0 else match.group()[bad]
                raise ShoeFormatError(
                    f"{source}, line {number}, column {match.start() + bad + 1}: unknown result "
                    f"{shown(what)}: a road is a string of B (banker), P (player) and T (tie), "
                    "or the words, or 庄/莊, 闲/閒, 和, separated or not"
                )
            results += got
        lines.append((number, results))
    filled = [x for x in lines if x is not None and x[1]]
    column = len(filled) > 1 and all(len(r) == 1 for _, r in filled)
    shoes: list[list[Winner]] = []
    if column:  # a result a line: blank lines part the shoes
        current: list[Winner] = []
        for entry in lines:
            if entry is None:
                if current:
                    shoes.append(current)
                current = []
            else:
                current += entry[1]
        if current:
            shoes.append(current)
    else:
        shoes = [r for _, r in filled]
    records = [
        {"shoe": s, "hand": h, "winner": w}
        for s, shoe in enumerate(shoes)
        for h, w in enumerate(shoe, start=1)
    ]
    if not records:
        raise ShoeFormatError(f"{source}: no shoes: the file holds only comments and blank lines")
    return outcome_hands(records, frozenset(), source)

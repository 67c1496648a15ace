"""Road strings: the winners of a shoe as letters (`BPPBT`), separated or not
(`P,B,B,P,T`, `P;B`), as words (`Banker Player Tie`), or in Chinese
(庄/莊 banker, 闲/閒 player, 和 tie).

A line is a shoe; but a file whose every line holds one result is a column
of results, one shoe, with a blank line between shoes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

from backtest.core.errors import ShoeFormatError, shown
from backtest.core.hands import Hands
from backtest.core.rules import Winner
from backtest.shoes.recorded.outcomes import (
    HANDS_PER_DECK,
    too_many_hands,
    winner_word,
)
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


def line_results(number: int, line: str, source: str) -> list[Winner] | None:
    """The results of a road's line (`number`): None for a blank line, none
    for one with only a comment (or separators) on it."""
    content = line.split("#", 1)[0]
    if not content.strip():
        return None if not line.strip() else []
    results: list[Winner] = []
    for match in TOKEN.finditer(content):
        got = token_results(match.group())
        if got is None:
            bad = next((i for i, ch in enumerate(match.group()) if ch.upper() not in ROAD_CHARS), 0)
            what = match.group() if len(match.group()) > 1 and bad == 0 else match.group()[bad]
            raise ShoeFormatError(
                f"{source}, line {number}, column {match.start() + bad + 1}: unknown result "
                f"{shown(what)}: a road is a string of B (banker), P (player) and T (tie), "
                "or the words, or 庄/莊, 闲/閒, 和, separated or not"
            )
        results += got
    return results


def a_shoe_a_line(text: str, source: str) -> bool:
    """Whether the roads of a text (the first lines of a file) are a shoe a
    line for certain, whatever follows: a line holds more than one result.
    (Else they may be a column of results, a result a line, which only the
    whole file tells.) False for text that is not roads."""
    try:
        return any(len(line_results(n, line, source) or []) > 1 for n, line in numbered_lines(text))
    except ShoeFormatError:
        return False


def line_shoes(
    lines: Iterable[tuple[int, str]], source: str, decks: int
) -> Iterator[tuple[int, np.ndarray]]:
    """(line number, its results' codes) for each line of a road file that
    is a shoe a line (see `a_shoe_a_line`), read as they come; a shoe of
    more hands than `decks` decks can deal is an error naming its line."""
    most = HANDS_PER_DECK * decks
    for number, line in lines:
        results = line_results(number, line, source)
        if results:
            if len(results) > most:
                raise too_many_hands(source, f"line {number}", len(results), decks)
            yield number, np.fromiter((w.code for w in results), np.int8, len(results))


def road_shoe_hands(
    codes: np.ndarray, lengths: np.ndarray, numbers: np.ndarray, source: str
) -> Hands:
    """Hands of shoes of these results' codes, `lengths[k]` of them in shoe
    `numbers[k]`, in turn."""
    n = codes.shape[0]
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return Hands.from_columns(
        n,
        known=frozenset(),
        source=source,
        shoe=np.repeat(np.asarray(numbers, np.int64), lengths),
        hand=np.arange(1, n + 1, dtype=np.int64) - starts,
        winner=codes,
    )


def road_hands(text: str, source: str) -> Hands:
    """The hands of roads of at most one result a line (`a_shoe_a_line` is
    False): a column of results, one shoe, with a blank line between shoes."""
    shoes: list[list[int]] = [[]]
    for number, line in numbered_lines(text):
        results = line_results(number, line, source)
        if results is None:
            shoes.append([])
        else:
            shoes[-1] += [w.code for w in results]
    shoes = [shoe for shoe in shoes if shoe]
    if not shoes:
        raise ShoeFormatError(f"{source}: no shoes: the file holds only comments and blank lines")
    codes = np.array([code for shoe in shoes for code in shoe], np.int8)
    lengths = np.array([len(shoe) for shoe in shoes], np.int64)
    return road_shoe_hands(codes, lengths, np.arange(len(shoes)), source)

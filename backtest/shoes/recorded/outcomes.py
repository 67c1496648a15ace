"""What an outcome-level record may say of a hand, and checking that it is
a hand the tableau can deal."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from backtest.core.errors import ShoeFormatError, shown
from backtest.core.hands import Hands
from backtest.core.rules import Winner, banker_draws, is_natural, outcome, player_draws
from backtest.shoes.recorded.text import decks_words

#: the fields of one outcome record, in the order `_possible` keys them
_FIELDS = (
    "winner",
    "player_total",
    "banker_total",
    "natural",
    "player_pair",
    "banker_pair",
    "player_card_count",
    "banker_card_count",
)


@functools.cache
def _all_outcomes() -> frozenset[tuple[Any, ...]]:
    """Every combination of `_FIELDS` some dealt hand has.

    A hand depends only on the two-card totals and the values of the cards
    drawn, so walking the tableau over those covers every hand; a pair is
    possible exactly when the two-card total is even (2v mod 10).
    """
    found = set()
    for p2 in range(10):
        for b2 in range(10):
            # (player total, banker total, player cards, banker cards)
            ends: list[tuple[int, int, int, int]] = []
            if is_natural(p2) or is_natural(b2):
                ends.append((p2, b2, 2, 2))
            elif not player_draws(p2):
                if banker_draws(b2, None):
                    ends += [(p2, (b2 + v) % 10, 2, 3) for v in range(10)]
                else:
                    ends.append((p2, b2, 2, 2))
            else:
                for v5 in range(10):
                    if banker_draws(b2, v5):
                        ends += [((p2 + v5) % 10, (b2 + v6) % 10, 3, 3) for v6 in range(10)]
                    else:
                        ends.append(((p2 + v5) % 10, b2, 3, 2))
            natural = is_natural(p2) or is_natural(b2)
            for pt, bt, pn, bn in ends:
                for pp in (False, True) if p2 % 2 == 0 else (False,):
                    for bp in (False, True) if b2 % 2 == 0 else (False,):
                        found.add((outcome(pt, bt), pt, bt, natural, pp, bp, pn, bn))
    return frozenset(found)


@functools.cache
def _possible(fields: tuple[str, ...]) -> frozenset[tuple[Any, ...]]:
    """The combinations of `fields` (a sub-sequence of `_FIELDS`) some hand has."""
    idx = [_FIELDS.index(f) for f in fields]
    return frozenset(tuple(t[i] for i in idx) for t in _all_outcomes())


_WIN_WORDS = {Winner.PLAYER: "a player win", Winner.BANKER: "a banker win", Winner.TIE: "a tie"}


def shown_value(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def check_hand(rec: Mapping[str, Any], where: str, names: Mapping[str, str]) -> None:
    """Refuse a record no dealt hand matches; `names` maps fields to the file's names."""

    def name(f: str) -> str:
        return names.get(f, f)

    winner, pt, bt = rec["winner"], rec.get("player_total"), rec.get("banker_total")
    if pt is not None and bt is not None and outcome(pt, bt) is not winner:
        raise ShoeFormatError(
            f"{where}: {name('winner')} is {winner}, but {name('player_total')} {pt} against "
            f"{name('banker_total')} {bt} is {_WIN_WORDS[outcome(pt, bt)]}"
        )
    if rec.get("natural"):
        if pt is not None and bt is not None and max(pt, bt) < 8:
            raise ShoeFormatError(
                f"{where}: {name('natural')} is true, but a natural is a two-card 8 or 9 and "
                f"the totals are {pt} and {bt}"
            )
        for side in ("player", "banker"):
            if rec.get(f"{side}_card_count") == 3:
                raise ShoeFormatError(
                    f"{where}: {name('natural')} is true, but the {side.title()} has three "
                    f"cards ({name(side + '_card_count')} 3); after a natural both hands stand"
                )
    fields = tuple(f for f in _FIELDS if f in rec)
    if tuple(rec[f] for f in fields) not in _possible(fields):
        said = ", ".join(f"{name(f)} {shown_value(rec[f])}" for f in fields)
        raise ShoeFormatError(f"{where}: no hand the drawing rules deal has {said}")


#: a winner as records write it: a letter, a word, a word with "win", or Chinese
WINNER_WORDS = {
    "p": Winner.PLAYER,
    "player": Winner.PLAYER,
    "b": Winner.BANKER,
    "banker": Winner.BANKER,
    "t": Winner.TIE,
    "tie": Winner.TIE,
    "庄": Winner.BANKER,
    "莊": Winner.BANKER,
    "庄家": Winner.BANKER,
    "莊家": Winner.BANKER,
    "闲": Winner.PLAYER,
    "閒": Winner.PLAYER,
    "闲家": Winner.PLAYER,
    "閒家": Winner.PLAYER,
    "和": Winner.TIE,
    "和局": Winner.TIE,
}
_TRUE = frozenset({"true", "1", "yes", "y"})
_FALSE = frozenset({"false", "0", "no", "n"})
_WIN_SUFFIX = re.compile(r"[\s_-]*(wins?|won)$")


def winner_word(raw: str) -> Winner | None:
    """The winner a word names (`P`, `banker`, `PLAYER_WIN`, `Banker wins`, `庄`), or None.

    >>> [str(winner_word(w)) for w in ("b", "PLAYER_WIN", "Tie", "閒")]
    ['banker', 'player', 'tie', 'player']
    """
    text = raw.strip().lower()
    found = WINNER_WORDS.get(text)
    if found is None and len(text) > 3:
        found = WINNER_WORDS.get(_WIN_SUFFIX.sub("", text))
        found = found if found is not None and len(_WIN_SUFFIX.sub("", text)) > 1 else None
    return found


def parse_winner(raw: Any, where: str) -> Winner:
    winner = winner_word(raw) if isinstance(raw, str) else None
    if winner is None:
        raise ShoeFormatError(
            f"{where}: unknown winner {shown(raw)}: expected P, B or T "
            "(or player, banker, tie, PLAYER_WIN, 庄, 闲, 和; any case)"
        )
    return winner


def parse_total(raw: str, where: str) -> int:
    if raw.strip() not in tuple("0123456789"):
        raise ShoeFormatError(
            f"{where}: impossible total {shown(raw)}: a hand's total is a whole number from 0 to 9"
        )
    return int(raw)


def parse_bool(raw: str, where: str) -> bool:
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ShoeFormatError(
        f"{where}: expected true or false (also 1/0, yes/no, y/n), got {shown(raw)}"
    )


def parse_count(raw: str, where: str) -> int:
    if raw.strip() not in ("2", "3"):
        raise ShoeFormatError(f"{where}: a hand has 2 or 3 cards, got {shown(raw)}")
    return int(raw)


def outcome_hands(
    records: Sequence[Mapping[str, Any]], known: frozenset[str], source: str
) -> Hands:
    cols: dict[str, Any] = {
        "shoe": [r["shoe"] for r in records],
        "hand": [r["hand"] for r in records],
        "winner": [r["winner"].code for r in records],
    }
    for f in ("player_total", "banker_total", "natural", "player_pair", "banker_pair"):
        if f in known:
            cols[f] = [r[f] for r in records]
    if "card_counts" in known:
        cols["player_card_count"] = [r["player_card_count"] for r in records]
        cols["banker_card_count"] = [r["banker_card_count"] for r in records]
    if "cards" in known:
        cols["cards"] = np.array([r["cards"] for r in records], dtype=np.uint8).reshape(-1, 6)
    return Hands.from_columns(len(records), known=known, source=source, **cols)


#: the most hands a deck's cards make: a hand takes at least four of its 52
HANDS_PER_DECK = 13


def too_many_hands(source: str, where: str, count: int, decks: int) -> ShoeFormatError:
    """The error for a shoe (at `where`) of an outcome-level record that
    has more hands than `decks` decks can deal."""
    most = HANDS_PER_DECK * decks
    return ShoeFormatError(
        f"{source}, {where}: {count:,} hands in one shoe, more than "
        f"{decks_words(decks)} can deal (at most {most:,}: a hand takes at "
        f"least 4 of the {52 * decks:,} cards); give the decks the records "
        "came from"
    )

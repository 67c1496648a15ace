"""Per-round JSON records: one object a hand, as a live table publishes the
result of each round (with or without its cards), split into shoes.

The names such records use vary; each field is looked for under the names
in `_NAMES` (the first found is read). A record's fields are the same as the
first record's: a later one that lacks one is an error.

>>> rec = {"player": 4, "banker": 3, "winner": "PLAYER_WIN", "gameId": "g1",
...        "playerCards": ["9S", "5S", "JC"], "bankerCards": ["6H", "4C", "3S"]}
>>> hands = round_hands([("line 1", rec)], "x.jsonl", 8)
>>> hands.player_total.tolist(), hands.banker_total.tolist(), sorted(hands.known)[:2]
([4], [3], ['banker_pair', 'banker_total'])
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from backtest.core.errors import ShoeFormatError, shown
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.shoes.recorded.card_level import check_composition
from backtest.shoes.recorded.outcome_csv import derive_from_cards
from backtest.shoes.recorded.outcomes import check_hand, outcome_hands, parse_winner

#: where each field of a round may be found, in the order looked for
_NAMES: dict[str, tuple[str, ...]] = {
    "winner": ("winner", "result", "outcome", "win"),
    "player_total": ("player_total", "playerScore", "playerPoints", "playerTotal", "player"),
    "banker_total": ("banker_total", "bankerScore", "bankerPoints", "bankerTotal", "banker"),
    "natural": ("natural",),
    "player_pair": ("player_pair", "playerPair"),
    "banker_pair": ("banker_pair", "bankerPair"),
    "player_cards": ("player_cards", "playerCards", "playerHand"),
    "banker_cards": ("banker_cards", "bankerCards", "bankerHand"),
    "shoe": ("shoe", "shoeId", "shoe_id", "shoeNumber", "shoeNo"),
    "hand": ("hand", "handNumber", "hand_number", "round", "roundNumber", "gameNumber"),
    "game": ("gameId", "game_id", "roundId", "round_id"),
}

#: the keys that make an object a round record (it names a winner)
WINNER_KEYS = _NAMES["winner"]


def is_round(value: Any) -> bool:
    """Whether a JSON value looks like one round's result (an object naming a winner)."""
    return isinstance(value, dict) and any(k in value for k in WINNER_KEYS)


def _key(record: Mapping[str, Any], field: str) -> str | None:
    return next((k for k in _NAMES[field] if k in record), None)


def _json_type(v: Any) -> str:
    return {
        dict: "object",
        list: "list",
        str: "string",
        bool: "true/false",
        type(None): "null",
    }.get(type(v), "number")


def _cards_text(v: Any, where: str) -> str:
    """A side's cards, given as a list of tokens or as one string of them."""
    if isinstance(v, str):
        return v.replace(",", " ")
    if isinstance(v, list) and all(isinstance(c, str) for c in v):
        return " ".join(v)
    raise ShoeFormatError(
        f'{where}: expected the cards as a list of tokens such as ["9S", "5S"], got {shown(v)}'
    )


def round_hands(items: Sequence[tuple[str, Any]], source: str, decks: int) -> Hands:
    """Hands from round records, each given with its place (`line 3`, `[2]`).

    Shoes are told apart by a shoe id where the records have one, else by
    the hand number going back (a reset), else the records are one shoe.
    """
    first = items[0][1]
    names = {f: _key(first, f) for f in _NAMES}
    if (
        names["player_total"]
        and not names["banker_total"]
        or names["banker_total"]
        and not names["player_total"]
    ):
        has = names["player_total"] or names["banker_total"]
        raise ShoeFormatError(
            f"{source}, {items[0][0]}: the record has {has} but not the "
            "other side's total; the two go together"
        )
    if bool(names["player_cards"]) != bool(names["banker_cards"]):
        has = names["player_cards"] or names["banker_cards"]
        raise ShoeFormatError(
            f"{source}, {items[0][0]}: the record has {has} but not the "
            "other side's cards; the two go together"
        )
    fields = [
        f
        for f in ("player_total", "banker_total", "natural", "player_pair", "banker_pair")
        if names[f]
    ]
    records: list[dict[str, Any]] = []
    shoe, hand = 0, 0
    last_shoe: Any = None
    last_hand: int | None = None
    seen_games: dict[Any, tuple[str, Any]] = {}
    shoe_cards: list[int] = []
    places: list[str] = []

    def close_shoe() -> None:
        if shoe_cards:
            check_composition(np.array(shoe_cards, dtype=np.uint8), decks, places.__getitem__)
        shoe_cards.clear()
        places.clear()

    skipped = 0
    for place, rec in items:
        where = f"{source}, {place}"
        if not isinstance(rec, dict):
            raise ShoeFormatError(
                f"{where}: expected a round's record like the first (an "
                f"object with {names['winner']}), got a JSON {_json_type(rec)}"
            )
        game_key = names["game"]
        if game_key and game_key in rec:
            game = json.dumps(rec[game_key], sort_keys=True)
            if game in seen_games:
                first_place, before = seen_games[game]
                if before != rec:
                    raise ShoeFormatError(
                        f"{where}: {game_key} {shown(rec[game_key])} appears again ({first_place}) "
                        "with a different result; a round is recorded once"
                    )
                skipped += 1
                continue
            seen_games[game] = (place, rec)
        new_shoe = not records
        shoe_key = names["shoe"]
        if shoe_key:
            if shoe_key not in rec:
                raise ShoeFormatError(
                    f"{where}: the record has no {shoe_key}, which the records before it have"
                )
            if records and rec[shoe_key] != last_shoe:
                new_shoe = True
            last_shoe = rec[shoe_key]
        hand_key = names["hand"]
        if hand_key and hand_key in rec:
            number = rec[hand_key]
            if isinstance(number, bool) or not isinstance(number, int):
                raise ShoeFormatError(
                    f"{where}.{hand_key}: expected a hand number, got {shown(number)}"
                )
            if not shoe_key and last_hand is not None and number <= last_hand:
                new_shoe = True  # the numbers start again: a new shoe
            last_hand = number
        if new_shoe and records:
            close_shoe()
            shoe += 1
            hand = 0
        hand += 1
        out: dict[str, Any] = {"shoe": shoe, "hand": hand}
        out["winner"] = parse_winner(rec.get(names["winner"] or ""), f"{where}.{names['winner']}")
        for f in fields:
            key = names[f]
            if key not in rec:
                if f in ("natural", "player_pair", "banker_pair"):
                    out[f] = False  # a flag left out is false, as the live tables write it
                    continue
                raise ShoeFormatError(
                    f"{where}: the record has no {key}, which the records before it have"
                )
            v = rec[key]
            if f.endswith("total"):
                if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 9:
                    raise ShoeFormatError(
                        f"{where}.{key}: impossible total {shown(v)}: a "
                        "hand's total is a whole number from 0 to 9"
                    )
            elif not isinstance(v, bool):
                raise ShoeFormatError(f"{where}.{key}: expected true or false, got {json.dumps(v)}")
            out[f] = v
        if names["player_cards"]:
            pk, bk = names["player_cards"], names["banker_cards"]
            if pk not in rec or bk not in rec:
                raise ShoeFormatError(
                    f"{where}: the record has no {pk if pk not in rec else bk}, "
                    "which the records before it have"
                )
            row = {
                "player_cards": _cards_text(rec[pk], f"{where}.{pk}"),
                "banker_cards": _cards_text(rec[bk], f"{where}.{bk}"),
            }
            p, b = derive_from_cards(out, row, where, place=lambda f: f".{names.get(f) or f}")
            shoe_cards.extend(p + b)
            places.extend([f"{where}.{pk}"] * len(p) + [f"{where}.{bk}"] * len(b))
        else:
            check_hand(
                out, where, {f: names[f] or f for f in fields} | {"winner": str(names["winner"])}
            )
        records.append(out)
    close_shoe()
    if skipped:
        warnings.warn(
            f"{source}: {skipped} round{'s' if skipped > 1 else ''} recorded twice "
            "(the same game id and result) read once",
            stacklevel=3,
        )
    if not names["shoe"] and not names["hand"] and len(records) > decks * 52 // 4:
        warnings.warn(
            f"{source}: the records name no shoe and no hand number, so their "
            f"{len(records):,} hands are read as one shoe, more than "
            f"{decks} decks deal",
            stacklevel=3,
        )
    known = ALL_KNOWN if names["player_cards"] else frozenset(fields)
    return outcome_hands(records, known, source)

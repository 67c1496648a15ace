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

import hashlib
import json
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from backtest.core.errors import ShoeFormatError, shown
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.shoes.recorded.card_level import Growing, check_composition
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


def json_type(v: Any) -> str:
    """What a JSON value is, in words (an error's 'got a JSON ...')."""
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
    reader = RoundShoes(items[0], source, decks)
    out = Growing()
    labels: list[str] = []
    for records in reader.shoes(items):
        part = outcome_hands(records, reader.known, source)
        out.add({name: getattr(part, name) for name in out.columns})
        labels.append(reader.label)
    reader.finish()
    return Hands.from_columns(
        out.n,
        known=reader.known,
        source=source,
        labels=tuple(labels) if all(labels) else (),
        **out.filled(),
    )


def shoe_label(value: Any) -> str:
    """A JSON shoe id as `Hands.labels` has it ("A1", 7 as "7"); "" for none."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _digest(record: Mapping[str, Any]) -> int:
    """A 64-bit digest of a record, equal for equal records (as JSON writes
    them, keys sorted)."""
    text = json.dumps(record, sort_keys=True, default=str)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


class RoundShoes:
    """Round records split into shoes, checked as they come; the fields read
    are those of the first record (`first`: its place and value)."""

    def __init__(self, first: tuple[str, Any], source: str, decks: int) -> None:
        self.source, self.decks = source, decks
        names = {f: _key(first[1], f) if isinstance(first[1], dict) else None for f in _NAMES}
        if (
            names["player_total"]
            and not names["banker_total"]
            or names["banker_total"]
            and not names["player_total"]
        ):
            has = names["player_total"] or names["banker_total"]
            raise ShoeFormatError(
                f"{source}, {first[0]}: the record has {has} but not the "
                "other side's total; the two go together"
            )
        if bool(names["player_cards"]) != bool(names["banker_cards"]):
            has = names["player_cards"] or names["banker_cards"]
            raise ShoeFormatError(
                f"{source}, {first[0]}: the record has {has} but not the "
                "other side's cards; the two go together"
            )
        self.names = names
        self.fields = [
            f
            for f in ("player_total", "banker_total", "natural", "player_pair", "banker_pair")
            if names[f]
        ]
        self.known = ALL_KNOWN if names["player_cards"] else frozenset(self.fields)
        self.skipped = 0
        self.count = 0
        self.label = ""

    def shoes(self, items: Iterable[tuple[str, Any]]) -> Iterator[list[dict[str, Any]]]:
        """The records of each shoe in turn (each checked, a shoe's cards
        against the decks once it is whole), numbered from 0; a round
        recorded twice (the same game id and result) is read once, and with
        another result is an error. Each game id is kept with a digest of its
        record and its place (about 200 bytes a round). `label` is the shoe
        id of the shoe last given ("" where the records have none)."""
        source, decks, names, fields = self.source, self.decks, self.names, self.fields
        records: list[dict[str, Any]] = []
        shoe = hand = 0
        last_shoe: Any = None
        last_hand: int | None = None
        seen_games: dict[str, tuple[int, str]] = {}
        label = ""
        shoe_cards: list[int] = []
        places: list[str] = []

        def close_shoe() -> None:
            if shoe_cards:
                check_composition(np.array(shoe_cards, dtype=np.uint8), decks, places.__getitem__)
            shoe_cards.clear()
            places.clear()

        for place, rec in items:
            where = f"{source}, {place}"
            if not isinstance(rec, dict):
                raise ShoeFormatError(
                    f"{where}: expected a round's record like the first (an "
                    f"object with {names['winner']}), got a JSON {json_type(rec)}"
                )
            game_key = names["game"]
            if game_key and game_key in rec:
                game = json.dumps(rec[game_key], sort_keys=True)
                digest = _digest(rec)
                seen = seen_games.setdefault(game, (digest, place))
                if seen[0] != digest:
                    raise ShoeFormatError(
                        f"{where}: {game_key} {shown(rec[game_key])} appears again "
                        f"({seen[1]}) with a different result; a round is recorded once"
                    )
                if seen[1] != place:
                    self.skipped += 1
                    continue
            new_shoe = not records and not self.count
            shoe_key = names["shoe"]
            if shoe_key:
                if shoe_key not in rec:
                    raise ShoeFormatError(
                        f"{where}: the record has no {shoe_key}, which the records before it have"
                    )
                if self.count and rec[shoe_key] != last_shoe:
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
            if new_shoe and self.count:
                close_shoe()
                self.label = label
                yield records
                records = []
                shoe += 1
                hand = 0
            if not records:
                label = shoe_label(rec[shoe_key]) if shoe_key else ""
            hand += 1
            out: dict[str, Any] = {"shoe": shoe, "hand": hand}
            out["winner"] = parse_winner(
                rec.get(names["winner"] or ""), f"{where}.{names['winner']}"
            )
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
                    raise ShoeFormatError(
                        f"{where}.{key}: expected true or false, got {json.dumps(v)}"
                    )
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
                p, b = derive_from_cards(out, row, where, lambda f: f".{names.get(f) or f}")
                shoe_cards.extend(p + b)
                places.extend([f"{where}.{pk}"] * len(p) + [f"{where}.{bk}"] * len(b))
            else:
                check_hand(
                    out,
                    where,
                    {f: names[f] or f for f in fields} | {"winner": str(names["winner"])},
                )
            records.append(out)
            self.count += 1
        close_shoe()
        if records:
            self.label = label
            yield records

    def finish(self) -> None:
        """Warn of rounds read once that were recorded twice, and of records
        with no shoe and no hand number read as one shoe too long for the decks."""
        if self.skipped:
            warnings.warn(
                f"{self.source}: {self.skipped} round{'s' if self.skipped > 1 else ''} "
                "recorded twice (the same game id and result) read once",
                stacklevel=4,
            )
        names = self.names
        if not names["shoe"] and not names["hand"] and self.count > self.decks * 52 // 4:
            warnings.warn(
                f"{self.source}: the records name no shoe and no hand number, so their "
                f"{self.count:,} hands are read as one shoe, more than "
                f"{self.decks} decks deal",
                stacklevel=4,
            )

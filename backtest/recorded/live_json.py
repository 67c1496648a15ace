"""A live table's JSON: shoe-state messages, or lists of hand records."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from backtest.errors import ShoeFormatError
from backtest.hands import Hands
from backtest.recorded.outcomes import check_hand, outcome_hands, parse_winner

_JSON_SHAPES = ("a shoe-state message (an object with args.history_v2), a list of hand "
                "entries, a list of such messages, or a list of lists of entries")
_LIVE_NAMES = {"winner": "winner", "player_total": "playerScore", "banker_total": "bankerScore",
               "natural": "natural", "player_pair": "playerPair", "banker_pair": "bankerPair"}


def _json_type(v: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "true/false",
            type(None): "null"}.get(type(v), "number")


def live_json_hands(text: str, source: str) -> Hands:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ShoeFormatError(f"{source}, line {exc.lineno}, column {exc.colno}: not valid "
                              f"JSON: {exc.msg}") from None
    except RecursionError:
        raise ShoeFormatError(f"{source}: its JSON nests lists or objects too deeply to be a "
                              "shoe's records") from None
    records = []
    shoe = 0
    for path, entries in _json_shoes(data, source):
        for i, entry in enumerate(entries):
            records.append(_live_entry(entry, f"{source}, {path}[{i}]", shoe, i + 1))
        shoe += 1 if entries else 0
    if not records:
        raise ShoeFormatError(f"{source}: no shoes: no hand entries in the file")
    known = frozenset({"player_total", "banker_total", "natural", "player_pair", "banker_pair"})
    return outcome_hands(records, known, source)


def _json_shoes(data: Any, source: str) -> list[tuple[str, list[Any]]]:
    """(JSON path of the entry list, entries) for each shoe in the document."""
    if isinstance(data, dict):
        return [("args.history_v2", _history(data, "", source))]
    if not isinstance(data, list):
        raise ShoeFormatError(f"{source}: expected {_JSON_SHAPES}; got a JSON {_json_type(data)}")
    if not data:
        raise ShoeFormatError(f"{source}: no shoes: the JSON list is empty")
    if isinstance(data[0], list):
        for i, item in enumerate(data):
            if not isinstance(item, list):
                raise ShoeFormatError(f"{source}, [{i}]: expected a list of hand entries like "
                                      f"the others, got a JSON {_json_type(item)}")
        return [(f"[{i}]", item) for i, item in enumerate(data)]
    messages = isinstance(data[0], dict) and "args" in data[0]
    if isinstance(data[0], dict) and {"shoe", "hand", "winner"} <= set(data[0]) \
            and "playerScore" not in data[0]:
        raise ShoeFormatError(f"{source}: this is the JSON that `backtest deal --format json` "
                              "writes, which is not read as shoes; write the hands with "
                              "`--format csv` instead, which reads back as an outcome CSV")
    if not messages:
        return [("", data)]
    shoes = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or "args" not in item:
            raise ShoeFormatError(f"{source}, [{i}]: expected a shoe-state message (an object "
                                  f"with args.history_v2) like [0], got a JSON "
                                  f"{_json_type(item)}")
        shoes.append((f"[{i}].args.history_v2", _history(item, f"[{i}].", source)))
    return shoes


def _history(message: Mapping[str, Any], prefix: str, source: str) -> list[Any]:
    args = message.get("args")
    if not isinstance(args, dict):
        raise ShoeFormatError(f"{source}, {prefix}args: expected {_JSON_SHAPES}; this object has "
                              "no args object")
    history = args.get("history_v2")
    if not isinstance(history, list):
        raise ShoeFormatError(f"{source}, {prefix}args.history_v2: expected the list of hand "
                              f"entries, got {'nothing' if history is None else 'a JSON ' + _json_type(history)}")
    return history


def _live_entry(entry: Any, where: str, shoe: int, hand: int) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ShoeFormatError(f"{where}: expected a hand entry (an object with winner, "
                              f"playerScore, bankerScore), got a JSON {_json_type(entry)}")
    if "winner" not in entry:
        raise ShoeFormatError(f"{where}: the entry has no winner (Player, Banker or Tie)")
    rec: dict[str, Any] = {"shoe": shoe, "hand": hand,
                           "winner": parse_winner(entry["winner"], f"{where}.winner")}
    for field, key in (("player_total", "playerScore"), ("banker_total", "bankerScore")):
        if key not in entry:
            raise ShoeFormatError(f"{where}: the entry has no {key} (the hand's total, 0 to 9)")
        v = entry[key]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 9:
            raise ShoeFormatError(f"{where}.{key}: impossible total {json.dumps(v)}: a hand's "
                                  "total is a whole number from 0 to 9")
        rec[field] = v
    for field, key in (("natural", "natural"), ("player_pair", "playerPair"),
                       ("banker_pair", "bankerPair")):
        v = entry.get(key, False)
        if not isinstance(v, bool):
            raise ShoeFormatError(f"{where}.{key}: expected true or false, got {json.dumps(v)}")
        rec[field] = v
    check_hand(rec, where, _LIVE_NAMES)
    return rec

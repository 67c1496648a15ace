"""A live table's shoe-state messages: each a snapshot of the shoe so far
(`args.history_v2`, a list of hand entries), merged into shoes
(`merged_snapshots`), from JSON Lines or from one JSON document
(`json_shoes`); and the checks of a hand entry (`live_entry`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from backtest.core.errors import ShoeFormatError
from backtest.core.hands import Hands
from backtest.shoes.recorded.card_level import Growing
from backtest.shoes.recorded.outcomes import check_hand, outcome_hands, parse_winner
from backtest.shoes.recorded.rounds import json_type, shoe_label

JSON_SHAPES = (
    "a shoe-state message (an object with args.history_v2), a list of hand "
    "entries, a list of such messages, or a list of lists of entries"
)


LIVE_NAMES = {
    "winner": "winner",
    "player_total": "playerScore",
    "banker_total": "bankerScore",
    "natural": "natural",
    "player_pair": "playerPair",
    "banker_pair": "bankerPair",
}


KNOWN = frozenset({"player_total", "banker_total", "natural", "player_pair", "banker_pair"})


def is_snapshot(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("args"), dict)
        and "history_v2" in value["args"]
    )


def described(v: Any) -> str:
    if isinstance(v, dict):
        keys = ", ".join(list(v)[:5])
        return f"an object with the keys {keys}" if keys else "an empty object"
    return f"a JSON {json_type(v)}"


#: where a snapshot may say which shoe it is of
SHOE_IDS = ("shoeId", "shoe_id", "shoeNumber", "shoe")


def snapshot_shoe_id(message: Mapping[str, Any]) -> Any:
    for holder in (message.get("args"), message):
        if isinstance(holder, dict):
            for key in SHOE_IDS:
                if key in holder and not isinstance(holder[key], (dict, list)):
                    return holder[key]
    return None


def merged_snapshots(snapshots: Iterable[tuple[str, Any]], source: str) -> Hands:
    """The hands of shoe-state snapshots, merged into shoes (`snapshot_shoes`)."""
    out = Growing()
    labels: list[str] = []
    for count, records in enumerate(snapshot_shoes(snapshots, source, labels=labels)):
        part = outcome_hands([rec | {"shoe": count} for rec in records], KNOWN, source)
        out.add({name: getattr(part, name) for name in out.columns})
    if not out.n:
        raise ShoeFormatError(f"{source}: no shoes: no hand entries in the file")
    return Hands.from_columns(
        out.n,
        known=KNOWN,
        source=source,
        labels=tuple(labels) if all(labels) else (),
        **out.filled(),
    )


def snapshot_shoes(
    snapshots: Iterable[tuple[str, Any]],
    source: str,
    labels: list[str],
) -> Iterator[list[dict[str, Any]]]:
    """The records of each shoe the snapshots hold, given once a snapshot of
    the next shoe (or the end) is read. Each message holds the whole shoe so
    far: one that extends the shoe before it continues it (a repeat adds
    nothing); a shorter one, or one of another shoe id, starts a new shoe;
    one as long or longer that does not begin with the hands before it
    contradicts them.

    What decides a shoe's end is the snapshot that starts the next: after
    it, nothing of the shoes before is kept, so a read that starts at it
    (the first snapshot read always starts a shoe) gives the same shoes from
    there. `labels` has the shoe id of the snapshot that started each shoe
    given ("" where it has none) added before the shoe is given."""
    current: list[Any] | None = None
    last_place, last_id = "", None
    started_id = ""
    for place, message in snapshots:
        entries = history_entries(message, "", f"{source}, {place}")
        recs = [
            live_entry(e, f"{source}, {place}, args.history_v2[{i}]", 0, i + 1)
            for i, e in enumerate(entries)
        ]
        shoe_id = snapshot_shoe_id(message)
        if (
            current is None
            or (shoe_id is not None and shoe_id != last_id)
            or len(recs) < len(current)
        ):
            if current:
                labels.append(started_id)
                yield current
            started_id = shoe_label(shoe_id)
        else:
            for i, (a, b) in enumerate(zip(current, recs)):
                if a != b:
                    raise ShoeFormatError(
                        f"{source}, {place}, args.history_v2[{i}]: this snapshot contradicts "
                        f"the one before it ({last_place}), which has hand {i + 1} as "
                        f"{entry_text(a)}, not {entry_text(b)}; a snapshot either extends "
                        "the shoe so far or, with fewer hands, starts a new shoe"
                    )
        current = recs
        last_place, last_id = place, shoe_id
    if current:
        labels.append(started_id)
        yield current


def entry_text(rec: Mapping[str, Any]) -> str:
    flags = [f for f in ("natural", "player_pair", "banker_pair") if rec.get(f)]
    return f"{rec['winner']} {rec['player_total']}-{rec['banker_total']}" + (
        f" ({', '.join(f.replace('_', ' ') for f in flags)})" if flags else ""
    )


def json_shoes(data: Any, source: str) -> list[tuple[str, list[Any]]]:
    """(JSON path of the entry list, entries) for each shoe in the document."""
    if isinstance(data, dict):
        return [("args.history_v2", history_entries(data, "", source))]
    if not isinstance(data, list):
        raise ShoeFormatError(f"{source}: expected {JSON_SHAPES}; got a JSON {json_type(data)}")
    if not data:
        raise ShoeFormatError(f"{source}: no shoes: the JSON list is empty")
    if isinstance(data[0], list):
        for i, item in enumerate(data):
            if not isinstance(item, list):
                raise ShoeFormatError(
                    f"{source}, [{i}]: expected a list of hand entries like "
                    f"the others, got a JSON {json_type(item)}"
                )
        return [(f"[{i}]", item) for i, item in enumerate(data)]
    if not is_message_list(data):
        return [("", data)]
    return [
        (f"[{i}].args.history_v2", history_entries(item, f"[{i}].", source))
        for i, item in enumerate(checked_messages(data, source))
    ]


def is_message_list(data: Any) -> bool:
    """Whether a JSON document is a list of shoe-state messages (as its
    first item says)."""
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "args" in data[0]


def checked_messages(data: list[Any], source: str) -> list[dict[str, Any]]:
    """A list of shoe-state messages, each item checked to be one."""
    for i, item in enumerate(data):
        if not isinstance(item, dict) or "args" not in item:
            raise ShoeFormatError(
                f"{source}, [{i}]: expected a shoe-state message (an object "
                f"with args.history_v2) like [0], got a JSON "
                f"{json_type(item)}"
            )
    return data


def history_entries(message: Mapping[str, Any], prefix: str, source: str) -> list[Any]:
    args = message.get("args")
    if not isinstance(args, dict):
        raise ShoeFormatError(
            f"{source}, {prefix}args: expected {JSON_SHAPES}; this object has no args object"
        )
    history = args.get("history_v2")
    if not isinstance(history, list):
        raise ShoeFormatError(
            f"{source}, {prefix}args.history_v2: expected the list of hand "
            f"entries, got {'nothing' if history is None else 'a JSON ' + json_type(history)}"
        )
    return history


def live_entry(entry: Any, where: str, shoe: int, hand: int) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ShoeFormatError(
            f"{where}: expected a hand entry (an object with winner, "
            f"playerScore, bankerScore), got a JSON {json_type(entry)}"
        )
    if "winner" not in entry:
        raise ShoeFormatError(f"{where}: the entry has no winner (Player, Banker or Tie)")
    rec: dict[str, Any] = {
        "shoe": shoe,
        "hand": hand,
        "winner": parse_winner(entry["winner"], f"{where}.winner"),
    }
    for field, key in (("player_total", "playerScore"), ("banker_total", "bankerScore")):
        if key not in entry:
            raise ShoeFormatError(f"{where}: the entry has no {key} (the hand's total, 0 to 9)")
        v = entry[key]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 9:
            raise ShoeFormatError(
                f"{where}.{key}: impossible total {json.dumps(v)}: a hand's "
                "total is a whole number from 0 to 9"
            )
        rec[field] = v
    for field, key in (
        ("natural", "natural"),
        ("player_pair", "playerPair"),
        ("banker_pair", "bankerPair"),
    ):
        v = entry.get(key, False)
        if not isinstance(v, bool):
            raise ShoeFormatError(f"{where}.{key}: expected true or false, got {json.dumps(v)}")
        rec[field] = v
    check_hand(rec, where, LIVE_NAMES)
    return rec

"""A live table's JSON: shoe-state messages (one document, a list, or JSON
Lines), each a snapshot of the shoe so far (`args.history_v2`, a list of hand
entries) merged into shoes; lists of hand entries; or per-round records, one
object a hand, with or without its cards, split into shoes.

The names round records use vary; each field is looked for under the names
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
import re
import warnings
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from backtest.core.errors import ShoeFormatError, shown
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.shoes.recorded.card_level import check_composition
from backtest.shoes.recorded.outcomes import (
    check_hand,
    derive_from_cards,
    outcome_hands,
    parse_winner,
)
from backtest.shoes.recorded.text import numbered_lines

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
    hands = Hands.concat(list(_round_parts(reader, items)))
    reader.finish()
    return hands


def _round_parts(reader: RoundShoes, items: Iterable[tuple[str, Any]]) -> Iterator[Hands]:
    """The hands of each shoe of round records (`RoundShoes.shoes`), labelled
    with its shoe id, numbered 0."""
    for shoe in reader.shoes(items):
        part = outcome_hands(shoe, reader.known, reader.source)
        yield replace(part, labels=(reader.label,) if reader.label else ())


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
        against the decks once it is whole), each numbered shoe 0; a round
        recorded twice (the same game id and result) is read once, and with
        another result is an error. Each game id is kept with a digest of its
        record and its place (about 200 bytes a round). `label` is the shoe
        id of the shoe last given ("" where the records have none)."""
        source, decks, names, fields = self.source, self.decks, self.names, self.fields
        records: list[dict[str, Any]] = []
        hand = 0
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
                hand = 0
            if not records:
                label = shoe_label(rec[shoe_key]) if shoe_key else ""
            hand += 1
            out: dict[str, Any] = {"shoe": 0, "hand": hand}
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
    parts = list(_snapshot_parts(snapshots, source))
    if not parts:
        raise ShoeFormatError(f"{source}: no shoes: no hand entries in the file")
    return Hands.concat(parts)


def _snapshot_parts(snapshots: Iterable[tuple[str, Any]], source: str) -> Iterator[Hands]:
    """The hands of each shoe the snapshots hold (`snapshot_shoes`),
    labelled with the shoe id of the snapshot that started it, numbered 0."""
    labels: list[str] = []
    for shoe in snapshot_shoes(snapshots, source, labels):
        part = outcome_hands(shoe, KNOWN, source)
        yield replace(part, labels=(labels[-1],) if labels[-1] else ())


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


#: a time stamp before a captured message: `[08:46:12] {...}`
_TIME_PREFIX = re.compile(r"^\s*\[\s*\d[\d:.,T/+Z -]*\]\s*")


def live_json_hands(text: str, source: str, decks: int = 8) -> Hands:
    """A JSON document (not JSON Lines: `json_lines_of`): shoe-state
    snapshots (merged into shoes), lists of hand entries, or per-round
    records."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ShoeFormatError(
            f"{source}, line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}"
        ) from None
    except RecursionError:
        raise ShoeFormatError(
            f"{source}: its JSON nests lists or objects too deeply to be a shoe's records"
        ) from None
    if is_round(data) or (
        isinstance(data, list) and data and is_round(data[0]) and "playerScore" not in data[0]
    ):
        one_line = len([line for line in text.split("\n") if line.strip()]) == 1
        items = (
            [("line 1" if one_line else "the record", data)]
            if isinstance(data, dict)
            else [(f"[{i}]", item) for i, item in enumerate(data)]
        )
        return round_hands(items, source, decks)
    if is_message_list(data):
        messages = checked_messages(data, source)
        return merged_snapshots([(f"[{i}]", item) for i, item in enumerate(messages)], source)
    records = []
    shoe = 0
    for path, entries in json_shoes(data, source):
        for i, entry in enumerate(entries):
            records.append(live_entry(entry, f"{source}, {path}[{i}]", shoe, i + 1))
        shoe += 1 if entries else 0
    if not records:
        raise ShoeFormatError(f"{source}: no shoes: no hand entries in the file")
    return outcome_hands(records, KNOWN, source)


def json_lines_of(text: str, source: str) -> str | None:
    """What a JSON file's text is JSON Lines of (a message a line, with or
    without a `[time] ` prefix): "rounds" (per-round records) or
    "snapshots" (shoe-state snapshots); None for one document. Every line
    is parsed first: the first that is not JSON is the error, as is a file
    with neither kind of record."""
    lines = [(n, line) for n, line in numbered_lines(text) if line.strip()]
    if not any(_TIME_PREFIX.match(line) for _, line in lines):
        try:
            json.loads(text)
            return None
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data" and not _one_value_a_line(lines):
                return None  # (a document: its reader says what is wrong)
        except RecursionError:
            return None
    values = [(n, _json_line(n, _TIME_PREFIX.sub("", x, count=1), source)) for n, x in lines]
    first = next((v for _, v in values if is_round(v) or is_snapshot(v)), None)
    if first is None:
        raise ShoeFormatError(
            f"{source}, line {values[0][0]}: expected {JSON_SHAPES}, or a round's result (an "
            f"object with a winner); got {described(values[0][1])}"
        )
    return "snapshots" if is_snapshot(first) else "rounds"


def _one_value_a_line(lines: list[tuple[int, str]]) -> bool:
    """Whether every line with something on it opens an object or a list (as
    JSON Lines do; a document written over several lines has lines that close
    them, or hold a key)."""
    closed = sum(line.strip().endswith(("}", "]")) for _, line in lines)
    return closed > 1 and all(line.strip().startswith(("{", "[")) for _, line in lines)


def _json_line(number: int, line: str, source: str) -> Any:
    """The value on a line of JSON Lines (its time stamp taken off); a line
    that is not JSON (a message cut short) is an error naming it."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        short = exc.msg.startswith("Unterminated") or exc.pos >= len(line.rstrip()) - 1
        cut = "; the message is cut short" if short else ""
        raise ShoeFormatError(
            f"{source}, line {number}, column {exc.colno}: not valid JSON: {exc.msg}{cut}"
        ) from None
    except RecursionError:
        raise ShoeFormatError(
            f"{source}, line {number}: its JSON nests lists or objects "
            "too deeply to be a shoe's records"
        ) from None


def _first_record(lines: Iterator[tuple[int, str]], others: list[str]) -> tuple[str, Any] | None:
    """(`line N`, value) of the first round or snapshot of JSON Lines, read
    as far as it, the messages before it counted in `others` (by their
    types); None when a line before it is no JSON value on its own (a
    document over several lines), or there is none."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            value = json.loads(_TIME_PREFIX.sub("", line, count=1))
        except (json.JSONDecodeError, RecursionError):
            return None
        if is_round(value) or is_snapshot(value):
            return f"line {number}", value
        others.append(_type(value))
    return None


def json_lines_kind(lines: Iterator[tuple[int, str]]) -> str | None:
    """What numbered lines are JSON Lines of, as `json_line_shoes` reads
    them (read as far as the first round or snapshot): "rounds",
    "snapshots", or None (not JSON Lines); the lines close when this returns."""
    try:
        first = _first_record(lines, [])
    finally:
        getattr(lines, "close", lambda: None)()
    if first is None:
        return None
    return "snapshots" if is_snapshot(first[1]) else "rounds"


def json_line_shoes(
    lines: Iterator[tuple[int, str]], source: str, decks: int
) -> Generator[Hands, None, None]:
    """The hands of each shoe of JSON Lines of per-round records or of
    shoe-state snapshots (as the first says), in turn: snapshots merged into
    shoes (`snapshot_shoes`), rounds split into shoes (`RoundShoes`); lines
    of other messages are skipped, with a warning that counts them."""
    others: list[str] = []
    first = _first_record(lines, others)
    if first is None:
        getattr(lines, "close", lambda: None)()
        raise ShoeFormatError(f"{source}: not JSON Lines of rounds or shoe-state snapshots")
    records = _records(lines, source, first, others)
    if is_snapshot(first[1]):
        count = 0
        for part in _snapshot_parts(records, source):
            count += 1
            yield part
        _warn_skipped(source, others)
        if not count:
            raise ShoeFormatError(f"{source}: no shoes: no hand entries in the file")
        return
    reader = RoundShoes(first, source, decks)
    yield from _round_parts(reader, records)
    _warn_skipped(source, others)
    reader.finish()


def _records(
    lines: Iterator[tuple[int, str]], source: str, first: tuple[str, Any], others: list[str]
) -> Iterator[tuple[str, Any]]:
    """(`line N`, record) for the first and each record of its kind after it
    (parsed with its time stamp taken off); a record of the other kind is an
    error; other messages are counted in `others` and skipped."""
    snapshots = is_snapshot(first[1])
    yield first
    for number, line in lines:
        if not line.strip():
            continue
        value = _json_line(number, _TIME_PREFIX.sub("", line, count=1), source)
        if is_snapshot(value) if snapshots else is_round(value) and not is_snapshot(value):
            yield f"line {number}", value
        elif is_round(value) or is_snapshot(value):
            snap, rounds = (
                (first[0], f"line {number}") if snapshots else (f"line {number}", first[0])
            )
            raise ShoeFormatError(
                f"{source}, line {number}: the file mixes shoe-state snapshots ({snap}) and "
                f"per-round records ({rounds}); give one kind of record a file"
            )
        else:
            others.append(_type(value))


def _type(value: Any) -> str:
    """The type a message names ("" if none)."""
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else ""


def _warn_skipped(source: str, others: list[str]) -> None:
    """Warn of the lines that hold no hands (of these message types)."""
    if not others:
        return
    names = sorted(set(others) - {""})
    said = f" ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" if names else ""
    many = len(others) > 1
    warnings.warn(
        f"{source}: {len(others)} line{'s' if many else ''} that "
        f"hold{'' if many else 's'} no hands{said} skipped",
        stacklevel=4,
    )

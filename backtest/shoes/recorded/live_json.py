"""A live table's JSON: shoe-state messages (one document, a list, or JSON
Lines, merged into shoes), lists of hand records, or per-round results."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Generator, Iterator
from dataclasses import replace
from typing import Any

from backtest.core.errors import ShoeFormatError
from backtest.core.hands import Hands
from backtest.shoes.recorded.live_snapshots import (
    JSON_SHAPES,
    KNOWN,
    checked_messages,
    described,
    is_message_list,
    is_snapshot,
    json_shoes,
    live_entry,
    merged_snapshots,
    snapshot_shoes,
)
from backtest.shoes.recorded.outcomes import outcome_hands
from backtest.shoes.recorded.rounds import RoundShoes, is_round, round_hands
from backtest.shoes.recorded.text import numbered_lines

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
        labels: list[str] = []
        count = 0
        for count, shoe in enumerate(snapshot_shoes(records, source, labels=labels), start=1):
            part = outcome_hands([rec | {"shoe": count - 1} for rec in shoe], KNOWN, source)
            yield replace(part, labels=(labels[-1],) if labels[-1] else ())
        _warn_skipped(source, others)
        if not count:
            raise ShoeFormatError(f"{source}: no shoes: no hand entries in the file")
        return
    reader = RoundShoes(first, source, decks)
    for shoe in reader.shoes(records):
        part = outcome_hands(shoe, reader.known, source)
        yield replace(part, labels=(reader.label,) if reader.label else ())
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

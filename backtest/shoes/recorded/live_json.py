"""A live table's JSON: shoe-state messages (one document, a list, or JSON
Lines, merged into shoes), lists of hand records, or per-round results."""

from __future__ import annotations

import itertools
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
from backtest.shoes.recorded.rounds import (
    RoundShoes,
    is_round,
    line_number,
    round_hands,
)
from backtest.shoes.recorded.text import numbered_lines


def close(items: Iterator[Any]) -> None:
    """Close `items` if it can be closed (a generator reading a file)."""
    getattr(items, "close", lambda: None)()


#: a time stamp before a captured message: `[08:46:12] {...}`
_TIME_PREFIX = re.compile(r"^\s*\[\s*\d[\d:.,T/+Z -]*\]\s*")


def live_json_hands(text: str, source: str, decks: int = 8) -> Hands:
    """A JSON document, or JSON Lines (a message a line, with or without a
    `[time] ` prefix): shoe-state snapshots (merged into shoes), lists of
    hand entries, or per-round records."""
    lines = json_lines(text, source)
    if lines is not None:
        return _items_hands(lines, source, decks)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" or _one_value_a_line(text):
            return _items_hands(json_lines(text, source, force=True) or [], source, decks)
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


def _one_value_a_line(text: str) -> bool:
    """Whether every line with something on it opens an object or a list (as
    JSON Lines do; a document written over several lines has lines that close
    them, or hold a key)."""
    lines = [line.strip() for _, line in numbered_lines(text) if line.strip()]
    closed = sum(line.endswith(("}", "]")) for line in lines)
    return closed > 1 and all(line.startswith(("{", "[")) for line in lines)


def json_lines(text: str, source: str, force: bool = False) -> list[tuple[str, Any]] | None:
    """(`line N`, value) for each line of a JSON Lines text; None when no line
    starts with a time stamp in brackets (`[08:46:12] `), unless `force`: then
    the text may be one document. A line that is not JSON (a message cut
    short) is an error naming it."""
    numbered = [(n, line) for n, line in numbered_lines(text) if line.strip()]
    stamped = [(n, _TIME_PREFIX.sub("", line, count=1)) for n, line in numbered]
    if not force and all(a == b for (_, a), (_, b) in zip(numbered, stamped)):
        return None
    return [(f"line {number}", _json_line(number, line, source)) for number, line in stamped]


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


def _first_record(
    lines: Iterator[tuple[int, str]], others: list[Any], kinds: set[str]
) -> tuple[str, Any] | None:
    """(`line N`, value) of the first round or snapshot of JSON Lines, read
    as far as it, the messages before it counted in `others` (their types in
    `kinds`); None when a line before it is not a JSON object on its own (a
    document over several lines), or there is none."""
    for number, line in lines:
        if not line.strip():
            continue
        text = _TIME_PREFIX.sub("", line, count=1)
        if not text.lstrip().startswith("{"):
            return None  # (not an object: a one-line document is not parsed here)
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return None
        if is_round(value) and is_snapshot(value):
            return None  # (both at once: the whole read says what is wrong)
        if is_round(value) or is_snapshot(value):
            return f"line {number}", value
        if not isinstance(value, dict):
            return None
        _count_other(value, others, kinds)
    return None


def json_lines_kind(lines: Iterator[tuple[int, str]]) -> str | None:
    """What numbered lines are JSON Lines of, as `json_lines_hands` reads
    them (it reads the lines as far as the first round or snapshot):
    "rounds" (per-round records), "snapshots" (shoe-state snapshots), or
    None (not JSON Lines, read whole); the lines close when this returns."""
    try:
        first = _first_record(lines, [], set())
    finally:
        close(lines)
    if first is None:
        return None
    return "snapshots" if is_snapshot(first[1]) else "rounds"


def snapshot_line_shoes(
    lines: Iterator[tuple[int, str]], source: str, first_shoe: int = 0
) -> Generator[tuple[Hands, tuple[int, int]], None, None]:
    """The hands of each shoe of JSON Lines of shoe-state snapshots in turn
    (numbered from `first_shoe`), with the lines of the snapshot that
    started it and of its last, as `json_lines_hands` merges them: the same
    checks, and at the end the same warning and error of a file with no
    hands."""
    others: list[Any] = []
    kinds: set[str] = set()
    first = _first_record(lines, others, kinds)
    if first is None or not is_snapshot(first[1]):
        close(lines)
        raise ShoeFormatError(f"{source}: not JSON Lines of shoe-state snapshots")
    span = ["", ""]
    labels: list[str] = []
    count = first_shoe
    try:
        snapshots = _snapshot_lines(lines, source, first, others, kinds)
        for records in snapshot_shoes(snapshots, source, span, labels):
            part = outcome_hands([rec | {"shoe": count} for rec in records], KNOWN, source)
            part = replace(part, labels=(labels[-1],) if labels[-1] else ())
            yield part, (line_number(span[0]), line_number(span[1]))
            count += 1
    finally:
        close(lines)
    if others:
        _warn_skipped(source, len(others), kinds)
    if count == first_shoe:
        raise ShoeFormatError(f"{source}: no shoes: no hand entries in the file")


def round_line_shoes(
    lines: Iterator[tuple[int, str]],
    source: str,
    decks: int,
    first_shoe: int = 0,
) -> Generator[tuple[Hands, tuple[int, int]], None, None]:
    """The hands of each shoe of JSON Lines of per-round records in turn
    (numbered from `first_shoe`), with the lines of its first and last
    record, as `json_lines_hands` reads them: the same checks, and at the
    end the same warnings."""
    others: list[Any] = []
    kinds: set[str] = set()
    first = _first_record(lines, others, kinds)
    if first is None or is_snapshot(first[1]):
        raise ShoeFormatError(f"{source}: not JSON Lines of per-round records")
    reader = RoundShoes(first, source, decks)
    rest = _round_lines(lines, source, first[0], others, kinds)
    try:
        items = itertools.chain([first], rest)
        for records in reader.shoes(items, first_shoe):
            part = outcome_hands(records, reader.known, source)
            part = replace(part, labels=(reader.label,) if reader.label else ())
            yield part, (line_number(reader.span[0]), line_number(reader.span[1]))
    finally:
        rest.close()
    if others:
        _warn_skipped(source, len(others), kinds)
    reader.finish()


def _count_other(value: Any, others: list[Any], kinds: set[str]) -> None:
    """Count a message that holds no hands (and its type, if it names one)."""
    others.append(None)
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        kinds.add(value["type"])


def _snapshot_lines(
    lines: Iterator[tuple[int, str]],
    source: str,
    first: tuple[str, Any],
    others: list[Any],
    kinds: set[str],
) -> Iterator[tuple[str, Any]]:
    """(`line N`, snapshot) for the first and each line of shoe-state
    snapshots after it (parsed with its time stamp taken off); a round's
    record is an error; other messages are counted and skipped."""
    yield first
    for number, line in lines:
        if not line.strip():
            continue
        value = _json_line(number, _TIME_PREFIX.sub("", line, count=1), source)
        if is_snapshot(value):
            yield f"line {number}", value
        elif is_round(value):
            raise ShoeFormatError(
                f"{source}, line {number}: the file mixes shoe-state snapshots "
                f"({first[0]}) and per-round records (line {number}); give one "
                "kind of record a file"
            )
        else:
            _count_other(value, others, kinds)


def _round_lines(
    lines: Iterator[tuple[int, str]],
    source: str,
    first: str | None,
    others: list[Any],
    kinds: set[str],
) -> Generator[tuple[str, Any], None, None]:
    """(`line N`, record) for each line of round records (parsed with its
    time stamp taken off), after the first (at `first`, or the first of
    these); a snapshot is an error; other messages are counted in `others`
    (their types in `kinds`) and skipped. `lines` close when this does."""
    try:
        for number, line in lines:
            if not line.strip():
                continue
            value = _json_line(number, _TIME_PREFIX.sub("", line, count=1), source)
            if is_round(value) and not is_snapshot(value):
                first = first or f"line {number}"
                yield f"line {number}", value
            elif is_snapshot(value):
                raise ShoeFormatError(
                    f"{source}, line {number}: the file mixes shoe-state snapshots "
                    f"(line {number}) and per-round records ({first}); give one "
                    "kind of record a file"
                )
            else:
                _count_other(value, others, kinds)
    finally:
        close(lines)


def _warn_skipped(source: str, count: int, kinds: set[str]) -> None:
    """Warn of `count` lines that hold no hands (of these message types)."""
    names = sorted(kinds)
    said = f" ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" if names else ""
    many = count > 1
    warnings.warn(
        f"{source}: {count} line{'s' if many else ''} that "
        f"hold{'' if many else 's'} no hands{said} skipped",
        stacklevel=4,
    )


def _items_hands(items: list[tuple[str, Any]], source: str, decks: int) -> Hands:
    """Hands from JSON values one after another (the lines of JSON Lines, the
    items of a list): snapshots, or round records; other messages (a table
    publishes many kinds) are skipped, with a warning that counts them."""
    snapshots = [(p, v) for p, v in items if is_snapshot(v)]
    rounds = [(p, v) for p, v in items if is_round(v)]
    if snapshots and rounds:
        raise ShoeFormatError(
            f"{source}, {rounds[0][0] if items.index(rounds[0]) > items.index(snapshots[0]) else snapshots[0][0]}: "
            f"the file mixes shoe-state snapshots ({snapshots[0][0]}) and per-round records "
            f"({rounds[0][0]}); give one kind of record a file"
        )
    kept = snapshots or rounds
    if not kept:
        first = items[0][1]
        raise ShoeFormatError(
            f"{source}, {items[0][0]}: expected {JSON_SHAPES}, or a round's result (an object "
            f"with a winner); got {described(first)}"
        )
    others = [v for _, v in items if not (is_snapshot(v) or is_round(v))]
    if others:
        kinds = {
            v["type"] for v in others if isinstance(v, dict) and isinstance(v.get("type"), str)
        }
        _warn_skipped(source, len(others), kinds)
    if rounds:
        return round_hands(rounds, source, decks)
    return merged_snapshots(snapshots, source)

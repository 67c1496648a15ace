"""Big JSON Lines files of per-round records indexed as the other formats
are: one pass checks every round and keeps where every few shoes begin and
the lines of the rounds recorded twice; any shoes read again by that index
are the shoes the whole read gives (the repeats skipped, the shoes split
where the whole read splits them), and a run, `deal` and an error are
those of the file read whole.

Files here are small: `STREAMED_BYTES` is set to 0 so that they are indexed
as a big file is, and `STRIDE` is made small.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import json_index
import numpy as np
import pytest
from hand_columns import columns
from json_index import WHOLE, read_whole, reads_again_alike, shoe_sets
from run_config import recorded_run, runs_alike
from test_streamed_jsonl import round_lines

from backtest.core.errors import ShoeFormatError
from backtest.run import engine, recorded_plan
from backtest.shoes.shoe import ShoeSpec, generate_hands

SHOES = 40


FILE = json_index.JsonFile("json-rounds", "rounds.jsonl")


@pytest.fixture(scope="module")
def hands() -> Any:
    return generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 7, 0)


def shoe_starts(lines: list[str]) -> dict[int, int]:
    """The place in `lines` of each shoe's first round (by its shoeId, from 0)."""
    starts: dict[int, int] = {}
    for i, line in enumerate(lines):
        starts.setdefault(int(json.loads(line)["shoeId"]) - 1, i)
    return starts


def with_repeats(hands: Any, split_by: str, cards: bool = True) -> tuple[list[str], list[int]]:
    """The rounds as JSON lines, some recorded twice: adjacent, far apart,
    just before and just after the first round of shoes 3, 6 and 32 (the
    first of a run of 3 or 32 read again), and as the file's last line; with
    heartbeats, a blank line and time stamps. Shoes are told apart by
    `split_by`: their shoeId, or their hand numbers starting again. With the
    lines of the repeats (numbered from 1)."""
    lines = round_lines(hands, cards)
    starts = shoe_starts(lines)
    if split_by == "hand":
        for i, line in enumerate(lines):
            rec = json.loads(line)
            rec["handNumber"] = i - starts[int(rec.pop("shoeId")) - 1] + 1
            lines[i] = json.dumps(rec)
    extra: dict[int, list[str]] = {}  # (the lines that go before line i of `lines`)

    def repeat(line: int, before: int) -> None:
        extra.setdefault(before, []).append(lines[line])

    repeat(0, 1)  # adjacent, in the first shoe
    repeat(4, 5)  # two in a row
    repeat(4, 5)
    repeat(starts[2] + 1, starts[30] + 3)  # far apart
    for k in (3, 6, 32):
        repeat(starts[k] - 1, starts[k])  # the shoe before's last, just before k's first
        repeat(starts[k], starts[k] + 1)  # k's first, just after it
        repeat(starts[k - 1], starts[k] + 2)  # the first of the shoe before, in k
    repeat(starts[10] + 2, len(lines))  # the file's last line
    out: list[tuple[str, bool]] = []  # (a line, and whether it is a repeat)
    for i in range(len(lines) + 1):
        out += [(line, True) for line in extra.get(i, [])]
        if i < len(lines):
            out.append((lines[i], False))
    out = [(f"[08:{i // 60 % 60:02d}:{i % 60:02d}] {line}", r) for i, (line, r) in enumerate(out)]
    out.insert(0, ('{"type": "heartbeat"}', False))
    out.insert(starts[20] + 5, ('{"type": "heartbeat"}', False))
    out.insert(starts[5] + 2, ("", False))
    return [line for line, _ in out], [n for n, (_, r) in enumerate(out, 1) if r]


@pytest.mark.parametrize("split_by", ["shoe", "hand"])
@pytest.mark.parametrize("stride", [1, 3, 32])
def test_any_shoes_read_again_are_those_of_the_whole_read(
    tmp_path: Path, monkeypatch: Any, hands: Any, stride: int, split_by: str
) -> None:
    lines, repeats = with_repeats(hands, split_by)
    path = FILE.write(tmp_path, lines)
    whole, whole_warned = read_whole(path, monkeypatch)
    index, warned = FILE.indexed(path, monkeypatch, stride)
    assert warned == whole_warned
    assert f"{len(repeats)} rounds recorded twice" in warned[-1]
    assert len(index) == whole.n_shoes == SHOES
    assert index.lengths.tolist() == np.bincount(whole.shoe).tolist()
    reads_again_alike(index, whole, shoe_sets(SHOES), quiet=True)


def test_rounds_without_cards_are_read_again_alike(
    tmp_path: Path, monkeypatch: Any, hands: Any
) -> None:
    lines, _ = with_repeats(hands, "shoe", cards=False)
    path = FILE.write(tmp_path, lines)
    whole, _ = read_whole(path, monkeypatch)
    index, _ = FILE.indexed(path, monkeypatch, 3)
    assert index.known == whole.known and "cards" not in whole.known
    again = index.hands(np.arange(SHOES))
    assert columns(again) == columns(whole)


def config(path: Path, sessions: int | None, **session: Any) -> Any:
    return recorded_run(path, sessions, source="rounds.yaml", **session)


@pytest.mark.parametrize(
    ("sessions", "session"),
    [(None, {"max_shoes": 1}), (None, {"max_hands": 30}), (15, {"max_shoes": 3})],
)
def test_a_run_on_an_indexed_file_gives_the_numbers_of_one_read_whole(
    tmp_path: Path, monkeypatch: Any, hands: Any, sessions: int | None, session: dict[str, int]
) -> None:
    lines, _ = with_repeats(hands, "shoe")
    path = FILE.write(tmp_path, lines)
    runs_alike(monkeypatch, [(path, WHOLE), (path, 0)], lambda p: config(p, sessions, **session))


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_deal_prints_an_indexed_file_as_one_read_whole(
    tmp_path: Path, monkeypatch: Any, capsys: Any, hands: Any, fmt: str
) -> None:
    lines, _ = with_repeats(hands, "hand")
    json_index.deal_alike(FILE.write(tmp_path, lines), monkeypatch, capsys, fmt)


def test_a_bad_record_late_in_the_file_stops_the_index_as_it_stops_a_whole_read(
    tmp_path: Path, monkeypatch: Any, hands: Any
) -> None:
    lines, _ = with_repeats(hands, "shoe")
    bad = len(lines) - 5
    rec = json.loads(lines[bad].split("] ", 1)[1]) | {"banker": 12}
    path = FILE.write(tmp_path, [*lines[:bad], json.dumps(rec), *lines[bad + 1 :]])
    whole, index = FILE.errors(path, monkeypatch)
    assert index == whole
    assert f"rounds.jsonl, line {bad + 1}.banker: impossible total 12" in whole
    first = json.loads(lines[1].split("] ", 1)[1])
    changed = json.dumps(first | {"winner": "TIE" if first["winner"] != "TIE" else "PLAYER_WIN"})
    path = FILE.write(tmp_path, [*lines, changed])
    whole, index = FILE.errors(path, monkeypatch)
    assert index == whole
    assert f"line {len(lines) + 1}: gameId '1-1' appears again (line 2)" in whole
    recorded_plan.READS.clear()
    with pytest.raises(ShoeFormatError, match="appears again"):
        engine.run(config(path, None, max_shoes=1), workers=1)


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_line_ends_and_a_byte_order_mark_are_read_again_alike(
    tmp_path: Path, monkeypatch: Any, hands: Any, end: str
) -> None:
    lines, repeats = with_repeats(hands, "shoe")
    path = tmp_path / "rounds.jsonl"
    path.write_bytes(("\ufeff" + end.join(lines) + end).encode("utf-8"))
    whole, _ = read_whole(path, monkeypatch)
    index, _ = FILE.indexed(path, monkeypatch, 3)
    reads_again_alike(index, whole, [[4], [3, 4, 5, 6], list(range(SHOES))])

"""Big JSON Lines files of shoe-state snapshots indexed as the other formats
are: one pass merges the snapshots into shoes as the whole read does and
keeps where every few shoes begin (the snapshot that starts the shoe); any
shoes read again from there are the shoes the whole read gives, and a run,
`deal` and an error are those of the file read whole.

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
from json_index import WHOLE, read_whole, reads_again_alike, shoe_sets
from run_config import recorded_run, runs_alike

from backtest.core.errors import ShoeFormatError
from backtest.run import engine, recorded_plan
from backtest.shoes.shoe import ShoeSpec, generate_hands

SHOES = 40
HEARTBEAT = '{"type": "connection.heartbeat"}'


FILE = json_index.JsonFile("json-snapshots", "snapshots.jsonl")


@pytest.fixture(scope="module")
def hands() -> Any:
    return generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 7, 0)


def entry(r: Any) -> dict[str, Any]:
    return {
        "winner": r.winner.name.title(),
        "playerScore": r.player_total,
        "bankerScore": r.banker_total,
        "natural": r.natural,
        "playerPair": r.player_pair,
        "bankerPair": r.banker_pair,
    }


def snapshot(entries: list[dict[str, Any]], shoe: str | None = None) -> str:
    args: dict[str, Any] = {"history_v2": entries}
    if shoe is not None:
        args["shoeId"] = shoe
    return json.dumps({"type": "baccarat.encodedShoeState", "args": args})


def snapshot_file(hands: Any) -> tuple[list[str], list[int]]:
    """The shoes as a live table's snapshots, a shoe starting in each of
    four ways in turn: a new shoe id; a shorter snapshot (no id); an empty
    snapshot, then growing ones (no id); one snapshot of the whole shoe
    under a new id, after an empty snapshot of yet another id (a shoe with
    no hands, which is none). Snapshots repeated, heartbeats (one first), a
    blank line, time stamps. With the line of the snapshot that starts each
    shoe (numbered from 1)."""
    lines = [HEARTBEAT]
    starts = []
    for k in range(SHOES):
        shoe = [entry(hands.record(i)) for i in np.flatnonzero(hands.shoe == k)]
        way = k % 4
        if way == 3:
            lines.append(snapshot([], f"none-{k}"))
            starts.append(len(lines) + 1)
            lines.append(snapshot(shoe, f"shoe-{k}"))
            continue
        starts.append(len(lines) + 1)
        sizes = list(range(0 if way == 2 else 1, len(shoe) + 1))
        for size in sizes:
            lines.append(snapshot(shoe[:size], f"shoe-{k}" if way == 0 else None))
            if size in (2, 5):
                lines.append(lines[-1])  # (a snapshot published twice)
            if size == 3 and k % 5 == 0:
                lines.append(HEARTBEAT)
        if k == 7:
            lines.append("")
    lines.append(HEARTBEAT)
    stamped = [
        f"[08:{i // 60 % 60:02d}:{i % 60:02d}] {line}" if line else line
        for i, line in enumerate(lines)
    ]
    return stamped, starts


@pytest.mark.parametrize("stride", [1, 3, 32])
def test_any_shoes_read_again_are_those_of_the_whole_read(
    tmp_path: Path, monkeypatch: Any, hands: Any, stride: int
) -> None:
    lines, starts = snapshot_file(hands)
    path = FILE.write(tmp_path, lines)
    whole, whole_warned = read_whole(path, monkeypatch)
    assert whole.hand.tolist() == hands.hand.tolist()  # (the file is the shoes it was made of)
    index, warned = FILE.indexed(path, monkeypatch, stride)
    assert (
        warned
        == whole_warned
        == [f"{path}: 8 lines that hold no hands (connection.heartbeat) skipped"]
    )
    assert len(index) == whole.n_shoes == SHOES
    assert index.lengths.tolist() == np.bincount(whole.shoe).tolist()
    reads_again_alike(index, whole, shoe_sets(SHOES), quiet=True)


def config(path: Path, sessions: int | None, **session: Any) -> Any:
    return recorded_run(path, sessions, source="snapshots.yaml", **session)


@pytest.mark.parametrize(
    ("sessions", "session"),
    [(None, {"max_shoes": 1}), (None, {"max_hands": 30}), (15, {"max_shoes": 3})],
)
def test_a_run_on_an_indexed_file_gives_the_numbers_of_one_read_whole(
    tmp_path: Path, monkeypatch: Any, hands: Any, sessions: int | None, session: dict[str, int]
) -> None:
    lines, _ = snapshot_file(hands)
    path = FILE.write(tmp_path, lines)
    runs_alike(monkeypatch, [(path, WHOLE), (path, 0)], lambda p: config(p, sessions, **session))


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_deal_prints_an_indexed_file_as_one_read_whole(
    tmp_path: Path, monkeypatch: Any, capsys: Any, hands: Any, fmt: str
) -> None:
    lines, _ = snapshot_file(hands)
    json_index.deal_alike(FILE.write(tmp_path, lines), monkeypatch, capsys, fmt)


def test_errors_late_in_the_file_stop_the_index_as_they_stop_a_whole_read(
    tmp_path: Path, monkeypatch: Any, hands: Any
) -> None:
    lines, starts = snapshot_file(hands)
    bad = starts[37] + 1  # (shoe 38's second snapshot, which has no id)
    text = lines[bad - 1].split("] ", 1)[1]
    message = json.loads(text)
    message["args"]["history_v2"][0]["bankerScore"] = 12
    path = FILE.write(tmp_path, [*lines[: bad - 1], json.dumps(message), *lines[bad:]])
    whole, index = FILE.errors(path, monkeypatch)
    assert index == whole
    assert f"line {bad}, args.history_v2[0].bankerScore: impossible total 12" in whole
    message = json.loads(text)
    message["args"]["history_v2"][0] = message["args"]["history_v2"][1]
    path = FILE.write(tmp_path, [*lines[: bad - 1], json.dumps(message), *lines[bad:]])
    whole, index = FILE.errors(path, monkeypatch)
    assert index == whole
    assert f"line {bad}, args.history_v2[0]: this snapshot contradicts the one before it" in whole
    path = FILE.write(tmp_path, [*lines, json.dumps({"winner": "banker", "gameId": "g"})])
    whole, index = FILE.errors(path, monkeypatch)
    assert index == whole and "the file mixes shoe-state snapshots" in whole
    recorded_plan.READS.clear()
    with pytest.raises(ShoeFormatError, match="the file mixes"):
        engine.run(config(path, None, max_shoes=1), workers=1)
    long = [entry(hands.record(i % len(hands))) for i in range(30)]
    path = FILE.write(tmp_path, [*lines, snapshot(long, "long")])  # (more than a deck deals)
    whole, index = FILE.errors(path, monkeypatch)
    assert index == whole and f"shoe {SHOES + 1}" in whole
    path = FILE.write(tmp_path, [HEARTBEAT, snapshot([]), snapshot([], "b")])
    whole, index = FILE.errors(path, monkeypatch)
    assert index == whole and "no shoes: no hand entries in the file" in whole


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_line_ends_and_a_byte_order_mark_are_read_again_alike(
    tmp_path: Path, monkeypatch: Any, hands: Any, end: str
) -> None:
    lines, starts = snapshot_file(hands)
    path = tmp_path / "snapshots.jsonl"
    path.write_bytes(("\ufeff" + end.join(lines) + end).encode("utf-8"))
    whole, _ = read_whole(path, monkeypatch)
    index, _ = FILE.indexed(path, monkeypatch, 3)
    reads_again_alike(index, whole, [[4], [3, 4, 5, 6], list(range(SHOES))])

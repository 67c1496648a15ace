"""Big JSON Lines of shoe-state snapshots read a line at a time: a snapshot
holds the whole shoe so far, so only the current shoe's last is kept, and
the hands, errors and warnings are those of the file read whole. A big JSON
document (not JSON Lines) is refused above a stated size.

Files here are small; `STREAMED_BYTES` is set to 0 so that they are read as
a big file is.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from backtest.core.errors import ShoeFormatError
from backtest.shoes.recorded import files, read_shoes, stream

WHOLE, STREAMED = 1 << 40, 0
ENTRIES = [
    {"winner": "Banker", "playerScore": 3, "bankerScore": 7},
    {"winner": "Player", "playerScore": 9, "bankerScore": 4, "natural": True},
    {"winner": "Tie", "playerScore": 6, "bankerScore": 6},
    {"winner": "Player", "playerScore": 5, "bankerScore": 1, "playerPair": True},
    {"winner": "Banker", "playerScore": 0, "bankerScore": 8, "natural": True},
]


def snapshot(entries: list[dict[str, Any]], shoe: str | None = None) -> str:
    args: dict[str, Any] = {"history_v2": entries}
    if shoe is not None:
        args["shoeId"] = shoe
    return json.dumps({"type": "baccarat.encodedShoeState", "args": args})


def snapshot_lines() -> list[str]:
    """Four shoes: growing snapshots, a repeat, a shorter one (a new shoe),
    another shoe id, a heartbeat first and among them, time stamps."""
    lines = ['{"type": "connection.heartbeat"}']
    lines += [snapshot(ENTRIES[:k]) for k in (1, 2, 2, 4)]  # shoe 1: 4 hands
    lines += ['{"type": "connection.heartbeat"}', ""]
    lines += [snapshot(ENTRIES[2:][:k]) for k in (1, 3)]  # shoe 2: shorter, so new
    lines += [snapshot(ENTRIES[2:], "B"), snapshot(ENTRIES[:5], "C")]  # shoes 3, 4: new ids
    return [f"[08:46:{i:02d}] {line}" if line else line for i, line in enumerate(lines)]


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "snapshots.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read(path: Path, monkeypatch: Any, limit: int, **kw: Any) -> tuple[Any, list[str]]:
    monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hands = read_shoes(path, **kw)
    names = ("shoe", "hand", "winner", "player_total", "banker_total", "natural", "player_pair")
    got = {"known": sorted(hands.known), **{n: getattr(hands, n).tolist() for n in names}}
    return got, [str(w.message) for w in caught]


def error(path: Path, monkeypatch: Any, limit: int) -> str:
    monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
    with pytest.raises(ShoeFormatError) as exc, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_shoes(path)
    return str(exc.value)


def test_snapshots_streamed_equal_whole(tmp_path: Path, monkeypatch: Any) -> None:
    path = write(tmp_path, snapshot_lines())
    streamed_reads: list[Any] = []
    real = files.json_lines_hands
    monkeypatch.setattr(
        files, "json_lines_hands", lambda *a: streamed_reads.append(real(*a)) or streamed_reads[-1]
    )
    whole = read(path, monkeypatch, WHOLE)
    streamed = read(path, monkeypatch, STREAMED)
    assert streamed_reads and streamed_reads[-1] is not None  # (read a line at a time)
    assert streamed == whole
    assert whole[0]["hand"] == [1, 2, 3, 4, 1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5]
    assert whole[1] == [f"{path}: 2 lines that hold no hands (connection.heartbeat) skipped"]


def test_a_read_of_the_first_shoes_stops_after_them(tmp_path: Path, monkeypatch: Any) -> None:
    lines = snapshot_lines()
    lines.insert(11, "{cut short")  # after the first snapshot of the third shoe
    path = write(tmp_path, lines)
    got, warned = read(path, monkeypatch, STREAMED, shoes=2)
    assert got["hand"] == [1, 2, 3, 4, 1, 2, 3] and not warned
    for limit in (WHOLE, STREAMED):
        assert "line 12, column 2: not valid JSON" in error(path, monkeypatch, limit)


@pytest.mark.parametrize(
    "change, said",
    [
        (  # a snapshot that does not begin with the hands before it
            lambda lines: lines.insert(3, snapshot([ENTRIES[1], ENTRIES[1]])),
            "line 4, args.history_v2[0]: this snapshot contradicts the one before it (line 3)",
        ),
        (  # a round's record among the snapshots
            lambda lines: lines.insert(6, json.dumps({"winner": "banker", "gameId": "g"})),
            "line 7: the file mixes shoe-state snapshots (line 2) and per-round records (line 7)",
        ),
        (  # a hand entry with an impossible total
            lambda lines: lines.append(snapshot([{**ENTRIES[0], "bankerScore": 12}])),
            "line 12, args.history_v2[0].bankerScore: impossible total 12",
        ),
    ],
)
def test_errors_the_same(tmp_path: Path, monkeypatch: Any, change: Any, said: str) -> None:
    lines = snapshot_lines()
    change(lines)
    path = write(tmp_path, lines)
    whole, streamed = (error(path, monkeypatch, limit) for limit in (WHOLE, STREAMED))
    assert streamed == whole
    assert said in whole


def test_a_big_json_document_is_refused_with_what_to_write_instead(
    tmp_path: Path, monkeypatch: Any
) -> None:
    document = tmp_path / "shoe.json"
    document.write_text(json.dumps({"args": {"history_v2": ENTRIES}}, indent=2), encoding="utf-8")
    monkeypatch.setattr(files, "JSON_DOCUMENT_BYTES", 100)
    monkeypatch.setattr(stream, "STREAMED_BYTES", STREAMED)
    with pytest.raises(ShoeFormatError) as exc:
        read_shoes(document)
    said = str(exc.value)
    assert said.startswith(f"{document}: 0 MB of JSON that is not JSON Lines")
    assert "read whole only up to 0 MB" in said and "write it as JSON Lines" in said
    lines = write(tmp_path, snapshot_lines())  # (JSON Lines: read a line at a time)
    assert len(read(lines, monkeypatch, STREAMED)[0]["hand"]) == 15
    monkeypatch.setattr(stream, "STREAMED_BYTES", WHOLE)  # (small: read whole)
    assert len(read_shoes(document)) == 5

"""A big road file (a shoe a line) read a line at a time, and indexed by its
shoes: a read of its first shoes stops after them, and a run or `deal` over
all of it reads each shoe again as it is played or printed. The hands,
errors and output are those of the same file read whole.

Files here are small; `STREAMED_BYTES` is set to 0 so that they are read as
a big file is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import backtest_here
from run_config import recorded_run, runs_alike

from backtest.core.errors import ShoeFormatError
from backtest.present import render
from backtest.shoes.recorded import cache, files, read_shoes, stream
from backtest.shoes.shoe import ShoeSpec, generate_hands

SHOES = 40
#: a result's letter, by its code
LETTERS = "PBT"
WHOLE, STREAMED = 1 << 40, 0


@pytest.fixture(scope="module")
def hands() -> Any:
    return generate_hands(ShoeSpec(decks=8), SHOES, 9, 0)


def roads(hands: Any) -> list[str]:
    """A line of letters a shoe."""
    bounds = np.flatnonzero(np.diff(hands.shoe)) + 1
    return ["".join(LETTERS[w] for w in shoe) for shoe in np.split(hands.winner, bounds)]


def awkward(lines: list[str]) -> bytes:
    """The roads with what a reader must get right: a byte-order mark, CR LF
    and lone CR line ends, comments, blank lines, a line of separators only,
    results as words, separated, or in Chinese."""
    lines = list(lines)
    lines[1] = ",".join(lines[1])
    lines[2] = " ".join({"B": "Banker", "P": "player", "T": "TIE"}[c] for c in lines[2])
    lines[3] = lines[3].replace("B", "庄").replace("P", "闲").replace("T", "和") + "  # 和"
    lines.insert(5, "# a comment between shoes")
    lines.insert(9, "")
    lines.insert(12, "   ")
    body = "\r\n".join(lines[:20]) + "\r\n" + "\r".join(lines[20:30]) + "\n" + "\n".join(lines[30:])
    return ("\ufeff" + body + "\n").encode()


def columns(hands: Any) -> dict[str, Any]:
    names = ("shoe", "hand", "winner", "player_total", "cards")
    return {"known": sorted(hands.known), **{n: getattr(hands, n).tolist() for n in names}}


def read(path: Path, monkeypatch: Any, limit: int, **kw: Any) -> Any:
    monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
    return read_shoes(path, **kw)


def test_streamed_and_indexed_equal_whole(tmp_path: Path, monkeypatch: Any, hands: Any) -> None:
    path = tmp_path / "roads.txt"
    path.write_bytes(awkward(roads(hands)))
    whole = read(path, monkeypatch, WHOLE)
    assert whole.winner.tolist() == hands.winner.tolist()
    called: list[Any] = []
    real = files.road_line_hands
    monkeypatch.setattr(files, "road_line_hands", lambda *a: called.append(a) or real(*a))
    streamed = read(path, monkeypatch, STREAMED)
    assert called  # (read a line at a time)
    assert columns(streamed) == columns(whole)
    assert stream.streamable(path) == "road"
    index = cache.columnar(path, 8, False, "road")
    assert len(index) == SHOES and index.known == frozenset()
    some = np.array([0, 1, 2, 7, 8, 20, 21, 22, SHOES - 1])
    again = index.hands(some)
    wanted = whole.select(np.flatnonzero(np.isin(whole.shoe, some)))
    assert columns(again) == columns(wanted)


def test_a_shoe_too_long_is_named_by_its_line(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "roads.txt"
    path.write_text("BPBP\nPPBB\n" + "B" * 105 + "\nPB\n", encoding="utf-8")
    said = []
    for limit in (WHOLE, STREAMED):
        with pytest.raises(ShoeFormatError) as exc:
            read(path, monkeypatch, limit)
        said.append(str(exc.value))
    assert said[0] == said[1]
    assert "roads.txt, line 3: 105 hands in one shoe, more than 8 decks can deal" in said[0]


def test_a_column_of_results_is_read_whole(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "column.txt"
    path.write_text("B\nP\nP\n\nT\nB\n", encoding="utf-8")
    monkeypatch.setattr(stream, "STREAMED_BYTES", STREAMED)
    assert stream.streamable(path) is None
    hands = read_shoes(path)
    assert hands.shoe.tolist() == [0, 0, 0, 1, 1] and hands.hand.tolist() == [1, 2, 3, 1, 2]


def config(path: Path, sessions: int | None, **session: Any) -> Any:
    return recorded_run(path, sessions, decks=None, source="roads.yaml", **session)


@pytest.mark.parametrize(
    ("sessions", "session"),
    [(None, {"max_shoes": 1}), (None, {"max_hands": 200}), (15, {"max_shoes": 3})],
)
def test_a_run_on_an_indexed_road_gives_the_same_numbers(
    tmp_path: Path, monkeypatch: Any, hands: Any, sessions: int | None, session: dict[str, int]
) -> None:
    runs = [(tmp_path / "whole.txt", WHOLE), (tmp_path / "streamed.txt", STREAMED)]
    for path, _ in runs:
        path.write_bytes(awkward(roads(hands)))
    runs_alike(monkeypatch, runs, lambda path: config(path, sessions, **session))


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_deal_prints_an_indexed_road_as_one_read_whole(
    tmp_path: Path, monkeypatch: Any, capsys: Any, hands: Any, fmt: str
) -> None:
    path = tmp_path / "roads.txt"
    path.write_bytes(awkward(roads(hands)))
    monkeypatch.setattr(render, "BLOCK_HANDS", 200)  # blocks of a few shoes
    printed = []
    for limit in (WHOLE, STREAMED):
        monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
        code, out, err = backtest_here(monkeypatch, capsys, "deal", str(path), "-f", fmt)
        assert code == 0, err
        printed.append(out)
    assert printed[0] == printed[1]
    code, _, err = backtest_here(monkeypatch, capsys, "deal", str(path), "--burn")
    assert code == 2 and "the burn rule applies to card-level shoes" in err


def test_roads_of_a_shoe_read_no_further(
    tmp_path: Path, monkeypatch: Any, capsys: Any, hands: Any
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # the roads' header on one line, whatever the path
    lines = roads(hands)
    path = tmp_path / "roads.txt"
    path.write_text("\n".join(lines) + "\nBPX\n", encoding="utf-8")  # a bad last line
    monkeypatch.setattr(stream, "STREAMED_BYTES", STREAMED)
    code, out, err = backtest_here(monkeypatch, capsys, "roads", "--shoe", "2", str(path))
    assert code == 0, err
    good = tmp_path / "good.txt"
    good.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(stream, "STREAMED_BYTES", WHOLE)
    code, whole, err = backtest_here(monkeypatch, capsys, "roads", "--shoe", "2", str(good))
    assert code == 0, err
    # (the same roads; read whole, the header counts the file's shoes)
    assert out.split("\n", 1)[1] == whole.split("\n", 1)[1]

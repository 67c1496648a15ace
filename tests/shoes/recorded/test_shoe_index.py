"""A big card-level file indexed by its shoes (`recorded.stream`): any of its
shoes read again by the index are the hands `read_shoes` deals from them,
and a run that reads its shoes by the index gives the numbers of the same
file read whole.

Files here are small; `STREAMED_BYTES` is set to 0 so that they are read as
a big file is.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from cli_helpers import backtest_here
from run_config import recorded_run, runs_alike

from backtest.core.errors import ShoeFormatError
from backtest.present import render
from backtest.run import engine, recorded_plan
from backtest.shoes.recorded import (
    IncompleteHandWarning,
    cache,
    format_card_text,
    read_shoes,
    stream,
)
from backtest.shoes.shoe import ShoeSpec, generate_hands

#: shoes of hands as `shoe generate` writes them, 1 deck, so a shoe is short
SHOES = 60
BAD_TAIL = "KS 9H ZZ 7D\n"


@pytest.fixture(scope="module")
def text() -> str:
    return format_card_text(
        generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 3, 0),
        header="decks=1, for the tests",
    )


def columns(hands: Any) -> dict[str, list[Any]]:
    names = ("shoe", "hand", "cards", "winner", "player_total", "banker_total", "natural")
    return {n: np.asarray(getattr(hands, n)).tolist() for n in names}


def awkward(text: str) -> bytes:
    """The text with what a reader must get right: a byte-order mark, CR LF
    line ends and some lone CRs, comments, blank lines, and a shoe too short
    for a hand (which is no shoe of the index) in the middle."""
    lines = text.split("\n")
    lines.insert(5, "# a comment between shoes")
    lines.insert(9, "")
    lines.insert(12, "5 K 9   # too few cards for a hand")
    body = "\r\n".join(lines[:20]) + "\r\n" + "\r".join(lines[20:30]) + "\n" + "\n".join(lines[30:])
    return b"\xef\xbb\xbf" + body.encode()


@pytest.mark.parametrize("stride", [1, 3, 32])
def test_shoes_read_again_by_the_index_are_those_read_whole(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stride: int
) -> None:
    """Whatever shoes the index keeps the place of (every `stride`th: a read
    starts at the one before and reads on)."""
    path = tmp_path / "shoes.txt"
    path.write_bytes(awkward(text))
    with warnings.catch_warnings(record=True) as read_whole:
        warnings.simplefilter("always")
        whole = read_shoes(path, decks=1)
    with warnings.catch_warnings(record=True) as indexing:
        warnings.simplefilter("always")
        index = cache.columnar(path, 1, False, "card-text")
    # the index's pass warns as the whole read does (of the shoe too short)
    assert [str(w.message) for w in indexing] == [str(w.message) for w in read_whole]
    assert [w.category for w in indexing] == [IncompleteHandWarning]
    assert len(index) == whole.n_shoes == SHOES
    assert index.lengths.sum() == len(whole)
    for shoes in ([0], [3, 4, 5, 6], [0, 2, 11, 12, 13, 25, 26, 40, 59], list(range(SHOES))):
        got = index.hands(np.array(shoes))
        assert columns(got) == columns(whole.select(np.isin(whole.shoe, shoes)))
    blocks = list(index.blocks(100))
    assert len(blocks) > 3 and all(b.n_shoes >= 1 for b in blocks)
    assert columns(whole) == {k: sum((columns(b)[k] for b in blocks), []) for k in columns(whole)}


def test_the_burn_rule_is_applied_to_shoes_read_again(text: str, tmp_path: Path) -> None:
    path = tmp_path / "shoes.txt"
    path.write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteHandWarning)  # (shoes cut short by the burn)
        whole = read_shoes(path, decks=1, burn=True)
        index = cache.columnar(path, 1, True, "card-text")
    got = index.hands(np.array([1, 2, 30]))
    assert columns(got) == columns(whole.select(np.isin(whole.shoe, [1, 2, 30])))
    assert got.burned == tuple(whole.burned[k] for k in (1, 2, 30))


def recorded(path: Path, sessions: int | None, **session: Any) -> Any:
    return recorded_run(path, sessions, follow=True, **session)


@pytest.mark.parametrize(
    ("sessions", "session"),
    [
        (None, {"max_shoes": 1}),  # every shoe, a session each
        (None, {"max_hands": 40}),  # every shoe, sessions of 40 hands
        (25, {"max_shoes": 3}),  # the shoes played again (loop)
        (9, {"max_hands": 150}),  # sessions of hands, round the file again
    ],
)
def test_a_run_on_shoes_read_by_the_index_gives_the_same_numbers(
    text: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sessions: int | None,
    session: dict[str, int],
) -> None:
    runs = [(tmp_path / "whole.txt", 1 << 40), (tmp_path / "streamed.txt", 0)]
    for path, _ in runs:
        path.write_text(text, encoding="utf-8")
    whole, streamed = runs_alike(
        monkeypatch, runs, lambda path: recorded(path, sessions, **session)
    )
    assert isinstance(whole.sessions, pl.DataFrame) and isinstance(streamed.sessions, pl.DataFrame)
    assert whole.sessions.equals(streamed.sessions)


def test_sessions_of_hands_read_only_the_shoes_they_play(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    good = tmp_path / "good.txt"
    good.write_text(text, encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_text(text + BAD_TAIL, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [
            engine.run(recorded(path, None, max_hands=60), sessions=4, workers=1)
            for path in (good, bad)
        ]
        assert runs[0].summary.equals(runs[1].summary)
        read, n = recorded_plan.read_recorded(recorded(bad, None, max_hands=60), (4, 60))
        assert not read.whole and n == len(read.lengths) < SHOES
        with pytest.raises(ShoeFormatError, match="'ZZ'"):  # the whole file: refused
            engine.run(recorded(bad, None, max_hands=60), workers=1)


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_deal_prints_a_file_read_by_its_shoes_as_one_read_whole(
    text: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
) -> None:
    path = tmp_path / "shoes.txt"
    path.write_bytes(awkward(text))
    monkeypatch.setattr(render, "BLOCK_HANDS", 100)  # blocks of a few shoes
    printed = []
    for limit in (1 << 40, 0):
        monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
        code, out, err = backtest_here(monkeypatch, capsys, "deal", str(path), "-f", fmt)
        assert code == 0, err
        assert err.count("the shoe ends in the middle of a hand") == 1  # the short shoe
        printed.append(out)
    assert printed[0] == printed[1]
    assert f"{SHOES} shoes" in printed[0] or fmt != "table"

"""A big CSV (card or outcome level) indexed by its shoes: one pass checks
every shoe and keeps where its rows are, and any of its shoes read again by
the index are the hands `read_shoes` gives for them, so a run or `deal` over
all of the file holds only the shoes it is playing or printing.

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
from hand_columns import columns
from run_config import deals_alike, recorded_run, runs_alike

from backtest.core.cards import card_token
from backtest.core.errors import ShoeFormatError
from backtest.present import render
from backtest.shoes.recorded import IncompleteHandWarning, cache, read_shoes, stream
from backtest.shoes.shoe import ShoeSpec, generate_hands

SHOES = 30
WHOLE, STREAMED = 1 << 40, 0


@pytest.fixture(scope="module")
def hands() -> Any:
    return generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 7, 0)


def awkward(lines: list[str]) -> bytes:
    """CSV lines with what a reader must get right: a byte-order mark, a
    comment before the header and among the rows, blank lines, CR LF and
    lone CR line ends."""
    lines = ["# recorded at the table", "", *lines]
    lines.insert(9, "# a comment among the rows")
    lines.insert(30, "")
    body = "\r\n".join(lines[:40]) + "\r\n" + "\r".join(lines[40:70]) + "\n" + "\n".join(lines[70:])
    return ("\ufeff" + body + "\n").encode()


def outcome_lines(hands: Any, cards: bool = True) -> list[str]:
    frame = pl.read_csv(render.hands(hands, "csv").encode(), infer_schema=False)
    if not cards:
        frame = frame.drop("player_cards", "banker_cards")
    return frame.write_csv().splitlines()


def card_lines(hands: Any, short_shoe: bool = False) -> list[str]:
    rows = ["shoe,card"]
    for shoe in np.unique(hands.shoe).tolist():
        order = hands.select(hands.shoe == shoe).dealt_cards()
        rows += [f"S{shoe},{card_token(int(c))}" for c in order if c]
        if short_shoe and shoe == 5:
            rows += ["short,AS", "short,9H", "short,2C"]  # too few cards for a hand
    return rows


def read(path: Path, monkeypatch: Any, limit: int, **kw: Any) -> Any:
    monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteHandWarning)
        return read_shoes(path, decks=1, **kw)


def index_and_some(
    path: Path, monkeypatch: Any, warned: int | None = 0, **kw: Any
) -> tuple[Any, Any, Any]:
    """The index of the file, a few of its shoes read again by it, and those
    shoes of the file read whole."""
    whole = read(path, monkeypatch, WHOLE, **kw)
    monkeypatch.setattr(stream, "STREAMED_BYTES", STREAMED)
    kind = stream.streamable(path, None, kw.get("columns"))
    assert kind in ("card-csv", "outcome-csv")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index = cache.columnar(path, 1, kw.get("burn", False), kind, kw.get("columns"))
    some = np.array([0, 1, 2, 9, 10, 17, SHOES - 2, SHOES - 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (given by the index's pass only)
        again = index.hands(some)
    assert len(caught) == warned if warned is not None else caught
    return index, again, whole.select(np.flatnonzero(np.isin(whole.shoe, some)))


def kw_columns(kw: dict[str, Any]) -> dict[str, Any]:
    return {"columns": kw["columns"]} if "columns" in kw else {}


@pytest.mark.parametrize("cards", [True, False])
def test_outcome_shoes_read_again_by_the_index_are_those_read_whole(
    tmp_path: Path, monkeypatch: Any, hands: Any, cards: bool
) -> None:
    path = tmp_path / "outcomes.csv"
    path.write_bytes(awkward(outcome_lines(hands, cards)))
    index, again, wanted = index_and_some(path, monkeypatch)
    assert len(index) == SHOES
    assert columns(again) == columns(wanted)
    assert ("cards" in again.known) == cards


def test_mapped_outcome_shoes_read_again_are_those_read_whole(
    tmp_path: Path, monkeypatch: Any, hands: Any
) -> None:
    lines = outcome_lines(hands, cards=False)
    lines[0] = lines[0].replace("winner", "Result").replace("shoe", "Shoe No")
    path = tmp_path / "outcomes.csv"
    path.write_bytes(awkward(lines))
    mapping = {"winner": "Result", "shoe": "Shoe No"}
    _, again, wanted = index_and_some(path, monkeypatch, columns=mapping)
    assert columns(again) == columns(wanted)


@pytest.mark.parametrize("burn", [False, True])
def test_card_shoes_read_again_by_the_index_are_those_read_whole(
    tmp_path: Path, monkeypatch: Any, hands: Any, burn: bool
) -> None:
    path = tmp_path / "cards.csv"
    path.write_bytes(awkward(card_lines(hands, short_shoe=True)))
    index, again, wanted = index_and_some(path, monkeypatch, None if burn else 1, burn=burn)
    assert len(index) == SHOES  # (the short shoe deals no hand: not a shoe of the index)
    assert columns(again) == columns(wanted)
    if burn:
        assert len(again.burned) == len(np.unique(again.shoe))


def test_a_shoe_of_too_many_hands_is_refused_as_whole(tmp_path: Path, monkeypatch: Any) -> None:
    rows = ["shoe,winner"] + ["1,banker"] * 5 + ["2,player"] * 14 + ["3,tie"] * 3
    path = tmp_path / "outcomes.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    said = []
    for limit in (WHOLE, STREAMED):
        with pytest.raises(ShoeFormatError) as exc:
            if limit == STREAMED:
                monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
                cache.columnar(path, 1, False, "outcome-csv")
            else:
                read(path, monkeypatch, limit)
        said.append(str(exc.value))
    assert said[0] == said[1]
    assert "shoe 2: 14 hands in one shoe, more than 1 deck can deal" in said[0]


def config(path: Path, sessions: int | None, **session: Any) -> Any:
    return recorded_run(path, sessions, source="csv.yaml", **session)


@pytest.mark.parametrize("kind", ["outcome", "card"])
@pytest.mark.parametrize(
    ("sessions", "session"),
    [(None, {"max_shoes": 1}), (None, {"max_hands": 25}), (12, {"max_shoes": 4})],
)
def test_a_run_on_an_indexed_csv_gives_the_same_numbers(
    tmp_path: Path,
    monkeypatch: Any,
    hands: Any,
    kind: str,
    sessions: int | None,
    session: dict[str, int],
) -> None:
    lines = outcome_lines(hands) if kind == "outcome" else card_lines(hands)
    runs = [(tmp_path / "whole.csv", WHOLE), (tmp_path / "indexed.csv", STREAMED)]
    for path, _ in runs:
        path.write_bytes(awkward(lines))
    runs_alike(monkeypatch, runs, lambda path: config(path, sessions, **session))


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_deal_prints_an_indexed_csv_as_one_read_whole(
    tmp_path: Path, monkeypatch: Any, capsys: Any, hands: Any, fmt: str
) -> None:
    path = tmp_path / "outcomes.csv"
    path.write_bytes(awkward(outcome_lines(hands, cards=False)))
    deals_alike(monkeypatch, capsys, path, fmt, "STREAMED_BYTES", (WHOLE, STREAMED))
    code, _, err = backtest_here(monkeypatch, capsys, "deal", str(path), "--burn")
    assert code == 2 and "the burn rule applies to card-level shoes" in err

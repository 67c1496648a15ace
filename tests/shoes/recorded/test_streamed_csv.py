"""Big CSV and Parquet shoe files read as they come: a shoe's rows are
dealt and let go once its last row is read, so the hands are those of the
same file read whole, and a read of the first shoes stops after them.

Files here are small; `STREAMED_BYTES` is set to 0 so that they are read as
a big file is (and `PARQUET_BATCH` made small, for Parquet).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hand_columns import columns
from run_config import recorded_run

from backtest.core.cards import card_token
from backtest.core.errors import ShoeFormatError
from backtest.present import render
from backtest.run import engine, recorded_plan
from backtest.shoes.recorded import parquet_lines, read_shoes, stream
from backtest.shoes.shoe import ShoeSpec, generate_hands

SHOES = 40


@pytest.fixture(scope="module")
def hands() -> Any:
    return generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 5, 0)


def outcome_csv(hands: Any) -> str:
    return render.hands(hands, "csv")


def card_csv(hands: Any) -> str:
    rows = ["shoe,card"]
    for shoe in np.unique(hands.shoe).tolist():
        order = hands.select(hands.shoe == shoe).dealt_cards()
        rows += [f"S{shoe},{card_token(int(c))}" for c in order if c]
    return "\n".join(rows) + "\n"


def both_ways(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> tuple[Any, Any]:
    """The file read whole, and read as a big file is."""
    monkeypatch.setattr(stream, "STREAMED_BYTES", 1 << 40)
    whole = read_shoes(path, decks=1, **kwargs)
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    assert stream.streamed_kind(path, None, kwargs.get("columns")) is not None
    return whole, read_shoes(path, decks=1, **kwargs)


@pytest.mark.parametrize("cards", [True, False])
def test_an_outcome_csv_read_as_it_comes_gives_the_hands_read_whole(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cards: bool
) -> None:
    text = outcome_csv(hands)
    if not cards:  # outcome only: what the file records, nothing more
        frame = pl.read_csv(text.encode()).drop("player_cards", "banker_cards")
        text = "# a comment before the header\n\n" + frame.write_csv()
    path = tmp_path / "outcomes.csv"
    path.write_text(text, encoding="utf-8")
    whole, streamed = both_ways(path, monkeypatch)
    assert whole.n_shoes == SHOES and ("cards" in whole.known) == cards
    assert columns(streamed) == columns(whole)


@pytest.mark.filterwarnings("ignore::backtest.shoes.recorded.IncompleteHandWarning")
def test_a_card_csv_read_as_it_comes_gives_the_hands_read_whole(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cards.csv"
    path.write_text(card_csv(hands), encoding="utf-8")
    whole, streamed = both_ways(path, monkeypatch)
    assert columns(whole) == columns(hands) | {"shoe": whole.shoe.tolist()}
    assert columns(streamed) == columns(whole)
    burned = both_ways(path, monkeypatch, burn=True)
    assert columns(burned[1]) == columns(burned[0])
    assert burned[1].burned == burned[0].burned and len(burned[0].burned) == SHOES


def test_a_mapped_csv_read_as_it_comes_gives_the_hands_read_whole(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pl.read_csv(outcome_csv(hands).encode()).select("shoe", "winner", "player_total")
    path = tmp_path / "theirs.csv"
    frame.rename({"shoe": "Shoe", "winner": "Result", "player_total": "P"}).write_csv(path)
    mapping = {"shoe": "Shoe", "winner": "Result"}
    whole, streamed = both_ways(path, monkeypatch, columns=mapping)
    assert whole.known == frozenset() and columns(streamed) == columns(whole)


@pytest.mark.parametrize("kind", ["outcome", "card"])
@pytest.mark.filterwarnings("ignore::backtest.shoes.recorded.IncompleteHandWarning")
def test_a_read_of_the_first_shoes_stops_after_them(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    text = outcome_csv(hands) if kind == "outcome" else card_csv(hands)
    bad_row = "99,1,KS 2S,6C 2C,2,8,dragon" if kind == "outcome" else "S99,ZZ"
    bad_row += "," * (text.split("\n", 1)[0].count(",") - bad_row.count(","))
    path = tmp_path / f"{kind}.csv"
    path.write_text(text + bad_row + "\n", encoding="utf-8")
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    first = read_shoes(path, decks=1, shoes=3)
    assert first.n_shoes == 3
    good = tmp_path / f"good-{kind}.csv"
    good.write_text(text, encoding="utf-8")
    assert columns(first) == columns(read_shoes(good, decks=1).select(np.arange(len(first))))
    # read to its end, the file is refused at its last line
    line = text.count("\n") + 1
    with pytest.raises(ShoeFormatError, match=rf"{kind}\.csv, line {line}, field"):
        read_shoes(path, decks=1)


def test_a_streamed_csv_gives_the_errors_of_one_read_whole(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = outcome_csv(hands).split("\n")
    cases = {
        "too few fields": "1,1,KS 2S",
        "a shoe that comes back": lines[1],
        "an impossible hand": "77,1,KS 2S,6C 2C,2,8,player,true,false,false,2,2",
    }
    for name, bad in cases.items():
        path = tmp_path / "bad.csv"
        path.write_text("\n".join(lines[:-1] + [bad, ""]), encoding="utf-8")
        errors = []
        for limit in (1 << 40, 0):
            monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
            with pytest.raises(ShoeFormatError) as exc:
                read_shoes(path, decks=1)
            errors.append(str(exc.value))
        assert errors[0] == errors[1], name
        assert f"line {len(lines)}" in errors[0], name


def test_a_parquet_file_read_in_batches_gives_its_csv_hands(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    csv_path = tmp_path / "outcomes.csv"
    csv_path.write_text(outcome_csv(hands), encoding="utf-8")
    frame = pl.read_csv(csv_path, infer_schema=False)
    path = tmp_path / "outcomes.parquet"
    frame.write_parquet(path)
    whole = read_shoes(csv_path, decks=1)
    monkeypatch.setattr(parquet_lines, "PARQUET_BATCH", 7)  # many batches, shoes across them
    assert columns(read_shoes(path, decks=1)) == columns(whole)
    # a bad row in a later batch is named by its row
    bad = frame.with_columns(
        winner=pl.when(pl.int_range(pl.len()) == 100)
        .then(pl.lit("dragon"))
        .otherwise(pl.col("winner"))
    )
    bad.write_parquet(path)
    with pytest.raises(ShoeFormatError, match=r"outcomes\.parquet, row 101, field winner"):
        read_shoes(path, decks=1)


def recorded(path: Path, sessions: int | None, **session: Any) -> Any:
    return recorded_run(path, sessions, **(session or {"max_shoes": 2}))


def test_a_run_on_a_streamed_csv_gives_the_numbers_of_one_read_whole(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "outcomes.csv"
    path.write_text(outcome_csv(hands), encoding="utf-8")
    results = []
    for limit in (1 << 40, 0):
        monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
        recorded_plan.READS.clear()
        results.append(engine.run(recorded(path, None), ledger=True, workers=1))
    whole, streamed = results
    assert whole.n_sessions == streamed.n_sessions == SHOES // 2
    assert whole.summary.equals(streamed.summary)
    assert whole.ledger is not None and whole.ledger.equals(streamed.ledger)
    # a run of the first sessions reads only their shoes: a bad tail is not reached
    bad = tmp_path / "bad.csv"
    bad.write_text(outcome_csv(hands) + "99,1,KS 2S,6C 2C,2,8,dragon,,,,,\n", encoding="utf-8")
    recorded_plan.READS.clear()
    first = engine.run(recorded(bad, None), sessions=3, workers=1)
    assert first.summary.equals(engine.run(recorded(path, None), sessions=3, workers=1).summary)
    with pytest.raises(ShoeFormatError, match="dragon"):
        engine.run(recorded(bad, None), workers=1)
    read, n = recorded_plan.read_recorded(recorded(bad, None), 6)
    assert n == 6 and len(read.lengths) == 6


def test_sessions_of_hands_on_a_streamed_csv_read_only_the_shoes_they_play(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    monkeypatch.setattr(recorded_plan, "FIRST_SHOES", 2)  # read twice as far, and again
    good = tmp_path / "good.csv"
    good.write_text(outcome_csv(hands), encoding="utf-8")
    bad = tmp_path / "bad.csv"
    bad.write_text(outcome_csv(hands) + "99,1,KS 2S,6C 2C,2,8,dragon,,,,,\n", encoding="utf-8")
    recorded_plan.READS.clear()
    runs = [
        engine.run(recorded(path, None, max_hands=30), sessions=3, workers=1)
        for path in (good, bad)
    ]
    assert runs[0].n_sessions == 3 and runs[0].summary.equals(runs[1].summary)
    read, n = recorded_plan.read_recorded(recorded(bad, None, max_hands=30), (3, 30))
    assert not read.whole and 3 < n <= len(read.lengths) < SHOES
    with pytest.raises(ShoeFormatError, match="dragon"):  # the whole file: refused
        engine.run(recorded(bad, None, max_hands=30), workers=1)

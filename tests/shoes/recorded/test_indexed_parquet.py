"""Big Parquet shoe files indexed as the CSV their columns make: a run, `deal`
and a read of some shoes again by the index give what the file read whole
gives, and an error names the file's row. Files here are small:
`INDEXED_PARQUET_BYTES` is set to 0 so that they are indexed as a big file
is, and `STRIDE` and `PARQUET_BATCH` are made small."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hand_columns import columns
from run_config import deals_alike, runs_alike
from test_streamed_csv import SHOES, card_csv, hands, outcome_csv, recorded

from backtest.core.errors import ShoeFormatError
from backtest.run import recorded_plan
from backtest.shoes.recorded import cache, parquet_lines, read_shoes, stream

__all__ = ["hands"]  # (the fixture, shared)


def parquet_of(csv_text: str, tmp_path: Path, name: str) -> tuple[Path, Path]:
    csv_path = tmp_path / f"{name}.csv"
    csv_path.write_text(csv_text, encoding="utf-8")
    path = tmp_path / f"{name}.parquet"
    pl.read_csv(csv_path, infer_schema=False).write_parquet(path)
    return csv_path, path


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "INDEXED_PARQUET_BYTES", 0)
    monkeypatch.setattr(parquet_lines, "PARQUET_BATCH", 7)  # shoes across batches
    recorded_plan.READS.clear()


@pytest.mark.parametrize("level", ["outcome", "card"])
def test_shoes_read_again_by_the_index_are_those_read_whole(
    hands: Any, tmp_path: Path, small: None, level: str
) -> None:
    text = outcome_csv(hands) if level == "outcome" else card_csv(hands)
    _, path = parquet_of(text, tmp_path, level)
    whole = read_shoes(path, decks=1)
    kind = stream.streamable(path)
    assert kind == f"{level}-csv"
    index = cache.columnar(path, 1, False, kind)
    assert len(index) == whole.n_shoes == SHOES
    shoes = np.unique(whole.shoe)
    for some in ([0], [4, 5, 6, 7], [1, 2, 11, 12, 13, 25, 26, SHOES - 1], list(range(SHOES))):
        again = index.hands(np.array(some))
        wanted = whole.select(np.isin(whole.shoe, shoes[some]))
        got = columns(again)
        expected = columns(wanted)
        # (the index numbers shoes by their place in it)
        got.pop("shoe"), expected.pop("shoe")
        assert got == expected


def test_a_run_on_an_indexed_parquet_file_gives_the_numbers_of_one_read_whole(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    csv_path, path = parquet_of(outcome_csv(hands), tmp_path, "outcomes")
    runs_alike(
        monkeypatch,
        [(path, 1 << 40), (path, 0)],
        lambda path: recorded(path, None),
        setting="INDEXED_PARQUET_BYTES",
    )


def test_an_indexed_parquet_file_names_a_bad_row_as_a_whole_read_does(
    hands: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path = parquet_of(outcome_csv(hands), tmp_path, "outcomes")
    frame = pl.read_parquet(path)
    frame.with_columns(
        winner=pl.when(pl.int_range(pl.len()) == 100)
        .then(pl.lit("dragon"))
        .otherwise(pl.col("winner"))
    ).write_parquet(path)
    errors = []
    for limit in (1 << 40, 0):
        monkeypatch.setattr(stream, "INDEXED_PARQUET_BYTES", limit)
        with pytest.raises(ShoeFormatError) as caught:
            if limit:
                read_shoes(path, decks=1)
            else:
                cache.columnar(path, 1, False, stream.streamable(path))
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert "outcomes.parquet, row 101, field winner" in errors[0]


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_deal_prints_an_indexed_parquet_file_as_one_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, hands: Any, fmt: str
) -> None:
    _, path = parquet_of(card_csv(hands), tmp_path, "cards")
    deals_alike(monkeypatch, capsys, path, fmt, "INDEXED_PARQUET_BYTES", (1 << 40, 0))

"""A big file read into Parquet in the cache (`recorded.cache`): once, by its
digest, never seen half-made, and kept while it is used."""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hand_columns import columns

from backtest.core.errors import ShoeFormatError
from backtest.shoes.recorded import cache, format_card_text, read_shoes
from backtest.shoes.shoe import ShoeSpec, generate_hands

SHOES = 12


@pytest.fixture(scope="module")
def text() -> str:
    return format_card_text(generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 3, 0))


def convert(path: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cache.columnar(path, 1, False, "card-text")


def test_a_file_is_converted_once_and_again_when_it_changes(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "PART_HANDS", 50)  # (several Parquet files)
    path = tmp_path / "shoes.txt"
    path.write_text(text, encoding="utf-8")
    first = convert(path)
    assert len(first.firsts) > 2
    assert columns(first.hands(np.arange(SHOES))) == columns(read_shoes(path, decks=1))
    real = cache._convert
    monkeypatch.setattr(cache, "_convert", lambda *a: pytest.fail("converted again"))
    assert convert(path).folder == first.folder
    path.write_text(text.replace("\n", "\n\n", 1), encoding="utf-8")  # (other bytes)
    monkeypatch.setattr(cache, "_convert", real)
    assert convert(path).folder != first.folder


def test_a_file_refused_leaves_nothing_in_the_cache(text: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text + "KS 9H ZZ 7D\n", encoding="utf-8")
    with pytest.raises(ShoeFormatError, match="'ZZ'"):
        convert(path)
    assert not any(cache._cache_base().iterdir())


def test_files_unused_for_a_month_and_cut_short_conversions_are_removed(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "shoes.txt"
    path.write_text(text, encoding="utf-8")
    base = cache._cache_base()
    kept = convert(path).folder
    for name, days in (("old", 31), (".part-cut", 2), ("recent", 29)):
        (base / name).mkdir()
        os.utime(base / name, (time.time() - days * 86400,) * 2)
    os.utime(kept, (time.time() - 31 * 86400,) * 2)
    assert convert(path).folder == kept  # (used: kept another 30 days)
    assert cache._pruned(base) == base
    assert sorted(p.name for p in base.iterdir()) == sorted([kept.name, "recent"])


def test_a_csv_keeps_its_shoe_ids_in_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    cards = [("A1", c) for c in ("KS", "9H", "9C", "8D")] + [
        ("A2", c) for c in ("7H", "7D", "QS", "JS")
    ]
    path.write_text("shoe,card\n" + "".join(f"{s},{c}\n" for s, c in cards), encoding="utf-8")
    shoes = cache.columnar(path, 8, False, "card-csv")
    assert shoes.hands(np.arange(2)).labels == ("A1", "A2")
    assert [b.shoe_name(int(b.shoe[0])) for b in shoes.blocks(1)] == ["A1", "A2"]
    hands, _ = cache.first_hands(path, 8, False, "card-csv", None, lambda n: False)
    assert hands.labels == read_shoes(path).labels == ("A1", "A2")

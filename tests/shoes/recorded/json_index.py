"""What the tests of indexed JSON Lines (rounds, shoe-state snapshots)
share: a file written, read whole, indexed, and the error of each read."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hand_columns import columns

from backtest.core.errors import ShoeFormatError
from backtest.shoes.recorded import cache, read_shoes, stream

WHOLE = 10**9  # (STREAMED_BYTES: every file here is read whole)


def write(tmp_path: Path, lines: list[str], name: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_whole(path: Path, monkeypatch: Any) -> tuple[Any, list[str]]:
    """The file read whole (held in memory), and the warnings it gave."""
    monkeypatch.setattr(stream, "STREAMED_BYTES", WHOLE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hands = read_shoes(path, decks=1)
    return hands, [str(w.message) for w in caught]


def indexed(path: Path, monkeypatch: Any, stride: int, kind: str) -> tuple[Any, list[str]]:
    """The file's index (`stride`), and the warnings its pass gave; the file
    is found to be of `kind`."""
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    assert stream.streamable(path) == kind
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index = cache.columnar(path, 1, False, kind)
    return index, [str(w.message) for w in caught]


def errors(path: Path, monkeypatch: Any, kind: str, decks: int = 1) -> tuple[str, str]:
    """The error of the file read whole, and that of its index's pass."""
    out = []
    for limit in (WHOLE, 0):
        monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
        with pytest.raises(ShoeFormatError) as caught, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the heartbeats skipped, before the error)
            if limit:
                read_shoes(path, decks=decks)
            else:
                assert stream.streamable(path) == kind
                cache.columnar(path, decks, False, kind)
        out.append(str(caught.value))
    return out[0], out[1]


def shoe_sets(shoes: int) -> list[list[int]]:
    """Sets of shoes to read again from an index of `shoes` shoes (stride 1,
    3 or 32): each shoe alone, neighbours, shoes around an indexed one and
    far apart, and every shoe."""
    some = [[k] for k in range(shoes)]
    return some + [
        [2, 3],
        [5, 6, 7],
        [31, 32, 33],
        [0, 3, 6, 30, 32, shoes - 1],
        list(range(shoes)),
    ]


def reads_again_alike(index: Any, whole: Any, sets: list[list[int]], quiet: bool = False) -> None:
    """Each set of shoes read again from `index` equals the same shoes of the
    file read whole (`whole`); with `quiet`, no read gives a warning (the
    index's pass gave them)."""
    for shoes in sets:
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("error")
            again = index.hands(np.array(shoes))
        assert columns(again) == columns(whole.select(np.isin(whole.shoe, shoes))), shoes


def deal_alike(path: Path, monkeypatch: Any, capsys: Any, fmt: str) -> None:
    """`deal` prints the file read whole and read by its index (in blocks of
    a few shoes, at stride 3) alike, in `fmt`, and refuses --burn and
    --columns for it."""
    from cli_helpers import backtest_here
    from run_config import deals_alike

    deals_alike(monkeypatch, capsys, path, fmt, "STREAMED_BYTES", (WHOLE, 0))
    refused = []
    for option in (["--burn"], ["--columns", "winner=Result"]):
        code, _, err = backtest_here(monkeypatch, capsys, "deal", str(path), *option)
        assert code == 2
        refused.append(err)
    assert "the burn rule applies to card-level shoes" in refused[0]
    assert "a column mapping is for CSV and Parquet files" in refused[1]


class JsonFile:
    """A kind of JSON Lines shoe file (`stream.INDEXED_KINDS`), and the name
    its tests write it under: `write`, `indexed` and `errors` for it."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind, self.name = kind, name

    def write(self, tmp_path: Path, lines: list[str], name: str | None = None) -> Path:
        return write(tmp_path, lines, name or self.name)

    def indexed(self, path: Path, monkeypatch: Any, stride: int) -> tuple[Any, list[str]]:
        return indexed(path, monkeypatch, stride, self.kind)

    def errors(self, path: Path, monkeypatch: Any, decks: int = 1) -> tuple[str, str]:
        return errors(path, monkeypatch, self.kind, decks)

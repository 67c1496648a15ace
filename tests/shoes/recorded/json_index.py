"""What the tests of indexed JSON Lines (rounds, shoe-state snapshots)
share: a file written, read whole, indexed, and the error of each read."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from backtest.core.errors import ShoeFormatError
from backtest.shoes.recorded import read_shoes, stream

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
    monkeypatch.setattr(stream, "STRIDE", stride)
    assert stream.streamable(path) == kind
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index = stream.index_shoes(path, 1, False, kind=kind)
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
                stream.index_shoes(path, decks, False, kind=kind)
        out.append(str(caught.value))
    return out[0], out[1]

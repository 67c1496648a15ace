"""Past a table of game ids of `repeats.TABLE_BYTES`, the rounds recorded
twice are found by sorting the ids out on disk: the same rounds are skipped,
with the same warnings, and the same first error (a round recorded again
with another result, or a bad record before it) names the same lines, as
with the table; the temporary files are gone afterwards.

Files here are small: the table's limit (and the buckets' sizes) are made
tiny, so that the ids are sorted out on disk from the first round or from
the middle of the file.
"""

from __future__ import annotations

import json
import random
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hand_columns import columns
from json_index import read_whole
from test_indexed_rounds import FILE, SHOES, with_repeats

from backtest.core.errors import ShoeFormatError
from backtest.shoes.recorded import read_shoes, repeats, seen, stream, stream_read
from backtest.shoes.shoe import ShoeSpec, generate_hands

#: how the ids are sorted out: from the first round, with 4 buckets parted
#: again down to a few entries; or from the 192nd id on, the table growing
#: from 8 slots
MODES = ["from the first", "from the middle"]


@pytest.fixture(scope="module")
def hands() -> Any:
    return generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 7, 0)


def bounded(monkeypatch: Any, mode: str) -> list[int]:
    """Sort the ids out on disk (`mode`); the list gets the number of ids
    sorted out each time it is done."""
    if mode == "from the first":
        monkeypatch.setattr(repeats, "TABLE_BYTES", 0)
        monkeypatch.setattr(repeats, "BUCKETS", 4)
        monkeypatch.setattr(repeats, "BUCKET_BYTES", 3 * repeats.ENTRY.itemsize)
        monkeypatch.setattr(repeats, "BATCH", 5)
    else:
        monkeypatch.setattr(seen, "_FIRST_SLOTS", 8)
        monkeypatch.setattr(repeats, "TABLE_BYTES", 16 * 256)
    done: list[int] = []
    sort_out = repeats.partitioned

    def counted(keys: Iterator[tuple[int, str, int]]) -> repeats.Known:
        kept = list(keys)
        done.append(len(kept))
        return sort_out(iter(kept))

    monkeypatch.setattr(repeats, "partitioned", counted)
    return done


def streamed(path: Path, monkeypatch: Any) -> tuple[Any, list[str]]:
    """The file read a line at a time (all its shoes), and its warnings."""
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hands = read_shoes(path, decks=1)
    return hands, [str(w.message) for w in caught]


def every_read(path: Path, monkeypatch: Any) -> dict[str, Any]:
    """What the whole read, the streamed read and the index give of `path`
    (hands, skipped lines, warnings), or the error each gives."""
    out: dict[str, Any] = {}
    for name, read in (("whole", read_whole), ("streamed", streamed)):
        try:
            hands, warned = read(path, monkeypatch)
            out[name] = (columns(hands), warned)
        except ShoeFormatError as exc:
            out[name] = str(exc)
    try:
        index, warned = FILE.indexed(path, monkeypatch, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = stream_read.read_indexed(index, np.arange(len(index)))
        out["index"] = (index.skip.tolist(), index.hands.tolist(), columns(again), warned)
    except ShoeFormatError as exc:
        out["index"] = str(exc)
    return out


@pytest.mark.parametrize("split_by", ["shoe", "hand"])
@pytest.mark.parametrize("mode", MODES)
def test_rounds_recorded_twice_skipped_as_with_the_table(
    tmp_path: Path, monkeypatch: Any, hands: Any, mode: str, split_by: str
) -> None:
    lines, lines_twice = with_repeats(hands, split_by)
    path = FILE.write(tmp_path, lines)
    expected = every_read(path, monkeypatch)
    assert expected["index"][0] == lines_twice
    assert f"{len(lines_twice)} rounds recorded twice" in expected["index"][-1][-1]
    done = bounded(monkeypatch, mode)
    assert every_read(path, monkeypatch) == expected
    rounds = len(lines) - 2 - 1  # (less two heartbeats and a blank line)
    assert done == [rounds] * 3  # (once a read; every round has a game id)


def changed(line: str, **fields: Any) -> str:
    """A round's line (its time stamp kept) with some fields changed."""
    stamp, _, text = line.partition("] ")
    return f"{stamp}] {json.dumps(json.loads(text) | fields)}"


def without(line: str, key: str) -> str:
    stamp, _, text = line.partition("] ")
    rec = json.loads(text)
    del rec[key]
    return f"{stamp}] {json.dumps(rec)}"


def errors(hands: Any) -> dict[str, tuple[list[str], str]]:
    """Files with an error, and the start of the message that must name it."""
    lines, _ = with_repeats(hands, "shoe")
    game = lambda n: json.loads(lines[n - 1].partition("] ")[2])["gameId"]  # noqa: E731
    out: dict[str, tuple[list[str], str]] = {}
    # a round recorded again, far from its first record, with another result
    other = [*lines[:300], changed(lines[19], winner="TIE", player=0, banker=0), *lines[300:]]
    again = f": gameId '{game(20)}' appears again (line 20) with a different result"
    out["a different result"] = other, f"line 301{again}"
    # the same, after a round recorded twice the same
    twice = [*lines[:100], lines[19], *lines[100:]]
    twice = [*twice[:300], changed(lines[19], winner="TIE", player=0, banker=0), *twice[300:]]
    out["the same, then different"] = twice, f"line 301{again}"
    # two ids recorded again: the first such line in the file is the error,
    # though the other's first record is earlier
    two = [*other[:350], changed(lines[4], winner="TIE", player=0, banker=0), *other[350:]]
    out["two different results"] = two, f"line 301{again}"
    two = [*lines[:200], changed(lines[99], winner="TIE", player=0, banker=0), *lines[200:]]
    two = [*two[:300], changed(lines[4], winner="TIE", player=0, banker=0), *two[300:]]
    out["the later first record first"] = (
        two,
        f"line 201: gameId '{game(100)}' appears again (line 100) with a different result",
    )
    # a bad record before and after the round recorded with another result
    out["a bad record before"] = (
        [*other[:250], without(other[250], "shoeId"), *other[251:]],
        "line 251: the record has no shoeId",
    )
    out["a bad record after"] = (
        [*other[:350], without(other[350], "shoeId"), *other[351:]],
        f"line 301{again}",
    )
    out["a line cut short before"] = (
        [*other[:250], other[250][:40], *other[251:]],
        "line 251, column",
    )
    return out


@pytest.mark.parametrize(
    "case",
    [
        "a different result",
        "the same, then different",
        "two different results",
        "the later first record first",
        "a bad record before",
        "a bad record after",
        "a line cut short before",
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_the_first_error_is_that_of_the_table(
    tmp_path: Path, monkeypatch: Any, hands: Any, mode: str, case: str
) -> None:
    lines, message = errors(hands)[case]
    path = FILE.write(tmp_path, lines)
    expected = every_read(path, monkeypatch)
    assert all(str(error).startswith(f"{path}, {message}") for error in expected.values())
    bounded(monkeypatch, mode)
    assert every_read(path, monkeypatch) == expected


#: 128-bit hashes of game ids of which one word is the same for every id
HALF_COLLIDING = {
    "first word": lambda text: (7, repeats_id_key(text)[1]),
    "second word": lambda text: (repeats_id_key(text)[0], 7),
}
repeats_id_key = repeats.id_key


@pytest.mark.parametrize("collide", HALF_COLLIDING)
@pytest.mark.parametrize("case", ["repeats", "a different result"])
def test_ids_whose_hashes_share_a_word_are_told_apart(
    tmp_path: Path, monkeypatch: Any, hands: Any, collide: str, case: str
) -> None:
    lines = with_repeats(hands, "shoe")[0] if case == "repeats" else errors(hands)[case][0]
    path = FILE.write(tmp_path, lines)
    expected = every_read(path, monkeypatch)
    bounded(monkeypatch, "from the first")
    monkeypatch.setattr(repeats, "id_key", HALF_COLLIDING[collide])
    monkeypatch.setattr(seen, "id_hash", lambda text: 7)
    assert every_read(path, monkeypatch) == expected


def test_sorted_out_as_a_dict_of_the_ids_would(monkeypatch: Any) -> None:
    monkeypatch.setattr(repeats, "BUCKETS", 4)
    monkeypatch.setattr(repeats, "BUCKET_BYTES", 10 * repeats.ENTRY.itemsize)
    monkeypatch.setattr(repeats, "BATCH", 64)
    pick = random.Random(5)
    keys = [(k, f'"g{pick.randrange(700)}"', pick.randrange(3)) for k in range(2_000)]
    firsts: dict[str, tuple[int, int]] = {}
    skip, conflict = [], None
    for ordinal, text, digest in keys:
        if text not in firsts:
            firsts[text] = ordinal, digest
        elif firsts[text][1] == digest:
            skip.append(ordinal)
        elif conflict is None:
            conflict = ordinal
    known = repeats.partitioned(iter(keys))
    assert known.skip.tolist() == skip and known.conflict == conflict
    asked = [k for k in range(2_000) if k != conflict]
    assert [k for k in asked if known.check(k, "", lambda text: None)] == skip
    assert known.check(conflict or 0, '"x"', lambda text: "line 3") == "line 3"


def test_the_temporary_files_are_removed(tmp_path: Path, monkeypatch: Any, hands: Any) -> None:
    folder = tmp_path / "temporary"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    bounded(monkeypatch, "from the first")
    made: list[list[str]] = []
    write_bucket = repeats._write

    def spied(entries: Any, buckets: list[str], level: int) -> None:
        write_bucket(entries, buckets, level)
        made.append([p.name for p in folder.rglob("*")])

    monkeypatch.setattr(repeats, "_write", spied)
    path = FILE.write(tmp_path, with_repeats(hands, "shoe")[0])
    FILE.indexed(path, monkeypatch, 3)
    assert made and any(made)  # (they were there)
    assert list(folder.iterdir()) == []
    path = FILE.write(tmp_path, errors(hands)["a different result"][0])
    with pytest.raises(ShoeFormatError):
        FILE.indexed(path, monkeypatch, 3)
    assert list(folder.iterdir()) == []
    calls = [0]

    def interrupted(text: str) -> tuple[int, int]:
        calls[0] += 1
        if calls[0] > 100:
            raise KeyboardInterrupt
        return repeats_id_key(text)

    monkeypatch.setattr(repeats, "id_key", interrupted)
    with pytest.raises(KeyboardInterrupt):
        FILE.indexed(path, monkeypatch, 3)
    assert calls[0] > 100 and list(folder.iterdir()) == []


def test_a_bad_line_past_the_shoes_read_is_not_an_error(
    tmp_path: Path, monkeypatch: Any, hands: Any
) -> None:
    lines = with_repeats(hands, "shoe")[0]
    path = FILE.write(tmp_path, [*lines, lines[-1][:30]])  # (a last line cut short)
    bounded(monkeypatch, "from the first")
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    index = stream.index_shoes(path, 1, False, stream.first_shoes(5), kind="json-rounds")
    assert len(index) == 5 and not index.whole
    with pytest.raises(ShoeFormatError, match=f"line {len(lines) + 1}, column"):
        stream.index_shoes(path, 1, False, kind="json-rounds")

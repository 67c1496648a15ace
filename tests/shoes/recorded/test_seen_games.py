"""The game ids of round records are remembered in a few bytes each (a hash
of the id and a digest of the record), and ids whose hashes collide are told
apart exactly: a new round is never taken for one "recorded twice" or
"with a different result".

The collisions here are made on purpose, by replacing the hash of an id with
one that gives many ids the same value.
"""

from __future__ import annotations

import json
import tracemalloc
import warnings
from pathlib import Path
from typing import Any

import pytest

from backtest.core.cards import card_token
from backtest.core.errors import ShoeFormatError
from backtest.shoes.recorded import read_shoes, repeats, seen, stream
from backtest.shoes.recorded.seen import SeenGames
from backtest.shoes.shoe import ShoeSpec, generate_hands

#: hashes that make ids collide: all of them, or those of the same length
COLLIDING = {"every id": lambda text: 7, "ids of a length": lambda text: len(text)}


@pytest.fixture(scope="module")
def lines() -> list[str]:
    """A JSON line a round (with its cards), as a live table publishes them."""
    hands = generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), 6, 5, 0)
    out = []
    for i in range(len(hands)):
        r = hands.record(i)
        rec = {
            "shoeId": str(r.shoe + 1),
            "gameId": f"{r.shoe + 1}-{r.hand}",
            "winner": r.winner.name,
            "player": r.player_total,
            "banker": r.banker_total,
            "playerCards": [card_token(c) for c in r.player_cards],
            "bankerCards": [card_token(c) for c in r.banker_cards],
        }
        out.append(json.dumps(rec))
    return out


def read(path: Path, monkeypatch: Any, streamed: bool) -> tuple[Any, list[str]]:
    """The hands (as lists) and the warnings of a read, whole or a line at a time."""
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0 if streamed else 10**9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hands = read_shoes(path, decks=1)
    got = {n: getattr(hands, n).tolist() for n in ("shoe", "hand", "cards", "winner")}
    return got, [str(w.message) for w in caught]


def error(path: Path, monkeypatch: Any, streamed: bool) -> str:
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0 if streamed else 10**9)
    with pytest.raises(ShoeFormatError) as exc:
        read_shoes(path, decks=1)
    return str(exc.value)


@pytest.mark.parametrize("collide", COLLIDING)
@pytest.mark.parametrize("streamed", [False, True])
def test_colliding_ids_read_as_without_collisions(
    tmp_path: Path, monkeypatch: Any, lines: list[str], collide: str, streamed: bool
) -> None:
    twice = list(lines)
    twice.insert(7, lines[3])  # a round recorded twice, far from its first record
    twice.insert(40, lines[39])  # and one right after it
    path = tmp_path / "rounds.jsonl"
    path.write_text("\n".join(twice) + "\n", encoding="utf-8")
    expected = read(path, monkeypatch, streamed)
    assert len(expected[0]["winner"]) == len(lines)
    assert expected[1] == [
        f"{path}: 2 rounds recorded twice (the same game id and result) read once"
    ]
    monkeypatch.setattr(seen, "id_hash", COLLIDING[collide])
    assert read(path, monkeypatch, streamed) == expected


@pytest.mark.parametrize("collide", COLLIDING)
@pytest.mark.parametrize("streamed", [False, True])
def test_a_different_result_named_as_without_collisions(
    tmp_path: Path, monkeypatch: Any, lines: list[str], collide: str, streamed: bool
) -> None:
    changed = json.loads(lines[12]) | {"winner": "TIE"}
    bad = [*lines[:30], json.dumps(changed), *lines[30:]]
    path = tmp_path / "rounds.jsonl"
    path.write_text("\n".join(bad) + "\n", encoding="utf-8")
    expected = error(path, monkeypatch, streamed)
    game = json.loads(lines[12])["gameId"]
    assert f"line 31: gameId '{game}' appears again (line 13) with a different result" in expected
    monkeypatch.setattr(seen, "id_hash", COLLIDING[collide])
    assert error(path, monkeypatch, streamed) == expected


def test_an_id_kept_beside_the_table_is_checked_too(monkeypatch: Any) -> None:
    monkeypatch.setattr(seen, "id_hash", lambda text: 7)
    games = SeenGames()
    asked: list[str] = []

    def earlier(text: str) -> str | None:
        asked.append(text)
        return None  # (no record before has this very id: a collision)

    assert games.check('"a"', 1, "line 1", earlier) is False
    assert games.check('"b"', 2, "line 2", earlier) is False  # same hash as "a"
    assert asked == ['"b"']
    assert games.check('"b"', 2, "line 3", earlier) is True
    assert games.check('"b"', 3, "line 4", earlier) == "line 2"
    assert games.check('"a"', 1, "line 5", earlier) is True
    assert asked == ['"b"'] and len(games) == 2


def test_many_ids_kept_in_a_few_bytes_each() -> None:
    count = 49_000  # (just under a doubling of the table)
    tracemalloc.start()
    games = SeenGames()
    for k in range(count):
        assert games.check(f'"g{k}"', k, "", lambda text: None) is False
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(games) == count
    assert peak / count < 40  # (a dict of the ids would take about 200 B an id)
    for k in (0, 7_777, count - 1):
        assert games.check(f'"g{k}"', k, "", lambda text: None) is True
        assert games.check(f'"g{k}"', k + 1, "", lambda text: "line 9") == "line 9"


@pytest.fixture(scope="module")
def csv_lines() -> list[str]:
    """An outcome-level CSV of 1-deck shoes, labels `S0`, `S1`, ..."""
    hands = generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), 12, 5, 0)
    rows = ["shoe,hand,winner,player_total,banker_total"]
    for i in range(len(hands)):
        r = hands.record(i)
        rows.append(f"S{r.shoe},{r.hand},{r.winner.name},{r.player_total},{r.banker_total}")
    return rows


@pytest.mark.parametrize("collide", COLLIDING)
def test_colliding_shoe_labels_of_a_csv_read_as_without_collisions(
    tmp_path: Path, monkeypatch: Any, csv_lines: list[str], collide: str
) -> None:
    path = tmp_path / "outcomes.csv"
    path.write_text("\n".join(csv_lines) + "\n", encoding="utf-8")
    wanted = read(path, monkeypatch, streamed=False)
    assert len(set(wanted[0]["shoe"])) == 12
    monkeypatch.setattr(seen, "id_hash", COLLIDING[collide])
    assert read(path, monkeypatch, streamed=True) == wanted
    index = stream.index_shoes(path, 1, False, kind="outcome-csv")
    assert len(index) == 12


@pytest.mark.parametrize("collide", COLLIDING)
def test_a_shoe_label_that_comes_back_named_as_without_collisions(
    tmp_path: Path, monkeypatch: Any, csv_lines: list[str], collide: str
) -> None:
    again = [line.replace("S3,", "S1,", 1) for line in csv_lines]  # shoe S1 comes back
    path = tmp_path / "outcomes.csv"
    path.write_text("\n".join(again) + "\n", encoding="utf-8")
    expected = error(path, monkeypatch, streamed=False)
    first = next(k for k, line in enumerate(csv_lines, 1) if line.startswith("S1,"))
    assert f"shoe 'S1' appears again after other shoes (it started on line {first})" in expected
    monkeypatch.setattr(seen, "id_hash", COLLIDING[collide])
    assert error(path, monkeypatch, streamed=True) == expected
    with pytest.raises(ShoeFormatError) as exc:
        stream.index_shoes(path, 1, False, kind="outcome-csv")
    assert str(exc.value) == expected


#: where the table of a CSV's shoe labels is let go for labels sorted out on
#: disk: (the table's most bytes, its first slots), from the first label or
#: from the seventh of twelve
SORTED = {"from the first": (0, None), "from the middle": (128, 8)}


@pytest.fixture(params=list(SORTED))
def sorted_labels(request: Any, monkeypatch: Any) -> tuple[str, list[int]]:
    """The labels of a big CSV sorted out on disk past a tiny table: where
    (a key of SORTED), and a list that grows each time `partitioned` runs."""
    most, slots = SORTED[request.param]
    monkeypatch.setattr(repeats, "TABLE_BYTES", most)
    if slots is not None:
        monkeypatch.setattr(seen, "_FIRST_SLOTS", slots)
    ran: list[int] = []
    real = repeats.partitioned

    def spy(keys: Any) -> Any:
        ran.append(1)
        return real(keys)

    monkeypatch.setattr(repeats, "partitioned", spy)
    return request.param, ran


def test_shoe_labels_sorted_out_on_disk_read_as_in_the_table(
    tmp_path: Path, monkeypatch: Any, csv_lines: list[str], sorted_labels: tuple[str, list[int]]
) -> None:
    path = tmp_path / "outcomes.csv"
    path.write_text("\n".join(csv_lines) + "\n", encoding="utf-8")
    wanted = read(path, monkeypatch, streamed=False)
    assert read(path, monkeypatch, streamed=True) == wanted
    assert len(stream.index_shoes(path, 1, False, kind="outcome-csv")) == 12
    assert len(sorted_labels[1]) == 2  # (the streamed read's and the index's)


@pytest.mark.parametrize("back", ["S1", "S9"])
def test_a_shoe_label_that_comes_back_is_named_when_labels_are_sorted_out_on_disk(
    tmp_path: Path,
    monkeypatch: Any,
    csv_lines: list[str],
    sorted_labels: tuple[str, list[int]],
    back: str,
) -> None:
    """S1 comes back as the fourth shoe (before the table is let go, from
    the middle); S9 as the twelfth (after)."""
    comes = "S3," if back == "S1" else "S11,"
    again = [line.replace(comes, f"{back},", 1) for line in csv_lines]
    path = tmp_path / "outcomes.csv"
    path.write_text("\n".join(again) + "\n", encoding="utf-8")
    expected = error(path, monkeypatch, streamed=False)
    first = next(k for k, line in enumerate(csv_lines, 1) if line.startswith(f"{back},"))
    assert f"shoe '{back}' appears again after other shoes (it started on line {first})" in expected
    assert error(path, monkeypatch, streamed=True) == expected
    with pytest.raises(ShoeFormatError) as exc:
        stream.index_shoes(path, 1, False, kind="outcome-csv")
    assert str(exc.value) == expected
    where, ran = sorted_labels
    assert len(ran) == (0 if back == "S1" and where == "from the middle" else 2)

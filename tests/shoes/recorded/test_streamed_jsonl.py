"""Big JSON Lines files of per-round records read as they come: a shoe's
records are checked and let go once its last line is read, so the hands,
errors and warnings are those of the same file read whole, and a read of the
first shoes stops after them.

Files here are small; `STREAMED_BYTES` is set to 0 so that they are read as
a big file is.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hand_columns import columns

from backtest.core.cards import card_token
from backtest.core.errors import ShoeFormatError
from backtest.shoes.recorded import files, read_shoes, stream
from backtest.shoes.shoe import ShoeSpec, generate_hands

files_json_lines_hands = files.json_lines_hands
SHOES = 30


@pytest.fixture(scope="module")
def hands() -> Any:
    return generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 5, 0)


def round_lines(hands: Any, cards: bool = True) -> list[str]:
    """A JSON line a hand, as a live table publishes each round's result."""
    out = []
    for i in range(len(hands)):
        r = hands.record(i)
        rec: dict[str, Any] = {
            "shoeId": str(r.shoe + 1),
            "gameId": f"{r.shoe + 1}-{r.hand}",
            "winner": r.winner.name,
            "player": r.player_total,
            "banker": r.banker_total,
        }
        if cards:
            rec["playerCards"] = [card_token(c) for c in r.player_cards]
            rec["bankerCards"] = [card_token(c) for c in r.banker_cards]
        else:
            rec |= {"playerPair": r.player_pair, "bankerPair": r.banker_pair}
        out.append(json.dumps(rec))
    return out


def read_both(path: Path, monkeypatch: Any, **kw: Any) -> tuple[Any, Any, list[str], list[str]]:
    """The file read whole and streamed, each with the warnings it gave (and
    the streamed read checked to be read a line at a time)."""
    streamed_reads: list[Any] = []

    def spy(*args: Any) -> Any:
        streamed_reads.append(files_json_lines_hands(*args))
        return streamed_reads[-1]

    monkeypatch.setattr(files, "json_lines_hands", spy)
    got = []
    for limit in (10**9, 0):
        monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got.append((read_shoes(path, decks=1, **kw), [str(w.message) for w in caught]))
    (whole, whole_warned), (streamed, streamed_warned) = got
    assert len(streamed_reads) == 1 and streamed_reads[0] is not None
    return whole, streamed, whole_warned, streamed_warned


def error_both(path: Path, monkeypatch: Any, **kw: Any) -> tuple[str, str]:
    out = []
    for limit in (10**9, 0):
        monkeypatch.setattr(stream, "STREAMED_BYTES", limit)
        with pytest.raises(ShoeFormatError) as exc:
            read_shoes(path, decks=1, **kw)
        out.append(str(exc.value))
    return out[0], out[1]


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "rounds.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("cards", [True, False])
def test_streamed_equals_whole(tmp_path: Path, monkeypatch: Any, hands: Any, cards: bool) -> None:
    path = write(tmp_path, round_lines(hands, cards))
    whole, streamed, _, _ = read_both(path, monkeypatch)
    assert columns(streamed) == columns(whole)
    assert streamed.n_shoes == SHOES
    if cards:
        assert columns(streamed)["winner"] == hands.winner.tolist()
        assert columns(streamed)["cards"] == hands.cards.tolist()


def test_warnings_and_stamps_the_same(tmp_path: Path, monkeypatch: Any, hands: Any) -> None:
    lines = round_lines(hands)
    lines = [f"[08:46:{i % 60:02d}] {line}" for i, line in enumerate(lines)]
    lines.insert(3, lines[2])  # a round recorded twice
    lines.insert(5, '{"type": "heartbeat"}')
    lines.insert(9, "")
    lines.append('{"type": "betting_open"}')
    path = write(tmp_path, lines)
    whole, streamed, whole_warned, streamed_warned = read_both(path, monkeypatch)
    assert columns(streamed) == columns(whole)
    assert streamed_warned == whole_warned
    assert len(whole_warned) == 2
    assert "2 lines that hold no hands (betting_open, heartbeat) skipped" in whole_warned[0]
    assert "1 round recorded twice" in whole_warned[1]


def bad(hands: Any, k: int, change: Any) -> list[str]:
    lines = round_lines(hands)
    rec = json.loads(lines[k])
    change(rec)
    lines[k] = json.dumps(rec)
    return lines


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda r: r.update(winner="NOBODY"), "line 41.winner: unknown winner"),
        (lambda r: r.update(player=12), "line 41.player: impossible total 12"),
        (lambda r: r.pop("shoeId"), "line 41: the record has no shoeId"),
        (lambda r: r.update(playerCards=["KS", "KS", "KS"]), "line 41"),
    ],
)
def test_errors_the_same(
    tmp_path: Path, monkeypatch: Any, hands: Any, change: Any, said: str
) -> None:
    path = write(tmp_path, bad(hands, 40, change))
    whole, streamed = error_both(path, monkeypatch)
    assert streamed == whole
    assert said in whole


def test_cut_line_and_game_twice_the_same(tmp_path: Path, monkeypatch: Any, hands: Any) -> None:
    lines = round_lines(hands)
    lines[30] = lines[30][:-10]
    whole, streamed = error_both(write(tmp_path, lines), monkeypatch)
    assert streamed == whole
    assert "line 31, column" in whole and "cut short" in whole
    lines = round_lines(hands)
    again = json.loads(lines[1]) | {"winner": "TIE"}
    lines.insert(20, json.dumps(again))
    whole, streamed = error_both(write(tmp_path, lines), monkeypatch)
    assert streamed == whole
    assert "line 21: gameId '1-2' appears again (line 2) with a different result" in whole


def test_mixed_with_snapshots_the_same(tmp_path: Path, monkeypatch: Any, hands: Any) -> None:
    lines = round_lines(hands)
    lines.insert(50, json.dumps({"args": {"history_v2": []}}))
    whole, streamed = error_both(write(tmp_path, lines), monkeypatch)
    assert streamed == whole
    assert "line 51: the file mixes shoe-state snapshots (line 51)" in whole


def test_a_read_of_the_first_shoes_stops_after_them(
    tmp_path: Path, monkeypatch: Any, hands: Any
) -> None:
    lines = round_lines(hands)
    first = [i for i, line in enumerate(lines) if json.loads(line)["shoeId"] == "4"][0]
    lines[first + 2] = "not json at all"  # in the fourth shoe
    path = write(tmp_path, lines)
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    three = read_shoes(path, decks=1, shoes=3)
    assert three.n_shoes == 3
    assert columns(three)["winner"] == hands.winner[: len(three)].tolist()
    with pytest.raises(ShoeFormatError, match=f"line {first + 3}, column 1: not valid JSON"):
        read_shoes(path, decks=1)


def test_snapshots_are_read_a_shoe_at_a_time(tmp_path: Path, monkeypatch: Any) -> None:
    entry = {"winner": "Banker", "playerScore": 3, "bankerScore": 7}
    lines = [
        json.dumps({"args": {"history_v2": [entry] * k}}) for k in (1, 2, 3, 1, 2)
    ]  # two shoes, of 3 and 2 hands
    path = write(tmp_path, lines)
    monkeypatch.setattr(stream, "STREAMED_BYTES", 0)
    streamed = files.json_lines_hands(lambda: iter(enumerate(lines, 1)), "x", 1)
    assert streamed is not None and streamed.hand.tolist() == [1, 2, 3, 1, 2]
    hands = read_shoes(path, decks=1, shoes=1)  # (no further than the first shoe)
    assert hands.hand.tolist() == [1, 2, 3]

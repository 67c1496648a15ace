"""Shoe records as live tables publish them: JSON Lines with time stamps,
snapshots of a shoe, per-round results with cards, cards suit first, winners
in words, roads with separators or in Chinese, a CSV's own column names,
Parquet, and standard input. Each with the samples in data/ and bad variants."""

from __future__ import annotations

import io
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli_helpers import backtest_here

from backtest.core.cards import card_token, parse_card
from backtest.core.errors import ShoeFormatError, UsageError
from backtest.core.hands import ALL_KNOWN
from backtest.core.rules import Winner
from backtest.run.config import parse_config
from backtest.run.recorded_plan import load_recorded
from backtest.shoes.recorded import parse_columns, read_shoes

DATA = Path(__file__).resolve().parents[3] / "data"
OUTCOME_KNOWN = frozenset({"player_total", "banker_total", "natural", "player_pair", "banker_pair"})


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def road(hands: object) -> str:
    return "".join("PBT"[w] for w in hands.winner)  # type: ignore[attr-defined]


def refused(path: Path, *parts: str, **kwargs: object) -> str:
    """The one-line error reading `path` gives; it names the file and each part."""
    with pytest.raises(ShoeFormatError) as err:
        read_shoes(path, **kwargs)  # type: ignore[arg-type]
    message = str(err.value)
    assert message.startswith(str(path)) and "\n" not in message, message
    for part in parts:
        assert part in message, message
    return message


# --- cards and winners as records write them -------------------------------------------


@pytest.mark.parametrize("token", ["AS", "as", "As", "SA", "sa", "A♠", "♠A", "a♤"])
def test_a_card_may_be_written_rank_first_or_suit_first_in_any_case(token: str) -> None:
    assert card_token(parse_card(token)) == "AS"


@pytest.mark.parametrize("token", ["10H", "10h", "TH", "th", "H10", "h10", "HT", "♥10", "10♥"])
def test_a_ten_is_10_or_t_either_side_of_its_suit(token: str) -> None:
    assert card_token(parse_card(token)) == "TH"


@pytest.mark.parametrize("token", ["SC", "S", "1S", "S1S", "HH"])
def test_what_is_no_card_either_way_is_still_refused(token: str) -> None:
    with pytest.raises(ValueError, match="unknown card"):
        parse_card(token)


@pytest.mark.parametrize(
    ("word", "winner"),
    [
        ("PLAYER_WIN", Winner.PLAYER),
        ("Banker", Winner.BANKER),
        ("b", Winner.BANKER),
        ("BANKER_WIN", Winner.BANKER),
        ("tie", Winner.TIE),
        ("Banker wins", Winner.BANKER),
        ("庄", Winner.BANKER),
        ("莊", Winner.BANKER),
        ("闲", Winner.PLAYER),
        ("閒", Winner.PLAYER),
        ("和", Winner.TIE),
    ],
)
def test_winners_in_words(tmp_path: Path, word: str, winner: Winner) -> None:
    path = write(tmp_path, "w.csv", f"shoe,winner\n1,{word}\n")
    assert read_shoes(path).winner.tolist() == [winner.code]


# --- JSON Lines, snapshots -------------------------------------------------------------


def test_snapshot_lines_with_time_stamps_merge_into_shoes() -> None:
    path = DATA / "live-table-snapshots.jsonl"
    with pytest.warns(
        UserWarning,
        match="1 line that holds no hands "
        r"\(connection.heartbeat\) skipped",
    ):
        hands = read_shoes(path)
    # snapshots of 3, 5, 5 again and 7 hands are one shoe; then 2 and 4 hands a new one
    assert hands.shoe.tolist() == [0] * 7 + [1] * 4
    assert hands.hand.tolist() == [*range(1, 8), *range(1, 5)]
    last = [json.loads(line.split("] ", 1)[1]) for line in path.read_text().splitlines()]
    entries = last[4]["args"]["history_v2"] + last[6]["args"]["history_v2"]
    assert [str(Winner.from_code(w)) for w in hands.winner] == [
        e["winner"].lower() for e in entries
    ]
    assert hands.player_total.tolist() == [e["playerScore"] for e in entries]
    assert hands.known == OUTCOME_KNOWN


def test_json_lines_without_stamps_read_alike(tmp_path: Path) -> None:
    text = (DATA / "live-table-snapshots.jsonl").read_text(encoding="utf-8")
    bare = "\n".join(line.split("] ", 1)[1] for line in text.splitlines()) + "\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = read_shoes(write(tmp_path, "bare.txt", bare))
        b = read_shoes(DATA / "live-table-snapshots.jsonl")
    assert road(a) == road(b) and a.shoe.tolist() == b.shoe.tolist()


def _message(entries: list[dict[str, object]]) -> str:
    return json.dumps({"type": "baccarat.encodedShoeState", "args": {"history_v2": entries}})


ENTRIES = [
    {"winner": "Banker", "playerScore": 3, "bankerScore": 7},
    {"winner": "Player", "playerScore": 9, "bankerScore": 4, "natural": True},
    {"winner": "Tie", "playerScore": 6, "bankerScore": 6},
]


def test_a_snapshot_that_contradicts_the_one_before_is_refused(tmp_path: Path) -> None:
    changed = [ENTRIES[0], {"winner": "Player", "playerScore": 7, "bankerScore": 4}, ENTRIES[2]]
    path = write(
        tmp_path,
        "contra.jsonl",
        f"[08:00:01] {_message(ENTRIES[:2])}\n[08:00:09] {_message(changed)}\n",
    )
    refused(
        path,
        "line 2, args.history_v2[1]",
        "contradicts the one before it (line 1)",
        "hand 2 as player 9-4 (natural), not player 7-4",
    )


def test_a_snapshot_of_another_shoe_id_starts_a_new_shoe(tmp_path: Path) -> None:
    one = {"args": {"shoeId": "A", "history_v2": ENTRIES[:1]}}
    two = {"args": {"shoeId": "B", "history_v2": ENTRIES[1:]}}
    path = write(tmp_path, "ids.jsonl", f"{json.dumps(one)}\n{json.dumps(two)}\n")
    assert read_shoes(path).shoe.tolist() == [0, 1, 1]


def test_a_message_cut_short_is_refused_with_its_line(tmp_path: Path) -> None:
    whole = _message(ENTRIES)
    path = write(tmp_path, "cut.jsonl", f"[08:00:01] {whole}\n[08:00:02] {whole[:50]}\n")
    refused(path, "line 2", "not valid JSON", "the message is cut short")
    no_stamps = write(tmp_path, "cut2.jsonl", f"{whole}\n{whole}\n{whole[:-3]}\n")
    refused(no_stamps, "line 3", "not valid JSON")


def test_lines_of_no_kind_of_record_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "other.jsonl", '{"type": "a"}\n{"type": "b"}\n')
    refused(path, "line 1", "expected a shoe-state message", "got an object with the keys type")


# --- per-round results -----------------------------------------------------------------


def test_game_results_with_cards_split_by_shoe_id() -> None:
    with pytest.warns(UserWarning, match="1 round recorded twice"):
        hands = read_shoes(DATA / "game-results.jsonl")
    assert hands.known == ALL_KNOWN
    assert hands.shoe.tolist() == [0] * 6 + [1] * 6
    first = hands.record(0)
    assert [card_token(c) for c in first.player_cards] == ["9S", "5S", "JC"]
    assert [card_token(c) for c in first.banker_cards] == ["6H", "4C", "3S"]
    # suit first (SK HQ, ♦5 ♥5 ♣2) reads as rank first
    assert [card_token(c) for c in hands.record(1).player_cards] == ["KS", "QH"]
    assert [card_token(c) for c in hands.record(6).player_cards] == ["5D", "5H", "2C"]
    assert road(hands) == "PBPPPPBTBPBB"
    assert bool(hands.player_pair[6]) and bool(hands.banker_pair[2])


def test_hand_result_records() -> None:
    hands = read_shoes(DATA / "hand-results.json")
    records = json.loads((DATA / "hand-results.json").read_text(encoding="utf-8"))
    assert len(hands) == len(records) and hands.n_shoes == 1
    assert [str(Winner.from_code(w)) for w in hands.winner] == [r["result"] for r in records]
    assert hands.player_total.tolist() == [r["playerPoints"] for r in records]
    assert hands.banker_total.tolist() == [r["bankerPoints"] for r in records]
    assert hands.player_pair.tolist() == [r["playerPair"] for r in records]
    assert hands.known == frozenset({"player_total", "banker_total", "player_pair", "banker_pair"})


def test_rounds_split_where_the_hand_number_starts_again(tmp_path: Path) -> None:
    rounds = [
        {"round": n, "winner": w} for n, w in ((1, "B"), (2, "P"), (3, "B"), (1, "T"), (2, "P"))
    ]
    path = write(tmp_path, "r.jsonl", "\n".join(json.dumps(r) for r in rounds) + "\n")
    hands = read_shoes(path)
    assert hands.shoe.tolist() == [0, 0, 0, 1, 1] and road(hands) == "BPBTP"


@pytest.mark.parametrize(
    ("name", "lines", "parts"),
    [
        (
            "winner.jsonl",
            [{"winner": "PLAYER_WIN"}, {"winner": "DRAGON_WIN"}],
            ["line 2.winner", "unknown winner 'DRAGON_WIN'", "PLAYER_WIN"],
        ),
        (
            "total.jsonl",
            [{"result": "banker", "playerPoints": 4, "bankerPoints": 12}],
            ["line 1.bankerPoints", "impossible total 12"],
        ),
        (
            "agree.jsonl",
            [{"result": "banker", "playerPoints": 7, "bankerPoints": 2}],
            ["line 1", "result is banker", "playerPoints 7 against bankerPoints 2"],
        ),
        (
            "cards.jsonl",
            [{"winner": "P", "playerCards": ["9S", "5S"], "bankerCards": ["6H", "4C"]}],
            ["line 1", "is not a hand the rules deal", "the Player draws on 4"],
        ),
        (
            "token.jsonl",
            [{"winner": "P", "playerCards": ["9S", "X5"], "bankerCards": ["6H", "4C"]}],
            ["line 1.playerCards, card 2", "unknown card 'X5'"],
        ),
        (
            "game.jsonl",
            [{"gameId": 7, "winner": "P"}, {"gameId": 7, "winner": "B"}],
            ["line 2", "gameId 7 appears again (line 1) with a different result"],
        ),
        (
            "lacks.jsonl",
            [{"winner": "P", "player": 3, "banker": 1}, {"winner": "B"}],
            ["line 2", "the record has no player"],
        ),
    ],
)
def test_bad_rounds_are_refused_with_file_and_line(
    tmp_path: Path, name: str, lines: list[dict[str, object]], parts: list[str]
) -> None:
    path = write(tmp_path, name, "\n".join(json.dumps(x) for x in lines) + "\n")
    refused(path, *parts)


# --- roads ------------------------------------------------------------------------------


def test_roads_with_separators_and_words() -> None:
    hands = read_shoes(DATA / "road-separated.txt")
    assert hands.shoe.tolist() == [0] * 12 + [1] * 8 + [2] * 5
    assert road(hands) == "PBBPTBBBPPBP" + "BPPBBTPB" + "BPPTB"
    assert hands.known == frozenset()


def test_roads_in_chinese() -> None:
    hands = read_shoes(DATA / "road-chinese.txt")
    assert road(hands) == "BPPBTBBPBP" + "BPPTBP"
    assert hands.shoe.tolist() == [0] * 10 + [1] * 6


def test_a_result_a_line_is_one_shoe_until_a_blank_line(tmp_path: Path) -> None:
    hands = read_shoes(write(tmp_path, "col.txt", "P\nB\nbanker\n\nT\nPLAYER_WIN\n"))
    assert road(hands) == "PBBTP" and hands.shoe.tolist() == [0, 0, 0, 1, 1]


def test_an_unknown_result_in_a_separated_road_names_its_column(tmp_path: Path) -> None:
    refused(
        write(tmp_path, "r.txt", "P,B,B\nP, Dragon, B\n"),
        "line 2, column 4",
        "unknown result 'Dragon'",
    )


def test_text_no_format_reads_lists_every_format_tried(tmp_path: Path) -> None:
    message = refused(
        write(tmp_path, "what.txt", "hello world\nfoo bar\n"),
        "cannot tell what kind of shoe file this is",
    )
    for kind in (
        "card text: line 1",
        "unknown card 'hello'",
        "a road: line 1",
        "unknown result 'hello'",
        "JSON: line 1",
        "an outcome CSV: line 1",
    ):
        assert kind in message, message


# --- CSV column mapping, Parquet ----------------------------------------------------------


MAPPING = {"winner": "Result", "player_total": "Player", "banker_total": "Banker"}


def test_a_csv_s_own_column_names_mapped_to_ours() -> None:
    hands = read_shoes(DATA / "results-mapped.csv", columns=MAPPING)
    frame = pl.read_csv(DATA / "results-mapped.csv")
    assert len(hands) == frame.height and hands.n_shoes == 2
    assert [str(Winner.from_code(w)) for w in hands.winner] == [r.lower() for r in frame["Result"]]
    assert hands.player_total.tolist() == frame["Player"].to_list()
    assert hands.known == frozenset({"player_total", "banker_total"})


def test_a_mapping_to_a_missing_column_is_refused(tmp_path: Path) -> None:
    refused(
        DATA / "results-mapped.csv",
        "line 1",
        "takes winner from the column 'Outcome'",
        "the header does not have",
        columns={"winner": "Outcome"},
    )
    with pytest.raises(
        UsageError,
        match="--columns: unknown column 'wnner' "
        r"\(did you mean winner\?\)",
    ):
        parse_columns("wnner=Result")
    with pytest.raises(UsageError, match="expected OURS=THEIRS"):
        parse_columns("winner")


def test_parquet_reads_as_its_csv(tmp_path: Path) -> None:
    a = read_shoes(DATA / "results-mapped.parquet", columns=MAPPING)
    b = read_shoes(DATA / "results-mapped.csv", columns=MAPPING)
    for name in ("shoe", "hand", "winner", "player_total", "banker_total"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    cards = tmp_path / "cards.parquet"
    pl.DataFrame(
        {
            "shoe": [1, 1],
            "winner": ["P", "B"],
            "player_cards": [["9S", "5S", "JC"], ["KS", "QH"]],
            "banker_cards": [["6H", "4C", "3S"], ["9D", "TC"]],
        }
    ).write_parquet(cards)
    assert read_shoes(cards).known == ALL_KNOWN
    bad = tmp_path / "bad.parquet"
    pl.DataFrame({"shoe": [1, 1, 1], "winner": ["P", "B", "Dragon"]}).write_parquet(bad)
    refused(bad, "row 3, field winner", "unknown winner 'Dragon'")


def test_a_config_maps_columns_for_a_run(tmp_path: Path) -> None:
    config = parse_config(
        {
            "shoes": {"file": str(DATA / "results-mapped.csv"), "columns": {"winner": "Result"}},
            "seats": [{"strategy": "flat"}],
        }
    )
    assert road(load_recorded(config)) == "BPBTPPBB"
    with pytest.raises(Exception, match="shoes.columns: unknown column 'winer'"):
        parse_config(
            {
                "shoes": {"file": str(DATA / "results-mapped.csv"), "columns": {"winer": "Result"}},
                "seats": [{"strategy": "flat"}],
            }
        )


# --- standard input, the command line -----------------------------------------------------


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_deal_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, (DATA / "road-chinese.txt").read_bytes())
    code, out, err = backtest_here(monkeypatch, capsys, "deal", "-")
    assert code == 0, err
    assert "16 hands in 2 shoes: player 7, banker 7, tie 2" in out


def test_deal_maps_columns_and_names_standard_input_in_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, (DATA / "results-mapped.csv").read_bytes())
    code, out, err = backtest_here(
        monkeypatch,
        capsys,
        "deal",
        "-",
        "--columns",
        "winner=Result,player_total=Player,banker_total=Banker",
    )
    assert code == 0 and "8 hands in 2 shoes" in out, err
    _stdin(monkeypatch, b"Shoe,Result\n1,Dragon\n")
    code, out, err = backtest_here(monkeypatch, capsys, "deal", "-", "--columns", "winner=Result")
    assert code == 1 and err.startswith(
        "error: standard input, line 2, field winner: unknown winner 'Dragon'"
    ), err
    code, out, err = backtest_here(monkeypatch, capsys, "deal", "-", "--columns", "winner")
    assert code == 2 and "--columns: expected OURS=THEIRS" in err


def test_run_plays_shoes_from_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], repo_root: Path
) -> None:
    _stdin(monkeypatch, (DATA / "game-results.jsonl").read_bytes())
    code, out, err = backtest_here(
        monkeypatch,
        capsys,
        "run",
        str(repo_root / "configs" / "verdict.yaml"),
        "--shoes",
        "-",
        "--format",
        "json",
    )
    assert code == 0, err
    rows = json.loads(out)
    assert {row["seat"] for row in rows} >= {"Flat Banker"}
    assert all(row["hands"] == 12 for row in rows)


def test_run_names_standard_input_in_its_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], repo_root: Path
) -> None:
    _stdin(monkeypatch, b"P,B,Dragon\n")
    code, out, err = backtest_here(
        monkeypatch, capsys, "run", str(repo_root / "configs" / "verdict.yaml"), "--shoes", "-"
    )
    assert code == 1 and err.startswith("error: standard input, line 1"), err


def test_each_format_s_reason_is_cut_between_words() -> None:
    from backtest.shoes.recorded.files import _shortened

    assert _shortened("short enough", 80) == "short enough"
    long = "an outcome CSV: line 1, column 1: unknown column 'garbage lorem ipsum %%'; an outcome-level CSV ; x"
    cut = _shortened(long, 80)
    assert len(cut) <= 80 and cut.endswith("…") and long.startswith(cut[:-1])
    assert long[len(cut) - 1] == " "  # a whole word before the ellipsis

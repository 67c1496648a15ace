"""Reading recorded shoes (every format), writing them back, and rendering hands."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backtest.core.cards import make_card, parse_cards
from backtest.core.errors import ConfigError, MissingDataError, ShoeFormatError, UsageError
from backtest.core.hands import ALL_KNOWN, COLUMNS, Hands
from backtest.core.rules import Bet, Rules, Winner, deal_hand, deal_hands
from backtest.present import render
from backtest.shoes import kernels, recorded
from backtest.shoes.recorded import IncompleteHandWarning, deal_cards, format_card_text, read_shoes
from backtest.shoes.shoe import ShoeSpec, generate_hands

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "data"
LIVE = DATA / "live-table-shoe-state.json"
OUTCOME_KNOWN = frozenset({"player_total", "banker_total", "natural", "player_pair", "banker_pair"})


def assert_same_hands(a: Hands, b: Hands, columns: tuple[str, ...] = COLUMNS) -> None:
    assert len(a) == len(b)
    for name in columns:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- card-level text -------------------------------------------------------------------


def test_card_text_deals_by_the_rules(tmp_path: Path) -> None:
    path = write(tmp_path, "shoe.txt", "# two hands\n5 K 9 2 3 8   2 9 3 K  # comment\n\n")
    hands = read_shoes(path)
    assert hands.known == ALL_KNOWN and hands.source == str(path)
    assert hands.shoe.tolist() == [0, 0] and hands.hand.tolist() == [1, 2]
    assert hands.player_total.tolist() == [7, 5] and hands.banker_total.tolist() == [0, 9]
    assert [Winner.from_code(w) for w in hands.winner] == [Winner.PLAYER, Winner.BANKER]
    assert hands.natural.tolist() == [False, True]
    assert hands.player_card_count.tolist() == [3, 2] and hands.banker_card_count.tolist() == [3, 2]
    assert hands.cards[0].tolist() == parse_cards("5 9 3 K 2 8")


def test_suits_letters_symbols_ten_and_case(tmp_path: Path) -> None:
    a = read_shoes(write(tmp_path, "a.txt", "KS 9H 10♠ 8D TC 2♥ 4♦ 6♣ qs\n"))
    b = read_shoes(write(tmp_path, "b.txt", "K♠ 9♥ TS 8d 10c 2H 4D 6C Q♠\n"))
    assert_same_hands(a, b)
    assert format_card_text(a) == "KS 9H TS 8D TC 2H 4D 6C QS\n"
    plain = read_shoes(write(tmp_path, "c.txt", "k 9 10 8 t 2 4 6 q\n"))
    np.testing.assert_array_equal(plain.winner, a.winner)
    assert format_card_text(plain) == "K 9 T 8 T 2 4 6 Q\n"


def test_each_line_is_a_shoe(tmp_path: Path) -> None:
    hands = read_shoes(write(tmp_path, "s.txt", "KS 9H 9C 8D\n\n# between\n2 9 3 K\n"))
    assert hands.shoe.tolist() == [0, 1] and hands.hand.tolist() == [1, 1]
    assert hands.n_shoes == 2


def test_golden_generated_file() -> None:
    hands = read_shoes(DATA / "generated-8deck-seed1.txt")
    assert (len(hands), hands.n_shoes) == (241, 3)
    assert np.bincount(hands.winner, minlength=3).tolist() == [111, 103, 27]
    assert (int(hands.player_pair.sum()), int(hands.banker_pair.sum())) == (15, 22)
    first = hands.record(0)  # the file starts KS 6C 2S 2C: Player K 2, Banker 6 2
    assert (first.player_cards, first.banker_cards) == (
        tuple(parse_cards("KS 2S")),
        tuple(parse_cards("6C 2C")),
    )
    assert (first.player_total, first.banker_total, first.winner) == (2, 8, Winner.BANKER)
    # the shipped files are what the generator makes today
    assert_same_hands(hands, generate_hands(ShoeSpec(decks=8), 3, seed=1))
    six = read_shoes(DATA / "generated-6deck-seed2.txt", decks=6)
    assert_same_hands(six, generate_hands(ShoeSpec(decks=6), 2, seed=2))
    body = [
        ln
        for ln in (DATA / "generated-8deck-seed1.txt").read_text().splitlines()
        if not ln.startswith("#")
    ]
    assert format_card_text(hands) == "\n".join(body) + "\n"


def test_burn(tmp_path: Path) -> None:
    path = write(tmp_path, "burn.txt", "3 A A A KS 9H 9C 8D\nQ 2 2 2 2 2 2 2 2 2 2 2C 9 3 K\n")
    hands = read_shoes(path, burn=True)
    assert len(hands) == 2 and hands.shoe.tolist() == [0, 1]
    assert hands.burned == (tuple(parse_cards("3 A A A")), tuple(parse_cards("Q" + " 2" * 10)))
    assert hands.cards[0].tolist() == parse_cards("KS 9C") + [0] + parse_cards("9H 8D") + [0]
    with pytest.warns(IncompleteHandWarning):
        unburned = read_shoes(path)
    assert unburned.burned == () and unburned.cards[0].tolist() == parse_cards("3 A KS A A 9H")


def test_shoe_ending_during_the_burn(tmp_path: Path) -> None:
    path = write(tmp_path, "short.txt", "K 2 3\n")
    with pytest.raises(ShoeFormatError) as err:
        read_shoes(path, burn=True)
    for part in (str(path), "line 1", "ends during the burn", "K, burns 10 more", "only 3"):
        assert part in str(err.value)


def test_incomplete_hand_warns_and_is_not_dealt(tmp_path: Path) -> None:
    path = write(tmp_path, "inc.txt", "KS 9H 9C 8D 2 3\n4 5\nKD 9S 9D 8H\n")
    with pytest.warns(IncompleteHandWarning) as caught:
        hands = read_shoes(path)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert str(path) in messages[0] and "line 1" in messages[0]
    assert "middle of a hand" in messages[0] and "2 cards left over after hand 1" in messages[0]
    assert "line 2" in messages[1] and "2 cards left over were not dealt" in messages[1]
    # the shoe with no complete hand takes no shoe number
    assert hands.shoe.tolist() == [0, 1] and hands.hand.tolist() == [1, 1]


def test_no_complete_hand_at_all(tmp_path: Path) -> None:
    path = write(tmp_path, "none.txt", "KS 2H 2C\n")
    with pytest.warns(IncompleteHandWarning, match="3 cards left over"):
        with pytest.raises(ShoeFormatError, match="no complete hand"):
            read_shoes(path)


# --- card-level CSV --------------------------------------------------------------------


def test_card_csv_matches_card_text() -> None:
    from_csv = read_shoes(DATA / "cards-8deck-seed1-shoe1.csv")
    from_text = read_shoes(DATA / "generated-8deck-seed1.txt").shoe_slice(0)
    assert_same_hands(from_csv, from_text)


def test_card_csv_labels_and_burn(tmp_path: Path) -> None:
    rows = [("x", c) for c in "3 A A A KS 9H 9C 8D".split()] + [
        ("y", c) for c in "2 A A K♠ 9♥ 9♣ 8♦".split()
    ]
    path = write(tmp_path, "c.csv", "Shoe , Card\n" + "".join(f"{s},{c}\n" for s, c in rows))
    with pytest.warns(IncompleteHandWarning) as caught:
        hands = read_shoes(path, burn=False, fmt="card-csv")
    assert ["shoe 'x' (lines 2-9)" in str(w.message) for w in caught] == [True, False]
    assert "shoe 'y' (lines 10-16)" in str(caught[1].message)
    assert hands.shoe.tolist() == [0, 1]
    burned = read_shoes(path, burn=True, fmt="card-csv")
    assert burned.shoe.tolist() == [0, 1] and burned.hand.tolist() == [1, 1]
    assert burned.burned == (tuple(parse_cards("3 A A A")), tuple(parse_cards("2 A A")))
    assert_same_hands(
        burned.shoe_slice(1), read_shoes(write(tmp_path, "y.txt", "KS 9H 9C 8D")), COLUMNS[1:]
    )


# --- outcome level ------------------------------------------------------------------------


def test_live_table_sample() -> None:
    hands = read_shoes(LIVE)
    message = json.loads(LIVE.read_text(encoding="utf-8"))
    entries, stats = message["args"]["history_v2"], message["args"]["stats"]
    assert len(hands) == 17 == stats["gameCount"] and hands.n_shoes == 1
    assert hands.known == OUTCOME_KNOWN and hands.source == str(LIVE)
    assert hands.hand.tolist() == list(range(1, 18))
    assert [str(Winner.from_code(w)) for w in hands.winner] == [
        e["winner"].lower() for e in entries
    ]
    assert hands.player_total.tolist() == [e["playerScore"] for e in entries]
    assert hands.banker_total.tolist() == [e["bankerScore"] for e in entries]
    wins = np.bincount(hands.winner, minlength=3).tolist()
    assert wins == [8, 9, 0] == [stats["playerWins"], stats["bankerWins"], stats["ties"]]
    assert int(hands.banker_pair.sum()) == 2 == stats["bankerPairs"]
    assert np.flatnonzero(hands.banker_pair).tolist() == [3, 6]
    assert int(hands.player_pair.sum()) == 0 == stats["playerPairs"]
    assert (np.flatnonzero(hands.natural) + 1).tolist() == [1, 4, 6, 13, 15, 17]


def test_live_json_shapes(tmp_path: Path) -> None:
    message = json.loads(LIVE.read_text(encoding="utf-8"))
    entries = message["args"]["history_v2"]
    bare = read_shoes(write(tmp_path, "bare.json", json.dumps(entries)))
    assert_same_hands(bare, read_shoes(LIVE))
    # snapshots of one shoe: a repeat or an extension continues it, a shorter one starts anew
    two = read_shoes(write(tmp_path, "msgs.json", json.dumps([message, message])))
    assert_same_hands(two, read_shoes(LIVE))
    first = {"args": {"history_v2": entries[:4]}}
    grown = read_shoes(write(tmp_path, "grown.json", json.dumps([first, message, first])))
    assert grown.shoe.tolist() == [0] * 17 + [1] * 4
    lists = read_shoes(
        write(tmp_path, "lists.txt", json.dumps([entries[:5], [], entries[5:]])), fmt="json"
    )
    assert lists.shoe.tolist() == [0] * 5 + [1] * 12 and lists.hand[5] == 1
    assert lists.known == OUTCOME_KNOWN


def test_json_nested_past_the_parser_s_depth_is_a_format_error(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.json", "[" * 100_000)
    with pytest.raises(
        ShoeFormatError,
        match="deep.json: its JSON nests lists or objects too deeply to be a shoe's records",
    ):
        read_shoes(path)


def test_outcome_csv_from_generated_shoe() -> None:
    hands = read_shoes(DATA / "outcomes-8deck-seed1-shoe1.csv")
    assert hands.known == OUTCOME_KNOWN | {"card_counts"}
    full = read_shoes(DATA / "generated-8deck-seed1.txt").shoe_slice(0)
    assert_same_hands(hands, full, tuple(c for c in COLUMNS if c != "cards"))


def test_outcome_csv_minimal_and_spellings(tmp_path: Path) -> None:
    text = "shoe,winner\nA,P\nA,banker\nA,Tie\nB,b\nB,PLAYER\n"
    hands = read_shoes(write(tmp_path, "o.csv", text), fmt="outcome-csv")
    assert hands.known == frozenset()
    assert hands.winner.tolist() == [0, 1, 2, 1, 0]
    assert hands.shoe.tolist() == [0, 0, 0, 1, 1] and hands.hand.tolist() == [1, 2, 3, 1, 2]


def test_outcome_csv_partial_columns_and_booleans(tmp_path: Path) -> None:
    text = (
        "# hand-kept record\nshoe,hand,winner,banker_total,player_pair\n"
        "1,1,B,6,yes\n1,2,P,3,N\n1,3,t,0,0\n1,4,banker,9,TRUE\n"
    )
    hands = read_shoes(write(tmp_path, "o.csv", text))
    assert hands.known == {"banker_total", "player_pair"}
    assert hands.banker_total.tolist() == [6, 3, 0, 9]
    assert hands.player_pair.tolist() == [True, False, False, True]


def test_outcome_csv_with_cards_reads_back_render_output(tmp_path: Path) -> None:
    hands = read_shoes(DATA / "generated-8deck-seed1.txt")
    again = read_shoes(write(tmp_path, "deal.csv", render.hands(hands, "csv")))
    assert again.known == ALL_KNOWN
    assert_same_hands(again, hands)


def test_road_strings(tmp_path: Path) -> None:
    hands = read_shoes(DATA / "roads-8deck-seed1.txt")
    assert hands.known == frozenset()
    assert_same_hands(
        hands, read_shoes(DATA / "generated-8deck-seed1.txt"), ("shoe", "hand", "winner")
    )
    spaced = read_shoes(write(tmp_path, "r.txt", "b p t  # a comment\n\nP P\n"), fmt="road")
    assert spaced.winner.tolist() == [1, 0, 2, 0, 0] and spaced.shoe.tolist() == [0, 0, 0, 1, 1]


def test_outcome_level_lacks_what_it_does_not_record() -> None:
    road = read_shoes(DATA / "roads-8deck-seed1.txt")
    road.require([Bet.PLAYER, Bet.BANKER, Bet.TIE])
    with pytest.raises(MissingDataError) as err:
        road.require([Bet.BANKER_PAIR])
    message = str(err.value)
    for part in (
        "roads-8deck-seed1.txt",
        "banker_pair bet",
        "banker pair of each hand",
        "does not have",
        "records: hand, shoe, winner",
    ):
        assert part in message
    with pytest.raises(MissingDataError, match="banker total"):
        road.require([Bet.BANKER], Rules.preset("no-commission"))
    live = read_shoes(LIVE)
    live.require([Bet.PLAYER_PAIR, Bet.BANKER_PAIR, Bet.BANKER], Rules.preset("no-commission"))
    with pytest.raises(MissingDataError, match="number of cards"):
        live.require([Bet.DRAGON_7])
    with pytest.raises(MissingDataError, match="no cards"):
        format_card_text(live)


# --- sniffing and explicit formats --------------------------------------------------------


@pytest.mark.parametrize(
    "name, text",
    [
        ("cards.txt", "5 K 9 2 3 8\n2 9 3 K\n"),
        ("road.txt", "BPB\nPPT\n# two shoes\n"),
        ("cards.csv", "shoe,card\n1,9\n1,K\n1,9\n1,2\n2,9\n2,9\n2,3\n2,K\n"),
        ("outcomes.csv", "shoe,winner,player_total\n1,P,8\n2,B,1\n"),
    ],
)
def test_every_line_ending_reads_the_same(tmp_path: Path, name: str, text: str) -> None:
    lf = read_shoes(write(tmp_path, "lf-" + name, text))
    assert len(np.unique(lf.shoe)) == 2
    for ending in ("\r\n", "\r"):  # Windows, and old Mac files
        assert_same_hands(
            read_shoes(write(tmp_path, "x-" + name, text.replace("\n", ending))),
            lf,
            ("shoe", "hand", "winner"),
        )


def test_csv_text_after_a_closing_quote_is_kept(tmp_path: Path) -> None:
    quoted = read_shoes(write(tmp_path, "q.csv", 'shoe,card\n1,"KS" \n"1" ,6C\n1,9\n1,9\n'))
    plain = read_shoes(write(tmp_path, "p.csv", "shoe,card\n1,KS\n1,6C\n1,9\n1,9\n"))
    assert_same_hands(quoted, plain)


def test_format_is_told_from_content(tmp_path: Path) -> None:
    assert len(read_shoes(write(tmp_path, "live", LIVE.read_text(encoding="utf-8")))) == 17
    assert read_shoes(write(tmp_path, "o.dat", "shoe,winner\n1,P\n")).known == frozenset()
    assert (
        read_shoes(write(tmp_path, "c.dat", "shoe,card\n1,K\n1,9\n1,9\n1,8\n")).known == ALL_KNOWN
    )
    assert len(read_shoes(write(tmp_path, "r.dat", "BBPT\n"))) == 4
    assert len(read_shoes(write(tmp_path, "t.dat", "TTTT\nT\n"))) == 5  # "TTTT" is no card
    assert len(read_shoes(write(tmp_path, "x.txt", "BBP\n"), fmt="road")) == 3
    with pytest.raises(UsageError, match="unknown shoe file format 'xml'"):
        read_shoes(LIVE, fmt="xml")


# --- bad input ------------------------------------------------------------------------------

BAD = [
    (
        "tok.txt",
        "# header\nKS 9H X1 2C\n",
        {},
        ["line 2", "column 7", "card 3", "unknown card 'X1'", "a card is a rank A 2-9 T/10"],
    ),
    (
        "rank.txt",
        "K K K K K 2 3 4 5\n",
        {"decks": 1},
        ["line 1", "column 9", "card 5", "too many cards of rank K", "1-deck shoe holds 4", "5th"],
    ),
    (
        "suit.txt",
        "KS 9H K♠ 2C 8D\n",
        {"decks": 1},
        ["line 1", "column 7", "card 3", "too many KS", "holds 1 of each card"],
    ),
    (
        "suit2.txt",
        "KS 9H " * 3 + "KS\n",
        {"decks": 2},
        ["column 13", "card 5", "too many KS", "3rd"],
    ),
    ("card.csv", "shoe,card\n1,KS\n1,ZZ\n", {}, ["line 3", "field card", "unknown card 'ZZ'"]),
    (
        "total.csv",
        "shoe,winner,player_total,banker_total\n1,P,12,3\n",
        {},
        ["line 2", "field player_total", "impossible total '12'", "from 0 to 9"],
    ),
    (
        "total.json",
        '[{"winner": "Player", "playerScore": 10, "bankerScore": 3}]',
        {},
        ["[0].playerScore", "impossible total 10", "from 0 to 9"],
    ),
    (
        "natural.csv",
        "shoe,winner,player_total,banker_total,natural\n1,P,3,2,true\n",
        {},
        ["line 2", "natural is true", "two-card 8 or 9", "3 and 2"],
    ),
    (
        "natural3.csv",
        "shoe,winner,natural,player_card_count,banker_card_count\n1,P,y,3,2\n",
        {},
        ["line 2", "natural is true", "Player has three cards"],
    ),
    (
        "no-natural.csv",
        "shoe,winner,player_total,banker_total,natural,player_card_count,"
        "banker_card_count\n1,P,9,3,false,2,2\n",
        {},
        ["line 2", "no hand the drawing rules deal has", "natural false", "player_total 9"],
    ),
    (
        "stand.csv",
        "shoe,winner,player_total,banker_total,player_card_count,banker_card_count\n1,B,5,6,2,2\n",
        {},
        ["line 2", "no hand the drawing rules deal has", "player_total 5"],
    ),
    (
        "oddpair.json",
        '[{"winner": "Player", "playerScore": 9, "bankerScore": 3, "natural": true,'
        ' "playerPair": true}]',
        {},
        ["[0]", "no hand the drawing rules deal has", "playerPair true"],
    ),
    (
        "winner.csv",
        "shoe,winner,player_total,banker_total\n1,B,4,4\n1,P,3,5\n",
        {},
        ["line 2", "winner is banker", "player_total 4 against banker_total 4 is a tie"],
    ),
    (
        "winner.json",
        '[{"winner": "Player", "playerScore": 9, "bankerScore": 1},'
        ' {"winner": "Banker", "playerScore": 7, "bankerScore": 2}]',
        {},
        ["[1]", "winner is banker", "playerScore 7 against bankerScore 2 is a player win"],
    ),
    (
        "letter.csv",
        "shoe,winner\n1,P\n1,X\n",
        {},
        ["line 3", "field winner", "unknown winner 'X'", "P, B or T"],
    ),
    (
        "letter.json",
        '{"args": {"history_v2": [{"winner": "Dragon", "playerScore": 1, "bankerScore": 2}]}}',
        {},
        ["args.history_v2[0].winner", "unknown winner 'Dragon'"],
    ),
    (
        "road.txt",
        "BPPB\nBPXT\n",
        {},
        ["line 2", "column 3", "unknown result 'X'", "B (banker), P (player) and T (tie)"],
    ),
    (
        "noshoe.csv",
        "winner,player_total\nP,3\n",
        {},
        ["line 1", "no 'shoe' column", "needs the columns shoe,winner"],
    ),
    (
        "nowinner.csv",
        "shoe,player_total\n1,3\n",
        {"fmt": "outcome-csv"},
        ["line 1", "no 'winner' column"],
    ),
    ("nocard.csv", "shoe,total\n1,3\n", {}, ["line 1", "shoe,card", "shoe,winner"]),
    (
        "typo.csv",
        "shoe,winner,playr_total\n1,P,3\n",
        {},
        ["line 1", "column 3", "unknown column 'playr_total'", "did you mean 'player_total'"],
    ),
    ("twice.csv", "shoe,winner,winner\n1,P,P\n", {}, ["column 3", "'winner' appears twice"]),
    (
        "fields.csv",
        "shoe,winner\n1,P\n1,B,7\n",
        {},
        ["line 3", "3 fields", "header (line 1) has 2"],
    ),
    (
        "again.csv",
        "shoe,winner\n1,P\n2,B\n1,T\n",
        {},
        ["line 4", "field shoe", "shoe '1' appears again", "started on line 2"],
    ),
    (
        "handno.csv",
        "shoe,hand,winner\n1,1,P\n1,3,B\n",
        {},
        ["line 3", "field hand", "expected 2", "got '3'"],
    ),
    (
        "count.csv",
        "shoe,winner,player_card_count\n1,P,2\n",
        {},
        ["line 1", "'player_card_count' but not 'banker_card_count'"],
    ),
    (
        "count4.csv",
        "shoe,winner,player_card_count,banker_card_count\n1,P,4,2\n",
        {},
        ["line 2", "field player_card_count", "2 or 3 cards, got '4'"],
    ),
    (
        "flag.csv",
        "shoe,winner,natural\n1,P,maybe\n",
        {},
        ["line 2", "field natural", "true or false", "'maybe'"],
    ),
    (
        "split.csv",
        "shoe,winner,player_cards,banker_cards\n1,P,5 K,2 3\n",
        {},
        ["line 2", "Player 5 K and Banker 2 3 is not a hand the rules deal", "Player draws on 5"],
    ),
    (
        "disagree.csv",
        "shoe,winner,player_total,player_cards,banker_cards\n1,P,8,KS 9H,9C 8D\n",
        {},
        ["line 2", "field player_total", "player_total is 8, but the cards give 9"],
    ),
    (
        "cards-comp.csv",
        "shoe,winner,player_cards,banker_cards\n1,P,KS 9H,KS 8D\n",
        {"decks": 1},
        ["line 2", "field banker_cards", "too many KS"],
    ),
    ("empty.txt", "", {}, ["no shoes", "empty"]),
    ("blank.csv", "\n  \n", {}, ["no shoes", "empty"]),
    ("comments.txt", "# nothing\n\n# here\n", {}, ["no shoes", "only comments"]),
    ("header.csv", "shoe,winner\n", {}, ["no shoes", "header (line 1) but no rows"]),
    (
        "bad.json",
        '{"args": {"history_v2": [\n  {"winner": }]}}',
        {},
        ["line 2", "column", "not valid JSON"],
    ),
    ("shape.json", '"hello"', {}, ["expected a shoe-state message", "got a JSON string"]),
    ("mixed.json", '[[], {"winner": "P"}]', {}, ["[1]", "expected a list of hand entries"]),
    ("nohist.json", '{"args": {"stats": {}}}', {}, ["args.history_v2", "expected the list"]),
    ("score.json", '[{"winner": "Player", "playerScore": 9}]', {}, ["[0]", "no bankerScore"]),
    (
        "flag.json",
        '[{"winner": "Player", "playerScore": 9, "bankerScore": 1, "natural": "yes"}]',
        {},
        ["[0].natural", "expected true or false", '"yes"'],
    ),
    ("latin1.txt", b"KS 9H 9C 8D\nK\xe9\n", {}, ["line 2", "not UTF-8", "save the file as UTF-8"]),
    (
        "ties.txt",
        "T T T\nT T T\n",
        {},
        [
            "only T's standing alone",
            "read as ties (a road) or as cards of ten",
            "ties run together (TTT)",
            "tens as 10",
        ],
    ),
    ("one-t.txt", "T\n", {}, ["only T's standing alone"]),
    ("long-s.txt", "K\u017f 9 2 3 9 9\n", {}, ["line 1", "card 1", "unknown card 'K\u017f'"]),
    ("quote.csv", 'shoe,card\n1,"5\n1,K\n', {}, ["line 2", "a quoted field is not closed"]),
    (
        "field.csv",
        "shoe,card\n1," + "K" * 200_000 + "\n",
        {},
        ["line 2", "a field is longer than 131,072 characters"],
    ),
    (
        "token.txt",
        "9 " + "K" * 200_000 + "\n",
        {},
        ["line 1", "card 2", "unknown card 'KKKK", "… (200,000 characters): a card is a rank"],
    ),
    (
        "cell.csv",
        "shoe,winner\n1," + "X" * 100_000 + "\n",
        {},
        ["line 2", "unknown winner 'XXX", "… (100,000 characters): expected P, B or T"],
    ),
]


@pytest.mark.parametrize(("name", "text", "kwargs", "parts"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_refused_precisely(
    tmp_path: Path, name: str, text: str | bytes, kwargs: dict[str, object], parts: list[str]
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(ShoeFormatError) as err:
        read_shoes(path, **kwargs)  # type: ignore[arg-type]
    message = str(err.value)
    assert message.startswith(str(path)), message
    for part in parts:
        assert part in message, message
    assert err.value.exit_code == 1 and "\n" not in message and len(message) < 400


def test_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file") as err:
        read_shoes(tmp_path / "missing.txt")
    assert err.value.exit_code == 2 and "missing.txt" in str(err.value)
    with pytest.raises(UsageError, match="is a directory"):
        read_shoes(tmp_path)
    with pytest.raises(UsageError, match="burn rule applies to card-level shoes"):
        read_shoes(LIVE, burn=True)
    with pytest.raises(UsageError, match="decks must be a whole number from 1 to 64, got 0"):
        read_shoes(LIVE, decks=0)


# --- dealing: the kernel against the rules ------------------------------------------------

card_codes = st.builds(make_card, st.integers(1, 13), st.integers(0, 4))


@settings(max_examples=150, deadline=None)
@given(st.lists(card_codes, max_size=40))
def test_kernel_dealing_agrees_with_the_rules(cards: list[int]) -> None:
    expected = deal_hands(cards)
    columns, used = deal_cards(cards)
    assert used == sum(h.cards_used for h in expected)
    given: dict[str, Any] = dict(columns)
    got = Hands.from_columns(len(columns["winner"]), **given)
    assert len(got) == len(expected)
    for i, hand in enumerate(expected):
        rec = got.record(i)
        assert (rec.player_cards, rec.banker_cards) == (hand.player_cards, hand.banker_cards)
        assert (rec.player_total, rec.banker_total, rec.winner) == (
            hand.player_total,
            hand.banker_total,
            hand.winner,
        )
        assert (rec.natural, rec.player_pair, rec.banker_pair) == (
            hand.natural,
            hand.player_pair,
            hand.banker_pair,
        )
        assert (rec.player_card_count, rec.banker_card_count) == (
            hand.player_card_count,
            hand.banker_card_count,
        )
    # the kernel alone deals the same hands, possibly short of a last four-card one
    out = {
        k: np.zeros_like(v, shape=(len(cards) // 4 + 1,) + v.shape[1:]) for k, v in columns.items()
    }
    n, _ = kernels.deal_sequence(
        np.array(cards, np.uint8), kernels.HAND_TABLE, kernels.CARD_VALUE, *out.values()
    )
    assert len(expected) - 1 <= n <= len(expected)
    np.testing.assert_array_equal(out["cards"][:n], columns["cards"][:n])


def test_what_an_outcome_record_may_say_matches_every_dealt_hand() -> None:
    # an independent oracle: deal every combination of two-card totals and drawn values
    def card(v: int) -> int:
        return v if v else 10

    dealt = set()
    for p2 in range(10):
        for b2 in range(10):
            for v5 in range(10):
                for v6 in range(10):
                    hand = deal_hand([card(p2), card(b2), 10, 10, card(v5), card(v6)])
                    for pp in {False, p2 % 2 == 0}:
                        for bp in {False, b2 % 2 == 0}:
                            dealt.add(
                                (
                                    hand.winner,
                                    hand.player_total,
                                    hand.banker_total,
                                    hand.natural,
                                    pp,
                                    bp,
                                    hand.player_card_count,
                                    hand.banker_card_count,
                                )
                            )
    assert recorded.outcomes._all_outcomes() == dealt


def test_a_last_hand_that_stands_on_four_cards_is_dealt() -> None:
    columns, used = deal_cards(parse_cards("6 7 K K"))
    assert used == 4 and columns["winner"].tolist() == [Winner.BANKER.code]


# --- round trips ----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    decks=st.sampled_from([1, 2, 4, 6, 8]),
    count=st.integers(1, 3),
    burn=st.booleans(),
    cut_card=st.sampled_from([0, 14]),
)
def test_round_trip_generate_write_read(
    seed: int, decks: int, count: int, burn: bool, cut_card: int
) -> None:
    generated = generate_hands(ShoeSpec(decks=decks, burn=burn, cut_card=cut_card), count, seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "shoes.txt"
        recorded.write_atomic(path, format_card_text(generated, header=f"seed {seed}\nmore"))
        assert path.read_text(encoding="utf-8").startswith(f"# seed {seed}\n# more\n")
        back = read_shoes(path, decks=decks)
        assert_same_hands(back, generated)
        csv_path = Path(tmp) / "shoes.csv"
        csv_path.write_text(render.hands(generated, "csv"), encoding="utf-8")
        assert_same_hands(read_shoes(csv_path, decks=decks), generated)


def test_write_atomic(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    recorded.write_atomic(path, "one\n")
    recorded.write_atomic(path, "two ♠\n")
    assert path.read_text(encoding="utf-8") == "two ♠\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with pytest.raises(UsageError, match="cannot write"):
        recorded.write_atomic(tmp_path / "no" / "dir.txt", "x")
    with pytest.raises(UsageError, match="cannot write"):
        recorded.write_atomic(tmp_path, "x")
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


# --- rendering -------------------------------------------------------------------------------


def _two_hands(tmp_path: Path) -> Hands:
    return read_shoes(write(tmp_path, "two.txt", "KS 9H 9C 8D\n5 K 9 2 3 8\n"))


def test_deal_s_own_json_and_csv_read_back(tmp_path: Path) -> None:
    hands = read_shoes(DATA / "generated-8deck-seed1.txt")
    path = write(tmp_path, "hands.json", render.hands(hands, "json"))
    assert_same_hands(read_shoes(path), hands)  # per-round records, split by their shoe
    again = read_shoes(write(tmp_path, "hands.csv", render.hands(hands, "csv")))
    assert_same_hands(again, hands, ("shoe", "hand", "winner", "player_total", "banker_total"))


def test_write_atomic_through_a_link_to_a_device_and_keeping_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target.name)
    recorded.write_atomic(link, "new\n")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    recorded.write_atomic("/dev/null", "nothing\n")  # a device is written, not replaced
    assert Path("/dev/null").is_char_device()
    if Path("/dev/full").is_char_device():
        with pytest.raises(UsageError, match="/dev/full: cannot write: No space left on device"):
            recorded.write_atomic("/dev/full", "x\n")
        assert Path("/dev/full").is_char_device()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "target.txt"]


def test_render_csv(tmp_path: Path) -> None:
    lines = render.hands(_two_hands(tmp_path), "csv").splitlines()
    header = lines[0].split(",")
    for column in (
        "shoe",
        "hand",
        "player_cards",
        "banker_cards",
        "player_total",
        "banker_total",
        "winner",
        "player_pair",
        "banker_pair",
    ):
        assert column in header
    assert header[:2] == ["shoe", "hand"]
    assert lines[1] == "1,1,KS 9C,9H 8D,9,7,player,true,false,false,2,2"
    assert lines[2] == "2,1,5 9 3,K 2 8,7,0,player,false,false,false,3,3"
    live = render.hands(read_shoes(LIVE), "csv").splitlines()
    assert live[0] == "shoe,hand,player_total,banker_total,winner,natural,player_pair,banker_pair"
    assert live[4] == "1,4,3,8,banker,true,false,true"


def test_render_json(tmp_path: Path) -> None:
    rows = json.loads(render.hands(_two_hands(tmp_path), "json"))
    assert len(rows) == 2 and rows[0]["player_cards"] == "KS 9C"
    assert rows[1] | {} == {
        "shoe": 2,
        "hand": 1,
        "player_cards": "5 9 3",
        "banker_cards": "K 2 8",
        "player_total": 7,
        "banker_total": 0,
        "winner": "player",
        "natural": False,
        "player_pair": False,
        "banker_pair": False,
        "player_card_count": 3,
        "banker_card_count": 3,
    }
    road = json.loads(render.hands(read_shoes(DATA / "roads-8deck-seed1.txt"), "json"))
    assert road[0] == {"shoe": 1, "hand": 1, "winner": "banker"}


def test_render_table(tmp_path: Path) -> None:
    text = render.hands(_two_hands(tmp_path), "table")
    assert "shoe 1: 1 hand\n" in text and "shoe 2: 1 hand\n" in text
    assert "KS 9C" in text and "natural" in text
    assert text.rstrip().endswith(
        "2 hands in 2 shoes: player 2, banker 0, tie 0; player pairs 0, banker pairs 0"
    )
    live = render.hands(read_shoes(LIVE), "table")
    assert "shoe 1: 17 hands" in live and "banker pair" in live
    assert live.rstrip().endswith("player 8, banker 9, tie 0; player pairs 0, banker pairs 2")
    counts = render.table(read_shoes(DATA / "outcomes-8deck-seed1-shoe1.csv")).splitlines()
    assert "2/2" in counts[2] and "natural" in counts[2]  # hand 1: two cards each, a natural
    assert "3/3" in counts[4]  # hand 3: a third card each
    with pytest.raises(UsageError, match="unknown output format 'xml'"):
        render.hands(read_shoes(LIVE), "xml")


def test_every_hand_with_cards_has_each_sides_first_two() -> None:
    """The counting loop (`session_loop.run_sessions`) takes a hand's slots
    P1 P2 B1 B2 out of its counts without looking: every source whose cards
    are known fills them, and leaves P3 and B3 empty only where no third card
    was drawn."""
    sources = [
        generate_hands(ShoeSpec(decks=8), 200, 1),
        read_shoes(DATA / "cards-8deck-seed1-shoe1.csv"),
        read_shoes(DATA / "generated-8deck-seed1.txt"),
        read_shoes(DATA / "generated-6deck-seed2.txt", decks=6),
    ]
    for hands in sources:
        assert "cards" in hands.known
        assert hands.cards[:, [0, 1, 3, 4]].all(), hands.source
        assert ((hands.cards[:, 2] != 0) == (hands.player_card_count == 3)).all(), hands.source
        assert ((hands.cards[:, 5] != 0) == (hands.banker_card_count == 3)).all(), hands.source


def test_a_file_s_declared_decks(tmp_path: Path) -> None:
    """`decks=N` in the comments that open a file (as `shoe generate` writes)
    is the shoe's size unless the reader is told one; a different size given
    is an error naming both; no such comment: 8."""
    from backtest.run.config import parse_config

    six = DATA / "generated-6deck-seed2.txt"
    assert recorded.declared_decks(six) == (6, 1)
    assert recorded.shoe_decks(six, None) == 6 and recorded.shoe_decks(six, 6) == 6
    with pytest.raises(
        ShoeFormatError,
        match=r"shoes.decks is 8, but .*generated-6deck-seed2.txt, "
        r"line 1 says its shoes were dealt from 6 decks; "
        r"give 6, or leave shoes.decks out",
    ):
        recorded.shoe_decks(six, 8, "shoes.decks")
    one = tmp_path / "one.txt"
    one.write_text(
        "# a shoe of my own\n\n# dealt from decks = 1, by hand\n"
        "5H 9C KD 2S 3C 8D\n# decks=4 (a comment after the cards says nothing)\n",
        encoding="utf-8",
    )
    assert recorded.declared_decks(one) == (1, 3)
    with pytest.raises(ShoeFormatError, match=r"line 3 says its shoes were dealt from 1 deck;"):
        recorded.read_shoes(one, decks=2)
    for bad in ("0", "65", "9" * 35):
        odd = tmp_path / "odd.txt"
        odd.write_text(f"# decks={bad}\n5H 9C KD 2S 3C 8D\n", encoding="utf-8")
        with pytest.raises(
            ShoeFormatError,
            match=r"odd.txt, line 1: decks=.*: a shoe is dealt "
            r"from 1 to 64 decks",
        ):
            recorded.read_shoes(odd)
    plain = tmp_path / "plain.txt"
    plain.write_text("5H 9C KD 2S 3C 8D\n# decks=4\n", encoding="utf-8")
    assert recorded.declared_decks(plain) is None and recorded.shoe_decks(plain, None) == 8
    # a 1-deck shoe is checked as one: a second KD is one too many
    twice = tmp_path / "twice.txt"
    twice.write_text("# decks=1\nKD 9C KD 2S 3C 8D\n", encoding="utf-8")
    with pytest.raises(ShoeFormatError, match=r"is the shoe really 1 deck\?"):
        recorded.read_shoes(twice)
    # a run config: the file's decks unless `shoes.decks` says them, and then they must agree
    seats = [{"strategy": "flat"}]
    cfg = parse_config({"shoes": {"file": str(six)}, "seats": seats}, source="r.yaml")
    assert cfg.recorded is not None and cfg.recorded.decks == 6
    with pytest.raises(ConfigError, match=r"r.yaml: shoes.decks is 8, but .* 6 decks"):
        parse_config({"shoes": {"file": str(six), "decks": 8}, "seats": seats}, source="r.yaml")
    # run --shoes: the file's decks, else those of the generated shoes it replaces
    from backtest.run.config import load_config

    def played(config: Path, file: Path) -> int:
        cfg = load_config(
            config, {"shoes": {"file": str(file)}}, remove=("shoe",), merge=("shoes",)
        )
        assert cfg.recorded is not None
        return cfg.recorded.decks

    assert played(REPO / "configs" / "verdict.yaml", six) == 6
    four = tmp_path / "four.yaml"
    four.write_text("shoe: {decks: 4}\nseats:\n  - strategy: flat\n", encoding="utf-8")
    assert played(four, plain) == 4 and played(four, six) == 6
    # a config of recorded shoes: its shoes.decks were its own file's, not the one --shoes gives
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        f"shoes: {{file: {plain}, decks: 8}}\nseats:\n  - strategy: flat\n", encoding="utf-8"
    )
    assert played(mine, six) == 6 and played(mine, plain) == 8

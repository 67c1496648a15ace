"""`backtest play`: whole sessions at the table, driven line by line.

The expected bankrolls are worked out here, independently of the table: the
pack is re-cut from `shoe_order`, burned by hand, dealt with `deal_hand`, and
every bet settled with this file's own arithmetic.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from backtest import play
from backtest.core.cards import card_token
from backtest.core.errors import BacktestError, RulesError, UsageError, shown
from backtest.core.rules import Hand, deal_hand, rule_reasons
from backtest.shoes.shoe import ShoeSpec, generate_hands, shoe_order

# --- an independent reference --------------------------------------------------------------


def _value(card: int) -> int:
    rank = card % 16
    return rank if rank < 10 else 0


def _total(cards: Sequence[int]) -> int:
    return sum(_value(c) for c in cards) % 10


def dealing_pack(decks: int, seed: int, cut: int, index: int = 0) -> tuple[list[int], int]:
    """The cut pack with the burn taken off, and how many cards were burned."""
    pack = [int(c) for c in shoe_order(ShoeSpec(decks=decks, cut=cut), seed, index)]
    burned = 1 + (_value(pack[0]) or 10)
    return pack[burned:], burned


def first_hands(cards: Sequence[int], n: int) -> list[Hand]:
    hands, pos = [], 0
    for _ in range(n):
        hand = deal_hand(cards[pos : pos + 6])
        hands.append(hand)
        pos += hand.cards_used
    return hands


def expected_net(bets: Mapping[str, int], hand: Hand, game: str = "commission") -> Fraction:
    """Own settlement: commission Banker 19/20; no-commission 1, or 1/2 on a 6."""
    p, b = _total(hand.player_cards), _total(hand.banker_cards)
    net = Fraction(0)
    for bet, stake in bets.items():
        if bet == "player":
            net += stake if p > b else (0 if p == b else -stake)
        elif bet == "banker":
            if b > p:
                rate = (
                    Fraction(19, 20)
                    if game == "commission"
                    else (Fraction(1, 2) if b == 6 else Fraction(1))
                )
                net += stake * rate
            elif b < p:
                net -= stake
        elif bet == "tie":
            net += 8 * stake if p == b else -stake
        elif bet in ("player_pair", "banker_pair"):
            cards = hand.player_cards if bet == "player_pair" else hand.banker_cards
            net += 11 * stake if cards[0] % 16 == cards[1] % 16 else -stake
        else:
            raise AssertionError(bet)
    return net


def session(commands: Sequence[str], **options: object) -> tuple[play.SessionSummary, str]:
    out = io.StringIO()
    settings = play.open_table(**options)  # type: ignore[arg-type]
    summary = play.PlaySession(settings, commands, out, echo=True).run()
    return summary, out.getvalue()


def _money(x: Fraction | int) -> str:
    return f"{float(x):.2f}"


# --- a whole session -----------------------------------------------------------------------


def test_session_with_boxes_same_take_back_and_quit() -> None:
    cards, burned = dealing_pack(8, 3, 100)
    hands = first_hands(cards, 4)
    # the reference itself agrees with the generator's own deal
    generated = generate_hands(ShoeSpec(decks=8, cut=100, burn=True), 1, 3)
    assert [h.player_total for h in hands] == generated.player_total[:4].tolist()
    assert [h.banker_total for h in hands] == generated.banker_total[:4].tolist()

    commands = [
        "100",
        "banker 25",
        "tie 5 box 2",
        "p 10",
        "done",  # box 1 Banker 25; box 2 Tie 5, Player 10
        "same",
        "pp 5 box3",
        "done",  # the same, and a Player Pair in box 3
        "b 100; bp 5",
        "take bp",
        "tie 1",
        "undo",
        "done",  # box 3: Banker 100 only
        "box 1",
        "player 25+5",
        "take player 5",
        "done",  # box 1: Player 25
        "quit",
    ]
    rounds = [
        {"banker": 25, "tie": 5, "player": 10},
        {"banker": 25, "tie": 5, "player": 10, "player_pair": 5},
        {"banker": 100},
        {"player": 25},
    ]
    summary, out = session(commands, rules="commission", seed=3)
    nets = [expected_net(bets, hand) for bets, hand in zip(rounds, hands)]
    final = 1000 + sum(nets)
    assert summary.bankroll == final
    assert summary.hands == 4 and summary.hands_bet == 4
    assert summary.wagered == 40 + 45 + 100 + 25
    assert summary.biggest_win == max(nets) and summary.biggest_loss == min(min(nets), 0)
    assert f"final bankroll   {_money(final)} (started with 1000.00)" in out
    assert f"net              {'+' if final > 1000 else ''}{_money(final - 1000)}" in out

    assert "Cut at 100: 100 cards moved from the top to the bottom." in out
    pack = [int(c) for c in shoe_order(ShoeSpec(decks=8, cut=100), 3, 0)]
    burn_line = " ".join(card_token(c) for c in pack[1:burned])
    assert f"the first card is {card_token(pack[0])}" in out and burn_line in out

    for number, hand in enumerate(hands, start=1):
        block = out.split(f"== Shoe 1, hand {number} ==")[1].split("Big road")[0]
        p, b = hand.player_cards, hand.banker_cards
        assert re.search(rf"Player\s+{' '.join(map(card_token, p))}\s+total {_total(p)}", block)
        assert re.search(rf"Banker\s+{' '.join(map(card_token, b))}\s+total {_total(b)}", block)
        for reason in rule_reasons(hand):
            assert reason in block
        if len(p) == 3:
            assert f"Player's third card is {card_token(p[2])} (value {_value(p[2])})" in block
        pt, bt = _total(p), _total(b)
        winner = (
            f"Player wins, {pt} to {bt}."
            if pt > bt
            else f"Banker wins, {bt} to {pt}."
            if bt > pt
            else f"Tie, {pt} to {bt}."
        )
        assert winner in block
        before = 1000 + sum(nets[: number - 1])
        assert f"bankroll {_money(before)} -> {_money(before + nets[number - 1])}" in block
    # the first hand's draw, worked by hand from the printed cards: Player 3D 4S is 7 and
    # stands, Banker J T is 0 and draws the 8D, so Banker wins 8 to 7
    assert "Banker 0 draws: Player stood, Banker draws on 0 to 5 -> 8D" in out
    assert "Box 1: Banker 25 wins 23.75" in out
    # 2H 7D is no pair
    assert "Box 3: Player Pair 5 loses 5.00" in out
    assert "On the table: box 1: Banker 25; box 2: Player 10, Tie 5 (total 40)." in out
    assert "Box 3: Banker Pair bet taken back." in out
    assert "Box 1: 5 taken back from Player." in out
    assert "Big road, shoe 1:" in out


def test_end_of_input_acts_like_quit() -> None:
    summary, out = session(["7", "player 10", "done"], seed=9)
    cards, _ = dealing_pack(8, 9, 7)
    (hand,) = first_hands(cards, 1)
    assert summary.hands == 1
    assert summary.bankroll == 1000 + expected_net({"player": 10}, hand)
    assert out.rstrip().endswith(
        f"results          Player {int(hand.winner == 'player')}, "
        f"Banker {int(hand.winner == 'banker')}, Tie {int(hand.winner == 'tie')}"
    )


def test_quit_at_the_cut_ends_with_nothing_dealt() -> None:
    summary, out = session(["help", "quit"], seed=1)
    assert "that many cards are moved from the top of the pack" in out
    assert summary.hands == 0 and summary.bankroll == 1000
    assert "hands played     0 (0 with bets)" in out


@pytest.mark.parametrize("typed", ["\u00b2", "9" * 5000, "\u0663"])
def test_a_cut_that_is_no_ascii_number_is_asked_again(typed: str) -> None:
    summary, out = session([typed, "quit"], seed=1)
    assert (
        f"A cut is a position from 1 to 415, or Enter for a random cut; got {shown(typed)}." in out
    )
    assert summary.hands == 0


def test_random_cut_says_where_it_cut() -> None:
    summary, out = session(["", "done", "quit"], seed=4, decks=2)
    position = int(re.search(r"Cut at (\d+):", out).group(1))  # type: ignore[union-attr]
    cards, _ = dealing_pack(2, 4, position)
    (hand,) = first_hands(cards, 1)
    assert f"Player  {' '.join(map(card_token, hand.player_cards[:2]))}" in out
    assert f"Banker  {' '.join(map(card_token, hand.banker_cards[:2]))}" in out


# --- refusals --------------------------------------------------------------------------------

REFUSALS: dict[str, tuple[dict[str, object], list[str], str, dict[str, int]]] = {
    "german-player-and-banker": (
        {"rules": "german"},
        ["banker 25", "player 5"],
        "Refused: box 1: the german table does not take Player and Banker on one hand",
        {"banker": 25},
    ),
    "not-offered-pair": (
        {"rules": "bulgarian"},
        ["banker 25", "pp 5"],
        "Refused: box 1: the bulgarian table does not offer the player_pair bet",
        {"banker": 25},
    ),
    "not-offered-dragon": (
        {"rules": "commission"},
        ["banker 25", "dragon7 5"],
        "Refused: box 1: the commission table does not offer the dragon7 bet",
        {"banker": 25},
    ),
    "above-table-maximum": (
        {"table_max": 100},
        ["banker 25", "player 200 box 2"],
        "Refused: Player 200 in box 2 is above the table maximum of 100",
        {"banker": 25},
    ),
    "above-bankroll-over-boxes": (
        {"bankroll": "50"},
        ["banker 30", "player 25 box 3"],
        "Refused: the bets would come to 55 over all boxes, more than your bankroll of 50.00",
        {"banker": 30},
    ),
    "cents": (
        {},
        ["banker 25", "tie 2.50"],
        "Refused: 2.50 has cents: bets are made of whole chips (1 5 25 100 500)",
        {"banker": 25},
    ),
    "thousands-of-digits": (
        {},
        ["banker 25", "tie " + "9" * 5000],
        "Refused: '" + "9" * 38 + "… (5,000 characters) is more than any table takes",
        {"banker": 25},
    ),
    "not-an-ascii-digit": (
        {},
        ["banker 25", "tie \u0663"],
        "Refused: '\u0663' is not an amount: type a whole number such as 25",
        {"banker": 25},
    ),
    "a-superscript-box": (
        {},
        ["banker 25", "player 5 box\u00b2"],
        "Refused: unknown bet 'box\u00b2'",
        {"banker": 25},
    ),
    "a-box-of-thousands-of-digits": (
        {},
        ["banker 25", "player 5 box" + "9" * 5000],
        "Refused: there is no box '" + "9" * 38 + "… (5,000 characters): this table has boxes 1 "
        "to 3",
        {"banker": 25},
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refused_bets_cost_nothing(case: str) -> None:
    options, commands, reason, accepted = REFUSALS[case]
    bankroll = Fraction(str(options.get("bankroll", 1000)))
    summary, out = session(["10", *commands, "done", "quit"], seed=2, **options)
    assert reason in out
    after = out.split(reason)[1].splitlines()[0]
    assert after.endswith(f". Nothing changed; bankroll {_money(bankroll)}.")
    cards, _ = dealing_pack(8, 2, 10)
    (hand,) = first_hands(cards, 1)
    assert summary.wagered == sum(accepted.values())
    assert summary.bankroll == bankroll + expected_net(accepted, hand)


def test_german_refuses_player_and_banker_across_boxes() -> None:
    """One player at one betting area: Player in one box and Banker in another
    is Player+Banker all the same."""
    summary, out = session(
        ["10", "banker 25", "player 5 box 2", "tie 5 box 3", "banker 10 box 2", "done", "quit"],
        seed=2,
        rules="german",
    )
    assert (
        "Refused: Player (box 2) and Banker (box 1) together: at the german table one "
        "player bets one side, in every box."
    ) in out
    assert summary.wagered == 40  # banker 25, tie 5, banker 10
    # the refused bet did not move the current box
    assert "box 1> tie 5 box 3" in out and "box 3> banker 10 box 2" in out
    # the table that allows it takes it
    summary, out = session(
        ["10", "banker 25", "player 5 box 2", "done", "quit"], seed=2, rules="bulgarian"
    )
    assert "Refused" not in out and summary.wagered == 30


def test_cancel_takes_back_as_take_does() -> None:
    summary, out = session(
        [
            "10",
            "banker 25 tie 5",
            "player 10 box 2",
            "cancel",
            "bets",
            "box 1",
            "cancel tie",
            "bets",
            "banker 10 box 3",
            "cancel all",
            "bets",
            "banker 10",
            "done",
            "quit",
        ],
        seed=2,
        rules="bulgarian",
    )
    lines = out.splitlines()
    assert "Box 2: every bet taken back. On the table: box 1: Banker 25, Tie 5 (total 30)." in lines
    assert "Box 1: Tie bet taken back. On the table: box 1: Banker 25 (total 25)." in lines
    assert "All bets taken back. No bets on the table." in lines
    assert summary.wagered == 10


@pytest.mark.parametrize("typed", ["banker -5", "-5 banker", "b -25 box 2"])
def test_a_negative_stake_is_refused_as_such(typed: str) -> None:
    summary, out = session(["10", typed, "quit"], seed=2)
    amount = typed.split("-")[1].split()[0]
    assert (
        f"Refused: a stake must be a positive amount, got -{amount} (chips come back with "
        f"take, e.g. take banker {amount}). Nothing changed; bankroll 1000.00."
    ) in out
    assert "unknown bet" not in out and summary.wagered == 0


def test_odds_and_count_at_the_table_are_the_cards_not_seen() -> None:
    from backtest import odds
    from backtest.core.rules import PRESETS

    summary, out = session(["10", "done", "done", "odds", "count", "quit"], seed=2)
    pack = [int(c) for c in shoe_order(ShoeSpec(decks=8, cut=10), 2, 0)]
    cards, burned = dealing_pack(8, 2, 10)
    hands = first_hands(cards, 2)
    seen = [*pack[:burned], *(c for h in hands for c in (*h.player_cards, *h.banker_cards))]
    result = odds.exact_odds(odds.remove_cards(odds.composition(8), seen), PRESETS["commission"], 8)
    said = out.split("box 1> odds", 1)[1].split("box 1> count", 1)[0]
    assert f"the {len(seen)} cards seen taken out" in said
    for bet in result.bets:
        row = next(
            line.split()
            for line in said.splitlines()
            if line.startswith(play.BET_NAMES[bet.bet] + " ")
        )
        assert f"{float(bet.p_win):.4%}" in row and f"{float(bet.ev):+.4f}" in row
    counted = out.split("box 1> count", 1)[1].splitlines()
    counted = [line for line in counted if line.startswith(("seen ", "left "))]
    values = [_value(c) for c in seen]
    assert counted[0].split()[1:] == [str(values.count(v)) for v in (1, 2, 3, 4, 5, 6, 7, 8, 9, 0)]
    assert counted[1].split()[1:] == [
        str((4 if v else 16) * 8 - values.count(v)) for v in (1, 2, 3, 4, 5, 6, 7, 8, 9, 0)
    ]


def test_a_terminal_reads_with_a_prompt_of_its_own() -> None:
    """On a terminal the line reader shows the prompt (readline edits the line
    and keeps the history); the table does not write it again."""
    typed = iter(["10", "banker 10", "done", None])
    prompts: list[str] = []

    def ask(prompt: str) -> str | None:
        prompts.append(prompt)
        return next(typed)

    out = io.StringIO()
    summary = play.PlaySession(play.open_table(seed=2), [], out, ask=ask).run()
    assert prompts == ["cut> ", "box 1> ", "box 1> ", "box 1> "]
    assert "box 1> " not in out.getvalue() and summary.wagered == 10


def test_pair_alone_is_refused_at_the_deal() -> None:
    commands = [
        "10",
        "pp 5",
        "done",
        "banker 10",
        "take banker",
        "done",
        "banker 10",
        "done",
        "quit",
    ]
    summary, out = session(commands, seed=2, rules="no-commission")
    assert (
        "Note: at the no-commission table a pair bet needs a Player, Banker or Tie bet "
        "beside it; add one before done." in out
    )
    refusal = (
        "Not dealt: box 1: at the no-commission table a pair bet needs a Player, Banker "
        "or Tie bet beside it. Change the bets (take, undo, clear) and type done again. "
        "Bankroll 1000.00."
    )
    assert out.count(refusal) == 2
    cards, _ = dealing_pack(8, 2, 10)
    (hand,) = first_hands(cards, 1)
    assert summary.hands == 1 and summary.wagered == 15
    assert summary.bankroll == 1000 + expected_net(
        {"player_pair": 5, "banker": 10}, hand, game="no-commission"
    )


def test_below_the_table_minimum_is_refused_at_the_deal() -> None:
    summary, out = session(
        ["10", "banker 5", "done", "banker 5", "done", "quit"], seed=2, table_min=10
    )
    assert "Not dealt: Banker 5 in box 1 is below the table minimum of 10." in out
    cards, _ = dealing_pack(8, 2, 10)
    (hand,) = first_hands(cards, 1)
    assert summary.hands == 1 and summary.bankroll == 1000 + expected_net({"banker": 10}, hand)


def test_same_is_refused_when_the_bankroll_no_longer_covers_it() -> None:
    cards, _ = dealing_pack(8, 2, 10)
    hands = first_hands(cards, 2)
    # stake the whole bankroll on the side that loses the first hand
    loser = "banker" if hands[0].winner == "player" else "player"
    assert hands[0].winner != "tie"
    summary, out = session(
        ["10", f"{loser} 100", "done", "same", "quit"], seed=2, bankroll="100", table_min=1
    )
    # the bankroll is 0: the session ends before `same`
    assert summary.bankroll == 0
    assert "Your bankroll of 0.00 is below the table minimum of 1: the session ends." in out

    summary, out = session(
        ["10", f"{loser} 60", "done", "same", "done", "quit"], seed=2, bankroll="100"
    )
    assert (
        "Refused: the bets would come to 60 over all boxes, more than your bankroll of 40.00" in out
    )
    assert summary.hands == 2 and summary.bankroll == 40


def test_forgiving_syntax() -> None:
    commands = [
        "10",
        "bet banker 25",
        "5 on tie",
        "player pair 1",
        "BANKER 1+1+1 box=2",
        "box",
        "box 9",
        "take tie 10",
        "take box 2",
        "bets",
        "take all",
        "undo",
        "nonsense",
        "25",
        "bet on",
        "banker",
        "done",
        "quit",
    ]
    summary, out = session(commands, seed=2)
    assert "Box 1: Banker 25 (chips: 25)." in out
    assert "Box 1: Tie 5 (chips: 5)." in out
    assert "Box 1: Player Pair 1 (chips: 1)." in out
    assert "Box 2: Banker 3 (chips: 3x1)." in out
    assert "Refused: box needs a number, e.g. box 2." in out
    assert "Refused: there is no box 9: this table has boxes 1 to 3." in out
    assert "Refused: there are only 5 on Tie in box 2." not in out  # box 2 is current: no Tie there
    assert "There is no Tie bet in box 2." in out
    assert "Box 2: every bet taken back." in out
    assert "All bets taken back. No bets on the table." in out
    assert "Unknown command 'nonsense': type help for the commands." in out
    assert "Refused: on what? e.g. banker 25" in out
    assert out.count("Refused: on what? e.g. banker 25 (help") == 2  # `25`, and `bet on`
    assert "Refused: how much on Banker? e.g. banker 25" in out
    # `take all` undone: back to box 1 with Banker 25, Tie 5, Player Pair 1, box 2 emptied before
    cards, _ = dealing_pack(8, 2, 10)
    (hand,) = first_hands(cards, 1)
    assert summary.wagered == 31
    assert summary.bankroll == 1000 + expected_net({"banker": 25, "tie": 5, "player_pair": 1}, hand)


def test_ez_table_takes_dragon_and_panda() -> None:
    summary, out = session(
        ["10", "banker 10 dragon7 5 panda8 5", "done", "quit"], seed=2, rules="ez"
    )
    assert "Box 1: Banker 10 (chips: 2x5), Dragon 7 5 (chips: 5), Panda 8 5 (chips: 5)." in out
    assert "Box 1: Dragon 7 5 loses 5.00" in out and summary.wagered == 20


# --- the shoe -------------------------------------------------------------------------------


def test_cut_card_one_more_hand_then_a_fresh_shoe() -> None:
    cards, burned = dealing_pack(1, 5, 10)
    # independently: hands until the cut card (14 from the end) is passed, then one more
    pos, n, limit = 0, 0, 52 - 14 - burned
    while True:
        pos += deal_hand(cards[pos : pos + 6]).cards_used
        n += 1
        if pos > limit:
            break
    n += 1
    assert n == len(generate_hands(ShoeSpec(decks=1, cut=10, burn=True), 1, 5))
    summary, out = session(["10", *["done"] * n, "3", "quit"], seed=5, decks=1)
    assert summary.hands == n
    assert out.count("The cut card has come out: one more hand, then the shoe ends.") == 1
    assert (
        f"Shoe 1, hand {n}: place your bets, then done. This is the last hand of the shoe." in out
    )
    assert f"The shoe is over: {n} hands dealt" in out
    assert "A fresh shoe is shuffled (shoe 2: 1 deck, 52 cards)." in out
    second, _ = dealing_pack(1, 5, 3, index=1)
    assert f"the first card is {card_token(shoe_order(ShoeSpec(decks=1, cut=3), 5, 1)[0])}" in out
    assert "Shoe 2, hand 1: place your bets" in out and "== Shoe 2" not in out
    assert second  # the second shoe is a different shuffle of the same pack


def test_recorded_shoe_is_dealt_in_order(tmp_path: Path) -> None:
    path = tmp_path / "shoes.txt"
    path.write_text("5 K 9 2 3 8  2 9 3 K\nKS 9H 9C 8D\n", encoding="utf-8")
    commands = ["banker 10", "done", "same", "done", "player 10", "done", "quit"]
    summary, out = session(commands, shoe=path)
    # P 5 9 (4) draws 3: 7; B K 2 (2) draws 8 on a 3: 0. P 2 3 (5), B 9 K: a natural 9.
    # Shoe 2: P KS 9C, a natural 9, against B 9H 8D (7).
    assert "Player 4 draws -> 3" in out
    assert "Banker 2 draws: Player's third card is 3 (value 3) -> 8" in out
    assert "Player wins, 7 to 0." in out
    assert "Banker natural 9: both hands stand" in out
    assert re.search(r"Player\s+KS 9C\s+total 9", out) and "Player natural 9" in out
    assert "Recorded shoe 2 of 2: 4 cards, dealt as recorded." in out
    assert "That was the last recorded shoe: the session ends." in out
    assert "cut>" not in out
    assert summary.hands == 3
    assert summary.bankroll == Fraction(1000) - 10 + Fraction(19, 2) + 10


# --- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        ({"rules": "nosuch"}, RulesError, "unknown rules preset 'nosuch'"),
        ({"decks": 0}, UsageError, "--decks must be a whole number from 1 to 64"),
        ({"bankroll": "12.345"}, UsageError, "--bankroll must be an amount of money"),
        (
            {"bankroll": "9" * 5000},
            UsageError,
            "--bankroll must be an amount of money such as 1000 "
            "or 250.50 (at most 15 digits before the point), got '999",
        ),
        (
            {"table_min": 10, "table_max": 5},
            UsageError,
            "--max must be a whole number of at least 10",
        ),
        ({"bankroll": "5", "table_min": 10}, UsageError, "below the table minimum"),
    ],
)
def test_bad_options(options: dict[str, object], error: type[BacktestError], text: str) -> None:
    with pytest.raises(error, match=re.escape(text)):
        play.open_table(**options)  # type: ignore[arg-type]


def test_outcome_level_shoe_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "road.txt"
    path.write_text("BPPBT\n", encoding="utf-8")
    with pytest.raises(UsageError, match="--shoe needs a card-level shoe"):
        play.open_table(shoe=path)


# --- the big road -----------------------------------------------------------------------------


def _road(results: str) -> list[str]:
    """The grid as one string per row, cells joined with `|`."""
    return ["|".join(row) for row in play.big_road(results)]


def test_big_road_empty() -> None:
    assert play.big_road([]) == [[] for _ in range(6)]
    assert play.render_big_road(play.big_road([])) == "(no hands yet)"


@pytest.mark.parametrize(
    ("results", "rows"),
    [
        ("T", ["T1", "", "", "", "", ""]),
        ("TT", ["T2", "", "", "", "", ""]),
        ("TB", ["1B", "", "", "", "", ""]),
        ("TTBT", ["2B1", "", "", "", "", ""]),
        ("BTTP", ["B2|P", "|", "|", "|", "|", "|"]),
        ("PTTTBT", ["P3|B1", "|", "|", "|", "|", "|"]),
        ("BBPTPB", ["B|P1|B", "B|P|", "||", "||", "||", "||"]),
    ],
)
def test_big_road_ties(results: str, rows: list[str]) -> None:
    assert _road(results) == rows


def test_big_road_dragon_tail() -> None:
    # eight Bankers: six down the first column, then right along the bottom row
    assert _road("B" * 8 + "PP") == ["B|P|", "B|P|", "B||", "B||", "B||", "B|B|B"]
    # a tie during the tail marks the cell it follows
    assert _road("B" * 7 + "T") == ["B|", "B|", "B|", "B|", "B|", "B|B1"]
    # the next streak meets the tail and turns right one row higher
    assert _road("B" * 7 + "P" * 6) == ["B|P|", "B|P|", "B|P|", "B|P|", "B|P|P", "B|B|"]


def test_big_road_accepts_winners_and_renders() -> None:
    from backtest.core.rules import Winner

    assert play.big_road([Winner.BANKER, Winner.TIE, Winner.PLAYER])[0] == ["B1", "P"]
    with pytest.raises(ValueError, match="not a result"):
        play.big_road("BX")
    text = play.render_big_road(play.big_road("BP" * 5), max_columns=4)
    assert text.splitlines()[0] == "B  P  B  P"
    assert text.splitlines()[-1] == "(6 earlier columns not shown)"


def test_money_and_chips() -> None:
    assert play.parse_amount("25+5+1") == 31 and play.parse_amount("2.00") == 2
    for bad, reason in (("2.50", "has cents"), ("0", "no bet"), ("abc", "not an amount")):
        with pytest.raises(ValueError, match=reason):
            play.parse_amount(bad)
    assert play.chips_text(1234) == "2x500 + 2x100 + 25 + 5 + 4x1"
    assert play.money(Fraction(-1, 200)) == "-0.01" and play.money(Fraction(95, 4)) == "23.75"


# --- the command, as a user runs it --------------------------------------------------------------


@pytest.mark.slow
def test_play_command_in_a_process(tmp_path: Path) -> None:
    (tmp_path / "road.txt").write_text("BPPBT\n", encoding="utf-8")
    runs = {
        "play": (["--seed", "3", "--rules", "commission"], "100\nbanker 25\ndone\nquit\n"),
        "road": (["--shoe", "road.txt"], ""),
    }
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "backtest", "play", *args],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for name, (args, _) in runs.items()
    }
    done = {
        name: (*proc.communicate(runs[name][1], timeout=120), proc.returncode)
        for name, proc in procs.items()
    }

    out, err, code = done["play"]
    cards, _ = dealing_pack(8, 3, 100)
    (hand,) = first_hands(cards, 1)
    final = 1000 + expected_net({"banker": 25}, hand)
    assert code == 0, err
    assert "cut> 100" in out and "box 1> banker 25" in out  # piped input is echoed
    assert f"final bankroll   {_money(final)}" in out

    out, err, code = done["road"]  # a bad option: one line on stderr, usage exit code
    assert code == 2, err
    assert err.startswith("error: ") and "needs a card-level shoe" in err
    assert len(err.strip().splitlines()) == 1 and out == ""


def test_no_commission_banker_six_pays_half(tmp_path: Path) -> None:
    path = tmp_path / "six.txt"
    path.write_text("K 6 5 K K\n", encoding="utf-8")  # P K 5 (5) draws K: 5; B 6 K (6) stands
    summary, out = session(["banker 25", "done"], shoe=path, rules="no-commission")
    assert "Banker 6 stands: Player's third card is K (value 0)" in out
    assert "Box 1: Banker 25 wins 12.50 (a winning Banker 6 pays 0.5 to 1)" in out
    assert summary.bankroll == Fraction(2025, 2)


def test_a_shoe_file_s_declared_decks_are_the_table_s(tmp_path: Path) -> None:
    """`play --shoe` reads the decks a file says it was dealt from (else 8);
    a --decks that says otherwise is refused, naming both."""
    from backtest import play
    from backtest.core.errors import UsageError
    from backtest.shoes.recorded import format_card_text
    from backtest.shoes.shoe import ShoeSpec, generate_hands

    path = tmp_path / "one.txt"
    path.write_text(
        format_card_text(generate_hands(ShoeSpec(decks=1), 2, 3), header="decks=1 seed=3"),
        encoding="utf-8",
    )
    assert play.open_table(shoe=path, seed=1).decks == 1
    assert play.open_table(shoe=path, seed=1, decks=1).decks == 1
    assert play.open_table(seed=1).decks == 8
    with pytest.raises(
        UsageError,
        match=r"--decks is 8, but .*one.txt, line 1 says its shoes "
        r"were dealt from 1 deck; give 1, or leave --decks out",
    ):
        play.open_table(shoe=path, seed=1, decks=8)


def test_the_table_s_big_road_is_backtest_roads() -> None:
    """Play draws the big road of `backtest roads`: the same cell for every
    win, dragon tails that turn included, on a run of random shoes."""
    from backtest.shoes import roads as road_module

    rng = np.random.default_rng(7)
    shoes = ["BBBBBBBBPBBBBBBB", "PPPPPPPPPPBPPPPPPPPP", "TTBTTPPPPPPPT"]
    shoes += [
        "".join(rng.choice(list("PBT"), size=75, p=[0.446, 0.458, 0.096])) for _ in range(3000)
    ]
    for shoe in shoes:
        grid = play.big_road(shoe)
        drawn = road_module.big_road(road_module.winners_from_text(shoe)).grid
        letters = [["" if e is None else e.letter for e in row] for row in drawn]
        mine = [[cell.lstrip("0123456789").rstrip("0123456789") for cell in row] for row in grid]
        if drawn and drawn[0]:
            assert mine == letters, shoe
    # the dragon tail of the second run turns along row 5 beside the first's
    grid = play.big_road("BBBBBBBBPBBBBBBB")
    assert [grid[4][c] for c in range(5)] == ["B", "", "B", "B", "B"]

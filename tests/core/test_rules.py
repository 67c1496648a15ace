"""The rules core against an oracle written here from RULES.md, by other means.

The oracle takes its Banker rule from a literal copy of the RULES.md table
(strings, not sets), reduces totals by their last decimal digit rather than
`% 10`, and never calls the code under test. Every combination of the first
four card values, with every value of the fifth and sixth cards where they
are drawn, goes through `rules.deal_hand`, the numba lookup
`kernels.HAND_TABLE` and `kernels.deal_sequence`.
"""

from __future__ import annotations

import dataclasses
import doctest
import itertools
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

import backtest.core.cards
import backtest.core.rules
import backtest.shoes.shoe
from backtest.core.cards import cards_text, make_card, parse_cards
from backtest.core.errors import RulesError
from backtest.core.rules import (
    PRESETS,
    Bet,
    Rules,
    Winner,
    banker_draws,
    check_bets,
    deal_hand,
    deal_hands,
    load_rules,
    rule_reasons,
)
from backtest.core.settlement import bet_result, settle
from backtest.shoes import kernels

# --- the oracle -------------------------------------------------------------------

#: RULES.md, "Banker total | draws when Player's third card is | stands when it is"
BANKER_DRAWS_WHEN = {
    0: "always",
    1: "always",
    2: "always",
    3: "0 1 2 3 4 5 6 7 9",
    4: "2 3 4 5 6 7",
    5: "4 5 6 7",
    6: "6 7",
    7: "never",
}
BANKER_STANDS_WHEN = {
    0: "never",
    1: "never",
    2: "never",
    3: "8",
    4: "0 1 8 9",
    5: "0 1 2 3 8 9",
    6: "0 1 2 3 4 5 8 9",
    7: "always",
}


def _values_in(cell: str) -> set[int]:
    if cell == "always":
        return set(range(10))
    if cell == "never":
        return set()
    return {int(t) for t in cell.split()}


def last_digit(n: int) -> int:
    return int(str(n)[-1])


class Deal(NamedTuple):
    player: tuple[int, ...]  # card values, in the order the Player received them
    banker: tuple[int, ...]
    player_total: int
    banker_total: int
    winner: str
    natural: bool


def oracle(values: tuple[int, ...]) -> Deal:
    """The deal of RULES.md from card values in deal order (P1 B1 P2 B2 ...).

    Raises IndexError when the hand needs a card beyond `values`.
    """
    player = [values[0], values[2]]
    banker = [values[1], values[3]]
    nxt = 4
    p2, b2 = last_digit(sum(player)), last_digit(sum(banker))
    natural = p2 in (8, 9) or b2 in (8, 9)
    if not natural:
        if p2 in (0, 1, 2, 3, 4, 5):
            player.append(values[nxt])
            nxt += 1
            cell = BANKER_DRAWS_WHEN[b2]
            if cell == "always" or (cell != "never" and str(player[2]) in cell.split()):
                banker.append(values[nxt])
        elif b2 in (0, 1, 2, 3, 4, 5):
            banker.append(values[nxt])
    pt, bt = last_digit(sum(player)), last_digit(sum(banker))
    winner = "player" if pt > bt else ("banker" if bt > pt else "tie")
    return Deal(tuple(player), tuple(banker), pt, bt, winner, natural)


def every_deal() -> list[tuple[tuple[int, ...], Deal]]:
    """Every first four values, extended by every fifth and sixth value drawn,
    with the oracle's deal of each."""
    out = []
    stack = [tuple(v) for v in itertools.product(range(10), repeat=4)]
    stack.reverse()
    while stack:
        values = stack.pop()
        try:
            deal = oracle(values)
        except IndexError:
            stack.extend(values + (v,) for v in reversed(range(10)))
            continue
        out.append((values, deal))
    return out


def test_copied_banker_table_is_a_partition() -> None:
    # a typo in the copy above would show here: each row splits 0..9 in two
    for total in range(8):
        draws, stands = _values_in(BANKER_DRAWS_WHEN[total]), _values_in(BANKER_STANDS_WHEN[total])
        assert draws | stands == set(range(10)) and not draws & stands, total


def test_oracle_itself_on_worked_examples() -> None:
    assert oracle((9, 0, 5, 0, 0, 0)).player_total == 4  # 9 + 5 = 4
    assert oracle((8, 0, 8, 0, 0)).player_total == 6  # 8 + 8 = 6
    assert oracle((0, 3, 2, 0, 8)).banker == (3, 0)  # Banker 3 stands on an 8
    assert oracle((0, 3, 2, 0, 0, 5)).banker == (3, 0, 5)  # ... draws on a ten
    assert oracle((5, 0, 3, 0)).natural


# --- exhaustive: every first four values and every drawn card ------------------------

TEN_RANKS = (10, 11, 12, 13)
WINNER_CODE = {"player": 0, "banker": 1, "tie": 2}


@pytest.fixture(scope="module")
def exhaustive() -> dict[str, Any]:
    """Every deal as card codes (rows padded with 0 to six), with the oracle's
    expectations as columns; `expected_cards` is laid out P1 P2 P3 B1 B2 B3."""
    deals = every_deal()
    n = len(deals)
    length = np.array([len(v) for v, _ in deals])
    values = np.array([v + (0,) * (6 - len(v)) for v, _ in deals], dtype=np.int64)
    i = np.arange(n)[:, None]
    j = np.arange(6)[None, :]
    # the ten-valued rank at position j shifts by j, 2j or not at all, so that
    # both same-rank (K-K) and different-rank (K-Q) ten-valued pairs occur
    ranks = np.where(values == 0, np.array(TEN_RANKS)[(i + j * (i % 3)) % 4], values)
    codes = ranks | (((i + j) % 5) << 4)
    unused = j >= length[:, None]
    ranks[unused] = 0
    codes[unused] = 0
    pn = np.array([len(d.player) for _, d in deals])
    bn = np.array([len(d.banker) for _, d in deals])
    rows = np.arange(n)
    p3 = np.where(pn == 3, codes[:, 4], 0)
    b3 = np.where(bn == 3, codes[rows, 4 + pn - 2], 0)
    return {
        "values": values,
        "ranks": ranks,
        "hands": [tuple(r[:k]) for r, k in zip(codes.tolist(), length.tolist())],
        "sequence": codes[~unused].astype(np.uint8),  # every deal, one after the other
        "expected_cards": np.stack(
            [codes[:, 0], codes[:, 2], p3, codes[:, 1], codes[:, 3], b3], axis=1
        ),
        "player_total": np.array([d.player_total for _, d in deals]),
        "banker_total": np.array([d.banker_total for _, d in deals]),
        "winner": np.array([WINNER_CODE[d.winner] for _, d in deals]),
        "natural": np.array([d.natural for _, d in deals]),
        "player_count": pn,
        "banker_count": bn,
        "player_pair": ranks[:, 0] == ranks[:, 2],
        "banker_pair": ranks[:, 1] == ranks[:, 3],
        "cards_used": length,
    }


def test_enumeration_covers_every_first_four_and_varies_tens(exhaustive) -> None:
    values, ranks, length = exhaustive["values"], exhaustive["ranks"], exhaustive["cards_used"]
    assert len({tuple(r) for r in values[:, :4].tolist()}) == 10**4
    # a drawn fifth and sixth card of every value appears
    assert set(values[length >= 5, 4].tolist()) == set(range(10))
    assert set(values[length == 6, 5].tolist()) == set(range(10))
    assert set(ranks[ranks > 0].tolist()) == set(range(1, 14))
    # ten-valued first two Player cards: both same-rank and different-rank pairs occur
    tens = (ranks[:, 0] >= 10) & (ranks[:, 2] >= 10)
    assert exhaustive["player_pair"][tens].any() and not exhaustive["player_pair"][tens].all()
    suits = {c >> 4 for h in exhaustive["hands"][:50] for c in h}
    assert suits == {0, 1, 2, 3, 4}


def test_deal_hand_matches_oracle_exhaustively(exhaustive) -> None:
    # two spare cards after each deal: a wrong extra draw shows as a mismatch, not a crash
    spare = (make_card(9, 1), make_card(1, 2))
    got_cards, got_cols = [], []
    for codes in exhaustive["hands"]:
        h = deal_hand(codes + spare)
        got_cards.append(
            h.player_cards
            + (0,) * (3 - len(h.player_cards))
            + h.banker_cards
            + (0,) * (3 - len(h.banker_cards))
        )
        got_cols.append(
            (
                h.player_total,
                h.banker_total,
                WINNER_CODE[h.winner],
                h.natural,
                h.player_pair,
                h.banker_pair,
                h.cards_used,
            )
        )
    got = dict(
        zip(
            (
                "player_total",
                "banker_total",
                "winner",
                "natural",
                "player_pair",
                "banker_pair",
                "cards_used",
            ),
            np.array(got_cols, dtype=np.int64).T,
        )
    )
    _assert_columns(exhaustive, np.array(got_cards), got)


def _assert_columns(
    exhaustive: dict[str, Any], cards: np.ndarray, got: dict[str, np.ndarray]
) -> None:
    bad = np.flatnonzero((cards != exhaustive["expected_cards"]).any(axis=1))
    assert bad.size == 0, (
        f"{bad.size} deals give other cards, first {cards_text(exhaustive['hands'][bad[0]])}"
    )
    for name, column in got.items():
        bad = np.flatnonzero(np.asarray(column) != exhaustive[name])
        assert bad.size == 0, (
            f"{name}: {bad.size} mismatches, first deal "
            f"{cards_text(exhaustive['hands'][bad[0]])}: got {column[bad[0]]}, "
            f"expected {exhaustive[name][bad[0]]}"
        )


def _unpack(packed: int) -> tuple[int, int, int, int, int]:
    return (
        packed & 15,
        (packed >> 4) & 15,
        (packed >> 8) & 1,
        (packed >> 9) & 1,
        (packed >> 10) & 1,
    )


def test_hand_table_every_entry_matches_oracle() -> None:
    table = kernels.HAND_TABLE
    assert table.shape == (10, 10, 10, 10)
    for p2, b2, v5, v6 in itertools.product(range(10), repeat=4):
        # two-card totals p2 and b2 from (p2, 0) and (b2, 0); unused v5/v6 must not matter
        exp = oracle((p2, b2, 0, 0, v5, v6))
        pdrew, bdrew = len(exp.player) == 3, len(exp.banker) == 3
        want = (
            exp.player_total,
            exp.banker_total,
            int(pdrew),
            int(bdrew),
            int(bdrew and not pdrew),
        )
        assert _unpack(int(table[p2, b2, v5, v6])) == want, (p2, b2, v5, v6)


def test_hand_table_lookup_for_every_deal(exhaustive) -> None:
    vals = exhaustive["values"]
    p2 = (vals[:, 0] + vals[:, 2]) % 10
    b2 = (vals[:, 1] + vals[:, 3]) % 10
    packed = kernels.HAND_TABLE[p2, b2, vals[:, 4], vals[:, 5]].astype(np.int64)
    assert np.array_equal(packed & 15, exhaustive["player_total"])
    assert np.array_equal((packed >> 4) & 15, exhaustive["banker_total"])
    assert np.array_equal(2 + ((packed >> 8) & 1), exhaustive["player_count"])
    assert np.array_equal(2 + ((packed >> 9) & 1), exhaustive["banker_count"])


def _run_deal_sequence(cards: np.ndarray, room: int) -> tuple[int, int, dict[str, np.ndarray]]:
    out = {
        "cards": np.zeros((room, 6), np.uint8),
        "player_total": np.zeros(room, np.int8),
        "banker_total": np.zeros(room, np.int8),
        "winner": np.zeros(room, np.int8),
        "natural": np.zeros(room, np.bool_),
        "player_pair": np.zeros(room, np.bool_),
        "banker_pair": np.zeros(room, np.bool_),
        "player_count": np.zeros(room, np.int8),
        "banker_count": np.zeros(room, np.int8),
    }
    h, used = kernels.deal_sequence(cards, kernels.HAND_TABLE, kernels.CARD_VALUE, *out.values())
    return int(h), int(used), {k: v[:h] for k, v in out.items()}


def test_deal_sequence_matches_oracle_exhaustively(exhaustive) -> None:
    seq = exhaustive["sequence"]
    n_deals = len(exhaustive["hands"])
    n, used, out = _run_deal_sequence(seq, n_deals + 1)
    assert (n, used) == (n_deals, seq.size)
    cards = out.pop("cards")
    _assert_columns(exhaustive, cards, out)


@pytest.mark.parametrize(
    "tail",
    [
        "6 7 K K",  # P 6 stands, B 7 stands: a complete four-card hand
        "7 6 K K",  # P 7 stands, B 6 stands
        "5 K 3 Q",  # P natural 8
    ],
)
def test_deal_sequence_deals_a_complete_four_card_hand_at_the_end(tail: str) -> None:
    # the last hand of a sequence uses no fifth card, so it is complete and must be dealt,
    # as rules.deal_hands does
    seq = np.array(parse_cards("K 3 5 K K 4 " + tail), dtype=np.uint8)
    assert [h.cards_used for h in deal_hands(list(seq))] == [6, 4]
    n, used, _ = _run_deal_sequence(seq, 4)
    assert (n, used) == (2, 10)


def test_deal_sequence_leaves_an_incomplete_hand() -> None:
    seq = np.array(
        parse_cards("5 K 3 Q  K 3 5 K K"), dtype=np.uint8
    )  # second hand needs a 6th card
    n, used, _ = _run_deal_sequence(seq, 4)
    assert (n, used) == (1, 4)
    assert len(deal_hands(list(seq))) == 1
    with pytest.raises(RulesError, match="ran out"):
        deal_hand(parse_cards("K 3 5 K K"))


# --- explicit tableau cases ---------------------------------------------------------


def test_banker_rule_keyed_on_the_value_of_the_players_third_card() -> None:
    # P K 2 = 2 draws; B 3 K = 3. Third card 8: Banker 3 stands.
    h = deal_hand(parse_cards("K 3 2 K 8 5"))
    assert len(h.banker_cards) == 2 and h.banker_total == 3
    # same, third card K (value 0): Banker 3 draws the 5 -> 8
    h = deal_hand(parse_cards("K 3 2 K K 5"))
    assert len(h.banker_cards) == 3 and h.banker_total == 8
    # P K 4 = 4 draws T (value 0); B 4 K = 4 stands on a third card worth 0
    h = deal_hand(parse_cards("K 4 4 K T 5"))
    assert len(h.player_cards) == 3 and len(h.banker_cards) == 2
    # P K 5 = 5 draws 3: Player total 8 but the third card is 3, so Banker 3 draws (4 -> 7)
    h = deal_hand(parse_cards("K 3 5 K 3 4"))
    assert h.player_total == 8 and h.banker_cards == tuple(parse_cards("3 K 4"))
    # P K A = 1 draws 6 -> 7; Banker 6 draws on a third card of 6
    h = deal_hand(parse_cards("K 6 A K 6 K"))
    assert len(h.banker_cards) == 3
    # Player stood on 6: Banker 5 draws, Banker 6 stands
    assert len(deal_hand(parse_cards("6 5 K K 2")).banker_cards) == 3
    assert len(deal_hand(parse_cards("6 6 K K 2")).banker_cards) == 2
    # the pure function, too
    assert banker_draws(3, 0) and not banker_draws(3, 8)
    assert not banker_draws(4, 0) and banker_draws(4, 2)
    assert banker_draws(5, None) and not banker_draws(6, None)


def test_totals_are_modulo_ten() -> None:
    # P 9 5 = 4 draws K -> 4; B K K = 0 draws K -> 0
    assert deal_hand(parse_cards("9 K 5 K K K")).player_total == 4
    # P 8 8 = 6 stands; B K K = 0 draws K -> 0
    h = deal_hand(parse_cards("8 K 8 K K"))
    assert (h.player_total, h.banker_total, h.winner) == (6, 0, Winner.PLAYER)


def test_pairs_by_rank_not_value() -> None:
    assert deal_hand(parse_cards("K K K K K K")).player_pair  # K-K
    assert not deal_hand(parse_cards("K K Q K K K")).player_pair  # K-Q, both worth 0
    h = deal_hand(parse_cards("KS 9D KH 9C"))  # across suits
    assert h.player_pair and h.banker_pair
    h = deal_hand(parse_cards("TS 9D JS 8D K"))  # T-J no, 9-8 no
    assert not h.player_pair and not h.banker_pair
    assert deal_hand(parse_cards("10 J 10 Q K K")).player_pair  # "10" and "T" alike


# --- settlement -------------------------------------------------------------------------


class Facts(NamedTuple):
    cards: str
    player_total: int
    banker_total: int
    winner: str
    player_count: int
    banker_count: int
    player_pair: bool
    banker_pair: bool


#: hands worked out by hand from the cards (P1 B1 P2 B2, then third cards)
HANDS = {
    # P 5+3 = 8 natural; B K+Q = 0 (not a pair). Player 8-0.
    "player_natural": Facts("5 K 3 Q", 8, 0, "player", 2, 2, False, False),
    # P K+K = 0 draws T -> 0; B 3+3 = 6, third card worth 0: stands. Banker two-card 6-0.
    "banker_two_card_6": Facts("K 3 K 3 T", 0, 6, "banker", 3, 2, True, True),
    # P K+5 = 5 draws K -> 5; B 2+K = 2 draws 4 -> 6. Banker three-card 6-5.
    "banker_three_card_6": Facts("K 2 5 K K 4", 5, 6, "banker", 3, 3, False, False),
    # P K+5 = 5 draws K -> 5; B 3+K = 3 draws on a 0: 4 -> 7. Banker three-card 7-5.
    "banker_three_card_7": Facts("K 3 5 K K 4", 5, 7, "banker", 3, 3, False, False),
    # P 6+K = 6 stands; B 7+K = 7 stands. Banker two-card 7-6.
    "banker_two_card_7": Facts("6 7 K K", 6, 7, "banker", 2, 2, False, False),
    # P 2+3 = 5 draws 3 -> 8; B K+3 = 3 draws on a 3: 4 -> 7. Player three-card 8-7.
    "player_three_card_8": Facts("2 K 3 3 3 4", 8, 7, "player", 3, 3, False, False),
    # P 2+3 = 5 draws 3 -> 8; B K+3 = 3 draws on a 3: 5 -> 8. Tie 8-8, three cards each.
    "tie_three_card_8": Facts("2 K 3 3 3 5", 8, 8, "tie", 3, 3, False, False),
    # P 6+K = 6 stands; B 6+K = 6 stands. Tie 6-6.
    "tie_6": Facts("6 6 K K", 6, 6, "tie", 2, 2, False, False),
    # P K+K = 0; B 9+9 = 8 natural. Banker 8-0; both pairs (ranks equal, suits differ).
    "banker_natural_pairs": Facts("KS 9D KH 9C", 0, 8, "banker", 2, 2, True, True),
    # P 4+A = 5 draws 2 -> 7; B K+K = 0 draws 3 -> 3. Player three-card 7-3.
    "player_three_card_7": Facts("4 K A K 2 3", 7, 3, "player", 3, 3, False, True),
}


@pytest.mark.parametrize("name", HANDS)
def test_catalogue_hands_deal_as_worked_out(name: str) -> None:
    f = HANDS[name]
    h = deal_hand(parse_cards(f.cards))
    assert (
        h.player_total,
        h.banker_total,
        str(h.winner),
        len(h.player_cards),
        len(h.banker_cards),
        h.player_pair,
        h.banker_pair,
    ) == f[1:]
    assert h.cards_used == len(f.cards.split())


#: what each preset pays, written out from the descriptions of the games
#: (banker: plain Banker win; six: Banker win on 6, None = like any win;
#: ez_push: Banker three-card 7 win pushes; None elsewhere = bet not offered)
PAYS = {
    "commission": dict(
        banker=Fraction(19, 20), six=None, ez_push=False, tie=8, pair=11, dragon7=None, panda8=None
    ),
    "no-commission": dict(
        banker=1, six=Fraction(1, 2), ez_push=False, tie=8, pair=11, dragon7=None, panda8=None
    ),
    "ez": dict(banker=1, six=None, ez_push=True, tie=8, pair=11, dragon7=40, panda8=25),
    "macedonian": dict(
        banker=1, six=Fraction(1, 2), ez_push=False, tie=8, pair=11, dragon7=None, panda8=None
    ),
    "vietnamese": dict(
        banker=1, six=Fraction(1, 2), ez_push=False, tie=8, pair=11, dragon7=None, panda8=None
    ),
    "bulgarian": dict(
        banker=Fraction(19, 20),
        six=None,
        ez_push=False,
        tie=8,
        pair=None,
        dragon7=None,
        panda8=None,
    ),
    "german": dict(
        banker=Fraction(19, 20),
        six=None,
        ez_push=False,
        tie=8,
        pair=None,
        dragon7=None,
        panda8=None,
    ),
}
NEEDS_MAIN_BET = {"no-commission", "macedonian", "vietnamese"}


def expected_per_unit(pays: dict, bet: Bet, f: Facts) -> Fraction:
    win, lose, push = (lambda x: Fraction(x)), Fraction(-1), Fraction(0)
    if bet == "player":
        return {"player": win(1), "banker": lose, "tie": push}[f.winner]
    if bet == "banker":
        if f.winner != "banker":
            return {"player": lose, "tie": push}[f.winner]
        if pays["six"] is not None and f.banker_total == 6:
            return win(pays["six"])
        if pays["ez_push"] and f.banker_count == 3 and f.banker_total == 7:
            return push
        return win(pays["banker"])
    if bet == "tie":
        return win(pays["tie"]) if f.winner == "tie" else lose
    if bet == "player_pair":
        return win(pays["pair"]) if f.player_pair else lose
    if bet == "banker_pair":
        return win(pays["pair"]) if f.banker_pair else lose
    if bet == "dragon7":
        hit = f.winner == "banker" and f.banker_count == 3 and f.banker_total == 7
        return win(pays["dragon7"]) if hit else lose
    if bet == "panda8":
        hit = f.winner == "player" and f.player_count == 3 and f.player_total == 8
        return win(pays["panda8"]) if hit else lose
    raise AssertionError(bet)


def test_pays_table_names_every_preset() -> None:
    assert set(PAYS) == set(PRESETS)


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("bet", list(Bet))
def test_settlement_every_preset_every_bet(preset: str, bet: Bet) -> None:
    rules = PRESETS[preset]
    pays = PAYS[preset]
    key = {"player_pair": "pair", "banker_pair": "pair"}.get(bet.value, bet.value)
    offered = 1 if bet is Bet.PLAYER else pays[key]
    if offered is None:
        with pytest.raises(RulesError, match="does not offer"):
            settle({bet: 1}, deal_hand(parse_cards("5 K 3 Q")), rules)
        return
    for name, f in HANDS.items():
        hand = deal_hand(parse_cards(f.cards))
        per_unit = expected_per_unit(pays, bet, f)
        for stake in (1, 10, 3, Fraction(1, 4)):
            bets = {bet: stake}
            if preset in NEEDS_MAIN_BET and bet in (Bet.PLAYER_PAIR, Bet.BANKER_PAIR):
                bets[Bet.TIE] = 1
            got = settle(bets, hand, rules)[bet]
            assert type(got) is Fraction, (name, stake)
            assert got == stake * per_unit, (preset, bet, name, stake)
        assert bet_result(bet, hand, rules) == per_unit


def test_commission_is_exact() -> None:
    rules = Rules.preset("commission")
    win = deal_hand(parse_cards("KS 9D KH 9C"))  # Banker natural 8
    assert settle({Bet.BANKER: 10}, win, rules) == {Bet.BANKER: Fraction(19, 2)}
    assert settle({Bet.BANKER: 1}, win, rules) == {Bet.BANKER: Fraction(19, 20)}
    assert settle({Bet.BANKER: 3}, win, rules) == {Bet.BANKER: Fraction(57, 20)}
    assert Rules(banker_payout=0.95).banker_payout == Fraction(19, 20)
    assert Rules(banker_payout="0.95") == Rules(banker_payout=Fraction(19, 20))


def test_no_commission_six_pays_half_two_and_three_cards() -> None:
    rules = Rules.preset("no-commission")
    for cards in ("K 3 K 3 T", "K 2 5 K K 4"):  # two-card 6, three-card 6 (see HANDS)
        assert settle({Bet.BANKER: 10}, deal_hand(parse_cards(cards)), rules) == {Bet.BANKER: 5}
    # Banker 7 pays 1; a 6-6 tie pushes
    assert settle({Bet.BANKER: 10}, deal_hand(parse_cards("6 7 K K")), rules)[Bet.BANKER] == 10
    assert settle({Bet.BANKER: 10}, deal_hand(parse_cards("6 6 K K")), rules)[Bet.BANKER] == 0


def test_ties_push_player_and_banker_tie_pays() -> None:
    tie = deal_hand(parse_cards("6 6 K K"))
    for rules in PRESETS.values():
        got = settle({Bet.PLAYER: 5, Bet.TIE: 2}, tie, rules)
        assert got == {Bet.PLAYER: 0, Bet.TIE: 16}
        if rules.player_and_banker_together:
            assert settle({Bet.BANKER: 5}, tie, rules) == {Bet.BANKER: 0}
    assert settle({Bet.TIE: 2}, tie, Rules(tie_payout=9)) == {Bet.TIE: 18}
    assert settle({Bet.TIE: 2}, deal_hand(parse_cards("6 7 K K")), Rules(tie_payout=9)) == {
        Bet.TIE: -2
    }


def test_pairs_pay_eleven() -> None:
    h = deal_hand(parse_cards("KS 9D KH 9C"))
    got = settle(
        {Bet.PLAYER_PAIR: 2, Bet.BANKER_PAIR: 1, Bet.PLAYER: 1}, h, Rules.preset("commission")
    )
    assert got == {Bet.PLAYER_PAIR: 22, Bet.BANKER_PAIR: 11, Bet.PLAYER: -1}
    kq = deal_hand(parse_cards("K 9 Q 9"))  # K-Q: no Player pair
    assert settle({Bet.PLAYER_PAIR: 1}, kq, Rules.preset("commission")) == {Bet.PLAYER_PAIR: -1}


def test_ez_three_card_seven_push_dragon_and_panda() -> None:
    ez = Rules.preset("ez")
    b7_3 = deal_hand(parse_cards("K 3 5 K K 4"))
    assert settle({Bet.BANKER: 10, Bet.DRAGON_7: 1, Bet.PANDA_8: 1}, b7_3, ez) == {
        Bet.BANKER: 0,
        Bet.DRAGON_7: 40,
        Bet.PANDA_8: -1,
    }
    b7_2 = deal_hand(parse_cards("6 7 K K"))
    assert settle({Bet.BANKER: 10, Bet.DRAGON_7: 1}, b7_2, ez) == {Bet.BANKER: 10, Bet.DRAGON_7: -1}
    p8_3 = deal_hand(parse_cards("2 K 3 3 3 4"))  # Player three-card 8 over a Banker three-card 7
    assert settle({Bet.PLAYER: 1, Bet.PANDA_8: 1, Bet.DRAGON_7: 1}, p8_3, ez) == {
        Bet.PLAYER: 1,
        Bet.PANDA_8: 25,
        Bet.DRAGON_7: -1,
    }
    p8_2 = deal_hand(parse_cards("5 K 3 Q"))  # Player natural 8: not three cards
    assert settle({Bet.PANDA_8: 1}, p8_2, ez) == {Bet.PANDA_8: -1}
    t8_3 = deal_hand(parse_cards("2 K 3 3 3 5"))  # three-card 8 that ties
    assert settle({Bet.PANDA_8: 1}, t8_3, ez) == {Bet.PANDA_8: -1}


# --- forbidden combinations ---------------------------------------------------------------


def test_forbidden_combinations() -> None:
    hand = deal_hand(parse_cards("5 K 3 Q"))
    german = Rules.preset("german")
    with pytest.raises(RulesError, match="Player and Banker"):
        settle({Bet.PLAYER: 1, Bet.BANKER: 1}, hand, german)
    check_bets({Bet.PLAYER: 1, Bet.TIE: 1}, german)
    check_bets({Bet.BANKER: 1, Bet.TIE: 1}, german)
    check_bets({Bet.PLAYER: 1, Bet.BANKER: 1}, Rules.preset("commission"))
    for name in ("no-commission", "macedonian"):
        with pytest.raises(RulesError, match="pair bet needs a Player, Banker or Tie"):
            settle({Bet.PLAYER_PAIR: 1}, hand, Rules.preset(name))
        check_bets({Bet.BANKER_PAIR: 1, Bet.TIE: 1}, Rules.preset(name))
    check_bets({Bet.PLAYER_PAIR: 1}, Rules.preset("commission"))
    with pytest.raises(RulesError, match=r"does not offer the player_pair bet"):
        settle({Bet.PLAYER_PAIR: 1, Bet.PLAYER: 1}, hand, german)
    with pytest.raises(RulesError, match=r"does not offer the dragon7 bet"):
        settle({Bet.DRAGON_7: 1}, hand, Rules.preset("commission"))
    with pytest.raises(RulesError, match="negative"):
        settle({Bet.PLAYER: -1}, hand, Rules.preset("commission"))
    # a bet with stake 0 is not placed, so it is not refused
    assert settle({Bet.PLAYER: 1, Bet.BANKER: 0}, hand, german) == {Bet.PLAYER: 1}


# --- Rules values, presets, files ----------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "bad", "reason"),
    [
        ("tie_payout", -1, "more than 0, got -1"),
        ("banker_payout", 0, "more than 0, got 0"),
        ("pair_payout", "eleven", "number"),
        ("tie_payout", [8], "number"),
        ("tie_payout", True, "number"),
        ("dragon7_payout", False, "number"),
        ("boxes", 0, "from 1 to 14"),
        ("boxes", 15, "from 1 to 14"),
        ("boxes", 10**309, "from 1 to 14 .*, got a number of 310 digits"),
        ("boxes", True, "whole number"),
        ("boxes", 2.5, "whole number"),
        ("player_and_banker_together", "yes", "true or false"),
        ("pairs_need_main_bet", 1, "true or false"),
        # money is counted in ticks of 1/(100 D), D the payouts' common denominator
        ("tie_payout", "1e999", "at most 1000"),
        ("dragon7_payout", 1001, "at most 1000"),
        ("tie_payout", 1.0e-30, "thousandths"),
        ("banker_payout", "19/20001", "thousandths"),
    ],
)
def test_rules_validation_names_the_field(field: str, bad: object, reason: str) -> None:
    with pytest.raises(RulesError, match=rf"{field} must .*{reason}|{field}.*{reason}"):
        Rules(**{field: bad})
    with pytest.raises(RulesError, match=rf"^my.yaml: {field}"):
        Rules.from_mapping({field: bad}, source="my.yaml")


def test_unknown_key_and_preset_suggest_close_matches() -> None:
    with pytest.raises(RulesError, match=r"tie_paiout.*did you mean 'tie_payout'"):
        Rules.from_mapping({"tie_paiout": 9})
    with pytest.raises(RulesError, match=r"'comission'.*did you mean 'commission'"):
        Rules.preset("comission")
    with pytest.raises(RulesError, match=r"did you mean 'commission'"):
        load_rules("comission")


def test_load_rules_yaml_with_base(tmp_path: Path) -> None:
    path = tmp_path / "table.yaml"
    path.write_text("base: ez\ntie_payout: 9\n", encoding="utf-8")
    rules = load_rules(path)
    assert rules.tie_payout == Fraction(9)
    assert rules == dataclasses.replace(PRESETS["ez"], tie_payout=Fraction(9), name="ez, modified")
    # a preset changed is no longer named as the preset (unless the file names it)
    named = tmp_path / "named.yaml"
    named.write_text("base: ez\ntie_payout: 9\nname: my ez\n", encoding="utf-8")
    assert load_rules(named).name == "my ez"
    same = tmp_path / "same.yaml"
    same.write_text("base: ez\ndescription: the house table\n", encoding="utf-8")
    assert load_rules(same).name == "ez"
    assert load_rules(str(path)) == rules
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: ez\ntie_payot: 9\n", encoding="utf-8")
    with pytest.raises(RulesError, match=r"bad.yaml.*did you mean 'tie_payout'"):
        load_rules(bad)
    with pytest.raises(RulesError, match="does not exist"):
        load_rules(tmp_path / "missing.yaml")
    with pytest.raises(RulesError, match="is a directory, not a file"):
        load_rules(tmp_path)
    own = tmp_path / "own.yaml"  # `base:` names a preset, not a file
    own.write_text("base: own.yaml\n", encoding="utf-8")
    with pytest.raises(RulesError, match=r"own.yaml: base: unknown rules preset 'own.yaml'"):
        load_rules(own)
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n", encoding="utf-8")
    with pytest.raises(RulesError, match=r"empty.yaml: the rules file is empty"):
        load_rules(empty)
    twice = tmp_path / "twice.yaml"
    twice.write_text("base: ez\ntie_payout: 9\ntie_payout: 8\n", encoding="utf-8")
    with pytest.raises(
        RulesError,
        match=r"twice.yaml: line 3, column 1: the key 'tie_payout' "
        r"is given twice \(first on line 2\); remove one$",
    ):
        load_rules(twice)
    merged = tmp_path / "merged.yaml"  # a merge key is not a key given twice
    merged.write_text("rules: {<<: {tie_payout: 9}, base: ez}\n", encoding="utf-8")
    assert load_rules(merged).tie_payout == Fraction(9)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("base: ez\n# tableau à Paris\n".encode("latin-1"))
    with pytest.raises(RulesError, match=r"latin.yaml: not UTF-8 text \(byte 19\)"):
        load_rules(latin)


def test_the_presets_are_the_rules_files(
    repo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file of configs/rules/ is the preset of its name, read from it
    (described by its opening comment), the three games named first; a
    file added there is a preset."""
    files = sorted((repo_root / "configs" / "rules").glob("*.yaml"))
    assert list(PRESETS)[:3] == ["commission", "no-commission", "ez"]
    assert set(PRESETS) == {p.stem for p in files}
    for path in files:
        assert PRESETS[path.stem].name == path.stem
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert PRESETS[path.stem].description == first.removeprefix("# ")
    folder = tmp_path / "configs"
    (folder / "rules").mkdir(parents=True)
    (folder / "rules" / "commission.yaml").write_text("name: commission\n", encoding="utf-8")
    (folder / "rules" / "lisbon.yaml").write_text(
        "# Tie 9 to 1.\nname: lisbon\ntie_payout: 9\n", encoding="utf-8"
    )
    from backtest.core import files, rules

    monkeypatch.setattr(files, "configs_folder", lambda: folder)
    fresh = rules._Presets()
    assert list(fresh) == ["commission", "lisbon"]
    assert fresh["lisbon"].tie_payout == 9 and fresh["lisbon"].description == "Tie 9 to 1."
    monkeypatch.setattr(rules, "PRESETS", fresh)
    assert Rules.preset("lisbon") is fresh["lisbon"]
    with pytest.raises(RulesError, match="unknown rules preset 'lisbn'; did you mean 'lisbon'"):
        Rules.preset("lisbn")


def test_preset_round_trips_through_a_mapping() -> None:
    for rules in PRESETS.values():
        assert Rules.from_mapping(rules.to_mapping()) == rules


# --- reasons, doctests ------------------------------------------------------------------------


def test_rule_reasons_wording() -> None:
    assert rule_reasons(deal_hand(parse_cards("5 K 3 Q"))) == ["Player natural 8: both hands stand"]
    assert rule_reasons(deal_hand(parse_cards("KS 9D KH 9C"))) == [
        "Banker natural 8: both hands stand"
    ]
    # P 6+K = 6 stands; B 5+K = 5 draws
    assert rule_reasons(deal_hand(parse_cards("6 5 K K 2"))) == [
        "Player 6 stands",
        "Banker 5 draws: Player stood, Banker draws on 0 to 5",
    ]
    # P K+4 = 4 draws 6; B 5+K = 5 draws on a 6
    assert rule_reasons(deal_hand(parse_cards("K 5 4 K 6 2"))) == [
        "Player 4 draws",
        "Banker 5 draws: Player's third card is 6 (value 6)",
    ]
    # P K+4 = 4 draws T; B 4+K = 4 stands on a 0
    assert rule_reasons(deal_hand(parse_cards("K 4 4 K T"))) == [
        "Player 4 draws",
        "Banker 4 stands: Player's third card is T (value 0)",
    ]


@pytest.mark.parametrize("module", [backtest.core.cards, backtest.core.rules, backtest.shoes.shoe])
def test_doctests(module) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0

"""Exact odds: published figures, an independent oracle, simulation, the CLI.

The oracle below shares no code with `backtest.odds`: it walks the deal one
card at a time (memoised on the cards left), with the drawing tableau copied
from RULES.md, and prices bets through `settlement.bet_result`.
"""

from __future__ import annotations

import csv
import dataclasses
import doctest
import io
import json
import math
import subprocess
import sys
from fractions import Fraction
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from typer.testing import CliRunner

from backtest import odds
from backtest.cli import app, main
from backtest.core.cards import (
    card_token,
    deck_cards,
    full_shoe_counts,
    make_card,
    parse_cards,
    rank_counts,
)
from backtest.core.errors import MissingDataError, RulesError, ShoeFormatError
from backtest.core.hands import HandRecord, Hands
from backtest.core.rules import PRESETS, Bet, Rules, deal_hand, outcome
from backtest.core.settlement import bet_result
from backtest.jit.lanes import LANES, lane_sums
from backtest.odds import Event
from backtest.odds import fast as odds_fast
from backtest.shoes.shoe import ShoeSpec, generate_hands

COMMISSION = Rules.preset("commission")
NO_COMMISSION = Rules.preset("no-commission")
EZ = Rules.preset("ez")
#: a table offering everything, with a 6-pays-half Banker and Tie at 9 to 1 (and
#: any other payout `Rules` declares at 5 to 1, so that a new one is priced here too)
EVERYTHING = Rules(
    name="everything",
    banker_six_payout=Fraction(1, 2),
    tie_payout=Fraction(9),
    dragon7_payout=Fraction(40),
    panda8_payout=Fraction(25),
)
EVERYTHING = dataclasses.replace(
    EVERYTHING,
    **{
        f.name: Fraction(5)
        for f in dataclasses.fields(Rules)
        if getattr(f.metadata.get("check"), "kind", None) == "payout"
        and getattr(EVERYTHING, f.name) is None
    },
)
ALL_RULES = (COMMISSION, NO_COMMISSION, EZ, EVERYTHING)

# --- the oracle ----------------------------------------------------------------------

#: RULES.md: Banker two-card total -> values of the Player's third card on which it draws
ORACLE_BANKER_DRAWS = {
    0: set(range(10)),
    1: set(range(10)),
    2: set(range(10)),
    3: {0, 1, 2, 3, 4, 5, 6, 7, 9},
    4: {2, 3, 4, 5, 6, 7},
    5: {4, 5, 6, 7},
    6: {6, 7},
    7: set(),
    8: set(),
    9: set(),
}


def ordered_ways(n: int, k: int) -> int:
    """Ordered draws of k cards out of n."""
    result = 1
    for i in range(n - k + 1, n + 1):
        result *= i
    return result


def oracle_next_card(k: int, pt: int, bt: int, third: int | None) -> str | None:
    """Who takes card k + 1 ('P', 'B'), or None when the hand is over."""
    if k < 4:
        return "PBPB"[k]
    if k == 4:
        if pt >= 8 or bt >= 8:
            return None
        if pt <= 5:
            return "P"
        return "B" if bt <= 5 else None
    if k == 5 and third is not None:
        return "B" if third in ORACLE_BANKER_DRAWS[bt] else None
    return None


def oracle_outcomes(rank_count: np.ndarray) -> dict[tuple[int, int, int, int], int]:
    """Ordered six-card draws by (player total, banker total, player cards, banker cards)."""
    return _oracle_outcomes(tuple(int(c) for c in rank_count))


@lru_cache(maxsize=8)
def _oracle_outcomes(rank_count: tuple[int, ...]) -> dict[tuple[int, int, int, int], int]:
    values = [sum(rank_count[10:14]), *rank_count[1:10]]

    @cache
    def walk(
        k: int, pt: int, bt: int, pn: int, bn: int, third: int | None, left: tuple[int, ...], n: int
    ) -> dict[tuple[int, int, int, int], int]:
        side = oracle_next_card(k, pt, bt, third)
        if side is None:
            return {(pt, bt, pn, bn): ordered_ways(n, 6 - k)}
        acc: dict[tuple[int, int, int, int], int] = {}
        for v, c in enumerate(left):
            if not c:
                continue
            rest = left[:v] + (c - 1,) + left[v + 1 :]
            if side == "P":
                sub = walk(k + 1, (pt + v) % 10, bt, pn + 1, bn, v if k == 4 else None, rest, n - 1)
            else:
                sub = walk(k + 1, pt, (bt + v) % 10, pn, bn + 1, third, rest, n - 1)
            for key, ways in sub.items():
                acc[key] = acc.get(key, 0) + c * ways
        return acc

    return walk(0, 0, 0, 0, 0, None, tuple(values), sum(values))


def oracle_pairs(rank_count: np.ndarray) -> tuple[int, int, int]:
    """(player pair, banker pair, both) draws over ranks of the first four cards, times
    the ways to draw the last two."""
    c = [int(x) for x in rank_count]
    n = sum(c)
    player = banker = both = 0
    for p1 in range(1, 14):
        w1 = c[p1]
        c[p1] -= 1
        for b1 in range(1, 14):
            w2 = w1 * c[b1]
            c[b1] -= 1
            for p2 in range(1, 14):
                w3 = w2 * c[p2]
                c[p2] -= 1
                for b2 in range(1, 14):
                    w = w3 * c[b2]
                    if w:
                        player += w * (p1 == p2)
                        banker += w * (b1 == b2)
                        both += w * (p1 == p2 and b1 == b2)
                c[p2] += 1
            c[b1] += 1
        c[p1] += 1
    tail = ordered_ways(n - 4, 2)
    return player * tail, banker * tail, both * tail


def oracle_events(rank_count: np.ndarray) -> dict[Event, int]:
    out = {e: 0 for e in Event}
    for (pt, bt, pn, bn), ways in oracle_outcomes(rank_count).items():
        w = outcome(pt, bt).value
        out[Event(w)] += ways
        if w == "banker" and bt == 6:
            out[Event.BANKER_SIX] += ways
            out[Event.BANKER_SIX_TWO_CARD if bn == 2 else Event.BANKER_SIX_THREE_CARD] += ways
        if w == "banker" and bt == 7 and bn == 3:
            out[Event.BANKER_THREE_CARD_SEVEN] += ways
        if w == "player" and pt == 8 and pn == 3:
            out[Event.PLAYER_THREE_CARD_EIGHT] += ways
        natural = pn == bn == 2 and max(pt, bt) >= 8
        out[Event.NATURAL] += ways * natural
        for side, total in (("player", pt), ("banker", bt)):
            if natural and total >= 8:
                out[Event(f"{side}_natural_{total}")] += ways
    player, banker, both = oracle_pairs(rank_count)
    out[Event.PLAYER_PAIR], out[Event.BANKER_PAIR] = player, banker
    out[Event.BOTH_PAIRS], out[Event.EITHER_PAIR] = both, player + banker - both
    return out


def record(pt: int = 0, bt: int = 0, pn: int = 2, bn: int = 2, pair: bool = False) -> HandRecord:
    return HandRecord(
        shoe=0,
        hand=1,
        winner=outcome(pt, bt),
        player_total=pt,
        banker_total=bt,
        natural=None,
        player_pair=pair,
        banker_pair=pair,
        player_card_count=pn,
        banker_card_count=bn,
    )


def oracle_evs(rank_count: np.ndarray, rules: Rules) -> dict[Bet, Fraction]:
    """Each offered bet's EV by settling every outcome with `settlement.bet_result`."""
    outcomes = oracle_outcomes(rank_count)
    total = sum(outcomes.values())
    pairs = dict(zip((Bet.PLAYER_PAIR, Bet.BANKER_PAIR), oracle_pairs(rank_count)[:2]))
    evs = {}
    for bet in rules.offered_bets():
        if bet in pairs:
            win, lose = bet_result(bet, record(pair=True), rules), bet_result(bet, record(), rules)
            evs[bet] = (win * pairs[bet] + lose * (total - pairs[bet])) / total
        else:
            evs[bet] = (
                sum(bet_result(bet, record(*key), rules) * ways for key, ways in outcomes.items())
                / total
            )
    return evs


def test_oracle_tableau_agrees_with_the_rules_core() -> None:
    """The oracle's copy of the tableau deals every (p2, b2, v5, v6) like deal_hand."""
    rank = {v: v if v else 13 for v in range(10)}
    for p2 in range(10):
        for b2 in range(10):
            for v5 in range(10):
                for v6 in range(10):
                    cards = [rank[p2], rank[b2], 13, 13, rank[v5], rank[v6]]
                    hand = deal_hand(cards)
                    k, pt, bt, pn, bn, third = 4, p2, b2, 2, 2, None
                    while (side := oracle_next_card(k, pt, bt, third)) is not None:
                        v = (v5, v6)[k - 4]
                        if side == "P":
                            pt, pn, third = (pt + v) % 10, pn + 1, v
                        else:
                            bt, bn = (bt + v) % 10, bn + 1
                        k += 1
                    assert (pt, bt, pn, bn) == (
                        hand.player_total,
                        hand.banker_total,
                        hand.player_card_count,
                        hand.banker_card_count,
                    )


# --- published figures (8 decks) --------------------------------------------------------


def test_eight_decks_match_the_published_integers() -> None:
    table = odds.outcome_table(odds.composition(8))
    assert table.combinations == 416 * 415 * 414 * 413 * 412 * 411 == 4_998_398_275_503_360
    assert table.counts[Event.PLAYER] == 2_230_518_282_592_256
    assert table.counts[Event.BANKER] == 2_292_252_566_437_888
    assert table.counts[Event.TIE] == 475_627_426_473_216
    assert table.counts[Event.BANKER_SIX] == 269_232_304_455_680


@pytest.mark.parametrize(
    ("rules", "bet", "percent"),
    [
        (COMMISSION, Bet.BANKER, 1.0579),
        (COMMISSION, Bet.PLAYER, 1.2351),
        (COMMISSION, Bet.TIE, 14.3596),
        (dataclasses.replace(COMMISSION, tie_payout=Fraction(9)), Bet.TIE, 4.8440),
        (NO_COMMISSION, Bet.BANKER, 1.4581),
        (NO_COMMISSION, Bet.PLAYER_PAIR, 10.3614),
        (NO_COMMISSION, Bet.BANKER_PAIR, 10.3614),
        (EZ, Bet.BANKER, 1.0183),
        (EZ, Bet.DRAGON_7, 7.6113),
        (EZ, Bet.PANDA_8, 10.1876),
    ],
)
def test_eight_deck_house_edges_match_the_published_figures(
    rules: Rules, bet: Bet, percent: float
) -> None:
    result = odds.exact_odds(odds.composition(8), rules, decks=8)
    assert round(result.house_edge(bet) * 100, 4) == percent
    assert round(-odds.bet_evs(odds.composition(8), rules)[bet] * 100, 4) == percent


def test_rules_reference_probabilities() -> None:
    table = odds.outcome_table(odds.composition(8))
    shown = [round(float(table.probability(e)), 6) for e in (Event.BANKER, Event.PLAYER, Event.TIE)]
    assert shown == [0.458597, 0.446247, 0.095156]


# --- the oracle: 1 and 6 decks, and compositions with cards removed ------------------------


@pytest.mark.parametrize("decks", [1, 6])
def test_full_shoes_match_the_oracle(decks: int) -> None:
    counts = odds.composition(decks)
    table = odds.outcome_table(counts)
    assert dict(table.counts) == oracle_events(counts)
    for rules in ALL_RULES:
        result = odds.bet_odds(table, rules)
        assert {b.bet: b.ev for b in result.bets} == oracle_evs(counts, rules)


@settings(max_examples=20, deadline=None)
@given(
    order=st.permutations(deck_cards(1).tolist()),
    removed=st.integers(0, 46),
    rules=st.sampled_from(ALL_RULES),
)
def test_removing_cards_matches_the_oracle(order: list[int], removed: int, rules: Rules) -> None:
    counts = odds.composition(1, remove=order[:removed])
    assert counts.sum() == 52 - removed
    table = odds.outcome_table(counts)
    assert dict(table.counts) == oracle_events(counts)
    exact = oracle_evs(counts, rules)
    assert {b.bet: b.ev for b in odds.bet_odds(table, rules).bets} == exact
    fast = odds.bet_evs(counts, rules)
    assert fast.keys() == exact.keys()
    for bet, ev in exact.items():
        assert fast[bet] == pytest.approx(float(ev), rel=1e-12, abs=1e-14)


@settings(max_examples=25, deadline=None)
@given(counts=st.lists(st.integers(0, 40), min_size=13, max_size=13).filter(lambda c: sum(c) >= 6))
def test_events_are_consistent(counts: list[int]) -> None:
    table = odds.outcome_table([0, *counts])
    e = table.counts
    n = sum(counts)
    assert table.combinations == n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    assert e[Event.PLAYER] + e[Event.BANKER] + e[Event.TIE] == table.combinations
    assert (
        e[Event.NATURAL]
        <= e[Event.PLAYER_NATURAL_8]
        + e[Event.PLAYER_NATURAL_9]
        + e[Event.BANKER_NATURAL_8]
        + e[Event.BANKER_NATURAL_9]
    )
    assert (
        e[Event.BANKER_SIX_TWO_CARD]
        + e[Event.BANKER_SIX_THREE_CARD]
        + e[Event.BANKER_THREE_CARD_SEVEN]
        <= e[Event.BANKER]
    )
    assert e[Event.PLAYER_PAIR] == e[Event.BANKER_PAIR]
    assert e[Event.EITHER_PAIR] + e[Event.BOTH_PAIRS] == 2 * e[Event.PLAYER_PAIR]
    for rules in (COMMISSION, EZ):
        for b in odds.bet_odds(table, rules).bets:
            assert b.p_win + b.p_push + b.p_loss == 1
            assert b.std_dev >= 0


def test_a_shoe_too_big_for_int64_is_still_exact() -> None:
    counts = odds.composition(64)
    table = odds.outcome_table(counts)
    assert table.combinations == ordered_ways(3328, 6) > 2**63
    assert (
        table.counts[Event.PLAYER] + table.counts[Event.BANKER] + table.counts[Event.TIE]
        == table.combinations
    )
    fast = odds.bet_evs(counts, EZ)
    for b in odds.bet_odds(table, EZ).bets:
        assert fast[b.bet] == pytest.approx(float(b.ev), rel=1e-11)


def test_pair_odds_need_distinct_ten_ranks() -> None:
    """K-K is a pair, K-Q is not: a shoe of ten-valued cards only pairs within a rank."""
    counts = np.zeros(14, dtype=np.int64)
    counts[10:14] = 2  # two each of T J Q K: 8 cards, every hand a 0-0 tie
    table = odds.outcome_table(counts)
    assert table.counts[Event.TIE] == table.combinations
    assert table.probability(Event.PLAYER_PAIR) == Fraction(4 * 2 * 1, 8 * 7)
    result = odds.bet_odds(table, COMMISSION)
    assert result.bet(Bet.PLAYER).p_push == 1
    assert result.to_json_dict()["bets"]["player"]["edge_per_resolved"] is None


# --- simulation -------------------------------------------------------------------------------


def test_random_orderings_agree_with_the_exact_odds() -> None:
    removed = parse_cards("A A 2 3 9 9 9 K Q 5")
    pack = list(deck_cards(1))
    for card in removed:
        pack.remove(next(c for c in pack if c & 0xF == card & 0xF))
    pack_arr = np.array(pack)
    table = odds.outcome_table(rank_counts(pack_arr))
    rng = np.random.default_rng(20240601)
    n = 20_000
    firsts = pack_arr[np.argsort(rng.random((n, pack_arr.size)), axis=1)[:, :6]]
    hands = [deal_hand(row.tolist()) for row in firsts]
    seen = {
        Event.PLAYER: sum(h.winner.value == "player" for h in hands),
        Event.BANKER: sum(h.winner.value == "banker" for h in hands),
        Event.TIE: sum(h.winner.value == "tie" for h in hands),
        Event.PLAYER_PAIR: sum(h.player_pair for h in hands),
        Event.BANKER_THREE_CARD_SEVEN: sum(
            h.winner.value == "banker" and h.banker_total == 7 and h.banker_card_count == 3
            for h in hands
        ),
    }
    for event, hits in seen.items():
        p = float(table.probability(event))
        se = (p * (1 - p) / n) ** 0.5
        assert abs(hits / n - p) < 4 * se, event


# --- the fast path ------------------------------------------------------------------------------

BANKER_CODE = Bet.BANKER.code


@njit
def _banker_ev_compiled(
    counts: np.ndarray, payouts: np.ndarray, nodes: np.ndarray, coef: np.ndarray, work: np.ndarray
) -> float:
    out = np.empty(odds.N_BETS)
    odds.ev_fill(counts, payouts, out, nodes, coef, work)
    return out[BANKER_CODE]


def test_ev_fill_is_callable_from_compiled_code() -> None:
    counts = odds.composition(8, remove="5 5 5 5 6 6")
    payouts = odds.payout_vector(NO_COMMISSION)
    exact = odds.exact_odds(counts, NO_COMMISSION).bet(Bet.BANKER).ev
    got = _banker_ev_compiled(counts, payouts, *odds.ev_work())
    assert got == pytest.approx(float(exact), rel=1e-13)


@pytest.mark.parametrize("rules", [COMMISSION, NO_COMMISSION], ids=["commission", "no-commission"])
def test_ev_fill_without_the_deals_gives_the_pair_bets_alone(rules: Rules) -> None:
    payouts = odds.payout_vector(rules)
    for remove in ("", "5 5 5 5 6 6", "K K K Q Q J A A 2"):
        counts = odds.composition(6, remove=remove)
        whole, pairs = np.zeros(odds.N_BETS), np.zeros(odds.N_BETS)
        odds.ev_fill(counts, payouts, whole, *odds.ev_work())
        odds.ev_fill(counts, payouts, pairs, *odds.ev_work(), False)
        # from the two numbers a counting loop keeps, in its own arithmetic:
        # the cards left, and the ordered pairs of one rank among them
        # (it writes the pair bets' places and leaves the others alone)
        kept = np.full(odds.N_BETS, 7.0)
        same = sum(int(c) * (int(c) - 1) for c in counts[1:])
        odds.pair_evs(float(same), float(sum(int(c) for c in counts[1:])), payouts, kept)
        for bet in Bet:
            if bet in (Bet.PLAYER_PAIR, Bet.BANKER_PAIR):
                assert kept[bet.code] == pairs[bet.code] == whole[bet.code]
                exact = odds.exact_odds(counts, rules).bet(bet).ev
                assert pairs[bet.code] == pytest.approx(float(exact), rel=1e-12)
            else:
                assert np.isnan(pairs[bet.code]), bet
                assert kept[bet.code] == 7.0, bet
    # fewer than six cards left: no EV at all, as ev_fill gives
    five = np.zeros(14, np.int64)
    five[1], five[13] = 2, 3
    kept, whole = np.zeros(odds.N_BETS), np.zeros(odds.N_BETS)
    odds.pair_evs(8.0, 5.0, payouts, kept)
    odds.ev_fill(five, payouts, whole, *odds.ev_work(), False)
    assert np.isnan(whole).all()
    pair_places = [Bet.PLAYER_PAIR.code, Bet.BANKER_PAIR.code]
    assert np.isnan(kept[pair_places]).all() and not np.delete(kept, pair_places).any()


FAST_EVENTS = (
    Event.PLAYER,
    Event.BANKER,
    Event.TIE,
    Event.BANKER_SIX,
    Event.BANKER_THREE_CARD_SEVEN,
    Event.PLAYER_THREE_CARD_EIGHT,
)


def fast_events(counts: np.ndarray) -> list[float]:
    out = np.zeros(len(FAST_EVENTS))
    odds.ev_events(counts, *odds.ev_work(), out, odds.ALL_EVENTS)
    return out.tolist()


@settings(max_examples=15, deadline=None)
@given(decks=st.integers(1, 8), seed=st.integers(0, 2**32 - 1), removed=st.integers(0, 300))
def test_the_polynomial_counts_are_exact_up_to_eight_decks(
    decks: int, seed: int, removed: int
) -> None:
    """Every event count of the fast path is the exact integer, from the
    multiset polynomial, against the nested enumeration over dealing order."""
    cards = deck_cards(decks)
    gone = np.random.default_rng(seed).permutation(cards)[: min(removed, cards.size - 6)]
    counts = odds.composition(decks, remove=gone.tolist())
    exact = odds.outcome_table(counts).counts
    assert fast_events(counts) == [exact[e] for e in FAST_EVENTS]
    # Player and Banker alone (a commission table) take the fused path
    pair = np.zeros(6)
    odds.ev_events(counts, *odds.ev_work(), pair, 0b000011)
    assert pair[:2].tolist() == [exact[Event.PLAYER], exact[Event.BANKER]]


def test_the_polynomial_sums_in_any_order_are_the_ordered_sums() -> None:
    """Up to EXACT_CARDS cards the vectorised sums are exact, so they equal
    the source-order sums bit for bit; above it the source order is used."""
    nodes, coef, work = odds.ev_work()
    counts = odds.composition(8, remove="A 2 3 4 5 6 7 8 9 T J Q K")
    odds.ev_events(counts, nodes, coef, work, np.zeros(6), odds.ALL_EVENTS)
    f = work[: odds_fast._N_SETS]
    a, b = np.zeros((6, 3)), np.zeros((6, 3))
    odds_fast._sums_exact(coef, f, a, odds.ALL_EVENTS)
    odds_fast._sums_ordered(coef, f, b, odds.ALL_EVENTS)
    assert a.tolist() == b.tolist()
    assert odds.composition(8).sum() == odds.EXACT_CARDS
    big = odds.composition(9)
    exact = odds.outcome_table(big).counts
    assert fast_events(big) == pytest.approx([exact[e] for e in FAST_EVENTS], rel=1e-14)


def test_the_fast_path_counts_only_the_events_asked_for() -> None:
    counts = odds.composition(8, remove="9 9 8 8 7 7 6")
    full = fast_events(counts)
    some = np.full(6, np.nan)
    odds.ev_events(counts, *odds.ev_work(), some, 0b000011)
    assert some.tolist() == [*full[:2], 0, 0, 0, 0]
    # the commission table's EVs need only those two: the tie is every other deal
    exact = odds.exact_odds(counts, COMMISSION)
    evs = odds.bet_evs(counts, COMMISSION)
    assert evs[Bet.TIE] == pytest.approx(float(exact.bet(Bet.TIE).ev), rel=1e-14)


def test_the_polynomial_counts_every_deal_once() -> None:
    """339,400 finished deals (first four cards, then each third card drawn)
    share out over the 7,722 multisets of 4 to 6 values."""
    nodes, coef, _ = odds.ev_work()
    assert coef.shape == (6, 7722)
    assert coef[:3].sum() == 339_400
    # a multiset of s values can be dealt in at most s! orders
    sizes = np.repeat([4, 5, 6], [715, 2002, 5005])
    assert (coef[:3].sum(axis=0) <= [math.factorial(s) for s in sizes]).all()
    assert nodes.shape == (2, 8008) and not nodes.flags.writeable


@pytest.mark.parametrize("decks", [1, 8, 9])
def test_ev_fill_ahead_gives_ev_fills_doubles_for_the_hands_ahead(decks: int) -> None:
    """Every hand of shoes dealt down to their last five cards, priced LANES
    at a time from its own composition, under every preset's payouts: the
    same doubles (NaN where ev_fill has NaN) as ev_fill's, hand by hand.
    Nine decks start past the exact sums: priced by ev_fill, one hand a
    call, until the cards left are few enough. Without the deals, the pair
    bets' EVs alone, as ev_fill's without them."""
    nodes, coef, work = odds.ev_work(ahead=True)
    hands = generate_hands(ShoeSpec(decks=decks, cut_card=0, burn=False), 2, seed=decks)
    full = odds.composition(decks)
    starts = [int(k) for k in np.flatnonzero(hands.hand == 1)] + [len(hands.hand)]
    one, sizes = np.zeros(odds.N_BETS), set()
    for rules in PRESETS.values():
        payouts = odds.payout_vector(rules)
        rows = np.full((len(hands.hand), odds.N_BETS), 7.0)
        pairs = rows.copy()
        k, counts = 0, full.copy()
        while k < len(hands.hand):
            if hands.hand[k] == 1:
                counts = full.copy()
            m = odds.ev_fill_ahead(
                counts, hands.cards, hands.hand, k, payouts, rows[k:], nodes, coef, work
            )
            assert (
                odds.ev_fill_ahead(
                    counts, hands.cards, hands.hand, k, payouts, pairs[k:], nodes, coef, work, False
                )
                == m
            )
            shoe_end = min(s for s in starts if s > k)
            exact = counts[1:].sum() <= odds.EXACT_CARDS
            assert m == (min(LANES, shoe_end - k) if exact else 1), (k, m)
            sizes.add((bool(exact), m == LANES))
            for h in range(k, k + m):
                odds.ev_fill(counts, payouts, one, nodes, coef, work)
                assert np.array_equal(rows[h], one, equal_nan=True), (rules.name, h)
                odds.ev_fill(counts, payouts, one, nodes, coef, work, False)
                assert np.array_equal(pairs[h], one, equal_nan=True), (rules.name, h)
                for card in hands.cards[h]:
                    if card:
                        counts[card & 15] -= 1
            k += m
        assert (rows != 7.0).all() and (pairs != 7.0).all()
    # a shoe's last, shorter batch (a deck's ten hands or so are one); full
    # batches before it in a larger shoe; and past 8 decks, single hands
    assert sizes == {(True, False)} | ({(True, True)} if decks > 1 else set()) | (
        {(False, False)} if decks > 8 else set()
    )


def test_ev_fill_ahead_leaves_no_ev_where_fewer_than_six_cards_are_left() -> None:
    """Three hands of four cards from twelve: the third is dealt from four."""
    counts = np.zeros(14, np.int64)
    counts[[1, 5, 9, 13]] = 3
    cards = np.array([[1, 5, 0, 9, 13, 0], [1, 5, 0, 9, 13, 0], [1, 5, 0, 9, 13, 0]], np.uint8)
    rows = np.full((3, odds.N_BETS), 7.0)
    payouts = odds.payout_vector(COMMISSION)
    work = odds.ev_work(ahead=True)
    assert odds.ev_fill_ahead(counts, cards, np.array([7, 8, 9]), 0, payouts, rows, *work) == 3
    one = np.zeros(odds.N_BETS)
    for h in range(3):
        odds.ev_fill(counts, payouts, one, *work)
        assert np.array_equal(rows[h], one, equal_nan=True), h
        counts[[1, 5, 9, 13]] -= 1
    assert not np.isnan(rows[1, Bet.BANKER.code]) and np.isnan(rows[2]).all()
    # ev_fill's own work array is too small for the lanes: refused, not overrun
    with pytest.raises(ValueError, match="ahead=True"):
        odds.ev_fill_ahead(counts, cards, np.array([7, 8, 9]), 0, payouts, rows, *odds.ev_work())


@njit
def _lane_sums(f, g, parent, factor, ca, cb, offset, lo, hi, store, acc):  # type: ignore[no-untyped-def]
    lane_sums(f, g, parent, factor, ca, cb, offset, lo, hi, store, acc)


@pytest.mark.parametrize("lo, hi", [(3, 3), (3, 4), (3, 9), (3, 10), (9, 3), (10, 3)])
@pytest.mark.parametrize("store", [False, True])
def test_lane_sums_follows_its_rows_in_pairs_and_one_more(lo: int, hi: int, store: bool) -> None:
    """`lanes.lane_sums` against numpy, row by row: an even or odd number of
    rows (the last one alone), none, and a range given backwards (none)."""
    rng = np.random.default_rng(lo * 100 + hi)
    rows = 12
    f = rng.integers(0, 50, (rows, LANES)).astype(float)
    g = rng.integers(0, 50, (5, LANES)).astype(float)
    parent = rng.integers(0, 3, rows).astype(np.uint32)
    factor = rng.integers(0, 5, rows).astype(np.uint32)
    ca, cb = rng.integers(0, 9, (2, rows + 2)).astype(float)
    acc = np.ones((2, LANES))
    want_f, want = f.copy(), acc.copy()
    for i in range(lo, hi):
        x = want_f[parent[i]] * g[factor[i]]
        if store:
            want_f[i] = x
        want[0] += ca[i - 2] * x
        want[1] += cb[i - 2] * x
    _lane_sums(f, g, parent, factor, ca, cb, 2, lo, hi, store, acc)
    assert np.array_equal(acc, want) and np.array_equal(f, want_f)


def test_ev_work_without_cards_builds_nothing() -> None:
    nodes, coef, work = odds.ev_work(needed=False)
    assert nodes.size == coef.size == work.size == 0
    assert (nodes.dtype, coef.dtype, work.dtype) == (np.uint32, np.float64, np.float64)


def test_ev_array_marks_bets_not_offered_and_short_shoes() -> None:
    evs = odds.ev_array(odds.composition(8), odds.payout_vector(COMMISSION))
    assert np.isnan(evs[[Bet.DRAGON_7.code, Bet.PANDA_8.code]]).all()
    assert not np.isnan(evs[:5]).any()
    short = np.zeros(14, dtype=np.int64)
    short[1] = 5
    assert np.isnan(odds.ev_array(short, odds.payout_vector(EZ))).all()
    assert set(odds.bet_evs(odds.composition(8), PRESETS["german"])) == {
        Bet.PLAYER,
        Bet.BANKER,
        Bet.TIE,
    }


# --- compositions and their errors ---------------------------------------------------------------


def test_composition_removes_cards_by_rank() -> None:
    counts = odds.composition(2, remove="A As 10 K♥ kd")
    expected = full_shoe_counts(2)
    expected[[1, 10, 13]] -= [2, 1, 2]
    assert counts.tolist() == expected.tolist()
    assert odds.composition(1, remove=[make_card(5, 2)])[5] == 3


@pytest.mark.parametrize(
    ("decks", "remove", "message"),
    [
        (1, "5 5 5 5 5h", "cannot remove 5H: no 5 left in the shoe (it held 4)"),
        (1, "Q X", "cards to remove: unknown card 'X'"),
        (0, None, "decks must be a whole number from 1 to 64, got 0"),
        (65, None, "decks must be a whole number from 1 to 64, got 65"),
    ],
)
def test_composition_errors(decks: int, remove: str | None, message: str) -> None:
    with pytest.raises(RulesError) as err:
        odds.composition(decks, remove=remove)
    assert message in str(err.value)


@pytest.mark.parametrize("left", range(6))
def test_fewer_than_six_cards_is_an_error(left: int) -> None:
    counts = np.zeros(14, dtype=np.int64)
    counts[13] = left
    message = "the shoe is empty" if left == 0 else f"only {left} card"
    for call in (odds.outcome_table, lambda c: odds.bet_evs(c, COMMISSION)):
        with pytest.raises(RulesError, match=message):
            call(counts)


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ([4] * 13, "14 rank counts"),
        ([1] + [4] * 13, "index 0 is unused"),
        ([0, -1] + [4] * 12, "cannot be negative: A has -1"),
        ([0, 0.5] + [4] * 12, "whole numbers"),
    ],
)
def test_malformed_counts_are_refused(counts: list[float], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        odds.outcome_table(counts)


def test_composition_after_removes_the_dealt_cards() -> None:
    hands = generate_hands(ShoeSpec(decks=2, cut_card=14, burn=False), 2, seed=5)
    first = hands.shoe_slice(int(hands.shoe[0]))
    for k in (0, 1, 7, len(first)):
        used = first.cards[:k].reshape(-1)
        expected = full_shoe_counts(2) - rank_counts(used)
        assert odds.composition_after(hands, k, decks=2).tolist() == expected.tolist()


def test_composition_after_takes_out_burned_cards() -> None:
    hands = generate_hands(ShoeSpec(decks=1, cut_card=14, burn=False), 1, seed=3)
    burned = tuple(parse_cards("7 K K"))
    with_burn = dataclasses.replace(hands, burned=(burned,))
    diff = odds.composition_after(hands, 3, 1) - odds.composition_after(with_burn, 3, 1)
    assert diff.tolist() == rank_counts(list(burned)).tolist()


def test_composition_after_errors() -> None:
    outcome_level = Hands.from_columns(
        3, known=frozenset({"player_total"}), source="road.txt", winner=[0, 1, 2]
    )
    with pytest.raises(MissingDataError, match="road.txt: .*needs the cards dealt"):
        odds.composition_after(outcome_level, 1, 8)
    hands = generate_hands(ShoeSpec(decks=2, cut_card=14, burn=False), 1, seed=5)
    with pytest.raises(RulesError, match=f"after_hands must be from 0 to {len(hands)}"):
        odds.composition_after(hands, len(hands) + 1, 2)
    with pytest.raises(ShoeFormatError, match="is it really a 1-deck shoe"):
        odds.composition_after(hands, len(hands), 1)


# --- output ---------------------------------------------------------------------------


def test_render_table_is_labelled() -> None:
    result = odds.exact_odds(odds.composition(8, remove="5"), NO_COMMISSION, decks=8)
    text = odds.render_table(result)
    first = text.splitlines()[0]
    assert "8 decks, 415 of 416 cards left" in first and "rules: no-commission" in first
    for label in (
        "Bet",
        "Payout",
        "P(win)",
        "P(push)",
        "P(loss)",
        "EV per unit",
        "House edge",
        "Edge per resolved bet",
        "Std dev",
        "1 to 1 (6 pays 0.5)",
    ):
        assert label in text
    rows = [line.split()[0] for line in text.split("\n\n")[1].splitlines()[2:]]
    assert rows == [b.value for b in NO_COMMISSION.offered_bets()]


def test_render_csv_has_one_row_per_bet() -> None:
    result = odds.exact_odds(odds.composition(8), EZ, decks=8)
    rows = list(csv.DictReader(io.StringIO(odds.render_csv(result))))
    assert list(rows[0]) == [
        "bet",
        "payout",
        "p_win",
        "p_push",
        "p_loss",
        "ev",
        "house_edge",
        "edge_per_resolved",
        "std_dev",
        "terms",
    ]
    assert [r["bet"] for r in rows] == [b.value for b in EZ.offered_bets()]
    banker = rows[1]
    assert float(banker["house_edge"]) == result.house_edge(Bet.BANKER)
    assert float(banker["p_win"]) + float(banker["p_push"]) + float(
        banker["p_loss"]
    ) == pytest.approx(1)


def test_render_json_carries_exact_counts_and_full_precision() -> None:
    result = odds.exact_odds(odds.composition(8), COMMISSION, decks=8)
    data = json.loads(odds.render_json(result))
    assert data["combinations"] == 4_998_398_275_503_360
    assert data["counts"]["player"] == 2_230_518_282_592_256
    assert data["probabilities"]["tie"] == 475_627_426_473_216 / 4_998_398_275_503_360
    assert set(data["house_edge"]) == {b.value for b in COMMISSION.offered_bets()}
    assert data["house_edge"]["banker"] == float(-result.bet(Bet.BANKER).ev)
    assert round(data["house_edge"]["banker"] * 100, 4) == 1.0579
    bet = data["bets"]["banker"]
    assert {
        "p_win",
        "p_push",
        "p_loss",
        "payout",
        "ev",
        "house_edge",
        "edge_per_resolved",
        "std_dev",
    } <= set(bet)
    assert bet["payout"] == 0.95 and bet["payout_exact"] == "19/20"
    assert data["shoe"]["description"] == "8 decks, 416 cards (full shoe)"


def test_module_examples() -> None:
    assert doctest.testmod(odds).failed == 0


# --- the command line --------------------------------------------------------------------------

runner = CliRunner()


def test_cli_json() -> None:
    out = runner.invoke(
        app, ["odds", "--decks", "6", "--rules", "ez", "--remove", "5 5", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    expected = odds.exact_odds(odds.composition(6, remove="5 5"), EZ)
    assert data["shoe"]["cards"] == 310 and data["shoe"]["rank_counts"]["5"] == 22
    assert data["rules"] == "ez"
    assert data["combinations"] == expected.table.combinations
    assert data["counts"]["banker"] == expected.table.counts[Event.BANKER]
    assert data["house_edge"]["dragon7"] == expected.house_edge(Bet.DRAGON_7)


def test_cli_csv_and_table() -> None:
    out = runner.invoke(app, ["odds", "--format", "csv"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert (
        lines[0] == "bet,payout,p_win,p_push,p_loss,ev,house_edge,edge_per_resolved,std_dev,terms"
    )
    assert [line.split(",")[0] for line in lines[1:]] == list(COMMISSION.offered_bets())
    out = runner.invoke(app, ["odds", "--decks", "1"])
    assert out.exit_code == 0, out.output
    assert "shoe: 1 deck, 52 cards (full shoe); rules: commission" in out.stdout
    assert "House edge" in out.stdout and "banker" in out.stdout


def test_cli_after_hands_of_a_recorded_shoe(tmp_path: Path) -> None:
    recorded = pytest.importorskip("backtest.shoes.recorded")
    hands = generate_hands(ShoeSpec(decks=8, cut_card=14, burn=False), 1, seed=11)
    path = tmp_path / "shoe.txt"
    path.write_text(recorded.format_card_text(hands), encoding="utf-8")
    out = runner.invoke(
        app,
        ["odds", "--shoe", str(path), "--after-hands", "10", "--remove", "K", "--format", "json"],
    )
    assert out.exit_code == 0, out.output
    counts = odds.remove_cards(odds.composition_after(hands, 10, 8), parse_cards("K"))
    assert (
        json.loads(out.stdout)["counts"]["player"]
        == odds.outcome_table(counts).counts[Event.PLAYER]
    )


REPO_DATA = Path(__file__).resolve().parents[2] / "data"


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    """Run the real entry point in this process: (exit code, stderr)."""
    monkeypatch.setattr(sys, "argv", ["backtest", "odds", *args])
    with pytest.raises(SystemExit) as done:
        main()
    return int(done.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["--decks", "1", "--remove", "5 5 5 5 5"],
            2,
            "error: --remove: cannot remove 5: no 5 left in the shoe (it held 4)",
        ),
        # cards an option took out: the option's value is wrong (exit 2, naming it)
        (
            ["--decks", "1", "--remove", " ".join("A23456789TJQK" * 4)],
            2,
            "error: --remove: the shoe is empty: a hand needs up to 6 cards",
        ),
        (
            ["--decks", "1", "--remove", " ".join("A23456789TJQK" * 3 + "A23456789")],
            2,
            "error: --remove: only 4 cards left in the shoe",
        ),
        (
            ["--rules", "comission"],
            2,
            "error: --rules: unknown rules preset 'comission'; did you mean 'commission'",
        ),
        (["--rules", "nowhere.yaml"], 2, "error: --rules: rules file nowhere.yaml does not exist"),
        (
            ["--rules", ""],
            2,
            "error: --rules: no rules given (an empty name): give a preset "
            "(commission, no-commission, ez",
        ),
        (["--remove", "5 Z"], 2, "error: --remove: unknown card 'Z'"),
        (["--after-hands", "3"], 2, "error: --after-hands needs --shoe"),
        (["--decks", "0"], 2, "error: --decks must be a whole number from 1 to 64, got 0"),
        (
            ["--decks", "99999999999999999999"],
            2,
            "error: --decks must be a whole number from 1 to 64, got 99999999999999999999",
        ),
        # a file that says how many decks it was dealt from (as `shoe generate` writes)
        (
            ["--decks", "8", "--shoe", str(REPO_DATA / "generated-6deck-seed2.txt")],
            2,
            f"error: --decks is 8, but {REPO_DATA / 'generated-6deck-seed2.txt'}, line 1 says its "
            "shoes were dealt from 6 decks; give 6, or leave --decks out",
        ),
    ],
)
def test_cli_errors(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
    message: str,
) -> None:
    got_code, err = run_main(monkeypatch, capsys, *args)
    assert (got_code, err.count("\n")) == (code, 1)
    assert err.startswith(message)


@pytest.mark.parametrize(
    ("after", "message"),
    [
        ("200", "error: --after-hands must be from 0 to "),
        ("-1", "error: --after-hands must be a whole number of at least 0, got -1"),
    ],
)
def test_cli_after_hands_errors_name_the_option(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], after: str, message: str
) -> None:
    shoe = Path(__file__).resolve().parents[2] / "data" / "generated-8deck-seed1.txt"
    code, err = run_main(monkeypatch, capsys, "--shoe", str(shoe), "--after-hands", after)
    assert (code, err.count("\n")) == (2, 1)
    assert err.startswith(message), err


def test_cli_reads_a_shoe_file_s_decks() -> None:
    """Without --decks, a file's `decks=N` comment gives the shoe's size (else
    8); without --after-hands, the composition before its first hand."""
    from backtest.shoes import recorded

    six = REPO_DATA / "generated-6deck-seed2.txt"
    hands = recorded.read_shoes(six)
    for after in (["--after-hands", "10"], []):
        out = runner.invoke(app, ["odds", "--shoe", str(six), *after, "--format", "json"])
        assert out.exit_code == 0, out.output
        k = 10 if after else 0
        assert (
            json.loads(out.stdout)["shoe"]["cards"]
            == int(odds.composition_after(hands, k, 6).sum())
            == 6 * 52 - len(odds.cards_before(hands, k, 6))
        )


def test_cli_unknown_rules_key_in_a_yaml_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "table.yaml"
    path.write_text("base: commission\nbanker_payuot: 0.95\n", encoding="utf-8")
    code, err = run_main(monkeypatch, capsys, "--rules", str(path))
    assert code == 1
    assert f"error: {path}: unknown rules key 'banker_payuot'; did you mean 'banker_payout'" in err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["--decks", "1", "--remove", "K K K K K"],
            2,
            "error: --remove: cannot remove K: no K left",
        ),
        (["--remove", "11"], 2, "error: --remove: unknown card '11'"),
    ],
)
@pytest.mark.slow
def test_cli_errors_in_a_real_process(args: list[str], code: int, message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "backtest", "odds", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == code
    assert done.stderr.startswith(message) and done.stdout == ""


def test_the_stand_in_tables_have_the_real_tables_numba_types() -> None:
    """A loop that never prices a composition gets empty tables; numba must see
    the same types as the real ones (read-only included), or it compiles
    `ev_fill` and its callees a second time."""
    from numba import typeof

    from backtest.odds import ev_work

    real, empty = ev_work(True), ev_work(False)
    assert [typeof(a) for a in real] == [typeof(a) for a in empty]
    assert all(a.size == 0 for a in empty[:2])


def test_terms_say_the_exceptions_to_a_payout_in_csv_and_json() -> None:
    """The no-commission Banker bet pays 1 to 1 except on a winning 6: the CSV's
    `payout` column says 1, so its `terms` column says the rest (as the table does)."""
    result = odds.exact_odds(odds.composition(8), NO_COMMISSION, decks=8)
    rows = {r["bet"]: r for r in csv.DictReader(io.StringIO(odds.render_csv(result)))}
    assert rows["banker"]["payout"] == "1" and rows["banker"]["terms"] == "1 to 1 (6 pays 0.5)"
    assert rows["tie"]["terms"] == "8 to 1"
    commission = odds.exact_odds(odds.composition(8), COMMISSION, decks=8)
    rows_c = {r["bet"]: r for r in csv.DictReader(io.StringIO(odds.render_csv(commission)))}
    assert rows_c["banker"]["payout"] == "0.95"  # a decimal, not 19/20 (a date to a spreadsheet)
    data = json.loads(odds.render_json(result))
    assert data["bets"]["banker"]["terms"] == "1 to 1 (6 pays 0.5)"


def _three_shoes(tmp_path: Path, decks: int = 1) -> tuple[Path, Hands]:
    recorded = pytest.importorskip("backtest.shoes.recorded")
    hands = generate_hands(ShoeSpec(decks=decks, cut_card=14, burn=False), 3, seed=5)
    path = tmp_path / "three.txt"
    path.write_text(recorded.format_card_text(hands), encoding="utf-8")
    return path, recorded.read_shoes(path, decks=decks)


def test_composition_after_any_shoe_of_a_file(tmp_path: Path) -> None:
    """`shoe` picks the file's shoe by its number; each is counted from its own cards."""
    _, hands = _three_shoes(tmp_path)
    ids = np.unique(hands.shoe)
    for number, shoe_id in enumerate(ids, 1):
        one = hands.shoe_slice(int(shoe_id))
        dealt = one.select(np.arange(len(one)) < 2).dealt_cards()
        expected = odds.remove_cards(odds.composition(1), dealt.tolist())
        assert odds.composition_after(hands, 2, 1, shoe=number).tolist() == expected.tolist()
    assert (
        odds.composition_after(hands, 2, 1).tolist()
        == odds.composition_after(hands, 2, 1, shoe=1).tolist()
    )
    for bad in (0, 4, True, 1.0):
        with pytest.raises(RulesError, match="shoe must be a whole number from 1 to 3"):
            odds.composition_after(hands, 2, 1, shoe=bad)  # type: ignore[arg-type]
    third = odds.shoe_odds(COMMISSION, 1, hands=hands, after_hands=2, shoe=3)
    assert third.table.rank_counts == tuple(odds.composition_after(hands, 2, 1, shoe=3).tolist())


def test_a_suited_card_cannot_be_taken_out_more_times_than_the_decks_hold(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="KS would be out 2 times, but 1 deck holds one"):
        odds.composition(1, remove="KS KS")
    assert odds.composition(2, remove="KS KS")[13] == 6
    assert odds.composition(1, remove="K K KS")[13] == 1  # suitless cards are not matched
    path, hands = _three_shoes(tmp_path)
    one = hands.shoe_slice(int(hands.shoe[0]))
    first = int(one.dealt_cards()[0])  # a suited card of the first hand
    with pytest.raises(RulesError, match="would be out 2 times"):
        odds.shoe_odds(COMMISSION, 1, remove=[first], hands=hands, after_hands=1)


def test_cli_shoe_number_and_suited_removals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, hands = _three_shoes(tmp_path)
    out = runner.invoke(
        app,
        [
            "odds",
            "--decks",
            "1",
            "--shoe",
            str(path),
            "--after-hands",
            "2",
            "--shoe-number",
            "2",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    counts = odds.composition_after(hands, 2, 1, shoe=2)
    assert json.loads(out.stdout)["shoe"]["cards"] == int(counts.sum())
    assert counts.tolist() != odds.composition_after(hands, 2, 1).tolist()
    first = card_token(int(hands.shoe_slice(int(hands.shoe[0])).dealt_cards()[0]))
    for args, message in [
        (
            ["--shoe", str(path), "--after-hands", "2", "--shoe-number", "4"],
            "error: --shoe-number must be a whole number from 1 to 3",
        ),
        (["--shoe-number", "2"], "error: --shoe-number needs --shoe"),
        (["--remove", "KS KS"], "error: --remove: KS would be out 2 times, but 1 deck holds one"),
        (
            ["--shoe", str(path), "--after-hands", "1", "--remove", first],
            f"error: --remove: {first} would be out 2 times",
        ),
    ]:
        code, err = run_main(monkeypatch, capsys, "--decks", "1", *args)
        assert code == 2 and err.startswith(message), err

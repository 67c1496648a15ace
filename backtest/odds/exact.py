"""The exact path: every event counted with Python integers over the
ordered draws of six cards (`outcome_table`), and each table's bets priced
from the counts as Fractions (`bet_odds`, `exact_odds`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from backtest.core import settlement
from backtest.core.cards import DECK_SIZE, RANK_SYMBOLS, full_shoe_counts
from backtest.core.errors import RulesError
from backtest.core.rules import Bet, Rules
from backtest.odds.compositions import (
    cards_before,
    check_counts,
    check_suited,
    composition,
    remove_cards,
)
from backtest.odds.events import (
    BANKER_DRAWS,
    E_B6_2,
    E_B7_3,
    E_BANKER,
    E_BN8,
    E_NATURAL,
    E_P8_3,
    E_PLAYER,
    E_PN8,
    E_TIE,
    HAND_CARDS,
    N_DEAL_EVENTS,
    STAGE,
    Event,
    check_cards_left,
)

if TYPE_CHECKING:
    from backtest.core.hands import Hands


def _deal_bins(v, stage, draws, bins):
    """Add to bins[pt, bt, p3, b3] the ordered six-card draws from value counts
    `v` that end with those totals and third cards (p3, b3: 0 or 1).

    Run on object arrays of Python ints, so it is exact for a shoe of any size.
    The first four cards are taken as unordered pairs per side -- (a, c) for
    the Player, (b, d) for the Banker -- counted twice when the two differ;
    the cards a hand does not use are counted by the ways to draw them.
    `v` is restored on return.
    """
    n4 = v.sum() - 4
    for a in range(10):
        if v[a] == 0:
            continue
        wa = v[a]
        v[a] -= 1
        for c in range(a, 10):
            if v[c] == 0:
                continue
            wc = wa * v[c] * (1 if c == a else 2)
            v[c] -= 1
            p2 = (a + c) % 10
            for b in range(10):
                if v[b] == 0:
                    continue
                wb = wc * v[b]
                v[b] -= 1
                for d in range(b, 10):
                    if v[d] == 0:
                        continue
                    w = wb * v[d] * (1 if d == b else 2)
                    v[d] -= 1
                    b2 = (b + d) % 10
                    s = stage[p2, b2]
                    if s == 0:
                        bins[p2, b2, 0, 0] += w * n4 * (n4 - 1)
                    elif s == 1:
                        for e in range(10):
                            if v[e] != 0:
                                bins[p2, (b2 + e) % 10, 0, 1] += w * v[e] * (n4 - 1)
                    else:
                        for e in range(10):
                            if v[e] == 0:
                                continue
                            w5 = w * v[e]
                            pt = (p2 + e) % 10
                            if draws[b2, e]:
                                v[e] -= 1
                                for f in range(10):
                                    if v[f] != 0:
                                        bins[pt, (b2 + f) % 10, 1, 1] += w5 * v[f]
                                v[e] += 1
                            else:
                                bins[pt, b2, 1, 0] += w5 * (n4 - 1)
                    v[d] += 1
                v[b] += 1
            v[c] += 1
        v[a] += 1


def _deal_events(bins, out):
    """Add the deal events (the first `N_DEAL_EVENTS` of Event) found in `bins`."""
    for pt in range(10):
        for bt in range(10):
            for p3 in range(2):
                for b3 in range(2):
                    x = bins[pt, bt, p3, b3]
                    if x == 0:
                        continue
                    if pt > bt:
                        out[E_PLAYER] += x
                        if p3 == 1 and pt == 8:
                            out[E_P8_3] += x
                    elif bt > pt:
                        out[E_BANKER] += x
                        if bt == 6:
                            out[E_B6_2 + b3] += x
                        elif bt == 7 and b3 == 1:
                            out[E_B7_3] += x
                    else:
                        out[E_TIE] += x
                    if p3 == 0 and b3 == 0 and (pt >= 8 or bt >= 8):
                        out[E_NATURAL] += x
                        if pt >= 8:
                            out[E_PN8 + pt - 8] += x
                        if bt >= 8:
                            out[E_BN8 + bt - 8] += x


def ordered_draws(n: int, k: int) -> int:
    """n (n-1) ... (n-k+1): ordered draws of k cards from n."""
    out = 1
    for i in range(k):
        out *= n - i
    return out


def _exact_deal_events(v: Sequence[int]) -> list[int]:
    """Exact deal-event counts for value counts `v`, as Python ints.

    Nested loops over the cards in the order they are dealt (an independent
    method from the fast path's polynomial, `ev_events`).
    """
    bins = np.zeros((10, 10, 2, 2), dtype=object)
    bins[...] = 0
    _deal_bins(np.array([int(x) for x in v], dtype=object), STAGE, BANKER_DRAWS, bins)
    out = np.zeros(N_DEAL_EVENTS, dtype=object)
    out[...] = 0
    _deal_events(bins, out)
    return [int(x) for x in out]


def _exact_pair_events(counts: Sequence[int]) -> dict[Event, int]:
    """Pair counts, normalised to six cards: only the first two cards of a side matter."""
    ranks = [int(c) for c in counts[1:14]]
    n = sum(ranks)
    pairs = [c * (c - 1) for c in ranks]
    s = sum(pairs)
    one = s * ordered_draws(n - 2, 4)
    # both pairs: (P1, P2) and (B1, B2) pairs, of the same rank or of two ranks
    both = (
        s * s - sum(p * p for p in pairs) + sum(c * (c - 1) * (c - 2) * (c - 3) for c in ranks)
    ) * ordered_draws(n - 4, 2)
    return {
        Event.PLAYER_PAIR: one,
        Event.BANKER_PAIR: one,
        Event.EITHER_PAIR: 2 * one - both,
        Event.BOTH_PAIRS: both,
    }


# --- the outcome table ----------------------------------------------------------------


@dataclass(frozen=True)
class OutcomeTable:
    """Exact counts of every Event over the ordered six-card draws of one composition."""

    #: rank counts, index 0..13 (0 unused)
    rank_counts: tuple[int, ...]
    #: ordered six-card draws: N (N-1) ... (N-5)
    combinations: int
    counts: Mapping[Event, int]

    @property
    def cards(self) -> int:
        return sum(self.rank_counts)

    def probability(self, event: Event) -> Fraction:
        return Fraction(self.counts[event], self.combinations)


def outcome_table(counts: Sequence[int] | np.ndarray) -> OutcomeTable:
    """The exact outcome table of a composition (14 rank counts, index 0 unused).

    Raises RulesError for a malformed composition or one of fewer than 6 cards.
    """
    return _outcome_table(tuple(int(c) for c in check_counts(counts)))


@lru_cache(maxsize=256)
def _outcome_table(counts: tuple[int, ...]) -> OutcomeTable:
    n = sum(counts)
    check_cards_left(n)
    v = [sum(counts[10:14]), *counts[1:10]]
    deal = _exact_deal_events(v)
    events = {e: deal[i] for i, e in enumerate(list(Event)[:N_DEAL_EVENTS])}
    events[Event.BANKER_SIX] = (
        events[Event.BANKER_SIX_TWO_CARD] + events[Event.BANKER_SIX_THREE_CARD]
    )
    events |= _exact_pair_events(counts)
    return OutcomeTable(
        rank_counts=counts,
        combinations=ordered_draws(n, HAND_CARDS),
        counts=MappingProxyType(events),
    )


# --- bets under a table's rules -------------------------------------------------------


@dataclass(frozen=True)
class BetOdds:
    """One bet's exact result distribution: (net per unit staked, draws) pairs."""

    bet: Bet
    #: net payout of a plain win
    payout: Fraction
    outcomes: tuple[tuple[Fraction, int], ...]
    combinations: int

    def _share(self, keep: Callable[[Fraction], bool]) -> Fraction:
        return Fraction(sum(n for net, n in self.outcomes if keep(net)), self.combinations)

    @property
    def p_win(self) -> Fraction:
        return self._share(lambda net: net > 0)

    @property
    def p_push(self) -> Fraction:
        return self._share(lambda net: net == 0)

    @property
    def p_loss(self) -> Fraction:
        return self._share(lambda net: net < 0)

    @property
    def ev(self) -> Fraction:
        """Expected net result per unit staked."""
        return Fraction(sum(net * n for net, n in self.outcomes), self.combinations)

    @property
    def house_edge(self) -> float:
        return float(-self.ev)

    @property
    def edge_per_resolved(self) -> float:
        """-EV / P(not a push): the edge over the bets that win or lose (NaN if none do)."""
        resolved = 1 - self.p_push
        return float(-self.ev / resolved) if resolved else math.nan

    @property
    def std_dev(self) -> float:
        """Standard deviation of the net result per unit staked."""
        second = Fraction(sum(net * net * n for net, n in self.outcomes), self.combinations)
        return math.sqrt(float(second - self.ev**2))


def bet_outcomes(bet: Bet, table: OutcomeTable, rules: Rules) -> tuple[tuple[Fraction, int], ...]:
    """The net results of `bet` under `rules` with the number of draws giving
    each: the settlement's net on each kind of hand the table counts
    (`settlement.outcome_atoms`)."""
    _offered_payout(bet, rules)
    e = table.counts
    merged: dict[Fraction, int] = {}
    for net, add, sub in settlement.outcome_atoms(bet, rules):
        n = sum(table.combinations if a == "all" else e[Event(a)] for a in add) - sum(
            e[Event(c)] for c in sub
        )
        merged[net] = merged.get(net, 0) + n
    return tuple(sorted((net, n) for net, n in merged.items() if n))


def _offered_payout(bet: Bet, rules: Rules) -> Fraction:
    payout = rules.payout(bet)
    if payout is None:
        raise RulesError(f"the {rules.name} table does not offer the {bet} bet")
    return payout


@dataclass(frozen=True)
class OddsResult:
    """Every offered bet's exact odds for one composition under one table's rules."""

    table: OutcomeTable
    rules: Rules
    bets: tuple[BetOdds, ...]
    #: decks the shoe was made of, when known (for the description)
    decks: int | None = None

    def bet(self, bet: Bet) -> BetOdds:
        for b in self.bets:
            if b.bet is bet:
                return b
        raise RulesError(f"the {self.rules.name} table does not offer the {bet} bet")

    def house_edge(self, bet: Bet) -> float:
        return self.bet(bet).house_edge

    @property
    def shoe_description(self) -> str:
        """'8 decks, 416 cards (full shoe)', '8 decks, 380 of 416 cards left', '45 cards'."""
        n = self.table.cards
        if self.decks is None:
            return f"{n} cards"
        full = self.decks * DECK_SIZE
        decks = f"{self.decks} deck{'s' if self.decks != 1 else ''}"
        if n == full and list(self.table.rank_counts) == full_shoe_counts(self.decks).tolist():
            return f"{decks}, {n} cards (full shoe)"
        return f"{decks}, {n} of {full} cards left"

    def to_json_dict(self) -> dict[str, Any]:
        """A plain mapping: exact counts as ints, probabilities and edges as floats."""
        t = self.table
        return {
            "shoe": {
                "decks": self.decks,
                "cards": t.cards,
                "description": self.shoe_description,
                "rank_counts": {RANK_SYMBOLS[r - 1]: t.rank_counts[r] for r in range(1, 14)},
            },
            "rules": self.rules.name,
            "combinations": t.combinations,
            "counts": {e.value: n for e, n in t.counts.items()},
            "probabilities": {e.value: n / t.combinations for e, n in t.counts.items()},
            "house_edge": {b.bet.value: b.house_edge for b in self.bets},
            "bets": {
                b.bet.value: {**_bet_json(b), "terms": settlement.payout_text(b.bet, self.rules)}
                for b in self.bets
            },
        }


def _bet_json(b: BetOdds) -> dict[str, Any]:
    resolved = b.edge_per_resolved
    return {
        "payout": float(b.payout),
        "payout_exact": str(b.payout),
        "p_win": float(b.p_win),
        "p_push": float(b.p_push),
        "p_loss": float(b.p_loss),
        "ev": float(b.ev),
        "ev_exact": str(b.ev),
        "house_edge": b.house_edge,
        "edge_per_resolved": None if math.isnan(resolved) else resolved,
        "std_dev": b.std_dev,
        "outcomes": [{"net": str(net), "combinations": n} for net, n in b.outcomes],
    }


def bet_odds(table: OutcomeTable, rules: Rules, decks: int | None = None) -> OddsResult:
    """Price every bet `rules` offers from an outcome table."""
    bets = tuple(
        BetOdds(
            bet, _offered_payout(bet, rules), bet_outcomes(bet, table, rules), table.combinations
        )
        for bet in rules.offered_bets()
    )
    return OddsResult(table=table, rules=rules, bets=bets, decks=decks)


def exact_odds(
    counts: Sequence[int] | np.ndarray | None, rules: Rules, decks: int | None = None
) -> OddsResult:
    """Exact odds of every bet `rules` offers for `counts` (None: `decks` full decks, or 8).

    `decks`, when given, also describes the shoe in the output.
    """
    if counts is None:
        decks = 8 if decks is None else decks
        counts = composition(decks)
    return bet_odds(outcome_table(counts), rules, decks)


def shoe_odds(
    rules: Rules,
    decks: int = 8,
    remove: Iterable[int] = (),
    hands: Hands | None = None,
    after_hands: int = 0,
    shoe: int = 1,
) -> OddsResult:
    """Exact odds for `decks` decks, less the burn and first `after_hands` hands
    of shoe number `shoe` in `hands` (when given), less the cards in `remove`."""
    out = [] if hands is None else cards_before(hands, after_hands, decks, shoe)
    removed = [int(c) for c in remove]
    check_suited([*out, *removed], decks)
    return exact_odds(remove_cards(remove_cards(composition(decks), out), removed), rules, decks)


def unit_covariance(counts: Sequence[int] | np.ndarray, rules: Rules) -> np.ndarray:
    """(N_BETS, N_BETS) float64: the covariance of the bets' unit results on
    the next hand from this composition (0 for a bet the table does not offer).

    Exact between any two bets whose settlement reads the winner's events
    (Player, Banker, Tie, Dragon 7, Panda 8: `settlement.WINNER_ATOMS`) and
    between the two pair bets (their joint count, `Event.BOTH_PAIRS`). A pair
    bet against a winner's bet is taken as uncorrelated: the outcome table
    does not count them jointly, and the covariance is small (a pair makes
    an even two-card total a little more likely).
    """
    return _unit_covariance(tuple(int(c) for c in check_counts(counts)), rules).copy()


@lru_cache(maxsize=64)
def _unit_covariance(counts: tuple[int, ...], rules: Rules) -> np.ndarray:
    table = _outcome_table(counts)
    e, total = table.counts, table.combinations
    n_bets = len(Bet)
    second = [[Fraction(0)] * n_bets for _ in range(n_bets)]
    means = [Fraction(0)] * n_bets
    offered = [bool(settlement.terms(b, rules)) for b in Bet]
    pairs = {Bet.PLAYER_PAIR, Bet.BANKER_PAIR}
    winner_bets = [b for b in Bet if offered[b.code] and b not in pairs]
    for shown, add, sub in settlement.WINNER_ATOMS:
        weight = Fraction(sum(e[Event(a)] for a in add) - sum(e[Event(c)] for c in sub), total)
        nets = {b: settlement.net_on(b, shown, rules) for b in winner_bets}
        for b in winner_bets:
            means[b.code] += weight * nets[b]
            for c in winner_bets:
                second[b.code][c.code] += weight * nets[b] * nets[c]
    pair_bets = [b for b in (Bet.PLAYER_PAIR, Bet.BANKER_PAIR) if offered[b.code]]
    one, both = e[Event.PLAYER_PAIR], e[Event.BOTH_PAIRS]
    # (player pair, banker pair) shown: both, the player's alone, the banker's alone, neither
    for pp, bp, count in (
        (True, True, both),
        (True, False, one - both),
        (False, True, one - both),
        (False, False, total - 2 * one + both),
    ):
        weight = Fraction(count, total)
        pair_shown = {settlement.E.PLAYER_PAIR} if pp else set()
        pair_shown |= {settlement.E.BANKER_PAIR} if bp else set()
        nets = {b: settlement.net_on(b, pair_shown, rules) for b in pair_bets}
        for b in pair_bets:
            means[b.code] += weight * nets[b]
            for c in pair_bets:
                second[b.code][c.code] += weight * nets[b] * nets[c]
    out = np.zeros((n_bets, n_bets))
    for group in (winner_bets, pair_bets):
        for b in group:
            for c in group:
                out[b.code, c.code] = float(second[b.code][c.code] - means[b.code] * means[c.code])
    out.flags.writeable = False
    return out

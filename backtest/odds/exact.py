"""The exact path: every event counted with Python integers over the
ordered draws of six cards (`outcome_table`, from `deals`), and each
table's bets priced from the counts as Fractions (`bet_odds`, `exact_odds`)."""

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
from backtest.odds.deals import N_JOINT, exact_deal, exact_pair_events, ordered_draws
from backtest.odds.events import HAND_CARDS, N_DEAL_EVENTS, Event, check_cards_left

if TYPE_CHECKING:
    from backtest.core.hands import Hands


# --- the outcome table ----------------------------------------------------------------


@dataclass(frozen=True)
class OutcomeTable:
    """Exact counts of every Event over the ordered six-card draws of one composition."""

    #: rank counts, index 0..13 (0 unused)
    rank_counts: tuple[int, ...]
    #: ordered six-card draws: N (N-1) ... (N-5)
    combinations: int
    counts: Mapping[Event, int]
    #: the draws of each winner's kind with each state of the pairs
    #: (`deals.N_JOINT`, index 4 * kind + 2 * player pair + banker pair)
    joint: tuple[int, ...] = (0,) * N_JOINT

    @property
    def cards(self) -> int:
        return sum(self.rank_counts)

    def probability(self, event: Event) -> Fraction:
        return Fraction(self.counts[event], self.combinations)


def outcome_table(counts: Sequence[int] | np.ndarray) -> OutcomeTable:
    """The exact outcome table of a composition (14 rank counts, index 0 unused).

    Raises RulesError for a malformed composition or one of fewer than 6 cards.
    """
    return outcome_table_of(tuple(int(c) for c in check_counts(counts)))


@lru_cache(maxsize=256)
def outcome_table_of(counts: tuple[int, ...]) -> OutcomeTable:
    """`outcome_table` of counts already checked, as a tuple (remembered)."""
    n = sum(counts)
    check_cards_left(n)
    deal, joint = exact_deal(counts)
    events = {e: deal[i] for i, e in enumerate(list(Event)[:N_DEAL_EVENTS])}
    events[Event.BANKER_SIX] = (
        events[Event.BANKER_SIX_TWO_CARD] + events[Event.BANKER_SIX_THREE_CARD]
    )
    events |= exact_pair_events(counts)
    return OutcomeTable(
        rank_counts=counts,
        combinations=ordered_draws(n, HAND_CARDS),
        counts=MappingProxyType(events),
        joint=joint,
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

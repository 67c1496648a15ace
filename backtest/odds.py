"""Exact odds of every bet, by enumeration over a shoe's composition.

A composition is the rank counts left in the shoe (index 1..13, as
`cards.full_shoe_counts`; tens and faces are distinct ranks, which matters
for the pair bets). Every hand is counted as an ordered draw of SIX cards,
the unused ones included, as the published analyses do: for 8 decks the
total is 416 * 415 * 414 * 413 * 412 * 411.

The tableau is fixed; only payouts vary between tables. So the work is done
once per composition (`outcome_table`: exact integer counts of every event
the bets need) and each table's bets are priced from it (`bet_odds`).

Two paths:

- exact: `outcome_table`, `bet_odds`, `exact_odds` -- Python integers and
  Fractions, rendered by `render_table`, `render_json`, `render_csv`;
- fast, for card counting: `bet_evs(counts, rules)` returns every offered
  bet's EV as a float; `ev_array(counts, payouts)` is the same thing over
  arrays, with `payouts = payout_vector(rules)`, and `ev_fill` its
  allocation-free compiled form, callable from other compiled code. It
  evaluates each event's count as a polynomial in the counts (see the
  section "the fast path" below), exact for up to 8 decks.

>>> table = outcome_table(composition(decks=8))
>>> table.combinations, table.counts[Event.PLAYER]
(4998398275503360, 2230518282592256)
>>> result = bet_odds(table, Rules.preset("commission"))
>>> round(result.house_edge(Bet.BANKER) * 100, 4)
1.0579
>>> round(bet_evs(composition(8, remove="5 5 5 5"), Rules.preset("commission"))[Bet.PLAYER], 6)
-0.01202
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from backtest import numba_cache

numba_cache.install()   # before this module's functions are decorated for numba's cache

from numba import njit

from backtest.cards import DECK_SIZE, RANK_SYMBOLS, card_token, full_shoe_counts, parse_cards
from backtest.errors import MissingDataError, RulesError, ShoeFormatError, shown
from backtest.lanes import LANES, lane_products, lane_sums
from backtest.rules import Bet, Rules, banker_draws, is_natural, player_draws
from backtest.shoe import MAX_DECKS

if TYPE_CHECKING:
    from backtest.hands import Hands

#: cards a hand may need; a composition with fewer has no exact odds here
HAND_CARDS = 6


class Event(StrEnum):
    """What the outcome table counts (for the first six cards of the shoe)."""

    PLAYER = "player"                                    # Player wins
    BANKER = "banker"                                    # Banker wins
    TIE = "tie"
    BANKER_SIX_TWO_CARD = "banker_six_two_card"          # Banker wins with a two-card 6
    BANKER_SIX_THREE_CARD = "banker_six_three_card"      # Banker wins with a three-card 6
    BANKER_THREE_CARD_SEVEN = "banker_three_card_seven"  # Banker wins with a three-card 7
    PLAYER_THREE_CARD_EIGHT = "player_three_card_eight"  # Player wins with a three-card 8
    PLAYER_NATURAL_8 = "player_natural_8"
    PLAYER_NATURAL_9 = "player_natural_9"
    BANKER_NATURAL_8 = "banker_natural_8"
    BANKER_NATURAL_9 = "banker_natural_9"
    NATURAL = "natural"                                  # either side has a natural
    BANKER_SIX = "banker_six"                            # Banker wins with a 6 (2 or 3 cards)
    PLAYER_PAIR = "player_pair"
    BANKER_PAIR = "banker_pair"
    EITHER_PAIR = "either_pair"
    BOTH_PAIRS = "both_pairs"

    @property
    def code(self) -> int:
        """Index of the event in event arrays (the order of this enum)."""
        return list(Event).index(self)


# Indices into the compiled event array: the first twelve members of Event,
# in its order (numba needs plain integer constants).
_E_PLAYER, _E_BANKER, _E_TIE, _E_B6_2, _E_B6_3, _E_B7_3, _E_P8_3 = range(7)
_E_PN8, _E_PN9, _E_BN8, _E_BN9, _E_NATURAL = range(7, 12)
_N_DEAL_EVENTS = 12

# Indices of `payout_vector`: net payout per unit of each kind of win; NaN = not offered.
PAY_PLAYER, PAY_BANKER, PAY_BANKER_SIX, PAY_BANKER_THREE_CARD_SEVEN = range(4)
PAY_TIE, PAY_PLAYER_PAIR, PAY_BANKER_PAIR, PAY_DRAGON_7, PAY_PANDA_8 = range(4, 9)
N_PAYOUTS = 9
N_BETS = len(Bet)
# Positions of the bets in `ev_array`'s result (the order of Bet).
_B_PLAYER, _B_BANKER, _B_TIE = Bet.PLAYER.code, Bet.BANKER.code, Bet.TIE.code
_B_PLAYER_PAIR, _B_BANKER_PAIR = Bet.PLAYER_PAIR.code, Bet.BANKER_PAIR.code
_B_DRAGON_7, _B_PANDA_8 = Bet.DRAGON_7.code, Bet.PANDA_8.code


# --- compositions ---------------------------------------------------------------


def check_counts(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    """The rank counts as an int64 array of 14 (index 0 unused, zero), or RulesError."""
    arr = np.asarray(counts)
    if arr.shape != (14,):
        raise RulesError(f"a composition is 14 rank counts (index 0 unused, then A 2-9 T J Q K), "
                         f"got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        whole = arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
        if not whole:
            raise RulesError(f"rank counts must be whole numbers, got {arr.tolist()}")
    out = arr.astype(np.int64)
    if out[0] != 0:
        raise RulesError(f"rank counts: index 0 is unused and must be 0, got {out[0]}")
    if (out < 0).any():
        bad = int(np.flatnonzero(out < 0)[0])
        raise RulesError(f"rank counts cannot be negative: {RANK_SYMBOLS[bad - 1]} has {out[bad]}")
    return out


def composition(decks: int = 8, remove: str | Iterable[int] | None = None) -> np.ndarray:
    """Rank counts of `decks` full decks less the cards in `remove`.

    `remove` is card text ("5 5 K Td") or card codes, counted by rank; a card
    given with its suit cannot be taken out more times than `decks` decks hold it.

    >>> composition(1, remove="A A K")[[1, 13]].tolist()
    [2, 3]
    """
    if isinstance(decks, bool) or not isinstance(decks, (int, np.integer)) \
            or not 1 <= decks <= MAX_DECKS:
        raise RulesError(f"decks must be a whole number from 1 to {MAX_DECKS}, got {shown(decks)}")
    counts = full_shoe_counts(int(decks))
    if remove is None:
        return counts
    if isinstance(remove, str):
        try:
            cards = parse_cards(remove)
        except ValueError as exc:
            raise RulesError(f"cards to remove: {exc}") from None
    else:
        cards = [int(c) for c in remove]
    check_suited(cards, int(decks))
    return remove_cards(counts, cards)


def remove_cards(counts: Sequence[int] | np.ndarray, cards: Iterable[int]) -> np.ndarray:
    """A copy of `counts` less `cards` (codes); a card the shoe has no more of is an error."""
    start = check_counts(counts)
    out = start.copy()
    for card in cards:
        rank = int(card) & 0xF
        if not 1 <= rank <= 13 or int(card) >> 4 > 4:
            raise RulesError(f"not a card code: {card}")
        if out[rank] == 0:
            raise RulesError(f"cannot remove {card_token(int(card))}: no {RANK_SYMBOLS[rank - 1]} "
                             f"left in the shoe (it held {start[rank]})")
        out[rank] -= 1
    return out


def check_suited(cards: Iterable[int], decks: int) -> None:
    """Refuse more copies of one suited card (`KS`) among `cards` than `decks`
    decks hold, one a deck; cards given without a suit are not counted."""
    seen: dict[int, int] = {}
    for card in cards:
        code = int(card)
        if code >> 4:
            seen[code] = seen.get(code, 0) + 1
            if seen[code] > decks:
                raise RulesError(f"{card_token(code)} would be out {seen[code]} times, but "
                                 f"{decks} deck{'s hold' if decks != 1 else ' holds'} "
                                 f"{decks if decks != 1 else 'one'}")


def composition_after(hands: Hands, k: int, decks: int = 8, shoe: int = 1) -> np.ndarray:
    """The composition before hand k + 1 of shoe number `shoe` (1 for the
    first, in the order `hands` holds them).

    The full `decks`-deck shoe less that shoe's burned cards (when `hands`
    records them) and every card dealt in its first `k` hands. A shoe
    recorded without cards raises MissingDataError; one that deals more of a
    rank than `decks` decks hold raises ShoeFormatError.
    """
    return remove_cards(composition(decks), cards_before(hands, k, decks, shoe))


def cards_before(hands: Hands, k: int, decks: int = 8, shoe: int = 1) -> list[int]:
    """The cards out of shoe number `shoe` of `hands` before its hand k + 1:
    its burned cards (when recorded) and the cards of its first `k` hands
    (`composition_after`'s errors)."""
    if "cards" not in hands.known:
        raise MissingDataError(f"{hands.source}: the composition after a hand needs the cards "
                               "dealt, which this recorded shoe does not have")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise RulesError(f"after_hands must be a whole number of at least 0, got {k!r}")
    full = composition(decks)
    ids = np.unique(hands.shoe)   # sorted, as the readers number shoes in file order
    if isinstance(shoe, bool) or not isinstance(shoe, (int, np.integer)) \
            or not 1 <= shoe <= max(1, len(ids)):
        raise RulesError(f"shoe must be a whole number from 1 to {max(1, len(ids))} (the shoes "
                         f"in {hands.source}), got {shoe!r}")
    if len(hands) == 0:
        if k:
            raise RulesError(f"after_hands must be 0: {hands.source} has no hands")
        return []
    shoe_no = int(ids[shoe - 1])
    one = hands.shoe_slice(shoe_no)
    if k > len(one):
        raise RulesError(f"after_hands must be from 0 to {len(one)} (the hands in shoe "
                         f"{shoe} of {hands.source}), got {k}")
    burned = hands.burned[shoe_no] if shoe_no < len(hands.burned) else ()
    cards = [*burned, *one.select(np.arange(len(one)) < k).dealt_cards().tolist()]
    try:
        check_suited(cards, decks)
        remove_cards(full, cards)
    except RulesError as exc:
        raise ShoeFormatError(f"{hands.source}: shoe {shoe}, hands 1 to {k}: {exc}; "
                              f"is it really a {decks}-deck shoe?") from None
    return cards


# --- the enumeration ---------------------------------------------------------------

def _stage_table() -> np.ndarray:
    """STAGE[p2, b2]: 0 both stand, 1 only the Banker draws, 2 the Player draws
    (the Banker then follows `_BANKER_DRAWS`). From the rules functions."""
    stage = np.zeros((10, 10), dtype=np.int64)
    for p2 in range(10):
        for b2 in range(10):
            if is_natural(p2) or is_natural(b2):
                continue
            if player_draws(p2):
                stage[p2, b2] = 2
            elif banker_draws(b2, None):
                stage[p2, b2] = 1
    return stage


_STAGE = _stage_table()
#: _BANKER_DRAWS[b2, v]: the Banker draws on b2 after a Player's third card of value v
_BANKER_DRAWS = np.array([[banker_draws(b2, v) for v in range(10)] for b2 in range(10)],
                         dtype=np.bool_)


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
    """Add the deal events (the first `_N_DEAL_EVENTS` of Event) found in `bins`."""
    for pt in range(10):
        for bt in range(10):
            for p3 in range(2):
                for b3 in range(2):
                    x = bins[pt, bt, p3, b3]
                    if x == 0:
                        continue
                    if pt > bt:
                        out[_E_PLAYER] += x
                        if p3 == 1 and pt == 8:
                            out[_E_P8_3] += x
                    elif bt > pt:
                        out[_E_BANKER] += x
                        if bt == 6:
                            out[_E_B6_2 + b3] += x
                        elif bt == 7 and b3 == 1:
                            out[_E_B7_3] += x
                    else:
                        out[_E_TIE] += x
                    if p3 == 0 and b3 == 0 and (pt >= 8 or bt >= 8):
                        out[_E_NATURAL] += x
                        if pt >= 8:
                            out[_E_PN8 + pt - 8] += x
                        if bt >= 8:
                            out[_E_BN8 + bt - 8] += x


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
    _deal_bins(np.array([int(x) for x in v], dtype=object), _STAGE, _BANKER_DRAWS, bins)
    out = np.zeros(_N_DEAL_EVENTS, dtype=object)
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
    both = (s * s - sum(p * p for p in pairs)
            + sum(c * (c - 1) * (c - 2) * (c - 3) for c in ranks)) * ordered_draws(n - 4, 2)
    return {Event.PLAYER_PAIR: one, Event.BANKER_PAIR: one,
            Event.EITHER_PAIR: 2 * one - both, Event.BOTH_PAIRS: both}


def _check_cards_left(n: int) -> None:
    if n == 0:
        raise RulesError("the shoe is empty: a hand needs up to 6 cards")
    if n < HAND_CARDS:
        raise RulesError(f"only {n} card{'s' if n != 1 else ''} left in the shoe: exact odds "
                         f"need at least {HAND_CARDS} (a hand may use six)")


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
    _check_cards_left(n)
    v = [sum(counts[10:14]), *counts[1:10]]
    deal = _exact_deal_events(v)
    events = {e: deal[i] for i, e in enumerate(list(Event)[:_N_DEAL_EVENTS])}
    events[Event.BANKER_SIX] = (events[Event.BANKER_SIX_TWO_CARD]
                                + events[Event.BANKER_SIX_THREE_CARD])
    events |= _exact_pair_events(counts)
    return OutcomeTable(rank_counts=counts, combinations=ordered_draws(n, HAND_CARDS),
                        counts=MappingProxyType(events))


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
        return math.sqrt(float(second - self.ev ** 2))


def bet_outcomes(bet: Bet, table: OutcomeTable, rules: Rules) -> tuple[tuple[Fraction, int], ...]:
    """The net results of `bet` under `rules` with the number of draws giving each.

    Mirrors `rules.bet_result`: a tie pushes Player and Banker; a Banker win
    with 6 pays `banker_six_payout` when set; with `banker_three_card_seven_push`
    a Banker win with a three-card 7 pushes.
    """
    payout = _offered_payout(bet, rules)
    e = table.counts
    total = table.combinations
    lose, push = Fraction(-1), Fraction(0)
    found: list[tuple[Fraction, int]]
    if bet is Bet.PLAYER:
        found = [(payout, e[Event.PLAYER]), (push, e[Event.TIE]), (lose, e[Event.BANKER])]
    elif bet is Bet.BANKER:
        six = e[Event.BANKER_SIX]
        seven = e[Event.BANKER_THREE_CARD_SEVEN]
        plain = e[Event.BANKER]
        found = [(push, e[Event.TIE]), (lose, e[Event.PLAYER])]
        if rules.banker_six_payout is not None:
            found.append((rules.banker_six_payout, six))
            plain -= six
        if rules.banker_three_card_seven_push:
            found.append((push, seven))
            plain -= seven
        found.append((payout, plain))
    else:
        wins = e[{Bet.TIE: Event.TIE, Bet.PLAYER_PAIR: Event.PLAYER_PAIR,
                  Bet.BANKER_PAIR: Event.BANKER_PAIR,
                  Bet.DRAGON_7: Event.BANKER_THREE_CARD_SEVEN,
                  Bet.PANDA_8: Event.PLAYER_THREE_CARD_EIGHT}[bet]]
        found = [(payout, wins), (lose, total - wins)]
    merged: dict[Fraction, int] = {}
    for net, n in found:
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
            "bets": {b.bet.value: {**_bet_json(b), "terms": payout_text(b.bet, self.rules)}
                     for b in self.bets},
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
    bets = tuple(BetOdds(bet, _offered_payout(bet, rules), bet_outcomes(bet, table, rules),
                         table.combinations) for bet in rules.offered_bets())
    return OddsResult(table=table, rules=rules, bets=bets, decks=decks)


def exact_odds(counts: Sequence[int] | np.ndarray | None, rules: Rules,
               decks: int | None = None) -> OddsResult:
    """Exact odds of every bet `rules` offers for `counts` (None: `decks` full decks, or 8).

    `decks`, when given, also describes the shoe in the output.
    """
    if counts is None:
        decks = 8 if decks is None else decks
        counts = composition(decks)
    return bet_odds(outcome_table(counts), rules, decks)


def shoe_odds(rules: Rules, decks: int = 8, remove: Iterable[int] = (),
              hands: Hands | None = None, after_hands: int = 0, shoe: int = 1) -> OddsResult:
    """Exact odds for `decks` decks, less the burn and first `after_hands` hands
    of shoe number `shoe` in `hands` (when given), less the cards in `remove`."""
    out = [] if hands is None else cards_before(hands, after_hands, decks, shoe)
    removed = [int(c) for c in remove]
    check_suited([*out, *removed], decks)
    return exact_odds(remove_cards(remove_cards(composition(decks), out), removed), rules, decks)


# --- the fast path: floats, compiled ---------------------------------------------------


def payout_vector(rules: Rules) -> np.ndarray:
    """The payouts of `rules` as the float64 array `ev_array` reads (see PAY_*).

    NaN marks a bet the table does not offer. PAY_BANKER_SIX is the payout of
    a Banker win with 6, PAY_BANKER_THREE_CARD_SEVEN that of a Banker win
    with a three-card 7 (0 where it pushes).
    """
    return _payout_vector(rules).copy()


@lru_cache(maxsize=64)
def _payout_vector(rules: Rules) -> np.ndarray:
    def f(p: Fraction | None) -> float:
        return math.nan if p is None else float(p)

    out = np.full(N_PAYOUTS, math.nan)
    out[PAY_PLAYER] = f(rules.payout(Bet.PLAYER))
    out[PAY_BANKER] = f(rules.banker_payout)
    six = rules.banker_six_payout
    out[PAY_BANKER_SIX] = f(rules.banker_payout if six is None else six)
    out[PAY_BANKER_THREE_CARD_SEVEN] = 0.0 if rules.banker_three_card_seven_push \
        else f(rules.banker_payout)
    out[PAY_TIE] = f(rules.tie_payout)
    out[PAY_PLAYER_PAIR] = f(rules.payout(Bet.PLAYER_PAIR))
    out[PAY_BANKER_PAIR] = f(rules.payout(Bet.BANKER_PAIR))
    out[PAY_DRAGON_7] = f(rules.dragon7_payout)
    out[PAY_PANDA_8] = f(rules.panda8_payout)
    return out


# --- the fast path: each bet's EV as a polynomial in the counts --------------------
#
# The chance of one ordered sequence of card values depends only on its
# multiset: with c_v cards of value v among n, a sequence that holds k_v cards
# of each value has prod_v (c_v)_(k_v) / (n)_L ways, (x)_k = x (x-1) ... (x-k+1).
# So an event's count is a fixed polynomial in the counts: the sum, over the
# multisets of 4, 5 and 6 values, of how many finished hands deal that multiset
# (in some order) with that event, times the product. The coefficients are
# counted once (`_ev_tables`); each composition then costs one pass over the
# 7,722 multisets. For up to 8 decks every product and partial sum is an
# integer below 2**53, so the float sums are exact in any order and the fast
# path gives the exact event counts.

_MULTISETS = tuple(math.comb(size + 9, 9) for size in range(7))   # of 0..6 values
#: _LEVEL[s]: index of the first multiset of s values; the multisets of s
#: values are _LEVEL[s] .. _LEVEL[s + 1] - 1 (the empty one is 0)
_LEVEL = tuple(sum(_MULTISETS[:s]) for s in range(8))
_N_SETS = _LEVEL[7]
_FIRST_HAND = _LEVEL[4]                 # a hand has at least four cards
_N_HANDS = _N_SETS - _FIRST_HAND        # multisets that can be a hand: 7,722
#: events the fast path counts, in the rows of the coefficient table
_C_PLAYER, _C_BANKER, _C_TIE, _C_B6, _C_B7_3, _C_P8_3 = range(6)
_N_COLUMNS = 6
# The work array of `ev_events`: the products, the sums by hand size, room
# for ev_fill's event counts, then the factors (c_v - j) at 8 v + j.
_EV_SUMS = _N_SETS
_EV_OUT = _EV_SUMS + 3 * _N_COLUMNS
_EV_FACTORS = _EV_OUT + _N_COLUMNS
EV_WORK = _EV_FACTORS + 80
# Then, in a work array made for `ev_fill_ahead` (`ev_work(ahead=True)`):
# the products of up to five values and the factors, a row of LANES a
# multiset or factor; the sums by hand size of two events; the event counts
# and the rank counts of each lane; and the EV rows of a counter that keeps
# them for itself (`ahead_rows`).
_LANE_F = EV_WORK
_LANE_G = _LANE_F + _LEVEL[6] * LANES
_LANE_SUMS = _LANE_G + 80 * LANES
_LANE_EVENTS = _LANE_SUMS + 3 * 2 * LANES
_LANE_RANKS = _LANE_EVENTS + LANES * _N_COLUMNS
_LANE_ROWS = _LANE_RANKS + LANES * 14
EV_WORK_AHEAD = _LANE_ROWS + LANES * N_BETS
#: up to this many cards the fast path's sums are exact (8 decks: (416)_6 < 2**53)
EXACT_CARDS = 416
#: `ev_events`' bit mask for every event
ALL_EVENTS = (1 << _N_COLUMNS) - 1


@njit(cache=True)
def _set_of(vals, k, child):
    """The index of the multiset of vals[:k] (which it sorts)."""
    for i in range(1, k):
        x = vals[i]
        j = i - 1
        while j >= 0 and vals[j] > x:
            vals[j + 1] = vals[j]
            j -= 1
        vals[j + 1] = x
    node = 0
    for i in range(k):
        node = child[node, vals[i]]
    return node


@njit(cache=True)
def _count_hand(coef, vals, k, child, pt, bt, p3, b3):
    """Count one finished hand (its card values vals[:k], totals, third cards)."""
    col = _set_of(vals, k, child) - _FIRST_HAND
    if pt > bt:
        coef[_C_PLAYER, col] += 1.0
        if p3 and pt == 8:
            coef[_C_P8_3, col] += 1.0
    elif bt > pt:
        coef[_C_BANKER, col] += 1.0
        if bt == 6:
            coef[_C_B6, col] += 1.0
        elif bt == 7 and b3:
            coef[_C_B7_3, col] += 1.0
    else:
        coef[_C_TIE, col] += 1.0


@njit(cache=True)
def _build_ev_tables(stage, draws):
    """(nodes, coef): the multiset tree and the event coefficients.

    Multisets of values are numbered by size, and each one of s values comes
    from one of s - 1 by adding a value no smaller than its largest:
    nodes[0, i] is that parent and nodes[1, i] = 8 v + j says the value v
    added, of which the parent holds j (the new factor is c_v - j).
    coef[event, i - _FIRST_HAND] counts the finished hands, as ordered card
    values, that deal multiset i and end in the event.
    """
    nodes = np.zeros((2, _N_SETS), np.uint32)
    top = np.zeros(_N_SETS, np.int64)     # largest value of the multiset
    run = np.zeros(_N_SETS, np.int64)     # how many of it
    child = np.full((_N_SETS, 10), -1, np.int64)
    k = 1
    for size in range(6):
        for m in range(_LEVEL[size], _LEVEL[size + 1]):
            for v in range(top[m], 10):
                j = run[m] if v == top[m] else 0
                nodes[0, k] = m
                nodes[1, k] = 8 * v + j
                top[k] = v
                run[k] = j + 1
                child[m, v] = k
                k += 1
    coef = np.zeros((_N_COLUMNS, _N_HANDS))
    vals = np.zeros(6, np.int64)
    for a in range(10):
        for b in range(10):
            for c in range(10):
                for d in range(10):
                    p2 = (a + c) % 10
                    b2 = (b + d) % 10
                    s = stage[p2, b2]
                    vals[0], vals[1], vals[2], vals[3] = a, b, c, d
                    if s == 0:
                        _count_hand(coef, vals, 4, child, p2, b2, False, False)
                        continue
                    if s == 1:
                        for f in range(10):
                            vals[0], vals[1], vals[2], vals[3], vals[4] = a, b, c, d, f
                            _count_hand(coef, vals, 5, child, p2, (b2 + f) % 10, False, True)
                        continue
                    for e in range(10):
                        pt = (p2 + e) % 10
                        if not draws[b2, e]:
                            vals[0], vals[1], vals[2], vals[3], vals[4] = a, b, c, d, e
                            _count_hand(coef, vals, 5, child, pt, b2, True, False)
                            continue
                        for f in range(10):
                            vals[0], vals[1], vals[2], vals[3], vals[4], vals[5] = a, b, c, d, e, f
                            _count_hand(coef, vals, 6, child, pt, (b2 + f) % 10, True, True)
    return nodes, coef


@lru_cache(maxsize=1)
def _ev_tables() -> tuple[np.ndarray, np.ndarray]:
    nodes, coef = _build_ev_tables(_STAGE, _BANKER_DRAWS)
    nodes.flags.writeable = False
    coef.flags.writeable = False
    return nodes, coef


def ev_work(needed: bool = True, ahead: bool = False
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The last three arguments of `ev_fill` and `ev_events`: the shared
    (read-only) multiset tree and coefficients, and a new work array; with
    `ahead`, one large enough for `ev_fill_ahead` too (464 kB, not 65 kB).

    With `needed=False`, empty arrays of the same types, for a compiled loop
    that takes them but never calls `ev_fill` (the tables are not built). Read-only
    too: numba types a read-only array apart, and would compile `ev_fill` and
    its callees a second time (about 3 s, on a cold cache) for writable ones.
    """
    if not needed:
        nodes, coef = np.zeros((2, 0), np.uint32), np.zeros((_N_COLUMNS, 0))
        nodes.flags.writeable = False
        coef.flags.writeable = False
        return nodes, coef, np.zeros(0)
    return (*_ev_tables(), np.zeros(EV_WORK_AHEAD if ahead else EV_WORK))


@njit(cache=True, _nrt=False, fastmath={"reassoc"})  # type: ignore[call-overload]
def _sums_exact(coef, f, out, wanted, top=6):  # type: ignore[no-untyped-def]
    """out[event, size - 4]: the sum of coef[event] * f over the multisets of
    that size (4 to `top`), for the events in the bit mask `wanted`, in any
    order (vectorised): only for sums that are exact."""
    for e in range(_N_COLUMNS):
        if not (wanted >> e) & 1:
            continue
        row = coef[e]
        for size in range(4, top + 1):
            acc = 0.0
            for i in range(_LEVEL[size] - _FIRST_HAND, _LEVEL[size + 1] - _FIRST_HAND):
                acc += row[i] * f[_FIRST_HAND + i]
            out[e, size - 4] = acc


# The same sums in source order, for shoes of more than EXACT_CARDS cards, so
# that their rounding does not depend on the machine's vector width. A
# separate function because numba's cache does not key on compile flags.
@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def _sums_ordered(coef, f, out, wanted):  # type: ignore[no-untyped-def]
    for e in range(_N_COLUMNS):
        if not (wanted >> e) & 1:
            continue
        for size in range(4, 7):
            acc = 0.0
            for i in range(_LEVEL[size], _LEVEL[size + 1]):
                acc += coef[e, i - _FIRST_HAND] * f[i]
            out[e, size - 4] = acc


_PLAYER_BANKER = (1 << _C_PLAYER) | (1 << _C_BANKER)


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def _sums_six_player_banker(coef, f, g, parent, factor, out):  # type: ignore[no-untyped-def]
    """`_sums_exact`'s sums of six values for Player and Banker, each product
    made here from its parent of five (f holds sizes up to 5) and added to
    both sums at once: only for sums that are exact, so that the four partial
    sums below (two products a step) give the same whole numbers in any
    order. Not vectorised: a vector loop gathers f[parent] and g[factor], and
    gathers are slow where microcode guards them (a 2.8 GHz Xeon: 23 us a
    call vectorised, against 9 us for the unfused sums)."""
    cp = coef[_C_PLAYER]
    cb = coef[_C_BANKER]
    p0 = p1 = b0 = b1 = 0.0
    i = np.uint64(_LEVEL[6])
    hi = np.uint64(_LEVEL[7])
    first = np.uint64(_FIRST_HAND)
    one = np.uint64(1)
    while i + one < hi:
        x = f[parent[i]] * g[factor[i]]
        y = f[parent[i + one]] * g[factor[i + one]]
        p0 += cp[i - first] * x
        b0 += cb[i - first] * x
        p1 += cp[i + one - first] * y
        b1 += cb[i + one - first] * y
        i += np.uint64(2)
    if i < hi:
        x = f[parent[i]] * g[factor[i]]
        p0 += cp[i - first] * x
        b0 += cb[i - first] * x
    out[_C_PLAYER, 2] = p0 + p1
    out[_C_BANKER, 2] = b0 + b1


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def ev_events(counts, nodes, coef, work, out, wanted):  # type: ignore[no-untyped-def]
    """The deal events the bets need, counted as ordered six-card draws (as
    `outcome_table` does) and returned as floats: Player, Banker, Tie, Banker
    wins with a 6, with a three-card 7, Player wins with a three-card 8.

    Exact (whole numbers) for up to `EXACT_CARDS` cards. Writes them into
    `out` (6): those in the bit mask `wanted` (bit i for out[i];
    `ALL_EVENTS` for all), 0 for the others. The caller checks that at
    least six cards are left. nodes, coef and work: from `ev_work`.
    """
    f = work[:_N_SETS]
    g = work[_EV_FACTORS:]
    for v in range(10):
        g[8 * v] = 0.0
    for r in range(1, 14):
        g[8 * (r if r < 10 else 0)] += counts[r]
    n = 0.0
    for v in range(10):
        n += g[8 * v]
        for j in range(1, 7):
            g[8 * v + j] = g[8 * v] - j
    # f[m] = prod over values of (c_v)_(k_v), parent before child
    f[0] = 1.0
    parent = nodes[0]
    factor = nodes[1]
    # Player and Banker alone (a commission table): the six-card products are
    # summed as they are made, not stored and read again (-24 % a call)
    fused = n <= EXACT_CARDS and wanted == _PLAYER_BANKER
    for size in range(1, 6 if fused else 7):
        for i in range(np.uint64(_LEVEL[size]), np.uint64(_LEVEL[size + 1])):
            f[i] = f[parent[i]] * g[factor[i]]
    by_size = work[_EV_SUMS:_EV_OUT].reshape((_N_COLUMNS, 3))
    if fused:
        _sums_exact(coef, f, by_size, wanted, 5)
        _sums_six_player_banker(coef, f, g, parent, factor, by_size)
    elif n <= EXACT_CARDS:
        _sums_exact(coef, f, by_size, wanted)
    else:
        _sums_ordered(coef, f, by_size, wanted)
    four = (n - 4.0) * (n - 5.0)
    five = n - 5.0
    for e in range(_N_COLUMNS):
        out[e] = 0.0
        if (wanted >> e) & 1:
            out[e] = by_size[e, 0] * four + by_size[e, 1] * five + by_size[e, 2]


def ev_array(counts: np.ndarray, payouts: np.ndarray) -> np.ndarray:
    """EV per unit staked of every bet, in `Bet` order (float64 array of N_BETS).

    counts: int64 rank counts, length 14 (index 0 unused); payouts: from
    `payout_vector`. A bet with a NaN payout gets NaN. It does not check its
    input (`bet_evs` does) and returns all NaN when fewer than 6 cards are
    left. Compiled code calls `ev_fill` instead.
    """
    out = np.full(N_BETS, np.nan)
    ev_fill(counts, payouts, out, *ev_work())
    return out


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def pair_counts(counts):  # type: ignore[no-untyped-def]
    """The two whole numbers `pair_evs` prices from, for rank counts `counts`:
    (the cards left, the ordered pairs of one rank among them)."""
    n = 0
    same = 0
    for r in range(1, 14):
        n += counts[r]
        same += counts[r] * (counts[r] - 1)
    return n, same


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def pair_evs(same, n, payouts, out):  # type: ignore[no-untyped-def]
    """`ev_fill` with `deals` false, from two numbers a counting loop can keep
    as it takes cards out: `n` the cards left and `same` the sum over ranks of
    c (c - 1) for the c cards of each (ordered pairs of one rank). Writes the
    pair bets' EVs into `out` (NaN when fewer than six cards are left) and
    nothing else: the caller has NaN in every other bet's place. Integers
    below 2**53 give the same doubles as the sums over the counts, so both
    paths agree to the bit."""
    if n < HAND_CARDS:
        out[_B_PLAYER_PAIR] = out[_B_BANKER_PAIR] = np.nan
        return
    pair = same / (n * (n - 1.0))
    out[_B_PLAYER_PAIR] = payouts[PAY_PLAYER_PAIR] * pair - (1.0 - pair)
    out[_B_BANKER_PAIR] = payouts[PAY_BANKER_PAIR] * pair - (1.0 - pair)


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def _wanted_events(payouts):  # type: ignore[no-untyped-def]
    """The deal events (bit mask) the table's payouts need: Player and Banker
    wins always (a tie is every other deal), the special Banker and Player
    wins only where they pay differently or have a bet of their own."""
    wanted = (1 << _C_PLAYER) | (1 << _C_BANKER)
    if payouts[PAY_BANKER_SIX] != payouts[PAY_BANKER]:
        wanted |= 1 << _C_B6
    if payouts[PAY_BANKER_THREE_CARD_SEVEN] != payouts[PAY_BANKER] \
            or not np.isnan(payouts[PAY_DRAGON_7]):
        wanted |= 1 << _C_B7_3
    if not np.isnan(payouts[PAY_PANDA_8]):
        wanted |= 1 << _C_P8_3
    return wanted


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def _price_deals(e, n, payouts, out):  # type: ignore[no-untyped-def]
    """Every bet's EV but the pairs', into `out`, from the deal events `e`
    (as `ev_events` counts them) of `n` cards."""
    deals = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    scale = 1.0 / deals
    p, b = e[_C_PLAYER] * scale, e[_C_BANKER] * scale
    t = (deals - e[_C_PLAYER] - e[_C_BANKER]) * scale
    six, seven, p83 = e[_C_B6] * scale, e[_C_B7_3] * scale, e[_C_P8_3] * scale
    out[_B_PLAYER] = payouts[PAY_PLAYER] * p - b
    out[_B_BANKER] = (payouts[PAY_BANKER] * (b - six - seven) + payouts[PAY_BANKER_SIX] * six
                      + payouts[PAY_BANKER_THREE_CARD_SEVEN] * seven - p)
    out[_B_TIE] = payouts[PAY_TIE] * t - (1.0 - t)
    out[_B_DRAGON_7] = payouts[PAY_DRAGON_7] * seven - (1.0 - seven)
    out[_B_PANDA_8] = payouts[PAY_PANDA_8] * p83 - (1.0 - p83)


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def ev_fill(counts, payouts, out, nodes, coef, work, deals=True):  # type: ignore[no-untyped-def]
    """`ev_array` without allocating, callable from compiled code: writes into
    `out` (N_BETS); nodes, coef and work come from `ev_work`.

    Counts only the events the table's payouts need (`_wanted_events`). With
    `deals` false, only the pair bets' EVs, which need no deal counted (the
    others are NaN): a few operations instead of microseconds.
    """
    left, same = pair_counts(counts)
    n = float(left)
    for i in range(N_BETS):
        out[i] = np.nan
    pair_evs(float(same), n, payouts, out)
    if not deals or n < HAND_CARDS:
        return
    e = work[_EV_OUT:_EV_FACTORS]
    ev_events(counts, nodes, coef, work, e, _wanted_events(payouts))
    _price_deals(e, n, payouts, out)


def ahead_rows(work: np.ndarray) -> np.ndarray:
    """The rows in `work` (from `ev_work`) where a counter that keeps its EVs
    to itself has `ev_fill_ahead` write them: LANES rows of N_BETS."""
    return work[_LANE_ROWS:EV_WORK_AHEAD].reshape((LANES, N_BETS))


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def ahead_rows_compiled(work):  # type: ignore[no-untyped-def]
    """`ahead_rows` for compiled code (compiled without reference counting,
    it cannot hand a view back to Python)."""
    return work[_LANE_ROWS:EV_WORK_AHEAD].reshape((LANES, N_BETS))


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def _cards_left(g, lane):  # type: ignore[no-untyped-def]
    """The cards of a lane's composition, from its factor rows (as `ev_events`
    sums them, value by value)."""
    n = 0.0
    for v in range(10):
        n += g[8 * v, lane]
    return n


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def ev_fill_ahead(counts, cards, hand_no, k, payouts, rows, nodes, coef,  # type: ignore[no-untyped-def]
                  work, deals=True):
    """`ev_fill` for hand index `k` and the hands after it in its shoe, up to
    LANES of them, at once: rows[m] gets the EVs before hand k + m.

    `counts`: the rank counts before hand k; cards and hand_no: the hands'
    cards (rank in the low 4 bits, 0 for none) and numbers in their shoe (1
    for a shoe's first hand, where the hands that follow stop). Every
    composition is a lane of `lanes.lane_sums`, which walks the tree of
    products once for all of them. Up to `EXACT_CARDS` cards its event
    counts are the same whole numbers as `ev_events`', so every EV is the
    same double as `ev_fill`'s; a larger shoe is priced by `ev_fill`, one
    hand. With `deals` false, only the pair bets' EVs, as `ev_fill`'s.
    Returns how many rows it wrote (at least one). `rows` needs that many;
    nodes, coef and work come from `ev_work(ahead=True)`.
    """
    if work.shape[0] < EV_WORK_AHEAD:
        raise ValueError("ev_fill_ahead needs the work array of ev_work(ahead=True)")
    ranks = work[_LANE_RANKS:_LANE_ROWS].reshape((LANES, 14))
    for r in range(14):
        ranks[0, r] = counts[r]
    m = 1
    while m < LANES and k + m < hand_no.shape[0] and hand_no[k + m] != 1:
        for r in range(14):
            ranks[m, r] = ranks[m - 1, r]
        for c in range(6):
            ranks[m, cards[k + m - 1, c] & 15] -= 1.0   # an empty slot: rank 0, not read
        m += 1
    n0 = 0.0
    for r in range(1, 14):
        n0 += ranks[0, r]
    if n0 > EXACT_CARDS:
        ev_fill(counts, payouts, rows[0], nodes, coef, work, deals)
        return 1
    g = work[_LANE_G:_LANE_SUMS].reshape((80, LANES))
    for q in range(80):
        for lane in range(LANES):
            g[q, lane] = 0.0
    for lane in range(m):
        left = same = 0.0
        for r in range(1, 14):
            c = ranks[lane, r]
            g[8 * (r if r < 10 else 0), lane] += c
            left += c
            same += c * (c - 1.0)
        row = rows[lane]
        for b in range(N_BETS):
            row[b] = np.nan
        pair_evs(same, left, payouts, row)
    if not deals or n0 < HAND_CARDS:
        return m
    for v in range(10):
        for j in range(1, 7):
            for lane in range(LANES):
                g[8 * v + j, lane] = g[8 * v, lane] - j
    f = work[_LANE_F:_LANE_G].reshape((_LEVEL[6], LANES))
    for lane in range(LANES):
        f[0, lane] = 1.0
    parent = nodes[0]
    factor = nodes[1]
    lane_products(f, g, parent, factor, 1, _LEVEL[4])
    sums = work[_LANE_SUMS:_LANE_EVENTS].reshape((3, 2, LANES))
    events = work[_LANE_EVENTS:_LANE_RANKS].reshape((LANES, _N_COLUMNS))
    for lane in range(LANES):
        for e in range(_N_COLUMNS):
            events[lane, e] = 0.0
    wanted = _wanted_events(payouts)
    # two events a walk, in their order: Player and Banker, then the Banker 6
    # (beside the tie, which is every other deal and not summed), then the
    # three-card 7 and the Player three-card 8, each if wanted; the products
    # of four and five values are stored by the first walk
    for walk in range(3):
        ea = 2 * walk
        eb = ea + 1
        if not ((wanted >> ea) & 1 or (wanted >> eb) & 1):
            continue
        for size in range(4, 7):
            s = sums[size - 4]
            for lane in range(LANES):
                s[0, lane] = 0.0
                s[1, lane] = 0.0
            lane_sums(f, g, parent, factor, coef[ea], coef[eb], _FIRST_HAND,
                      _LEVEL[size], _LEVEL[size + 1], walk == 0 and size < 6, s)
        for lane in range(m):
            n = _cards_left(g, lane)
            four = (n - 4.0) * (n - 5.0)
            five = n - 5.0
            for x in range(2):
                if (wanted >> (ea + x)) & 1:
                    events[lane, ea + x] = sums[0, x, lane] * four + sums[1, x, lane] * five \
                        + sums[2, x, lane]
    for lane in range(m):
        n = _cards_left(g, lane)
        if n >= HAND_CARDS:
            _price_deals(events[lane], n, payouts, rows[lane])
    return m


def bet_evs(counts: Sequence[int] | np.ndarray, rules: Rules) -> dict[Bet, float]:
    """EV per unit staked of every bet `rules` offers, for a composition (floats).

    The card counter's path: checks the composition, then runs `ev_array`.

    >>> evs = bet_evs(composition(8), Rules.preset("commission"))
    >>> round(evs[Bet.BANKER], 6), round(evs[Bet.TIE], 6)
    (-0.010579, -0.143596)
    """
    arr = check_counts(counts)
    _check_cards_left(int(arr.sum()))
    evs = ev_array(arr, _payout_vector(rules))
    return {bet: float(evs[bet.code]) for bet in rules.offered_bets()}


# --- rendering ------------------------------------------------------------------------

_COLUMNS = ("bet", "payout", "p_win", "p_push", "p_loss", "ev", "house_edge",
            "edge_per_resolved", "std_dev", "terms")


def payout_text(bet: Bet, rules: Rules) -> str:
    """'0.95 to 1', '1 to 1 (6 pays 0.5)', '1 to 1 (3-card 7 pushes)'."""
    payout = rules.payout(bet)
    if payout is None:
        return "not offered"
    text = f"{_number(payout)} to 1"
    if bet is Bet.BANKER and rules.banker_six_payout is not None:
        text += f" (6 pays {_number(rules.banker_six_payout)})"
    if bet is Bet.BANKER and rules.banker_three_card_seven_push:
        text += " (3-card 7 pushes)"
    return text


def _number(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"


def render_table(result: OddsResult) -> str:
    """The odds as a person reads them: a header, the main probabilities, one row per bet."""
    t = result.table
    prob = {e: float(t.probability(e)) for e in (Event.PLAYER, Event.BANKER, Event.TIE)}
    head = ["Bet", "Payout", "P(win)", "P(push)", "P(loss)", "EV per unit", "House edge",
            "Edge per resolved bet", "Std dev"]
    rows = [[b.bet.value, payout_text(b.bet, result.rules), f"{float(b.p_win):.6f}",
             f"{float(b.p_push):.6f}", f"{float(b.p_loss):.6f}", f"{float(b.ev):+.6f}",
             f"{b.house_edge * 100:.4f}%", _percent(b.edge_per_resolved), f"{b.std_dev:.4f}"]
            for b in result.bets]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([
        f"Exact odds -- shoe: {result.shoe_description}; rules: {result.rules.name}",
        f"Hands counted as ordered draws of six cards: {t.combinations:,}",
        f"Player wins {prob[Event.PLAYER]:.6f}, Banker wins {prob[Event.BANKER]:.6f}, "
        f"Tie {prob[Event.TIE]:.6f}",
        "",
        line(head),
        line(["-" * w for w in widths]),
        *(line(r) for r in rows),
    ]) + "\n"


def _percent(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:.4f}%"


def render_json(result: OddsResult) -> str:
    return json.dumps(result.to_json_dict(), indent=2) + "\n"


def render_csv(result: OddsResult) -> str:
    """One row per bet; probabilities, EV and edges as fractions of a unit, full
    precision. `payout` is the bet's usual payout (a decimal) and `terms` says it in words
    with its exceptions ("1 to 1 (6 pays 0.5)")."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(_COLUMNS)
    for b in result.bets:
        resolved = b.edge_per_resolved
        # the payout as a decimal: "19/20" reads as a date in a spreadsheet
        writer.writerow([b.bet.value, _number(b.payout), repr(float(b.p_win)), repr(float(b.p_push)),
                         repr(float(b.p_loss)), repr(float(b.ev)), repr(b.house_edge),
                         "" if math.isnan(resolved) else repr(resolved), repr(b.std_dev),
                         payout_text(b.bet, result.rules)])
    return buf.getvalue()


RENDERERS = {"table": render_table, "json": render_json, "csv": render_csv}


def render(result: OddsResult, fmt: str = "table") -> str:
    """Render in one of RENDERERS' formats."""
    try:
        return RENDERERS[fmt](result)
    except KeyError:
        raise RulesError(f"unknown odds format {fmt!r} (known: {', '.join(RENDERERS)})") from None


__all__ = [
    "Event", "OutcomeTable", "BetOdds", "OddsResult", "bet_evs", "bet_odds", "bet_outcomes",
    "cards_before", "check_counts", "check_suited", "composition", "composition_after",
    "ev_array", "exact_odds", "ordered_draws", "outcome_table", "payout_text", "payout_vector",
    "remove_cards", "render", "render_csv", "render_json", "render_table", "shoe_odds",
]

"""Exact odds of every bet, by enumeration over a shoe's composition.

The package, by job: `compositions` (the counts left in a shoe), `events`
(what is counted, and the tableau as tables), `deals` (the exact count of
the deal, pairs jointly with the winner), `exact` (the outcome table and
each bet's Fractions), `covariance` (the bets' exact covariance), `fast`
(floats, compiled, for the card counter), `pricing` (its payout matrix,
built from the settlement), `render` (table, JSON, CSV).

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
>>> from backtest.odds import bet_evs
>>> round(bet_evs(composition(8, remove="5 5 5 5"), Rules.preset("commission"))[Bet.PLAYER], 6)
-0.01202
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from backtest.core.rules import Bet, Rules  # noqa: F401 (the doctest above uses them)
from backtest.core.settlement import payout_text
from backtest.odds.compositions import (
    cards_before,
    check_counts,
    check_suited,
    composition,
    composition_after,
    remove_cards,
)
from backtest.odds.covariance import (
    joint_nets,
    joint_nets_array,
    unit_covariance,
    unit_covariance_exact,
)
from backtest.odds.deals import N_JOINT
from backtest.odds.events import HAND_CARDS, N_BETS, N_KEPT, N_KINDS, N_PAYOUTS, PAYOUT_SHAPE, Event
from backtest.odds.exact import (
    BetOdds,
    OddsResult,
    OutcomeTable,
    bet_odds,
    bet_outcomes,
    exact_odds,
    ordered_draws,
    outcome_table,
    shoe_odds,
)
from backtest.odds.render import RENDERERS, render, render_csv, render_json, render_table

#: the compiled path's names, by the module that holds them, imported when
#: first asked for: the exact path (`backtest odds`) then never loads numba
_FAST = {
    "ALL_EVENTS": "polynomial",
    "EV_WORK": "polynomial",
    "EV_WORK_AHEAD": "polynomial",
    "EXACT_CARDS": "polynomial",
    "MOMENTS_WORK": "moments",
    "ahead_rows": "ahead",
    "ahead_rows_compiled": "ahead",
    "ahead_kept": "ahead",
    "ahead_kept_compiled": "ahead",
    "bet_evs": "fast",
    "ev_array": "fast",
    "ev_events": "fast",
    "ev_fill": "fast",
    "ev_fill_ahead": "ahead",
    "ev_work": "polynomial",
    "cross_fill": "moments",
    "needs_counts": "moments",
    "one_bet_variance": "moments",
    "single_bet": "moments",
    "keep_kinds": "ahead",
    "keep_pairs": "ahead",
    "pair_counts": "fast",
    "pairs_evs": "pricing",
    "price_deals": "pricing",
    "pair_evs": "pricing",
    "payout_vector": "pricing",
    "stake_variance": "moments",
    "wanted_events": "pricing",
}


if TYPE_CHECKING:  # the names as they are, for a type checker
    from backtest.odds.ahead import (
        ahead_kept,
        ahead_kept_compiled,
        ahead_rows,
        ahead_rows_compiled,
        ev_fill_ahead,
        keep_kinds,
        keep_pairs,
    )
    from backtest.odds.fast import (
        bet_evs,
        ev_array,
        ev_events,
        ev_fill,
        pair_counts,
    )
    from backtest.odds.moments import (
        MOMENTS_WORK,
        cross_fill,
        needs_counts,
        one_bet_variance,
        single_bet,
        stake_variance,
    )
    from backtest.odds.polynomial import (
        ALL_EVENTS,
        EV_WORK,
        EV_WORK_AHEAD,
        EXACT_CARDS,
        ev_work,
    )
    from backtest.odds.pricing import (
        pair_evs,
        pairs_evs,
        payout_vector,
        price_deals,
        wanted_events,
    )


def __getattr__(name: str) -> Any:
    if name in _FAST:
        from importlib import import_module

        return getattr(import_module(f"backtest.odds.{_FAST[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "single_bet",
    "ahead_kept",
    "ahead_kept_compiled",
    "one_bet_variance",
    "keep_pairs",
    "N_JOINT",
    "N_KEPT",
    "N_KINDS",
    "needs_counts",
    "keep_kinds",
    "wanted_events",
    "MOMENTS_WORK",
    "cross_fill",
    "stake_variance",
    "ALL_EVENTS",
    "EV_WORK",
    "EV_WORK_AHEAD",
    "EXACT_CARDS",
    "HAND_CARDS",
    "N_BETS",
    "N_PAYOUTS",
    "PAYOUT_SHAPE",
    "RENDERERS",
    "BetOdds",
    "Event",
    "OddsResult",
    "OutcomeTable",
    "ahead_rows",
    "ahead_rows_compiled",
    "bet_evs",
    "bet_odds",
    "bet_outcomes",
    "cards_before",
    "check_counts",
    "check_suited",
    "composition",
    "composition_after",
    "ev_array",
    "ev_events",
    "ev_fill",
    "ev_fill_ahead",
    "ev_work",
    "exact_odds",
    "joint_nets",
    "joint_nets_array",
    "ordered_draws",
    "outcome_table",
    "pair_counts",
    "pair_evs",
    "pairs_evs",
    "price_deals",
    "payout_text",
    "payout_vector",
    "remove_cards",
    "render",
    "render_csv",
    "render_json",
    "render_table",
    "shoe_odds",
    "unit_covariance",
    "unit_covariance_exact",
]

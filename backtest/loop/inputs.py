"""The session loop's inputs, as a few NamedTuples: the hands (`Dealt`), the
table (`Table`), a seat's stop rules (`Stops`), the table's shared exact EVs
(`SharedEvs`), where the loop writes (`Outputs`), the strategy (`Seat`) and
its work arrays (`Work`); with what makes them."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from backtest import odds
from backtest.core.rules import PAIR_BETS
from backtest.odds.events import N_KEPT
from strategies import compiled
from strategies.base import (
    CTX_SIZE,
    N_BETS,
    STATE_FLOATS,
    STATE_INTS,
    Compiled,
    Strategy,
)


def needs_deals(strategy: Strategy, compiled_path: bool) -> bool:
    """Whether a counting seat reads EVs that need the deals counted: not a
    built-in run compiled that can bet only the pairs (their EVs have a
    closed form); a strategy run in Python may read any bet's EV."""
    return not compiled_path or bool(strategy.possible_bets() - set(PAIR_BETS))


def shared_evs(
    n_hands: int, counting_seats: int, deals: bool
) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray]:
    """The table's exact EVs before each of its hands, shared by its counting
    seats (three arguments of both loops): a row per hand, written by the
    first seat to play the hand (with the rows of the hands after it in its
    shoe that `odds.ev_fill_ahead` prices in the same pass) and read by the
    others (the EVs depend on the table's cards alone, and each seat counts
    them from its shoe's first hand); whether each row is written; and
    whether the EVs count the deals
    (False when every counting seat needs only the pair bets, whose other
    EVs are then NaN); and beside each row, the chances the variance of a
    hand's stakes reads (`odds.N_KEPT`, apart: a counter reads them only on
    the hands it stakes). No rows for a table with one counting seat or none:
    a lone counter works its EVs out for itself, in memory it keeps warm."""
    rows = n_hands if counting_seats > 1 else 0
    return np.zeros((rows, N_BETS)), np.zeros(rows, np.bool_), deals, np.zeros((rows, N_KEPT))


# --- the loop's inputs ----------------------------------------------------------------------


class Dealt(NamedTuple):
    """The hands of a chunk of sessions, and where each session starts."""

    winner: np.ndarray  # int8 (n,): 0 Player, 1 Banker, 2 Tie
    hand_no: np.ndarray  # int32 (n,): number of the hand in its shoe (1-based)
    shoe_no: np.ndarray  # int32 (n,): number of its shoe in its session (0-based)
    unit: np.ndarray  # int64 (N_BETS, n): `payouts.unit_results`
    cards: np.ndarray  # uint8 (n, 6): the cards (rank in the low 4 bits, 0 none)
    bounds: np.ndarray  # int64 (sessions + 1,): session j is hands bounds[j]..bounds[j+1]-1
    session_ids: np.ndarray  # int64 (sessions,): each session's number in the run


class Table(NamedTuple):
    """The table: its money, limits, the bets it settles, and the exact EVs."""

    den: int  # the money denominator: a cent is `den` ticks
    min_c: np.ndarray  # int64 (N_BETS,): minimum stake by bet, cents
    max_c: np.ndarray  # int64 (N_BETS,): maximum stake by bet, cents
    offered: np.ndarray  # bool (N_BETS,): the bets the table (and the shoe) settles
    pb_together: bool  # Player and Banker may be staked on one hand
    pairs_need_main: bool  # a pair bet needs a main bet beside it
    full_counts: np.ndarray  # int64 (14,): the full shoe's rank counts
    ev_table: np.ndarray  # float64: `odds.payout_vector`
    evs_full: np.ndarray  # float64 (N_BETS,): the full shoe's EV by bet (0 where not offered)
    cov: np.ndarray  # float64 (N_BETS, N_BETS): the unit results' covariance
    # (`odds.unit_covariance`; 0 where not offered)
    nets: np.ndarray  # float64 (N_BETS, N_JOINT): each bet's net on each kind of
    # hand (`odds.joint_nets`; 0 where not offered), for a counter's variance


class Stops(NamedTuple):
    """A seat's session rules, in ticks (-1: none)."""

    bankroll0: int
    stop_loss: int
    win_goal: int
    max_hands: int
    ruin_below: int  # a bankroll below this cannot stake any bet the seat may place


class SharedEvs(NamedTuple):
    """The table's exact EVs before each hand, shared by its counting seats (`shared_evs`)."""

    rows: np.ndarray  # float64 (n or 0, N_BETS)
    done: np.ndarray  # bool (n or 0,)
    deals: bool
    kept: np.ndarray  # float64 (n or 0, N_KEPT): the chances a hand's variance reads


class Outputs(NamedTuple):
    """Where the loop writes: each session's statistics, and the ledger; and
    for paired comparisons, the baseline seat's stakes on each hand
    (`base_cents`), which the seat after it reads. The baseline plays a
    chunk's hands first."""

    stats: np.ndarray  # int64 (sessions, N_STATS)
    wagered: np.ndarray  # int64 (sessions, N_BETS)
    expected: np.ndarray  # float64 (sessions,)
    variance: np.ndarray  # float64 (sessions,): the net's variance given the stakes placed
    ledger: bool
    led_idx: np.ndarray  # int64 (n or 0,)
    led_cents: np.ndarray  # int64 (n or 0, N_BETS)
    led_net: np.ndarray  # int64 (n or 0,)
    led_bank: np.ndarray  # int64 (n or 0,)
    largest: np.ndarray  # float64 (sessions,): the largest one hand's variance given its stakes
    # (to rounding: the session's variance after the hand less before it)
    cross: np.ndarray  # float64 (sessions,): the covariance of the net with the baseline
    # seat's, given both seats' stakes: sum over the hands of s_base' C s
    base_cents: np.ndarray  # int64 (n or 0, N_BETS): the baseline seat's cents by bet on
    # each hand, written by the baseline's loop and read by the other seats'
    base_role: int  # BASE_NONE, BASE_WRITES (this seat is the baseline) or BASE_READS


#: `Outputs.base_role`: no baseline (one seat), the baseline seat, another seat
BASE_NONE, BASE_WRITES, BASE_READS = 0, 1, 2


class Seat(NamedTuple):
    """The strategy in the seat: its kind (`strategies.compiled`), parameters and facts."""

    kind: int
    key: np.uint64  # its sessions' random seeds come from this
    p: np.ndarray  # float64: its parameter vector (`Compiled.encode`)
    active: np.ndarray  # uint64: the bets it may place, by code
    slot: int
    picks: bool
    writes_out: bool
    learns: bool
    reads_ctx: bool
    cards_seen: bool


class Work(NamedTuple):
    """Work arrays: the loop allocates nothing."""

    s: np.ndarray
    si: np.ndarray
    ctx: np.ndarray
    out: np.ndarray
    stakes: np.ndarray
    unit_f: np.ndarray
    cents: np.ndarray
    side_c: np.ndarray
    counts: np.ndarray
    evs: np.ndarray
    seed_work: np.ndarray
    ev_nodes: np.ndarray
    ev_coef: np.ndarray
    ev_work: np.ndarray
    fast_c: np.ndarray
    allowed: np.ndarray
    evs_seen: np.ndarray  # a user's copy of the EVs (what it writes there goes nowhere)
    hist_seen: np.ndarray  # a user's copy of the shoe's winners (int8, a shoe's length)
    var_s: np.ndarray  # a counter's stakes on a hand, for its variance
    mom: np.ndarray  # `odds.stake_variance`'s work (MOMENTS_WORK, or none)


def seat_of(strategy: Compiled, key: np.uint64) -> Seat:
    """The `Seat` of a Compiled strategy, with its random key."""
    facts = compiled.facts(type(strategy))
    active = np.array(sorted(b.code for b in strategy.possible_bets()), np.uint64)
    kind = compiled.kind_of(strategy)
    p = np.array(strategy.encode(), np.float64)
    slot = facts.slot
    if kind == compiled.USER:
        p.flags.writeable = False  # a session cannot change what the next one plays
        slot = -1  # its update is given every bet's stake and result, as in Python
    return Seat(
        kind,
        np.uint64(key),
        p,
        active,
        slot,
        facts.picks,
        facts.writes_out,
        facts.learns,
        facts.reads_ctx,
        facts.cards_seen,
    )


def work_for(seat: Seat, dealt: Dealt) -> Work:
    """The work arrays of the loop for `seat` over the hands of `dealt`."""
    shoe_hands = dealt.winner.shape[0]  # room for a user's copy of a shoe's winners
    allowed = np.zeros(N_BETS, np.bool_)
    allowed[seat.active.astype(np.int64)] = True
    return Work(
        np.zeros(STATE_FLOATS),
        np.zeros(STATE_INTS, np.int64),
        np.zeros(CTX_SIZE),
        np.zeros(N_BETS),
        np.zeros(N_BETS),
        np.zeros(N_BETS),
        np.zeros(N_BETS, np.int64),
        np.zeros(N_BETS, np.int64),
        np.zeros(14, np.int64),
        np.zeros(N_BETS),
        np.zeros(4, np.uint64),
        *odds.ev_work(seat.cards_seen, ahead=seat.cards_seen),
        np.zeros((2, N_BETS), np.int64),
        allowed,
        np.zeros(N_BETS),
        np.zeros(shoe_hands if seat.kind == compiled.USER else 0, np.int8),
        np.zeros(N_BETS),
        np.zeros(odds.MOMENTS_WORK if seat.cards_seen else 0),
    )

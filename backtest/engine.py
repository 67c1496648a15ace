"""Seats (strategies with bankrolls) over hands: the backtest engine.

A table deals one stream of hands to every seat, so seats are compared on
exactly the same hands. A session starts with a fresh shoe and a fresh
bankroll and lasts `max_shoes` shoes or `max_hands` hands; a seat that is
ruined or reaches a stop rule sits out the rest of it. Sessions are keyed by
their number: session j's shoes are random streams (j << 20) + m of the
master seed, and each seat's own randomness (the random bettor) streams from
the seed, the seat and j. So the same config gives the same numbers in one
process or spread over many, in any order.

Work goes in chunks of sessions, so memory stays flat however many hands are
asked for; only per-session statistics are kept, unless a ledger is asked.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from backtest import payouts, python_loop, session_loop
from backtest.cards import full_shoe_counts
from backtest.config import (MAX_SESSIONS, MONEY_LIMIT, RunConfig, build_strategies,
                             parse_config)
from backtest.errors import (BacktestError, ConfigError, MissingDataError, StrategyError,
                             UsageError, shown_count)
from backtest.hands import Hands, describe_column
from backtest.odds import ev_array, payout_vector
from backtest.rules import Bet
from backtest.shoe import generate_shoes
from strategies.base import P_SIDE, Builtin, Strategy
from strategies.compiled import USER, kind_of, runs_compiled, user_functions

SHOE_BITS = 20
SHOE_MASK = (1 << SHOE_BITS) - 1
#: the most sessions one run has (its chunks are listed before it starts)
#: the most worker processes a run or a sweep starts on this machine
MAX_WORKERS = 256
CHUNK_HANDS = 400_000
#: sessions whose bankroll after every hand is kept for plots (`--out`)
PATH_SESSIONS = 100
#: runs this large use every core by default (below it, starting processes costs more)
PARALLEL_HANDS = 4_000_000
#: a hand at a table with a counting seat, in hands of that measure: the exact
#: EVs cost 7 to 9 us a hand, three other seats about 0.15 us
COUNTING_WEIGHT = 50
BETS = tuple(Bet)


@dataclass
class SeatResult:
    """Raw per-session numbers of one seat, in ticks (1/(100*D) currency)."""

    stats: np.ndarray      # (sessions, N_STATS) int64
    wagered: np.ndarray    # (sessions, 7) int64
    expected: np.ndarray   # (sessions,) float64, expected net in currency
    ledger: dict[str, np.ndarray] | None = None


#: one seat's frames of one chunk: sessions (None once spilled to disk), ledger or None
SeatFrames = tuple[pl.DataFrame | None, pl.DataFrame | None]


@dataclass
class RunResult:
    config: RunConfig
    sessions: pl.DataFrame | pl.LazyFrame  # lazy when the run was spilled to disk
    summary: pl.DataFrame
    ledger: pl.DataFrame | None
    seed: int
    hands: int

    @property
    def n_sessions(self) -> int:
        """The sessions run (which `sessions=` may have set over the config's)."""
        return int(self.summary["sessions"].to_numpy().max(initial=0))


# --- planning -----------------------------------------------------------------------

class ReplayedShoesWarning(UserWarning):
    """Recorded shoes played again (`loop: true`): the sessions are not independent."""


def count_sessions(config: RunConfig, override: int | None = None) -> int:
    """How many sessions the run has (and a check that a generated session's
    shoes can be numbered)."""
    if override is not None:
        if override < 1:
            raise ConfigError(f"the number of sessions must be at least 1, got {override}")
        if override > MAX_SESSIONS:
            raise ConfigError(f"the number of sessions must be at most {MAX_SESSIONS:,}, "
                              f"got {shown_count(override)}; split a larger run into runs with other seeds")
        n = override
    else:
        n = config.sessions or 0
        if n > MAX_SESSIONS:
            raise ConfigError(f"{config.source}: sessions: at most {MAX_SESSIONS:,}, got {shown_count(n)}; "
                              "split a larger run into runs with other seeds")
    if config.recorded is None:
        per = shoes_per_session(config)
        if per > SHOE_MASK + 1:
            key = "session.max_shoes" if config.session.max_shoes is not None \
                else "session.max_hands"
            raise ConfigError(f"{config.source}: {key}: a session can deal at most "
                              f"{SHOE_MASK + 1:,} shoes, and these sessions could need {shown_count(per)}; "
                              "ask for fewer hands or shoes, or deal bigger shoes")
        return n or 1000
    plan = recorded_plan(config)
    path, shoes = config.recorded.path, plan.n_shoes
    if max(plan.takes, default=1) > SHOE_MASK + 1:
        raise ConfigError(f"{config.source}: session.max_hands: a session can play at most "
                          f"{SHOE_MASK + 1:,} shoes, and {plan.session_words} from the "
                          f"{_shoes(shoes)} of {path} take {max(plan.takes):,}; ask for "
                          "fewer hands")
    if plan.available == 0:
        raise ConfigError(f"{config.source}: shoes.file {path} has {_shoes(shoes)} "
                          f"({plan.hands:,} hands), too few for one session of "
                          f"{plan.session_words}")
    if n == 0:
        if plan.left_over:
            last = "the last shoe" if plan.left_over == 1 else f"the last {plan.left_over} shoes"
            verb = "is" if plan.left_over == 1 else "are"
            warnings.warn(f"{config.source}: {last} of the {_shoes(shoes)} in "
                          f"{path} {verb} not played: too few for another session of "
                          f"{plan.session_words} (set sessions and shoes.loop: true to play "
                          "every shoe, some again)", UnplayedShoesWarning, stacklevel=2)
        return plan.available
    if n > plan.available and config.recorded.loop:
        warnings.warn(f"{config.source}: {n:,} sessions of {plan.session_words} need more "
                      f"shoes than {path} has ({shoes}, {plan.available:,} session(s)), so "
                      "its shoes are played again in order; sessions on the same shoes are "
                      "not independent, so the confidence interval and z are narrower than "
                      "the data can support", ReplayedShoesWarning, stacklevel=2)
    if n > plan.available and not config.recorded.loop:
        # the number came from the config's `sessions`, or from the caller (--sessions:
        # a usage error)
        said = f"{n:,} sessions of {plan.session_words} need more shoes than the " \
               f"{_shoes(shoes)} of {path}, which make {plan.available:,}; ask for at most " \
               f"{plan.available:,} sessions, or set shoes.loop: true in the config to play " \
               "the shoes again"
        if override is None:
            raise ConfigError(f"{config.source}: sessions: {said}")
        raise TooManySessions(said)
    return n


class TooManySessions(UsageError):
    """The sessions a caller asked for (`run(sessions=...)`; `--sessions` on
    the command line, which says so) need more recorded shoes than the file
    holds. `said`: what is wrong."""

    def __init__(self, said: str) -> None:
        super().__init__(f"the sessions asked for: {said}")
        self.said = said


def _shoes(n: int) -> str:
    return "1 shoe" if n == 1 else f"{n:,} shoes"


class UnplayedShoesWarning(UserWarning):
    """The last recorded shoes make no whole session and are not played."""


@dataclass(frozen=True)
class RecordedPlan:
    """Which recorded shoes each session plays. Sessions take the file's shoes
    in order, each starting a new shoe: `max_shoes` of them, or (with only
    `max_hands`) as many as reach `max_hands` hands. `available` sessions
    fit in one pass; `left_over` shoes after them make no whole session.
    Played again (`loop`), the shoes run on in order from the first."""

    n_shoes: int
    hands: int
    available: int
    left_over: int
    session_words: str
    #: for a session starting at shoe s (0-based): how many shoes it takes,
    #: reading on from the first shoe after the last (loop) ...
    takes: tuple[int, ...]
    #: ... and the first shoe of sessions 0, 1, ... until they repeat
    starts: tuple[int, ...]
    #: starts[cycle:] repeats for ever
    cycle: int

    def sessions(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """(first shoe, shoes) of sessions lo..hi-1 (0-based shoe indices)."""
        out = []
        period = len(self.starts) - self.cycle
        for j in range(lo, hi):
            k = j if j < len(self.starts) else self.cycle + (j - self.cycle) % period
            first = self.starts[k]
            out.append((first, self.takes[first]))
        return out


def recorded_plan(config: RunConfig) -> RecordedPlan:
    source = load_recorded(config)
    s = config.session
    return _recorded_plan(tuple(np.unique(source.shoe, return_counts=True)[1].tolist()),
                          s.max_shoes, s.max_hands)


@lru_cache(maxsize=8)
def _recorded_plan(lengths: tuple[int, ...], max_shoes: int | None,
                   max_hands: int | None) -> RecordedPlan:
    n = len(lengths)
    total = sum(lengths)
    if max_shoes is not None:
        words = f"{max_shoes} shoe{'s' if max_shoes != 1 else ''}"
        takes = [max_shoes] * n
    elif max_hands is not None:
        words = f"{max_hands:,} hand{'s' if max_hands != 1 else ''}"
        # the shoes from s, in order and round again, that reach max_hands hands
        rounds = (max_hands - 1) // total if total else 0   # whole passes over the file
        takes = []
        for first in range(n):
            got, k = rounds * total, rounds * n
            while got < max_hands:
                got += lengths[(first + k) % n]
                k += 1
            takes.append(k)
    else:   # the config requires one of the two; a session is one shoe
        words, takes = "1 shoe", [1] * n
    available = at = 0
    while n and at + takes[at] <= n:
        at += takes[at]
        available += 1
        if at == n:
            break
    starts: list[int] = []
    seen: dict[int, int] = {}
    first = 0
    while n and first not in seen:
        seen[first] = len(starts)
        starts.append(first)
        first = (first + takes[first]) % n
    return RecordedPlan(n, total, available, n - at, words, tuple(takes), tuple(starts),
                        seen.get(first, 0))


def shoes_per_session(config: RunConfig) -> int:
    """Shoes dealt for each generated session (enough for max_hands)."""
    s = config.session
    if s.max_shoes is not None:
        return s.max_shoes
    spec = config.shoe
    assert spec is not None
    worst_burn = 11 if spec.burn else 0
    per_shoe = max(1, (spec.n_cards - spec.cut_card - worst_burn - 6) // 6)
    return max(1, math.ceil((s.max_hands or 1) / per_shoe))


@lru_cache(maxsize=4)
def _read_recorded(path: str, decks: int, burn: bool, mtime: float) -> Hands:
    from backtest import recorded

    return recorded.read_shoes(path, decks=decks, burn=burn)


def load_recorded(config: RunConfig) -> Hands:
    rec = config.recorded
    assert rec is not None
    try:
        return _read_recorded(str(rec.path), rec.decks, rec.burn, rec.path.stat().st_mtime)
    except UsageError as exc:
        # what the config asked of the file (e.g. the burn rule for a road), not
        # a command-line usage error: the config's key, exit 1
        raise ConfigError(f"{config.source}: shoes: {exc}") from None


def _hands_for(config: RunConfig, lo: int, hi: int) -> tuple[Hands, np.ndarray, np.ndarray]:
    """The hands of sessions lo..hi-1, their session boundaries, and each
    hand's shoe number within its session."""
    if config.recorded is None:
        per = shoes_per_session(config)
        ids = (np.arange(lo, hi, dtype=np.int64)[:, None] << SHOE_BITS) + np.arange(per)[None, :]
        assert config.shoe is not None
        hands = generate_shoes(config.shoe, ids.reshape(-1), config.seed)
        session = hands.shoe >> SHOE_BITS
        bounds = np.searchsorted(session, np.arange(lo, hi + 1))
        return hands, bounds.astype(np.int64), (hands.shoe & SHOE_MASK).astype(np.int32)
    source = load_recorded(config)
    shoe_ids = np.unique(source.shoe)
    starts = np.searchsorted(source.shoe, shoe_ids)
    ends = np.searchsorted(source.shoe, shoe_ids, side="right")
    rows, shoe_no, session_bounds = [], [], [0]
    for first, per in recorded_plan(config).sessions(lo, hi):
        for m in range(per):
            k = (first + m) % len(shoe_ids)
            rows.append(np.arange(starts[k], ends[k]))
            shoe_no.append(np.full(ends[k] - starts[k], m, np.int32))
        session_bounds.append(session_bounds[-1] + sum(len(r) for r in rows[len(rows) - per:]))
    index = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    return source.take(index), np.asarray(session_bounds, np.int64), np.concatenate(shoe_no)


# --- running one chunk ----------------------------------------------------------------

@dataclass(frozen=True)
class _Table:
    den: int
    min_c: np.ndarray
    max_c: np.ndarray
    offered: np.ndarray
    full_counts: np.ndarray
    payouts: np.ndarray
    evs_full: np.ndarray


def _ticks(amount: float, den: int) -> int:
    """An amount of money in ticks: whole cents times the money denominator."""
    return round(amount * 100) * den


def _table(config: RunConfig, hands: Hands) -> _Table:
    rules = config.rules
    den = rules.money_denominator
    min_c = np.array([round(config.limits.minimum[b] * 100) for b in BETS], np.int64)
    max_c = np.array([round(config.limits.maximum[b] * 100) for b in BETS], np.int64)
    offered = np.array([rules.payout(b) is not None and not payouts.missing_for(b, hands, rules)
                        for b in BETS])
    decks = config.shoe.decks if config.shoe is not None else config.recorded.decks  # type: ignore[union-attr]
    full = full_shoe_counts(decks)
    pv = payout_vector(rules)
    evs = ev_array(full, pv)
    return _Table(den, min_c, max_c, offered, full, pv, np.nan_to_num(evs, nan=0.0))


def _possible_bets(strat: Strategy, where: str) -> set[Bet]:
    """What a strategy says it may bet (a user's class may say it wrongly)."""
    said = strat.possible_bets()
    try:
        ok = all(isinstance(b, Bet) for b in said)
    except TypeError:   # not a collection
        ok = False
    if not ok:
        raise StrategyError(f"{where}: possible_bets() must return a set of backtest.rules.Bet "
                            f"members, got {said!r}")
    return set(said)


def check_seats(config: RunConfig, strategies: Sequence[Strategy], hands: Hands) -> None:
    """Before any hand: every bet a seat may place is offered and settleable."""
    rules = config.rules
    for i, (seat, strat) in enumerate(zip(config.seats, strategies)):
        where = f"{config.source}: seats[{i}] ({seat.label})"
        for bet in sorted(_possible_bets(strat, where), key=lambda b: b.code):
            if isinstance(strat, Builtin) or type(strat).possible_bets is not Strategy.possible_bets:
                if rules.payout(bet) is None:
                    raise StrategyError(f"{where}: the {rules.name} table does not offer the {bet} "
                                        f"bet (it offers {', '.join(rules.offered_bets())})")
                if payouts.missing_for(bet, hands, rules):
                    try:
                        hands.require([bet], banker_six=rules.banker_six_payout is not None)
                    except MissingDataError as exc:
                        raise MissingDataError(f"{where}: {exc}") from None
                    lacking = " and the ".join(describe_column(c) for c in
                                               payouts.missing_columns(bet, hands, rules))
                    raise MissingDataError(f"{where}: the {bet} bet under the {rules.name} rules "
                                           f"needs the {lacking}, which {hands.source} "
                                           "does not record")
        try:   # the common head every loop reads: the edges and the side bets
            head = python_loop.head_params(strat)
        except StrategyError as exc:
            raise StrategyError(f"{where}: {exc}") from None
        for bet in BETS:
            stake, top = float(head[P_SIDE + bet.code]), config.limits.maximum[bet]
            if stake > top:
                # over it, every hand would count as over the maximum and restart
                # the progression the side bet stands beside
                raise ConfigError(f"{where}: params.side_bets.{bet}: {stake:g} is over the "
                                  f"table maximum for {bet} ({top:g}); give at most {top:g}")
        fixed = strat.fixed_stakes() if isinstance(strat, Builtin) else None
        side = {bet: float(head[P_SIDE + bet.code]) for bet in BETS}
        _warn_off_limits(config, strat, fixed, side, where)
        if fixed:
            from fractions import Fraction

            from backtest.errors import RulesError
            from backtest.rules import check_bets

            try:
                check_bets({b: Fraction(str(v)) for b, v in fixed.items()}, rules)
            except RulesError as exc:
                raise StrategyError(f"{where}: {exc}") from None
        if strat.uses_cards and "cards" not in hands.known:
            raise MissingDataError(f"{where}: this strategy counts cards, but {hands.source} "
                                   "records no cards")


class BelowMinimumWarning(UserWarning):
    """A built-in's stake is under the table minimum: the table raises it."""


class OverMaximumWarning(UserWarning):
    """A built-in's base or flat stake is over the table maximum."""


def _warn_off_limits(config: RunConfig, strat: Strategy, fixed: dict[Bet, float] | None,
                     side: dict[Bet, float], where: str) -> None:
    """Say when a built-in's base stake, a flat stake or a side bet is under the
    table minimum (raised to it on every hand), or a base or flat stake over
    the maximum (played at the maximum on every hand): either way the system
    does not run as written."""
    if not isinstance(strat, Builtin):
        return
    base = getattr(strat.params, "base", None)
    asked = dict(fixed or {})
    if isinstance(base, (int, float)):
        asked.update({b: float(base) for b in strat.main_bets()})
    limits = config.limits
    ordered = sorted(asked.items(), key=lambda i: i[0].code)
    low = [(b, x, "") for b, x in ordered if 0 < x < limits.minimum[b]]
    if fixed is None:   # (fixed stakes hold the side bets already; one on a main bet adds to it)
        mains = strat.main_bets()
        low += [(b, x, "side bet ") for b, x in side.items()
                if b not in mains and 0 < x < limits.minimum[b]]
    if low:
        said = ", ".join(f"{kind}{x:g} on {b} (minimum {limits.minimum[b]:g})"
                         for b, x, kind in low)
        warnings.warn(f"{where}: stakes under the table minimum are raised to it, so the "
                      f"system does not run as written: {said}", BelowMinimumWarning,
                      stacklevel=2)
    high = [(b, x) for b, x in ordered if x > limits.maximum[b]]
    if high:
        said = ", ".join(f"{x:g} on {b} (maximum {limits.maximum[b]:g})" for b, x in high)
        warnings.warn(f"{where}: stakes over the table maximum are played at the maximum on "
                      f"every hand, so the system does not run as written: {said}",
                      OverMaximumWarning, stacklevel=2)


def _seat_key(seed: int, seat: int) -> np.uint64:
    return np.random.SeedSequence(seed, spawn_key=(1, seat)).generate_state(1, np.uint64)[0]


def _settled_bets(strategies: Sequence[Strategy], force_python: bool) -> set[Bet] | None:
    """The bets whose results a chunk works out: those the seats can place, when
    every seat is a built-in run compiled; every bet (None) when a seat runs in
    Python, whose `Result.units` shows every bet's result."""
    if force_python or not all(runs_compiled(s) for s in strategies):
        return None
    return set().union(*(s.possible_bets() for s in strategies))


def run_chunk(config: RunConfig, strategies: Sequence[Strategy], lo: int, hi: int,
              ledger: bool = False, force_python: bool = False) -> tuple[list[SeatResult], int]:
    """Run sessions lo..hi-1 for every seat; returns per-seat results and the
    hands the sessions cover (each seat plays them, unless ruined or stopped)."""
    hands, bounds, shoe_no = _hands_for(config, lo, hi)
    table = _table(config, hands)
    unit = payouts.unit_results(hands, config.rules, _settled_bets(strategies, force_python))
    session_ids = np.arange(lo, hi, dtype=np.int64)
    s = config.session
    tick = 100 * table.den
    bankroll0 = _ticks(s.bankroll, table.den)
    # a session cannot lose more than its bankroll: a larger stop-loss never
    # stops one, nor does one tick more (which fits the loop's integers)
    stop_loss = -1 if s.stop_loss is None else min(_ticks(s.stop_loss, table.den), bankroll0 + 1)
    win_goal = -1 if s.win_goal is None else _ticks(s.win_goal, table.den)
    max_hands = -1 if s.max_hands is None else s.max_hands
    n_sessions = hi - lo
    # the exact EVs before each hand: worked out once, for every counting seat
    ev_shared = session_loop.SharedEvs(*session_loop.shared_evs(
        len(hands), sum(bool(strat.uses_cards) for strat in strategies),
        any(strat.uses_cards and session_loop.needs_deals(
            strat, runs_compiled(strat) and kind_of(strat) != USER and not force_python)
            for strat in strategies)))
    results = []
    dealt = session_loop.Dealt(hands.winner, hands.hand, shoe_no, unit, hands.cards, bounds,
                               session_ids)
    loop_table = session_loop.Table(
        int(table.den), table.min_c, table.max_c, table.offered,
        bool(config.rules.player_and_banker_together), bool(config.rules.pairs_need_main_bet),
        table.full_counts, table.payouts, table.evs_full)
    for k, strat in enumerate(strategies):
        bets = strat.possible_bets()
        ruin_below = min(int(table.min_c[b.code]) for b in bets) * table.den if bets else 0
        size = len(hands) if ledger else 0
        outputs = session_loop.Outputs(
            np.zeros((n_sessions, session_loop.N_STATS), np.int64),
            np.zeros((n_sessions, len(BETS)), np.int64), np.zeros(n_sessions), bool(ledger),
            np.zeros(size, np.int64), np.zeros((size, len(BETS)), np.int64),
            np.zeros(size, np.int64), np.zeros(size, np.int64))
        stops = session_loop.Stops(int(bankroll0), int(stop_loss), int(win_goal), int(max_hands),
                                   int(ruin_below))
        key = _seat_key(config.seed, k)
        if runs_compiled(strat) and not force_python:
            fns = user_functions(strat)
            seat = session_loop.seat_of(strat, key)
            work = session_loop.work_for(seat, dealt)
            code, at, rows = session_loop.run_sessions(seat, fns, dealt, loop_table, stops,
                                                       ev_shared, outputs, work)
        else:
            try:
                code, at, rows = python_loop.run_python(strat, key, dealt, loop_table, stops,
                                                        ev_shared, outputs)
            except python_loop.Raised as raised:
                raise StrategyError(f"{config.source}: seats[{k}] ({config.seats[k].label}): "
                                    f"{raised.describe()}, "
                                    f"{_hand_words(hands, shoe_no, bounds, lo, raised.at)}") from None
        if code != session_loop.PLACE_OK:
            seat = config.seats[k]
            raise StrategyError(
                f"{config.source}: seats[{k}] ({seat.label}) "
                f"{session_loop.PLACE_ERRORS[int(code)]} "
                f"{_hand_words(hands, shoe_no, bounds, lo, at)}{_why(int(code), config, table)}")
        ledger_cols = None
        if ledger:
            idx = outputs.led_idx[:rows]
            sess = np.searchsorted(bounds, idx, side="right") - 1 + lo
            ledger_cols = {"session": sess, "shoe": shoe_no[idx] + 1, "hand": hands.hand[idx],
                           "winner": hands.winner[idx], "cents": outputs.led_cents[:rows],
                           "net": outputs.led_net[:rows] / tick,
                           "bankroll": outputs.led_bank[:rows] / tick}
        results.append(SeatResult(outputs.stats, outputs.wagered, outputs.expected, ledger_cols))
    # the hands the sessions cover (a session's shoes are dealt whole, and
    # max_hands may end it before they are)
    lengths = np.diff(bounds)
    return results, int((lengths if max_hands < 0 else np.minimum(lengths, max_hands)).sum())


def _why(code: int, config: RunConfig, table: _Table) -> str:
    """What the table's rules say of a refused placement, in brackets."""
    rules = config.rules
    if code == session_loop.PLACE_NOT_SETTLED:
        unsettled = [b.value for b in BETS if not table.offered[b.code]]
        return f" (this table or shoe does not settle {', '.join(unsettled)})" if unsettled else ""
    if code == session_loop.PLACE_FORBIDDEN:
        reasons = []
        if not rules.player_and_banker_together:
            reasons.append(f"the {rules.name} table does not take Player and Banker together")
        if rules.pairs_need_main_bet:
            reasons.append(f"at the {rules.name} table a pair bet needs a Player, Banker or Tie "
                           "bet beside it")
        return f" ({'; '.join(reasons)})" if reasons else ""
    return ""


def _hand_words(hands: Hands, shoe_no: np.ndarray, bounds: np.ndarray, lo: int, at: int) -> str:
    """'on hand H of shoe S in session N' for the hand at index `at` of a chunk."""
    return (f"on hand {int(hands.hand[at])} of shoe {int(shoe_no[at]) + 1} in session "
            f"{lo + int(np.searchsorted(bounds, at, side='right'))}")


# --- the whole run -----------------------------------------------------------------------

def run_task(raw: dict[str, Any], base_dir: str, source: str, lo: int, hi: int,
          ledger: bool, force_python: bool = False) -> tuple[list[SeatResult], int]:
    """A chunk in a worker process: rebuild the config from its mapping."""
    config = _config_in_worker(repr(raw), base_dir, source, raw)
    return run_chunk(config, build_strategies(config), lo, hi, ledger, force_python)


#: configs a process has rebuilt for its tasks, by what they were built from
#: (a relative path in one means another thing from another folder); emptied
#: as a sweep starts, so that files edited since are read again
_WORKER_CONFIGS: dict[tuple[str, str, str, str], RunConfig] = {}


def forget_configs() -> None:
    """Empty this process's rebuilt configs (before a sweep: files may have changed)."""
    _WORKER_CONFIGS.clear()


def _config_in_worker(text: str, base_dir: str, source: str, raw: dict[str, Any]) -> RunConfig:
    key = (text, base_dir, source, os.getcwd())
    if key not in _WORKER_CONFIGS:
        _WORKER_CONFIGS[key] = parse_config(raw, Path(base_dir), source)
    return _WORKER_CONFIGS[key]


def plan_chunks(n_sessions: int, per_session: int, workers: int) -> list[tuple[int, int]]:
    """Sessions 0..n-1 cut into chunks of about CHUNK_HANDS hands (smaller when
    several workers share them). The numbers do not depend on the cut."""
    step = max(1, CHUNK_HANDS // max(1, per_session))
    if workers > 1:
        step = max(1, min(step, math.ceil(n_sessions / (4 * workers))))
    return [(lo, min(n_sessions, lo + step)) for lo in range(0, n_sessions, step)]


def hands_bound(config: RunConfig) -> int:
    """An upper bound on the hands of one session."""
    s = config.session
    if config.shoe is not None:
        most = shoes_per_session(config) * config.shoe.max_hands
    else:
        recorded = load_recorded(config)
        longest = int(recorded.hand.max()) if len(recorded) else 1
        if s.max_shoes is None:   # a session reads on until it reaches max_hands
            assert s.max_hands is not None
            return s.max_hands
        most = s.max_shoes * longest
    return most if s.max_hands is None else min(most, s.max_hands)


def _below(x: float) -> str:
    """x rounded down to three significant digits, for advice to stay under it."""
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return f"{math.floor(x / step) * step:.3g}"


def check_money(config: RunConfig) -> None:
    """Refuse amounts too large to count exactly. The engine keeps money in
    ticks of 1 / (100 * D) of a currency unit (D, the rules' money
    denominator) in 64-bit integers, and in one hand a bankroll can grow by
    at most every bet at its table maximum, won at the best payout."""
    rules = config.rules
    den = rules.money_denominator
    s = config.session

    def ticks(amount: float | None) -> int:
        return 0 if amount is None else _ticks(amount, den)

    start = ticks(s.bankroll) + ticks(s.win_goal)
    if start >= MONEY_LIMIT:
        key = "session.bankroll" if ticks(s.bankroll) >= MONEY_LIMIT // 2 else "session.win_goal"
        raise ConfigError(
            f"{config.source}: {key}: a bankroll of {s.bankroll:g}"
            + (f" and a win goal of {s.win_goal:g}" if s.win_goal else "")
            + f" is too much to count to the cent under these rules (in 1/{den} units); "
            f"keep {'their sum' if s.win_goal else 'it'} below {_below(MONEY_LIMIT / (100 * den))}")
    hands = hands_bound(config)
    best = max([1.0] + [float(rules.payout(b) or 0) for b in BETS])
    per_hand = sum(ticks(config.limits.maximum[b]) for b in BETS) * (1 + best)
    if start + hands * per_hand >= MONEY_LIMIT:
        room = (MONEY_LIMIT - start) / (hands * len(BETS) * (1 + best) * 100 * den)
        raise ConfigError(
            f"{config.source}: table.max (or table.limits): with table maxima up to "
            f"{max(config.limits.maximum.values()):g} and sessions of up to {hands:,} hands, "
            f"a bankroll could grow past what is counted to the cent; keep every table "
            f"maximum below {_below(room)}, or shorten the sessions")


def prepare(config: RunConfig, sessions: int | None = None) -> tuple[int, int, list[Strategy]]:
    """Validate a run before any work: (sessions, hands in one session, strategies)."""
    n = count_sessions(config, sessions)
    check_money(config)
    strategies = build_strategies(config)
    probe, _, _ = _hands_for(config, 0, 1)
    check_seats(config, strategies, probe)
    return n, max(1, len(probe)), strategies


def seat_frames(config: RunConfig, part: tuple[list[SeatResult], int], first_session: int
                ) -> list[tuple[pl.DataFrame, pl.DataFrame | None]]:
    """One chunk's (sessions frame, ledger frame or None) for each seat."""
    from backtest import metrics

    tick = 100.0 * config.rules.money_denominator
    out = []
    for k, seat in enumerate(config.seats):
        r = part[0][k]
        sessions = metrics.sessions_frame(seat.label, seat.strategy, r.stats, r.wagered,
                                          r.expected, tick, first_session)
        ledger = metrics.ledger_frame(seat.label, [r.ledger]) if r.ledger is not None else None
        out.append((sessions, ledger))
    return out


def spill_path(spill: Path, seat: int, lo: int) -> Path:
    """Where the sessions of `seat` from session `lo` on are spilled."""
    return spill / f"sessions-{seat:04d}-{lo:012d}.arrow"


def chunk_frames(config: RunConfig, part: tuple[list[SeatResult], int], lo: int,
                 spill: Path | None) -> list[SeatFrames]:
    """A chunk's frames for each seat; with `spill`, the sessions frames are
    written there (Arrow IPC, LZ4: half the time of Parquet with zstd,
    for files 1.8 times as large, which last only as long as the run) and
    None is kept in their place."""
    seats: list[SeatFrames] = []
    for k, (sessions_k, ledger_k) in enumerate(seat_frames(config, part, lo)):
        if spill is not None:
            sessions_k.write_ipc(spill_path(spill, k, lo), compression="lz4")
            seats.append((None, ledger_k))
        else:
            seats.append((sessions_k, ledger_k))
    return seats


def finish(config: RunConfig,
           chunks: Sequence[Sequence[SeatFrames]],
           ledger: bool = False, spilled: Sequence[Sequence[tuple[Path, int]]] = ()
           ) -> tuple[pl.DataFrame | pl.LazyFrame, pl.DataFrame, pl.DataFrame | None]:
    """The sessions, summary (and ledger) frames from every chunk's seat frames,
    in seat then session order. With `spilled` (for each seat, its chunks'
    sessions frames written to these Arrow IPC files, in session order) the
    sessions are a LazyFrame over the files."""
    from backtest import metrics

    n_seats = len(config.seats)
    sessions: pl.DataFrame | pl.LazyFrame
    # a seat at a time, its sessions a block at a time: the summary's memory
    # does not grow with the number of sessions
    if spilled:
        sessions = pl.scan_ipc([f for files in spilled for f, _ in files])
        blocks = [metrics.file_blocks(files) for files in spilled]
    else:
        seat_sessions = [pl.concat([s for c in chunks if (s := c[k][0]) is not None],
                                   rechunk=False) for k in range(n_seats)]
        sessions = pl.concat(seat_sessions, rechunk=False)
        blocks = [metrics.frame_blocks(frame) for frame in seat_sessions]
    summary = metrics.summary([(seat.label, seat.strategy, seat_blocks)
                               for seat, seat_blocks in zip(config.seats, blocks)])
    ledger_df = None
    if ledger:
        ledger_df = pl.concat([led for k in range(n_seats) for c in chunks
                               if (led := c[k][1]) is not None])
    return sessions, summary, ledger_df


def assemble(config: RunConfig, parts: Sequence[tuple[list[SeatResult], int]],
             ledger: bool = False) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame | None]:
    """The sessions, summary (and ledger) frames from chunk results in session order."""
    chunks: list[list[tuple[pl.DataFrame, pl.DataFrame | None]]] = []
    first = 0
    for part in parts:
        chunks.append(seat_frames(config, part, first))
        first += part[0][0].stats.shape[0] if part[0] else 0
    sessions, summary, ledger_df = finish(config, chunks, ledger)
    assert isinstance(sessions, pl.DataFrame)
    return sessions, summary, ledger_df


def run(config: RunConfig, sessions: int | None = None, workers: int | None = None,
        ledger: bool = False,
        progress: Callable[[int, int, int], None] | None = None,
        force_python: bool = False, spill: Path | None = None,
        executor: str = "local", address: str | None = None) -> RunResult:
    """Run every session of `config` for every seat.

    workers > 1 spreads chunks of sessions over processes; executor "dask"
    over the workers of a Dask cluster instead (the scheduler at `address`,
    HOST:PORT, or a local cluster of `workers` processes); the numbers are
    the same for any number of workers, on either. progress(sessions_done,
    hands_done, sessions) is called after each chunk (with the total sessions).

    spill: a directory (it must exist) for each chunk's sessions frames as
    Arrow IPC files, written as the chunks finish instead of kept in memory;
    the result's `sessions` is then a LazyFrame over them (valid while the
    files are), and memory stays flat however many sessions are run, but for
    the summary, worked out at the end from one seat's metric columns at a
    time.
    """
    if executor not in ("local", "dask"):
        raise UsageError(f"--executor must be local or dask, got {executor!r}")
    if address is not None and executor != "dask":
        raise UsageError("--address goes with --executor dask")
    if not force_python and executor == "local":
        # the loop compiles on the other core while this one deals and prices
        session_loop.compile_in_background()
    n, per_session, strategies = prepare(config, sessions)
    if executor == "dask":
        if workers is None:
            workers = default_workers()
        check_workers(workers)
        chunks = plan_chunks(n, per_session, workers)
    elif workers is None:
        weight = COUNTING_WEIGHT if any(strat.uses_cards for strat in strategies) else 1
        workers = default_workers() if n * per_session * weight >= PARALLEL_HANDS else 1
    if executor == "local":
        check_workers(workers)
        chunks = plan_chunks(n, per_session, workers)
    frames: list[list[SeatFrames]] = []
    # each seat's spilled files, in session order (chunks are collected in order)
    # (a file, the sessions it holds)
    spilled: list[list[tuple[Path, int]]] = [[] for _ in config.seats] if spill is not None else []
    done_s = done_h = 0

    def collect(lo: int, hi: int, part: tuple[list[SeatResult], int]) -> None:
        # each chunk becomes compact frames at once, so the raw arrays do not pile
        # up (in this process: polars' threads do not survive a fork)
        nonlocal done_s, done_h
        frames.append(chunk_frames(config, part, lo, spill))
        if spill is not None:
            for k in range(len(config.seats)):
                spilled[k].append((spill_path(spill, k, lo), hi - lo))
        done_s += hi - lo
        done_h += part[1]
        if progress:
            progress(done_s, done_h, n)

    if executor == "dask":
        from backtest.cluster import dask_client

        with dask_client(workers, address) as client:
            # a few chunks ahead of the one collected, in order, as with processes
            pending: deque[tuple[int, int, Any]] = deque()
            for lo, hi in chunks:
                pending.append((lo, hi, client.submit(
                    run_task, dict(config.raw), str(config.base_dir), config.source, lo, hi,
                    ledger, force_python, pure=False)))
                if len(pending) > 2 * workers:
                    lo0, hi0, fut = pending.popleft()
                    collect(lo0, hi0, fut.result())
            while pending:
                lo0, hi0, fut = pending.popleft()
                collect(lo0, hi0, fut.result())
    elif workers > 1 and len(chunks) > 1 and not force_python:
        warm(config, strategies)
        with process_pool(workers) as pool:
            # a few chunks ahead of the one collected, not all: results the main
            # process has not turned into frames yet would pile up in memory
            ahead: deque[tuple[int, int, Future[tuple[list[SeatResult], int]]]] = deque()
            for lo, hi in chunks:
                ahead.append((lo, hi, pool.submit(run_task, dict(config.raw), str(config.base_dir),
                                                  config.source, lo, hi, ledger)))
                if len(ahead) > 2 * workers:
                    lo0, hi0, fut = ahead.popleft()
                    collect(lo0, hi0, fut.result())
            while ahead:
                lo0, hi0, fut = ahead.popleft()
                collect(lo0, hi0, fut.result())
    else:
        for lo, hi in chunks:
            collect(lo, hi, run_chunk(config, strategies, lo, hi, ledger, force_python))
    sessions_frame, summary, ledger_df = finish(config, frames, ledger, spilled)
    return RunResult(config, sessions_frame, summary, ledger_df, config.seed, done_h)


def bankroll_paths(result: RunResult, sessions: int = PATH_SESSIONS) -> pl.DataFrame:
    """Each seat's bankroll after every hand of the first `sessions` sessions
    of a run (its first sessions played again with a ledger), for plots:
    seat, session, hand (the seat's n-th hand), bankroll."""
    config = result.config
    n = min(sessions, result.n_sessions)
    strategies = build_strategies(config)
    parts = [run_chunk(config, strategies, 0, n, ledger=True)]
    _, _, ledger = assemble(config, parts, ledger=True)
    assert ledger is not None
    return (ledger.select("seat", "session", "bankroll")
            .with_columns(pl.int_range(pl.len()).over("seat", "session").add(1).alias("hand"))
            .select("seat", "session", "hand", "bankroll"))


def check_workers(workers: int, name: str = "workers",
                  error: type[BacktestError] = ConfigError) -> None:
    """Refuse a number of worker processes below 1 or above MAX_WORKERS
    (`name` and `error`: as the caller's user knows the number)."""
    if workers < 1:
        raise error(f"{name} must be at least 1, got {workers}")
    if workers > MAX_WORKERS:
        raise error(f"{name} must be at most {MAX_WORKERS}, got {workers}")


@contextmanager
def process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of worker processes, for a `with` block. On Linux they are
    forked, so they start with this process's modules and compiled kernels
    already loaded (spawned workers spend seconds importing and loading
    numba's cache before their first hand); they use none of polars' threads.
    Elsewhere, spawned.

    The workers leave Ctrl-C to this process (the terminal sends it to them
    too) and, on Linux, end if it dies. When the block ends by an exception
    (an interrupt, a termination, a failed task), the queued work is dropped
    and the workers are stopped at once, rather than left to finish it."""
    import multiprocessing

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=_worker_start)
    try:
        yield pool
    except BaseException:
        workers_now = list(getattr(pool, "_processes", None) or {})
        pool.shutdown(wait=False, cancel_futures=True)
        for pid in workers_now:
            with suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        raise
    pool.shutdown(wait=True)


def _worker_start() -> None:
    """In each worker: no Ctrl-C of its own, SIGTERM ends it (whatever handler it
    was forked with), and (Linux) a SIGTERM when its parent dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG


def warm(config: RunConfig, strategies: Sequence[Strategy]) -> None:
    """Load every compiled kernel a run needs, by running one session: forked
    workers then inherit them."""
    run_chunk(config, strategies, 0, 1)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)

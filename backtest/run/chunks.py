"""A chunk of sessions at the table: its hands dealt, the table they are
played at (limits, the exact EVs and covariance), and every seat's session
loop over them, compiled or in plain Python; the same in a worker process,
which rebuilds the config from its mapping. A chunk's result is each seat's
raw per-session numbers (`SeatResult`), which `frames` makes frames of.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from backtest.core.cards import full_shoe_counts
from backtest.core.errors import BacktestError, StrategyError, describe_raised
from backtest.core.hands import Hands
from backtest.core.rules import Bet, Rules
from backtest.jit import lazy_jit
from backtest.jit.buffers import Buffers
from backtest.loop import inputs, payouts, session_loop, table_rules
from backtest.loop.python_seat import PythonSeat
from backtest.odds import N_PAYOUTS, bet_odds, joint_nets_array, outcome_table, unit_covariance
from backtest.run.config import RunConfig, build_strategies, parse_config, ticks
from backtest.run.plan import hands_for
from strategies.base import Strategy
from strategies.compiled import runs_compiled

BETS = tuple(Bet)


@dataclass
class SeatResult:
    """Raw per-session numbers of one seat, in ticks (1/(100*D) currency)."""

    stats: np.ndarray  # (sessions, N_STATS) int64
    wagered: np.ndarray  # (sessions, N_BETS) int64
    expected: np.ndarray  # (sessions,) float64, expected net in currency
    variance: np.ndarray  # (sessions,) float64, the net's variance given the stakes
    largest: np.ndarray  # (sessions,) float64, the largest one hand's variance in it
    cross: np.ndarray  # (sessions,) float64, the net's covariance with the baseline seat's
    ledger: dict[str, np.ndarray] | None = None


def _table(config: RunConfig, hands: Hands, counting: bool) -> inputs.Table:
    """The table the session loop plays at, for these hands (`counting`: with
    a seat that counts cards)."""
    rules = config.rules
    den = rules.money_denominator
    min_c = np.array([round(config.limits.minimum[b] * 100) for b in BETS], np.int64)
    max_c = np.array([round(config.limits.maximum[b] * 100) for b in BETS], np.int64)
    offered = np.array(
        [rules.payout(b) is not None and not payouts.missing_for(b, hands, rules) for b in BETS]
    )
    decks = config.shoe.decks if config.shoe is not None else config.recorded.decks  # type: ignore[union-attr]
    full = full_shoe_counts(decks)
    if counting:
        from backtest.odds import payout_vector  # (compiled code: loaded only for a counter)

        pv = payout_vector(rules)
    else:  # read by the counting seats' EV kernels alone
        pv = np.full(N_PAYOUTS, np.nan)
    return inputs.Table(
        int(den),
        min_c,
        max_c,
        offered,
        bool(rules.player_and_banker_together),
        bool(rules.pairs_need_main_bet),
        full,
        pv,
        _full_shoe_evs(decks, rules) * offered,
        unit_covariance(full, rules) * np.outer(offered, offered),
        joint_nets_array(rules) * offered[:, None],
    )


@lru_cache(maxsize=64)
def _full_shoe_evs(decks: int, rules: Rules) -> np.ndarray:
    """Each bet's EV per unit on a full shoe, from the exact odds (the
    fraction, rounded once); 0 for a bet the rules do not offer."""
    evs = np.zeros(len(BETS))
    for bet in bet_odds(outcome_table(tuple(full_shoe_counts(decks))), rules, decks).bets:
        evs[bet.bet.code] = float(bet.ev)
    evs.flags.writeable = False
    return evs


def _seat_key(seed: int, seat: int) -> np.uint64:
    return np.random.SeedSequence(seed, spawn_key=(1, seat)).generate_state(1, np.uint64)[0]


def _settled_bets(strategies: Sequence[Strategy], force_python: bool) -> set[Bet] | None:
    """The bets whose results a chunk works out: those the seats can place, when
    every seat is a built-in run compiled; every bet (None) when a seat runs in
    Python, whose `Result.units` shows every bet's result."""
    if force_python or not all(runs_compiled(s) for s in strategies):
        return None
    return set().union(*(s.possible_bets() for s in strategies))


def run_chunk(
    config: RunConfig,
    strategies: Sequence[Strategy],
    lo: int,
    hi: int,
    ledger: bool = False,
    force_python: bool = False,
    buffers: Buffers | None = None,
) -> tuple[list[SeatResult], int]:
    """Run sessions lo..hi-1 for every seat; returns per-seat results and the
    hands the sessions cover (each seat plays them, unless ruined or stopped).
    `buffers`: where the chunk's hands are dealt, if the chunks of a run share them."""
    if lazy_jit.JIT_DISABLED and not lazy_jit.interpreting():
        # numba's compiler is off: every kernel as plain Python, wrapping
        # around as compiled integers do (`interpreted`), every strategy
        # asked through the Strategy API
        with lazy_jit.interpreted():
            return run_chunk(config, strategies, lo, hi, ledger, True, buffers)
    hands, bounds, shoe_no = hands_for(config, lo, hi, buffers)
    table = _table(config, hands, any(strat.uses_cards for strat in strategies))
    unit = payouts.unit_results(
        hands, config.rules, _settled_bets(strategies, force_python), buffers
    )
    session_ids = np.arange(lo, hi, dtype=np.int64)
    s = config.session
    tick = 100 * table.den
    bankroll0 = ticks(s.bankroll, table.den)
    # a session cannot lose more than its bankroll: a larger stop-loss never
    # stops one, nor does one tick more (which fits the loop's integers)
    stop_loss = -1 if s.stop_loss is None else min(ticks(s.stop_loss, table.den), bankroll0 + 1)
    win_goal = -1 if s.win_goal is None else ticks(s.win_goal, table.den)
    max_hands = -1 if s.max_hands is None else s.max_hands
    n_sessions = hi - lo
    # the exact EVs before each hand: worked out once, for every counting seat
    ev_shared = inputs.SharedEvs(
        *inputs.shared_evs(
            len(hands),
            sum(bool(strat.uses_cards) for strat in strategies),
            any(
                strat.uses_cards
                and inputs.needs_deals(strat, session_loop.form_of(strat, force_python) == "shared")
                for strat in strategies
            ),
        )
    )
    results: list[SeatResult | None] = [None] * len(strategies)
    dealt = inputs.Dealt(hands.winner, hands.hand, shoe_no, unit, hands.cards, bounds, session_ids)
    # the baseline plays first: the other seats read its stakes on each hand
    # (for their covariance with it); the order changes no other number
    labels = [seat.label for seat in config.seats]
    base = labels.index(config.baseline) if config.baseline in labels else 0
    base_cents = np.zeros((len(hands) if len(strategies) > 1 else 0, len(BETS)), np.int64)
    for k in [base, *(k for k in range(len(strategies)) if k != base)]:
        strat = strategies[k]
        bets = strat.possible_bets()
        ruin_below = min(int(table.min_c[b.code]) for b in bets) * table.den if bets else 0
        size = len(hands) if ledger else 0
        outputs = inputs.Outputs(
            np.zeros((n_sessions, table_rules.N_STATS), np.int64),
            np.zeros((n_sessions, len(BETS)), np.int64),
            np.zeros(n_sessions),
            np.zeros(n_sessions),
            bool(ledger),
            np.zeros(size, np.int64),
            np.zeros((size, len(BETS)), np.int64),
            np.zeros(size, np.int64),
            np.zeros(size, np.int64),
            np.zeros(n_sessions),
            np.zeros(n_sessions),
            base_cents,
            inputs.BASE_NONE
            if len(strategies) < 2
            else (inputs.BASE_WRITES if k == base else inputs.BASE_READS),
        )
        stops = inputs.Stops(
            int(bankroll0), int(stop_loss), int(win_goal), int(max_hands), int(ruin_below)
        )
        key = _seat_key(config.seed, k)
        form = session_loop.form_of(strat, force_python)
        python = None
        if form == "python":
            python = PythonSeat(strat, key, dealt, table)
            fns, in_loop, work = python.fns, python.seat, python.work
        else:
            fns = session_loop.functions_for(strat)  # type: ignore[arg-type]
            in_loop = inputs.seat_of(strat, key)  # type: ignore[arg-type]
            work = inputs.work_for(in_loop, dealt)
        try:
            code, at, rows = session_loop.run_sessions(
                in_loop, fns, dealt, table, stops, ev_shared, outputs, work
            )
        except Exception as exc:  # a user's compiled function raised
            if form != "user" or isinstance(exc, BacktestError):
                raise
            raise _compiled_raised(config, strategies, lo, hi, k, exc) from None
        if python is not None and code == table_rules.PLACE_RAISED:
            error = python.error()
            if not isinstance(error, StrategyError):
                raise error  # a Ctrl-C in the strategy's code
            raise StrategyError(
                f"{config.source}: seats[{k}] ({config.seats[k].label}): {error}, "
                f"{_hand_words(hands, shoe_no, bounds, lo, python.at)}"
            ) from None
        if code != table_rules.PLACE_OK:
            seat = config.seats[k]
            said = StrategyError(
                f"{config.source}: seats[{k}] ({seat.label}) "
                f"{table_rules.PLACE_ERRORS[int(code)]} "
                f"{_hand_words(hands, shoe_no, bounds, lo, at)}{_why(int(code), config, table)}"
            )
            if form == "user":
                # asked as plain Python, the strategy's stakes are named in words
                said = _said_in_python(config, strategies, lo, hi) or said
            raise said
        ledger_cols = None
        if ledger:
            idx = outputs.led_idx[:rows]
            sess = np.searchsorted(bounds, idx, side="right") - 1 + lo
            ledger_cols = {
                "session": sess,
                "shoe": shoe_no[idx] + 1,
                "hand": hands.hand[idx],
                "winner": hands.winner[idx],
                "cents": outputs.led_cents[:rows],
                "net": outputs.led_net[:rows] / tick,
                "bankroll": outputs.led_bank[:rows] / tick,
            }
        results[k] = SeatResult(
            outputs.stats,
            outputs.wagered,
            outputs.expected,
            outputs.variance,
            outputs.largest,
            outputs.cross,
            ledger_cols,
        )
    # the hands the sessions cover (a session's shoes are dealt whole, and
    # max_hands may end it before they are)
    lengths = np.diff(bounds)
    return [r for r in results if r is not None], int(
        (lengths if max_hands < 0 else np.minimum(lengths, max_hands)).sum()
    )


def _why(code: int, config: RunConfig, table: inputs.Table) -> str:
    """What the table's rules say of a refused placement, in brackets."""
    rules = config.rules
    if code == table_rules.PLACE_NOT_SETTLED:
        unsettled = [b.value for b in BETS if not table.offered[b.code]]
        return f" (this table or shoe does not settle {', '.join(unsettled)})" if unsettled else ""
    if code == table_rules.PLACE_FORBIDDEN:
        reasons = []
        if not rules.player_and_banker_together:
            reasons.append(f"the {rules.name} table does not take Player and Banker together")
        if rules.pairs_need_main_bet:
            reasons.append(
                f"at the {rules.name} table a pair bet needs a Player, Banker or Tie bet beside it"
            )
        return f" ({'; '.join(reasons)})" if reasons else ""
    return ""


def _hand_words(hands: Hands, shoe_no: np.ndarray, bounds: np.ndarray, lo: int, at: int) -> str:
    """'on hand H of shoe S in session N' for the hand at index `at` of a chunk."""
    return (
        f"on hand {int(hands.hand[at])} of shoe {int(shoe_no[at]) + 1} in session "
        f"{lo + int(np.searchsorted(bounds, at, side='right'))}"
    )


def run_task(
    raw: dict[str, Any],
    base_dir: str,
    source: str,
    lo: int,
    hi: int,
    ledger: bool,
    force_python: bool = False,
) -> tuple[list[SeatResult], int]:
    """A chunk in a worker process: rebuild the config from its mapping."""
    config = _config_in_worker(repr(raw), base_dir, source, raw)
    return run_chunk(
        config, build_strategies(config), lo, hi, ledger, force_python, _worker_buffers()
    )


#: each thread's buffers for the chunks it runs (a Dask worker may run tasks
#: in several threads of one process)
_THREAD = threading.local()


def _worker_buffers() -> Buffers:
    buffers = getattr(_THREAD, "buffers", None)
    if buffers is None:
        buffers = _THREAD.buffers = Buffers()
    return buffers


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


def merge_parts(parts: Sequence[tuple[list[SeatResult], int]]) -> tuple[list[SeatResult], int]:
    """Consecutive chunks' results as one chunk's."""
    if len(parts) == 1:
        return parts[0]
    seats = []
    for k in range(len(parts[0][0])):
        rs = [p[0][k] for p in parts]
        ledger = None
        if rs[0].ledger is not None:
            ledger = {
                c: np.concatenate([r.ledger[c] for r in rs if r.ledger is not None])
                for c in rs[0].ledger
            }
        seats.append(
            SeatResult(
                np.concatenate([r.stats for r in rs]),
                np.concatenate([r.wagered for r in rs]),
                np.concatenate([r.expected for r in rs]),
                np.concatenate([r.variance for r in rs]),
                np.concatenate([r.largest for r in rs]),
                np.concatenate([r.cross for r in rs]),
                ledger,
            )
        )
    return seats, sum(p[1] for p in parts)


def _compiled_raised(
    config: RunConfig,
    strategies: Sequence[Strategy],
    lo: int,
    hi: int,
    seat: int,
    exc: Exception,
) -> StrategyError:
    """The error of a user's compiled function that raised `exc` while seat
    `seat` played sessions lo..hi-1: the one they end in asked as plain
    Python, where it raises there too (it names the hand and
    the line), else `exc` and the line of the user's file it came from."""
    import inspect

    found = _said_in_python(config, strategies, lo, hi)
    if found is not None:
        return found
    try:
        source = inspect.getsourcefile(type(strategies[seat]))
    except TypeError:
        source = None
    # where no line of the user's file is in the traceback: the file
    where = describe_raised(exc, nowhere=f" (in {source or type(strategies[seat]).__name__})")
    return StrategyError(
        f"{config.source}: seats[{seat}] ({config.seats[seat].label}): {where}, "
        f"compiled, in sessions {lo + 1}-{hi} (played as plain Python, they raise nothing)"
    )


def _said_in_python(
    config: RunConfig, strategies: Sequence[Strategy], lo: int, hi: int
) -> StrategyError | None:
    """The error sessions lo..hi-1 end in, played as plain Python (whose
    words say the hand, the bet, the stake and the line), or None."""
    import warnings

    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # (what Python makes of it: not the error)
            run_chunk(config, strategies, lo, hi, force_python=True)
    except StrategyError as found:
        return found
    return None


def warm(config: RunConfig, strategies: Sequence[Strategy]) -> None:
    """Load, or compile, every kernel a chunk of this run calls (forked
    workers then inherit them), by playing one session."""
    from backtest.shoes import kernels

    # the compiled deal, which one session's few shoes would not call while
    # it is not loaded (`generate_shoes`)
    kernels.deal_shoes.dispatcher  # noqa: B018 (made on first use: a property)
    run_chunk(config, strategies, 0, 1)

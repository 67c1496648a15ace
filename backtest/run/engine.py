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

import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from backtest.core.cards import full_shoe_counts
from backtest.core.errors import StrategyError, UsageError
from backtest.core.hands import Hands
from backtest.core.rules import Bet, Rules
from backtest.jit.buffers import Buffers
from backtest.jit.lazy_jit import interpreted
from backtest.loop import inputs, payouts, python_loop, table_rules
from backtest.odds import N_PAYOUTS, bet_odds, outcome_table, unit_covariance
from backtest.run.config import RunConfig, build_strategies, parse_config, ticks
from backtest.run.plan import count_sessions, hands_for, plan_chunks
from backtest.run.pool import check_workers, default_workers, process_pool
from backtest.run.seats import check_money, check_seats
from strategies.base import Strategy
from strategies.compiled import USER, kind_of, runs_compiled

#: sessions whose bankroll after every hand is kept for plots (`--out`)
PATH_SESSIONS = 100
#: chunks' sessions are made frames (and spilled) in blocks of at least this many
FRAME_SESSIONS = 1 << 14
#: runs this large use every core by default (below it, starting processes costs more)
PARALLEL_HANDS = 4_000_000
#: a hand at a table with a counting seat, in hands of that measure: the exact
#: EVs cost 7 to 9 us a hand, three other seats about 0.15 us
COUNTING_WEIGHT = 50
BETS = tuple(Bet)


@dataclass
class SeatResult:
    """Raw per-session numbers of one seat, in ticks (1/(100*D) currency)."""

    stats: np.ndarray  # (sessions, N_STATS) int64
    wagered: np.ndarray  # (sessions, 7) int64
    expected: np.ndarray  # (sessions,) float64, expected net in currency
    variance: np.ndarray  # (sessions,) float64, the net's variance given the stakes
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
    #: each seat's bankroll after every hand of the run's first sessions
    #: (`run(paths=N)`; see `bankroll_paths`)
    paths: pl.DataFrame | None = None
    #: each seat against the baseline on the same sessions (`comparisons.compare`;
    #: no rows for one seat)
    comparisons: pl.DataFrame | None = None

    @property
    def n_sessions(self) -> int:
        """The sessions run (which `sessions=` may have set over the config's)."""
        return int(self.summary["sessions"].to_numpy().max(initial=0))


# --- running one chunk ----------------------------------------------------------------


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
                and inputs.needs_deals(
                    strat, runs_compiled(strat) and kind_of(strat) != USER and not force_python
                )
                for strat in strategies
            ),
        )
    )
    results = []
    dealt = inputs.Dealt(hands.winner, hands.hand, shoe_no, unit, hands.cards, bounds, session_ids)
    for k, strat in enumerate(strategies):
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
        )
        stops = inputs.Stops(
            int(bankroll0), int(stop_loss), int(win_goal), int(max_hands), int(ruin_below)
        )
        key = _seat_key(config.seed, k)
        if runs_compiled(strat) and not force_python:
            from backtest.loop import session_loop  # (compiled code: loaded only here)
            from strategies.dispatch import user_functions

            fns = user_functions(strat)
            in_loop = inputs.seat_of(strat, key)
            work = inputs.work_for(in_loop, dealt)
            code, at, rows = session_loop.run_sessions(
                in_loop, fns, dealt, table, stops, ev_shared, outputs, work
            )
        else:
            try:
                code, at, rows = python_loop.run_python(
                    strat, key, dealt, table, stops, ev_shared, outputs
                )
            except python_loop.Raised as raised:
                raise StrategyError(
                    f"{config.source}: seats[{k}] ({config.seats[k].label}): "
                    f"{raised.describe()}, "
                    f"{_hand_words(hands, shoe_no, bounds, lo, raised.at)}"
                ) from None
        if code != table_rules.PLACE_OK:
            seat = config.seats[k]
            raise StrategyError(
                f"{config.source}: seats[{k}] ({seat.label}) "
                f"{table_rules.PLACE_ERRORS[int(code)]} "
                f"{_hand_words(hands, shoe_no, bounds, lo, at)}{_why(int(code), config, table)}"
            )
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
        results.append(
            SeatResult(
                outputs.stats, outputs.wagered, outputs.expected, outputs.variance, ledger_cols
            )
        )
    # the hands the sessions cover (a session's shoes are dealt whole, and
    # max_hands may end it before they are)
    lengths = np.diff(bounds)
    return results, int((lengths if max_hands < 0 else np.minimum(lengths, max_hands)).sum())


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


# --- the whole run -----------------------------------------------------------------------


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


def prepare(
    config: RunConfig, sessions: int | None = None, memo: dict[Any, Any] | None = None
) -> tuple[int, int, list[Strategy]]:
    """Validate a run before any work: (sessions, hands in one session, strategies).

    `memo`, a dict kept between calls (a sweep's cells), checks the seats once
    for each setting of the seats, rules and table on the same kind of shoes;
    the strategies are then those built for the first of them."""
    n = count_sessions(config, sessions)
    check_money(config, n)
    probe, _, _ = hands_for(config, 0, 1)
    key = None
    if memo is not None:
        import json

        raw = config.raw
        key = (
            "seats at the table",
            config.source,
            str(config.base_dir),
            json.dumps(
                [
                    raw.get("seats"),
                    raw.get("rules"),
                    raw.get("table"),
                    sorted(probe.known),
                    probe.source,
                ],
                sort_keys=True,
                default=repr,
            ),
        )
        if key in memo:
            return n, max(1, len(probe)), memo[key]
    strategies = build_strategies(config)
    check_seats(config, strategies, probe)
    if key is not None and memo is not None:
        memo[key] = strategies
    return n, max(1, len(probe)), strategies


def seat_frames(
    config: RunConfig, part: tuple[list[SeatResult], int], first_session: int
) -> list[tuple[pl.DataFrame, pl.DataFrame | None]]:
    """One chunk's (sessions frame, ledger frame or None) for each seat."""
    from backtest.run import metrics

    tick = 100.0 * config.rules.money_denominator
    out = []
    for k, seat in enumerate(config.seats):
        r = part[0][k]
        sessions = metrics.sessions_frame(
            seat.label,
            seat.strategy,
            r.stats,
            r.wagered,
            r.expected,
            tick,
            first_session,
            r.variance,
        )
        ledger = metrics.ledger_frame(seat.label, [r.ledger]) if r.ledger is not None else None
        out.append((sessions, ledger))
    return out


def spill_path(spill: Path, seat: int, lo: int) -> Path:
    """Where the sessions of `seat` from session `lo` on are spilled."""
    return spill / f"sessions-{seat:04d}-{lo:012d}.arrow"


def chunk_frames(
    config: RunConfig, part: tuple[list[SeatResult], int], lo: int, spill: Path | None
) -> list[SeatFrames]:
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


def finish(
    config: RunConfig,
    chunks: Sequence[Sequence[SeatFrames]],
    ledger: bool = False,
    spilled: Sequence[Sequence[tuple[Path, int]]] = (),
) -> tuple[pl.DataFrame | pl.LazyFrame, pl.DataFrame, pl.DataFrame | None]:
    """The sessions, summary (and ledger) frames from every chunk's seat frames,
    in seat then session order. With `spilled` (for each seat, its chunks'
    sessions frames written to these Arrow IPC files, in session order) the
    sessions are a LazyFrame over the files."""
    from backtest.run import metrics

    n_seats = len(config.seats)
    sessions: pl.DataFrame | pl.LazyFrame
    # a seat at a time, its sessions a block at a time: the summary's memory
    # does not grow with the number of sessions
    if spilled:
        sessions = pl.scan_ipc([f for files in spilled for f, _ in files])
        blocks = [metrics.file_blocks(files) for files in spilled]
    else:
        seat_sessions = [
            pl.concat([s for c in chunks if (s := c[k][0]) is not None], rechunk=False)
            for k in range(n_seats)
        ]
        sessions = pl.concat(seat_sessions, rechunk=False)
        blocks = [metrics.frame_blocks(frame) for frame in seat_sessions]
    summary = metrics.summary(
        [
            (seat.label, seat.strategy, seat_blocks)
            for seat, seat_blocks in zip(config.seats, blocks)
        ]
    )
    ledger_df = None
    if ledger:
        ledger_df = pl.concat(
            [led for k in range(n_seats) for c in chunks if (led := c[k][1]) is not None]
        )
    return sessions, summary, ledger_df


def assemble(
    config: RunConfig, parts: Sequence[tuple[list[SeatResult], int]], ledger: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame | None]:
    """The sessions, summary (and ledger) frames from chunk results in session order."""
    chunks: list[list[tuple[pl.DataFrame, pl.DataFrame | None]]] = []
    first = 0
    for part in parts:
        chunks.append(seat_frames(config, part, first))
        first += part[0][0].stats.shape[0] if part[0] else 0
    sessions, summary, ledger_df = finish(config, chunks, ledger)
    assert isinstance(sessions, pl.DataFrame)
    return sessions, summary, ledger_df


def run(
    config: RunConfig,
    sessions: int | None = None,
    workers: int | None = None,
    ledger: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    force_python: bool = False,
    spill: Path | None = None,
    executor: str = "local",
    address: str | None = None,
    paths: int = 0,
    compiling: Callable[[], None] | None = None,
) -> RunResult:
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

    paths: the bankroll after every hand of the first `paths` sessions is
    kept as the run plays them (`RunResult.paths`, for plots): they are run
    first, here, with a ledger.

    A small run (`plays_interpreted`) of generated shoes in one process is
    played as plain Python, the same code uncompiled, with the same numbers:
    it answers in a fraction of a second without loading numba. Any other
    runs compiled; `compiling` is called as it starts the compiler.
    """
    if executor not in ("local", "dask"):
        raise UsageError(f"--executor must be local or dask, got {executor!r}")
    if address is not None and executor != "dask":
        raise UsageError("--address goes with --executor dask")
    # a small run of generated shoes may be played as plain Python: prepare it
    # so (its first shoes dealt by the same code, uncompiled), then see
    may_interpret = executor == "local" and workers in (None, 1) and config.shoe is not None
    if not may_interpret and not force_python and executor == "local":
        _compile_ahead(compiling)
    with interpreted() if may_interpret else nullcontext():
        n, per_session, strategies = prepare(config, sessions)
    plain = may_interpret and plays_interpreted(strategies, n * per_session)
    if may_interpret and not plain and not force_python:
        _compile_ahead(compiling)
    force_python = force_python or plain
    if workers is None:
        # every core for a large run; with Dask, this machine's cores (the local
        # cluster's size, and how finely the sessions are split for any cluster)
        weight = COUNTING_WEIGHT if any(strat.uses_cards for strat in strategies) else 1
        workers = (
            default_workers()
            if executor == "dask" or n * per_session * weight >= PARALLEL_HANDS
            else 1
        )
    check_workers(workers)
    chunks = plan_chunks(n, per_session, workers)
    frames: list[list[SeatFrames]] = []
    # each seat's spilled files, in session order (chunks are collected in order)
    # (a file, the sessions it holds)
    spilled: list[list[tuple[Path, int]]] = [[] for _ in config.seats] if spill is not None else []
    done_s = done_h = 0
    # chunks' raw results not yet made frames: (first session, part), in order
    pending: list[tuple[int, tuple[list[SeatResult], int]]] = []

    def flush() -> None:
        # a block of chunks becomes compact frames at once (in this process:
        # polars' threads do not survive a fork), so the raw arrays do not pile up
        if not pending:
            return
        lo = pending[0][0]
        part = merge_parts([p for _, p in pending])
        frames.append(chunk_frames(config, part, lo, spill))
        if spill is not None:
            for k in range(len(config.seats)):
                spilled[k].append((spill_path(spill, k, lo), len(part[0][k].stats)))
        pending.clear()

    def collect(lo: int, hi: int, part: tuple[list[SeatResult], int]) -> None:
        nonlocal done_s, done_h
        pending.append((lo, part))
        if ledger or sum(len(p[0][0].stats) for _, p in pending if p[0]) >= FRAME_SESSIONS:
            flush()
        done_s += hi - lo
        done_h += part[1]
        if progress:
            progress(done_s, done_h, n)

    path_frame = None
    # plain: every kernel a chunk calls runs as plain Python, in this process
    with interpreted() if plain else nullcontext():
        if paths > 0 and chunks:
            chunks = _first_sessions_apart(chunks, min(paths, n))
            (lo, hi), chunks = chunks[0], chunks[1:]
            part = run_chunk(config, strategies, lo, hi, True, force_python)
            path_frame = _paths_of(config, part)
            if not ledger:
                part = ([replace(r, ledger=None) for r in part[0]], part[1])
            collect(lo, hi, part)
        if executor == "dask":
            from backtest.run.cluster import dask_client

            with dask_client(workers, address) as client:
                _collect_in_order(
                    chunks,
                    workers,
                    collect,
                    lambda lo, hi: client.submit(
                        run_task,
                        dict(config.raw),
                        str(config.base_dir),
                        config.source,
                        lo,
                        hi,
                        ledger,
                        force_python,
                        pure=False,
                    ),
                )
        elif workers > 1 and len(chunks) > 1 and not force_python:
            if path_frame is None:  # (those sessions loaded every kernel a run needs)
                warm(config, strategies)
            with process_pool(workers) as pool:
                _collect_in_order(
                    chunks,
                    workers,
                    collect,
                    lambda lo, hi: pool.submit(
                        run_task,
                        dict(config.raw),
                        str(config.base_dir),
                        config.source,
                        lo,
                        hi,
                        ledger,
                    ),
                )
        else:
            buffers = Buffers()
            for lo, hi in chunks:
                collect(
                    lo, hi, run_chunk(config, strategies, lo, hi, ledger, force_python, buffers)
                )
    flush()
    sessions_frame, summary, ledger_df = finish(config, frames, ledger, spilled)
    from backtest.run.comparisons import compare

    paired = compare(sessions_frame, [seat.label for seat in config.seats], config.baseline)
    return RunResult(
        config, sessions_frame, summary, ledger_df, config.seed, done_h, path_frame, paired
    )


#: a run of at most this many hands, summed over its seats, is played as
#: plain Python where it can be (`plays_interpreted`): loading the compiled
#: code costs about half a second (compiling it, on a first run, about 20 s),
#: and this many hands take about as long in Python
INTERPRETED_HANDS = 40_000


def plays_interpreted(strategies: Sequence[Strategy], hands: int) -> bool:
    """Whether a run of `hands` hands (about) at these seats is played as plain
    Python: a small one, with no seat that counts cards (the exact EVs before
    every hand need the compiled kernels) and no user's `Compiled` class (the
    compiled loop is where its functions are checked)."""
    return hands * len(strategies) <= INTERPRETED_HANDS and all(
        not strat.uses_cards and not (runs_compiled(strat) and kind_of(strat) == USER)
        for strat in strategies
    )


def _compile_ahead(compiling: Callable[[], None] | None) -> None:
    """Start compiling the session loop on the other core, if it is not
    cached, while this one deals and prices (`compiling` is called first)."""
    from backtest.loop import session_loop

    if compiling is not None:
        compiling()
    session_loop.compile_in_background()


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
                ledger,
            )
        )
    return seats, sum(p[1] for p in parts)


def _first_sessions_apart(chunks: Sequence[tuple[int, int]], first: int) -> list[tuple[int, int]]:
    """The chunks, with sessions 0..first-1 a chunk of their own."""
    return [(0, first)] + [(max(lo, first), hi) for lo, hi in chunks if hi > first]


def _paths_of(config: RunConfig, part: tuple[list[SeatResult], int]) -> pl.DataFrame:
    """The bankroll paths of a chunk from session 0 run with a ledger: seat,
    session, hand (the seat's n-th hand), bankroll."""
    _, _, ledger = assemble(config, [part], ledger=True)
    assert ledger is not None
    return (
        ledger.select("seat", "session", "bankroll")
        .with_columns(pl.int_range(pl.len()).over("seat", "session").add(1).alias("hand"))
        .select("seat", "session", "hand", "bankroll")
    )


def _collect_in_order(
    chunks: Sequence[tuple[int, int]],
    workers: int,
    collect: Callable[[int, int, tuple[list[SeatResult], int]], None],
    submit: Callable[[int, int], Any],
) -> None:
    """Run the chunks on workers (`submit(lo, hi)` gives a future) and collect
    their results in order, a few chunks ahead of the one collected, not
    all: results this process has not turned into frames yet would pile up
    in memory."""
    ahead: deque[tuple[int, int, Any]] = deque()
    for lo, hi in chunks:
        ahead.append((lo, hi, submit(lo, hi)))
        if len(ahead) > 2 * workers:
            lo0, hi0, fut = ahead.popleft()
            collect(lo0, hi0, fut.result())
    while ahead:
        lo0, hi0, fut = ahead.popleft()
        collect(lo0, hi0, fut.result())


def bankroll_paths(result: RunResult, sessions: int = PATH_SESSIONS) -> pl.DataFrame:
    """Each seat's bankroll after every hand of the first `sessions` sessions
    of a run, for plots: seat, session, hand (the seat's n-th hand),
    bankroll. Those the run kept (`run(paths=...)`), or else its first
    sessions played again with a ledger."""
    n = min(sessions, result.n_sessions)
    kept = result.paths
    if kept is not None and (kept.height == 0 or kept["session"].to_numpy().max() >= n):
        return kept.filter(pl.col("session") <= n)
    config = result.config
    return _paths_of(config, run_chunk(config, build_strategies(config), 0, n, ledger=True))


def warm(config: RunConfig, strategies: Sequence[Strategy]) -> None:
    """Load every compiled kernel a run needs, by running one session: forked
    workers then inherit them."""
    run_chunk(config, strategies, 0, 1)

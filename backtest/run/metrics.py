"""The sessions frame, and the summary worked out from it.

`sessions_frame` turns the engine's per-session integer arrays into the
sessions frame; `summary` reads a seat's sessions in blocks (a chunk's file
each, when the run spilled them to disk), so that its memory stays flat in
the number of sessions. Edges are from the player's side: net per unit
wagered, negative when the house wins (a measured edge of -0.0106 is a
house edge of 1.06%).

The exact sums and order statistics it reads the blocks with are in
`order_stats`; the 95% quantiles of its intervals in `intervals`.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from backtest.core.rules import Bet
from backtest.loop.table_rules import (
    ENDED_BY,
    S_BANKROLL_STOPS,
    S_BELOW_MIN,
    S_BETS,
    S_DRAWDOWN,
    S_ENDED,
    S_FINAL,
    S_HANDS,
    S_LARGEST,
    S_LOSING_STREAK,
    S_LOSSES,
    S_MAX_HITS,
    S_NET,
    S_PEAK,
    S_PUSHES,
    S_WAGERED,
    S_WINS,
)
from backtest.run.intervals import Z95, t95
from backtest.run.order_stats import Blocks, ExactSum, InMemory, quantiles

PERCENTILES = (5, 25, 50, 75, 95)
#: a standard error of the edge below this is rounding, not spread: sessions
#: that all end alike (one recorded shoe played again) measure no spread
_NO_SPREAD = 1e-10


ENDED = pl.Enum(list(ENDED_BY))
WINNER = pl.Enum(["player", "banker", "tie"])
COUNT = pl.Int32


def _constant(name: str, n: int) -> pl.Series:
    """`name` n times, categorical (as every frame's seat and strategy, so
    that the frames join), built without a list of n strings."""
    first = pl.Series([name] if n else [], dtype=pl.Categorical)
    return first.new_from_index(0, n) if n > 1 else first


def sessions_frame(
    label: str,
    strategy: str,
    stats: np.ndarray,
    wagered: np.ndarray,
    expected: np.ndarray,
    tick: float | np.ndarray,
    first_session: int = 0,
    variance: np.ndarray | None = None,
    largest: np.ndarray | None = None,
    cross: np.ndarray | None = None,
) -> pl.DataFrame:
    """One row per session of one seat (money in currency units: ticks over
    `tick`, or over each session's), sessions numbered from first_session + 1. Counts are 32-bit and names categorical:
    a run keeps this frame for every session, so its width is its memory.

    Given the stakes placed, hand by hand: `net_variance` is the net's
    variance (the sum over the hands of s' C s, C the bets' covariance for
    the hand), `largest_hand_variance` the largest one hand's s' C s, and
    `baseline_covariance` the net's covariance with the baseline seat's net
    on the same hands (the sum of s_base' C s; the baseline's own variance
    for the baseline seat is its `net_variance`, and its column is 0)."""
    n = stats.shape[0]
    data: dict[str, Any] = {
        "seat": _constant(label, n),
        "strategy": _constant(strategy, n),
        "session": np.arange(first_session + 1, first_session + n + 1, dtype=np.int64),
        "hands": stats[:, S_HANDS].astype(np.int32),
        "bets": stats[:, S_BETS].astype(np.int32),
        "wagered": stats[:, S_WAGERED] / tick,
        "net": stats[:, S_NET] / tick,
        "expected_net": expected,
        # the net's variance given the stakes placed (sum of s' C s over the hands)
        "net_variance": np.zeros(n) if variance is None else variance,
        "largest_hand_variance": np.zeros(n) if largest is None else largest,
        "baseline_covariance": np.zeros(n) if cross is None else cross,
        "final_bankroll": stats[:, S_FINAL] / tick,
        "peak_bankroll": stats[:, S_PEAK] / tick,
        "max_drawdown": stats[:, S_DRAWDOWN] / tick,
        "longest_losing_streak": stats[:, S_LOSING_STREAK].astype(np.int32),
        "largest_stake": stats[:, S_LARGEST] / tick,
        "max_hits": stats[:, S_MAX_HITS].astype(np.int32),
        "bankroll_stops": stats[:, S_BANKROLL_STOPS].astype(np.int32),
        "raised_to_min": stats[:, S_BELOW_MIN].astype(np.int32),
        "wins": stats[:, S_WINS].astype(np.int32),
        "losses": stats[:, S_LOSSES].astype(np.int32),
        "pushes": stats[:, S_PUSHES].astype(np.int32),
        # (indexing takes them eagerly; `gather` costs a query plan's run)
        "ended_by": pl.Series(ENDED_BY, dtype=ENDED)[stats[:, S_ENDED]],
    }
    for bet in Bet:
        data[f"wagered_{bet.value}"] = wagered[:, bet.code] / tick
    return pl.DataFrame(data)


def ledger_frame(label: str, parts: Sequence[dict[str, np.ndarray] | None]) -> pl.DataFrame:
    """One row per seat per hand played."""
    cols: dict[str, list[np.ndarray]] = {}
    for part in parts:
        if part is None:
            continue
        for key, arr in part.items():
            cols.setdefault(key, []).append(arr)
    joined = {k: np.concatenate(v) for k, v in cols.items()}
    n = len(joined["net"])
    data: dict[str, Any] = {
        "seat": _constant(label, n),
        "session": joined["session"] + 1,
        "shoe": joined["shoe"],
        "hand": joined["hand"],
        "winner": pl.Series(joined["winner"].astype(np.int64)).replace_strict(
            {0: "player", 1: "banker", 2: "tie"}, return_dtype=WINNER
        ),
    }
    for bet in Bet:
        data[f"stake_{bet.value}"] = joined["cents"][:, bet.code] / 100.0
    data["net"] = joined["net"]
    data["bankroll"] = joined["bankroll"]
    return pl.DataFrame(data)


# --- the summary: one seat at a time, its sessions read in blocks ------------------------

#: the summary's columns after seat and strategy, in order
METRICS = (
    "sessions",
    "hands",
    "bets",
    "wagered",
    "net",
    "edge",
    "edge_ci_low",
    "edge_ci_high",
    "expected_edge",
    "z",
    "z_hands",
    "edge_hands_ci_low",
    "edge_hands_ci_high",
    "top_hand_share",
    "ruin_rate",
    "ruined_net",
    "median_ruin_hand",
    "win_goal_rate",
    "stop_loss_rate",
    "winning_sessions",
    "mean_net",
    "median_net",
    "mean_max_drawdown",
    "longest_losing_streak",
    "largest_stake",
    "max_hits",
    "bankroll_stops",
    "raised_to_min",
    *(f"final_bankroll_p{q}" for q in PERCENTILES),
)
_WHOLE = {
    "sessions": pl.UInt32,
    "hands": pl.Int64,
    "bets": pl.Int64,
    "longest_losing_streak": pl.Int64,
    "max_hits": pl.Int64,
    "bankroll_stops": pl.Int64,
    "raised_to_min": pl.Int64,
}
#: summed exactly (floats) and as whole numbers
_SUMMED = ("wagered", "net", "expected_net", "net_variance", "max_drawdown")
_COUNTED = ("hands", "bets", "max_hits", "bankroll_stops", "raised_to_min")
#: what the first pass reads
_READ = (
    *_SUMMED,
    *_COUNTED,
    "longest_losing_streak",
    "largest_stake",
    "largest_hand_variance",
    "ended_by",
)

#: the columns the passes after the first read, and the sessions (of one
#: seat) up to which the first keeps them in memory for those passes (24
#: bytes a session, 6 MB at most); past it, it writes them to a scratch file
_KEPT = ("net", "wagered", "final_bankroll")
KEEP_SESSIONS = 1 << 18
#: the sessions a block holds at most, read from spilled files (unless one
#: file holds more; about 3 MB of the first pass's columns) or the scratch file
BLOCK_SESSIONS = 1 << 15


def metric_names() -> list[str]:
    """The summary's columns after seat and strategy, in order."""
    return list(METRICS)


def seat_summary(blocks: Blocks) -> dict[str, Any] | None:
    """The summary's numbers for one seat's sessions (None for no session).
    Memory stays flat in the number of sessions: sums are kept exact and
    rounded once, so they do not depend on how the sessions were cut into
    blocks (or how many workers ran them); medians and percentiles are
    exact order statistics found in passes over the blocks."""
    # the scratch file, if any, is closed (and gone) when the passes end
    with ExitStack() as files:
        n = ruined = goals = stopped = winning = 0
        sums = {c: ExactSum() for c in _SUMMED}
        ruined_net = ExactSum()
        ruin_hands: list[np.ndarray] = []  # the hands the ruined sessions lasted
        counted = dict.fromkeys(_COUNTED, 0)
        streak = 0
        largest = -math.inf
        top_hand = 0.0  # the largest one hand's variance given its stakes
        # what the passes after the first read, kept from it: in memory while it
        # is small, then in a scratch file they read a block at a time
        kept: list[pl.DataFrame] | None = []
        scratch: Any = None
        for block in blocks(list(dict.fromkeys((*_READ, *_KEPT)))):
            if block.height == 0:
                continue
            n += block.height
            if kept is not None:
                kept.append(block[list(_KEPT)])
                if n > KEEP_SESSIONS:
                    scratch = files.enter_context(tempfile.TemporaryFile())
                    for part in kept:
                        scratch.write(_packed(part))
                    kept = None
            else:
                scratch.write(_packed(block))
            # the block's columns as numpy arrays (a polars operation on a
            # column costs ten times numpy's on a small block)
            col = {c: block[c].to_numpy() for c in _READ if c != "ended_by"}
            for c in _SUMMED:
                sums[c].add(col[c])
            for c in _COUNTED:
                counted[c] += int(col[c].sum(dtype=np.int64))
            streak = max(streak, int(col["longest_losing_streak"].max()))
            # (fmax: NaN left out, as polars' max leaves it)
            largest = max(largest, float(np.fmax.reduce(col["largest_stake"])))
            top_hand = max(top_hand, float(np.fmax.reduce(col["largest_hand_variance"])))
            ended = block["ended_by"].cast(pl.String)
            ruin = (ended == "ruin").to_numpy()
            ruined += int(ruin.sum())
            ruined_net.add(col["net"][ruin])
            ruin_hands.append(col["hands"][ruin])
            goals += int((ended == "win-goal").sum())
            stopped += int((ended == "stop-loss").sum())
            winning += int((col["net"] > 0).sum())
        if n == 0:
            return None
        if kept is not None:
            blocks = frame_blocks(pl.concat(kept))
        else:
            scratch.flush()
            blocks = _scratch_blocks(scratch, n)
        wagered, net = sums["wagered"].value(), sums["net"].value()
        with np.errstate(divide="ignore", invalid="ignore"):
            edge = float(np.float64(net) / np.float64(wagered))
            expected = float(np.float64(sums["expected_net"].value()) / np.float64(wagered))
        # the edge's standard error: a ratio estimator over sessions, which are
        # independent (each starts with a fresh shoe); none for one session, or
        # for sessions that all end alike (no spread to measure)
        se: float | None = None
        if n > 1:
            squares = ExactSum()
            for block in blocks(("net", "wagered")):
                resid = block["net"].to_numpy() - edge * block["wagered"].to_numpy()
                squares.add(resid * resid)
            with np.errstate(divide="ignore", invalid="ignore"):
                s = float(np.sqrt(np.float64(squares.value()) * n / (n - 1)) / np.float64(wagered))
            se = s if s > _NO_SPREAD else None
        half = float(t95(np.array([n]))[0]) * se if se is not None else None
        # hand by hand: the net less its expectation given the stakes, over the
        # square root of its variance given them (the martingale central limit
        # theorem: standard normal when no few hands carry the variance sum,
        # `intervals.ROUGH_SHARE`, which `top_hand_share` measures)
        variance = sums["net_variance"].value()
        spread = math.sqrt(variance) if variance > 0 else None
        z_hands = (net - sums["expected_net"].value()) / spread if spread else None
        half_hands = Z95 * spread / wagered if spread and wagered else None
        found = quantiles(
            blocks, n, {"net": [0.5], "final_bankroll": [q / 100 for q in PERCENTILES]}
        )
        median, finals = found["net"][0], found["final_bankroll"]
        row: dict[str, Any] = {
            "sessions": n,
            "hands": counted["hands"],
            "bets": counted["bets"],
            "wagered": wagered,
            "net": net,
            "edge": edge,
            "edge_ci_low": edge - half if half is not None else None,
            "edge_ci_high": edge + half if half is not None else None,
            "expected_edge": expected,
            "z": (edge - expected) / se if se is not None else None,
            "z_hands": z_hands,
            "edge_hands_ci_low": edge - half_hands if half_hands is not None else None,
            "edge_hands_ci_high": edge + half_hands if half_hands is not None else None,
            "top_hand_share": top_hand / variance if variance > 0 else None,
            "ruin_rate": ruined / n,
            "ruined_net": ruined_net.value(),
            "median_ruin_hand": float(np.median(np.concatenate(ruin_hands))) if ruined else None,
            "win_goal_rate": goals / n,
            "stop_loss_rate": stopped / n,
            "winning_sessions": winning / n,
            "mean_net": net / n,
            "median_net": median,
            "mean_max_drawdown": sums["max_drawdown"].value() / n,
            "longest_losing_streak": streak,
            "largest_stake": largest,
            "max_hits": counted["max_hits"],
            "bankroll_stops": counted["bankroll_stops"],
            "raised_to_min": counted["raised_to_min"],
        }
        row.update({f"final_bankroll_p{q}": v for q, v in zip(PERCENTILES, finals)})
        return row


def summary(seats: Sequence[tuple[str, str, Blocks]]) -> pl.DataFrame:
    """One row per seat with sessions, in the order given: (seat label,
    strategy, its sessions as blocks). NaN (a 0/0) is written as null."""
    rows = []
    for label, strategy, blocks in seats:
        row = seat_summary(blocks)
        if row is not None:
            # NaN as null (`v != v`: NaN alone)
            row = {k: None if v != v else v for k, v in row.items()}
            rows.append({"seat": label, "strategy": strategy, **row})
    schema = {
        "seat": pl.Categorical,
        "strategy": pl.Categorical,
        **{name: _WHOLE.get(name, pl.Float64) for name in METRICS},
    }
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


_KEPT_DTYPE = np.dtype([(c, np.float64) for c in _KEPT])


def _packed(frame: pl.DataFrame) -> bytes:
    """A block's kept columns as the scratch file holds them, a record a session."""
    records = np.empty(frame.height, dtype=_KEPT_DTYPE)
    for c in _KEPT:
        records[c] = frame[c].to_numpy()
    return records.tobytes()


def _scratch_blocks(scratch: Any, n: int) -> Blocks:
    """The kept columns of `n` sessions from the scratch file, in blocks of
    `BLOCK_SESSIONS`, read (not mapped: mapped pages would count in the
    process's memory as the passes touch them)."""

    def read(columns: Sequence[str]) -> Iterator[pl.DataFrame]:
        scratch.seek(0)
        for a in range(0, n, BLOCK_SESSIONS):
            records = np.fromfile(scratch, dtype=_KEPT_DTYPE, count=min(BLOCK_SESSIONS, n - a))
            yield pl.DataFrame({c: np.ascontiguousarray(records[c]) for c in columns})

    return read


def frame_blocks(frame: pl.DataFrame) -> Blocks:
    """A frame in memory as one block."""
    return InMemory(frame)


def file_blocks(files: Sequence[tuple[Path, int]]) -> Blocks:
    """Sessions spilled to Arrow IPC files, given as (file, sessions in it):
    as many files a block as `BLOCK_SESSIONS` allows (a file holds a chunk's
    sessions, often a few thousand, and each read costs about a millisecond)."""
    groups: list[list[Path]] = []
    size = BLOCK_SESSIONS
    for path, n in files:
        if size + n > BLOCK_SESSIONS:
            groups.append([])
            size = 0
        groups[-1].append(path)
        size += n
    return lambda columns: (pl.scan_ipc(group).select(columns).collect() for group in groups)

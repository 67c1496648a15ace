"""The sessions frame, and the summary worked out from it.

`sessions_frame` turns the engine's per-session integer arrays into the
sessions frame; `summary` reads a seat's sessions in blocks (a chunk's file
each, when the run spilled them to disk), so that its memory stays flat in
the number of sessions. Edges are from the player's side: net per unit
wagered, negative when the house wins (a measured edge of -0.0106 is a
house edge of 1.06%).
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from fractions import Fraction
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

Z95 = 1.959963984540054
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
    tick: float,
    first_session: int = 0,
    variance: np.ndarray | None = None,
) -> pl.DataFrame:
    """One row per session of one seat (money in currency units), sessions
    numbered from first_session + 1. Counts are 32-bit and names categorical:
    a run keeps this frame for every session, so its width is its memory."""
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
        "ended_by": pl.Series(ENDED_BY, dtype=ENDED).gather(stats[:, S_ENDED]),
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


def t95(sessions: np.ndarray) -> np.ndarray:
    """The two-sided 95% quantile of Student's t with sessions - 1 degrees of
    freedom (NaN for fewer than two sessions): 12.71 for 2 sessions, 2.05
    for 30, 1.96 in the limit. Under 1,000 degrees of freedom from the t
    distribution's closed form (`special.t_quantile`); from there on the
    series of Abramowitz and Stegun 26.7.5, which agrees with scipy's to the
    last bit."""
    from backtest.core.special import t_quantile

    v = np.asarray(sessions, dtype=np.float64) - 1.0
    out = np.full(v.shape, np.nan)
    big = v >= 1000
    if big.any():
        z, w = Z95, v[big]
        out[big] = (
            z
            + (z**3 + z) / 4 / w
            + (5 * z**5 + 16 * z**3 + 3 * z) / 96 / w**2
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384 / w**3
            + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160 / w**4
        )
    small = (v >= 1) & ~big
    if small.any():
        quantiles = {df: t_quantile(df, 0.975) for df in np.unique(v[small]).astype(int).tolist()}
        out[small] = [quantiles[int(df)] for df in v[small]]
    return out


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
_READ = (*_SUMMED, *_COUNTED, "longest_losing_streak", "largest_stake", "ended_by")

#: the columns the passes after the first read, and the sessions (of one
#: seat) up to which the first keeps them in memory for those passes (24
#: bytes a session, 50 MB at most); past it, it writes them to a scratch file
_KEPT = ("net", "wagered", "final_bankroll")
KEEP_SESSIONS = 1 << 21
#: the sessions a block holds at most, read from spilled files (unless one
#: file holds more; about 12 MB of the first pass's columns) or the scratch file
BLOCK_SESSIONS = 1 << 17

#: a seat's sessions as blocks of a frame, reading only the columns named;
#: called once for each pass over them
Blocks = Callable[[Sequence[str]], Iterable[pl.DataFrame]]


def metric_names() -> list[str]:
    """The summary's columns after seat and strategy, in order."""
    return list(METRICS)


class ExactSum:
    """The sum of float64 numbers added in blocks, exact until it is read,
    then rounded once: the same number however the numbers are split into
    blocks or ordered. Each number is an integer mantissa times a power of two;
    the mantissas are summed by exponent (a bincount, no sort) in three parts
    of 18 bits or less, whose sums stay whole numbers below 2**53 for under
    2**35 numbers a block, and kept as one Python integer in units of
    2**-1126, below the least subnormal's least bit. Infinities and NaN are
    summed as floats beside it and win."""

    _OFFSET = 1126

    def __init__(self) -> None:
        self.total = 0
        self.special = 0.0

    def add(self, values: np.ndarray) -> None:
        x = np.asarray(values, dtype=np.float64)
        finite = np.isfinite(x)
        if not finite.all():
            self.special += float(np.sum(x[~finite]))
            x = x[finite]
        if x.size == 0:
            return
        m, e = np.frexp(x)
        mant = (m * 9007199254740992.0).astype(np.int64)  # times 2**53: exact
        exp = e.astype(np.int64)
        low = int(exp.min())
        at = exp - low  # x = mant * 2**(at + low - 53)
        # the mantissas by exponent, in three parts of at most 18 bits: each
        # part's sum is a whole number below 2**53 (for under 2**35 numbers),
        # which float weights add exactly
        parts = [(mant >> 36, 36), ((mant >> 18) & 0x3FFFF, 18), (mant & 0x3FFFF, 0)]
        total = self.total
        for part, shift in parts:
            sums = np.bincount(at, weights=part.astype(np.float64))
            for k in np.flatnonzero(sums).tolist():
                total += int(sums[k]) << (k + low - 53 + self._OFFSET + shift)
        self.total = total

    def value(self) -> float:
        if self.special != 0.0 or self.special != self.special:
            return self.special
        try:
            return float(Fraction(self.total, 1 << self._OFFSET))
        except OverflowError:  # finite numbers whose sum is not: as float sums go
            return math.inf if self.total > 0 else -math.inf


def _keys(values: np.ndarray) -> np.ndarray:
    """Unsigned 64-bit keys that sort as the numbers do (-0.0 read as 0.0)."""
    bits = (np.asarray(values, dtype=np.float64) + 0.0).view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))


def _number(key: int) -> float:
    """The float a key of `_keys` stands for."""
    bits = key & ((1 << 63) - 1) if key >> 63 else ~key & ((1 << 64) - 1)
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def order_statistics(blocks: Blocks, wanted: Mapping[str, Sequence[int]]) -> dict[str, list[float]]:
    """The values of the given ranks (0 the least) of each column, exactly,
    in four passes over the blocks whatever their number (every column in the
    same passes): each pass narrows every rank's key by 16 bits, from a
    histogram of the values that share its prefix so far. Memory: a block,
    and 65,536 counts a rank."""
    prefix = {c: [0] * len(r) for c, r in wanted.items()}
    left = {c: [int(x) for x in r] for c, r in wanted.items()}
    columns = list(wanted)
    for level in range(4):
        shift = np.uint64(48 - 16 * level)
        counts = {c: {p: np.zeros(1 << 16, np.int64) for p in set(prefix[c])} for c in columns}
        for block in blocks(columns):
            for c in columns:
                keys = _keys(block[c].to_numpy())
                if level == 0:
                    counts[c][0] += np.bincount((keys >> shift).astype(np.int64), minlength=1 << 16)
                    continue
                top = keys >> (shift + np.uint64(16))
                for p, hist in counts[c].items():
                    chosen = keys[top == np.uint64(p)]
                    hist += np.bincount(
                        ((chosen >> shift) & np.uint64(0xFFFF)).astype(np.int64), minlength=1 << 16
                    )
        for c in columns:
            for k, (p, r) in enumerate(zip(prefix[c], left[c])):
                cum = np.cumsum(counts[c][p])
                digit = int(np.searchsorted(cum, r, side="right"))
                left[c][k] = r - (int(cum[digit - 1]) if digit else 0)
                prefix[c][k] = (p << 16) | digit
    return {c: [_number(p) for p in prefix[c]] for c in columns}


def quantiles(blocks: Blocks, n: int, wanted: dict[str, Sequence[float]]) -> dict[str, list[float]]:
    """Quantiles of columns of `n` values each (column: its q's), interpolated
    linearly between the two values around (n - 1) q, as polars'
    `quantile(q, "linear")`. From the blocks' one frame at once when they
    hold it in memory."""
    where = {c: [(n - 1) * q for q in qs] for c, qs in wanted.items()}
    ranks = {
        c: sorted({r for f in fs for r in (int(f), int(math.ceil(f)))}) for c, fs in where.items()
    }
    if isinstance(blocks, _InMemory):
        found = {
            c: np.partition(blocks.frame[c].to_numpy() + 0.0, r)[r].tolist()
            for c, r in ranks.items()
        }
    else:
        found = order_statistics(blocks, ranks)
    out: dict[str, list[float]] = {}
    for c, fs in where.items():
        value = dict(zip(ranks[c], found[c]))
        out[c] = []
        for f in fs:
            lo, hi = value[int(f)], value[int(math.ceil(f))]
            out[c].append(lo if lo == hi else (f - int(f)) * (hi - lo) + lo)
    return out


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
        # what the passes after the first read, kept from it: in memory while it
        # is small, then in a scratch file they read a block at a time
        kept: list[pl.DataFrame] | None = []
        scratch: Any = None
        for block in blocks(list(dict.fromkeys((*_READ, *_KEPT)))):
            if block.height == 0:
                continue
            n += block.height
            if kept is not None:
                kept.append(block.select(_KEPT))
                if n > KEEP_SESSIONS:
                    scratch = files.enter_context(tempfile.TemporaryFile())
                    for part in kept:
                        scratch.write(_packed(part))
                    kept = None
            else:
                scratch.write(_packed(block))
            for c in _SUMMED:
                sums[c].add(block[c].to_numpy())
            for c in _COUNTED:
                counted[c] += int(block[c].cast(pl.Int64).sum())
            streak = max(streak, int(block["longest_losing_streak"].max()))  # type: ignore[arg-type]
            largest = max(largest, float(block["largest_stake"].max()))  # type: ignore[arg-type]
            ended = block["ended_by"].cast(pl.String)
            ruin = (ended == "ruin").to_numpy()
            ruined += int(ruin.sum())
            ruined_net.add(block["net"].to_numpy()[ruin])
            ruin_hands.append(block["hands"].to_numpy()[ruin])
            goals += int((ended == "win-goal").sum())
            stopped += int((ended == "stop-loss").sum())
            winning += int((block["net"] > 0).sum())
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
        # theorem: valid whatever a progression does with its stakes)
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
            rows.append({"seat": label, "strategy": strategy, **row})
    schema = {
        "seat": pl.Categorical,
        "strategy": pl.Categorical,
        **{name: _WHOLE.get(name, pl.Float64) for name in METRICS},
    }
    frame = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    return frame.with_columns(pl.col(pl.Float64).fill_nan(None))


class _InMemory:
    """A frame in memory as one block."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame

    def __call__(self, columns: Sequence[str]) -> list[pl.DataFrame]:
        return [self.frame.select(columns)]


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
    return _InMemory(frame)


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

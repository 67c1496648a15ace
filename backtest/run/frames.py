"""A run's frames: each chunk's raw per-session numbers as polars frames
(and spilled to Arrow IPC files), and the sessions, summary and ledger
frames of the whole run from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from backtest.core.errors import OutputError
from backtest.run.chunks import SeatResult
from backtest.run.config import RunConfig

#: one seat's frames of one chunk: sessions (None once spilled to disk), ledger or None
SeatFrames = tuple[pl.DataFrame | None, pl.DataFrame | None]


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
            r.largest,
            r.cross,
        )
        ledger = metrics.ledger_frame(seat.label, [r.ledger]) if r.ledger is not None else None
        out.append((sessions, ledger))
    return out


def spill_path(spill: Path, seat: int, lo: int) -> Path:
    """Where the sessions of `seat` from session `lo` on are spilled."""
    return spill / f"sessions-{seat:04d}-{lo:012d}.arrow"


def ledger_path(spill: Path, seat: int, lo: int) -> Path:
    """Where the ledger of `seat` from session `lo` on is spilled."""
    return spill / f"ledger-{seat:04d}-{lo:012d}.arrow"


def chunk_frames(
    config: RunConfig, part: tuple[list[SeatResult], int], lo: int, spill: Path | None
) -> list[SeatFrames]:
    """A chunk's frames for each seat; with `spill`, the sessions (and ledger)
    frames are written there (Arrow IPC, LZ4: half the time of Parquet with
    zstd, for files 1.8 times as large, which last only as long as the run)
    and None is kept in their place."""
    seats: list[SeatFrames] = []
    for k, (sessions_k, ledger_k) in enumerate(seat_frames(config, part, lo)):
        if spill is not None:
            _spill(sessions_k, spill_path(spill, k, lo))
            if ledger_k is not None:
                _spill(ledger_k, ledger_path(spill, k, lo))
            seats.append((None, None))
        else:
            seats.append((sessions_k, ledger_k))
    return seats


def _spill(frame: pl.DataFrame, path: Path) -> None:
    """Write a spilled frame; a full disk, say, is an error naming the file."""
    try:
        frame.write_ipc(path, compression="lz4")
    except (OSError, pl.exceptions.PolarsError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OutputError(
            f"cannot write {path}, where the run keeps its sessions while it runs: "
            f"{' '.join(reason.split())}; free some space there, or set TMPDIR to a "
            "folder with room (with --out, the space is taken there)"
        ) from None


def finish(
    config: RunConfig,
    chunks: Sequence[Sequence[SeatFrames]],
    ledger: bool = False,
    spilled: Sequence[Sequence[tuple[Path, int]]] = (),
    ledgers: Sequence[Sequence[Path]] = (),
) -> tuple[pl.DataFrame | pl.LazyFrame, pl.DataFrame, pl.DataFrame | pl.LazyFrame | None]:
    """The sessions, summary (and ledger) frames from every chunk's seat frames,
    in seat then session order. With `spilled` (for each seat, its chunks'
    sessions frames written to these Arrow IPC files, in session order) the
    sessions are a LazyFrame over the files; with `ledgers` (for each seat,
    its chunks' ledger files), so is the ledger."""
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
    ledger_df: pl.DataFrame | pl.LazyFrame | None = None
    if ledger and ledgers:
        ledger_df = pl.scan_ipc([f for files in ledgers for f in files])
    elif ledger:
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
    assert isinstance(sessions, pl.DataFrame) and not isinstance(ledger_df, pl.LazyFrame)
    return sessions, summary, ledger_df


def paths_of(config: RunConfig, part: tuple[list[SeatResult], int]) -> pl.DataFrame:
    """The bankroll paths of a chunk from session 0 run with a ledger: seat,
    session, hand (the seat's n-th hand), bankroll."""
    _, _, ledger = assemble(config, [part], ledger=True)
    assert ledger is not None
    return (
        ledger.select("seat", "session", "bankroll")
        .with_columns(pl.int_range(pl.len()).over("seat", "session").add(1).alias("hand"))
        .select("seat", "session", "hand", "bankroll")
    )

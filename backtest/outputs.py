"""Writing results: atomic files, and the progress bar on a terminal."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from backtest import __version__
from backtest.errors import UsageError


def check_out_dir(out: Path) -> None:
    """Make sure `out` is (or can become) a directory, before any work starts."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the directory: {exc.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: the directory is not writable; give one you can write to")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path`, renamed onto it only when the block succeeds
    (with the permissions a newly created file would have)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def remove_stale_temporaries(folder: Path) -> None:
    """Delete temporary files `atomic_path` left behind when a process was killed."""
    for stale in folder.glob(".*.tmp"):
        stale.unlink(missing_ok=True)


def write_parquet(frame: pl.DataFrame | pl.LazyFrame, path: Path) -> None:
    """Write a frame (a LazyFrame streams to the file) atomically."""
    with atomic_path(path) as tmp:
        if isinstance(frame, pl.LazyFrame):
            frame.sink_parquet(tmp)
        else:
            frame.write_parquet(tmp)


def write_json(data: Any, path: Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def write_run(out: Path, result: Any, paths: pl.DataFrame | None = None) -> list[str]:
    """summary.parquet, sessions.parquet, ledger.parquet (if kept), paths.parquet
    (bankroll after each hand of the first sessions, for plots) and run.json."""
    written = []
    write_parquet(result.sessions, out / "sessions.parquet")
    written.append("sessions.parquet")
    if paths is not None:
        write_parquet(paths, out / "paths.parquet")
        written.append("paths.parquet")
    if result.ledger is not None:
        write_parquet(result.ledger, out / "ledger.parquet")
        written.append("ledger.parquet")
    cfg = result.config
    meta = {"kind": "run", "version": __version__, "name": cfg.name, "seed": result.seed,
            "hands": result.hands, "rules": cfg.rules.to_mapping(), "config": dict(cfg.raw),
            "bankroll": cfg.session.bankroll}
    write_json(meta, out / "run.json")
    written.append("run.json")
    # the summary last: its presence marks a complete run
    write_parquet(result.summary, out / "summary.parquet")
    written.append("summary.parquet")
    return written


@contextmanager
def progress_bar(total_label: str = "sessions") -> Iterator[Callable[[int, int, int], None] | None]:
    """A progress callback drawing a bar on a terminal; None elsewhere."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.fields[hands]} hands, {task.fields[rate]}"),
                  TimeRemainingColumn(), transient=True, console=None) as bar:
        task = bar.add_task(total_label, total=None, hands="0", rate="")
        import time

        start = time.perf_counter()

        def update(done: int, hands: int, total: int | None = None) -> None:
            rate = hands / max(time.perf_counter() - start, 1e-9)
            bar.update(task, completed=done, total=total, hands=f"{hands:,}",
                       rate=f"{rate / 1e6:.1f}M hands/s")

        yield update


@contextmanager
def sweep_progress() -> Iterator[Callable[[int, int, int, int], None] | None]:
    """A progress callback for sweeps: cells and hands done, and the rate."""
    if not sys.stderr.isatty():
        yield None
        return
    import time

    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("cells {task.fields[cells]}"), BarColumn(),
                  TextColumn("{task.fields[hands]} hands, {task.fields[rate]}"),
                  TimeRemainingColumn(), transient=True) as bar:
        task = bar.add_task("sweep", total=None, cells="0", hands="0", rate="")
        start = time.perf_counter()

        def update(cells: int, total_cells: int, hands: int, expected: int) -> None:
            rate = hands / max(time.perf_counter() - start, 1e-9)
            bar.update(task, completed=hands, total=max(expected, 1),
                       cells=f"{cells}/{total_cells}", hands=f"{hands:,}",
                       rate=f"{rate / 1e6:.1f}M hands/s")

        yield update

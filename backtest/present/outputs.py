"""Writing results: atomic files, and the progress bar on a terminal."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from backtest import __version__
from backtest.core.errors import OutputError, UsageError
from backtest.core.files import atomic_path

#: the files `write_run` writes, and the one whose presence marks a complete run
RUN_FILES = (
    "sessions.parquet",
    "paths.parquet",
    "ledger.parquet",
    "comparisons.parquet",
    "run.json",
    "summary.parquet",
)
#: what each kind of result leaves in its directory
MARKERS = {"run": "run.json", "sweep": "sweep.json"}


def check_out_dir(out: Path, kind: str = "run") -> list[Path]:
    """Make sure `out` is (or can become) a directory for the results of a
    `kind` ("run" or "sweep"), before any work starts: not a file, writable,
    and not holding the other kind's results (they share file names). Returns
    the directories it made, deepest first (for `remove_made`)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a directory")
    for other, marker in MARKERS.items():
        if other != kind and (out / marker).exists():
            raise UsageError(
                f"--out {out} holds the results of a {other} ({marker}); give "
                f"another directory for those of a {kind}"
            )
    here = out.resolve()
    if kind == "run" and here.name == "cells" and (here.parent / MARKERS["sweep"]).exists():
        raise UsageError(
            f"--out {out} holds the cells of the sweep in {here.parent}; give another "
            "directory for the results of a run"
        )
    if kind == "run":
        for name in RUN_FILES:
            if (out / name).is_dir():
                raise UsageError(
                    f"--out {out}: {out / name} is a directory; the run writes a file of that name"
                )
    made = []
    missing = out
    while not missing.exists() and missing != missing.parent:
        made.append(missing)
        missing = missing.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        remove_made(made)
        why = exc.strerror
        if isinstance(exc, FileNotFoundError) and missing.is_dir():
            # the folder above is there but makes nothing new: /proc, /sys
            why = (
                f"{missing} takes no new folders ({exc.strerror}; a filesystem of the "
                "kernel's, say); give a path on a disk"
            )
        raise UsageError(f"--out {out}: cannot create the directory: {why}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        remove_made(made)
        raise UsageError(f"--out {out}: the directory is not writable; give one you can write to")
    try:  # what access() cannot tell: a read-only mount, a filesystem of the kernel's
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        remove_made(made)
        raise UsageError(
            f"--out {out}: cannot write files there ({exc.strerror}); give a "
            "directory you can write to"
        ) from None
    return made


def remove_made(made: list[Path]) -> None:
    """Remove the directories `check_out_dir` made, deepest first, as long as
    they are empty: a run that fails leaves no empty --out behind."""
    for path in made:
        try:
            path.rmdir()
        except OSError:
            return


def remove_stale_temporaries(folder: Path) -> None:
    """Delete temporary files `atomic_path` left behind when a process was killed."""
    for stale in folder.glob(".*.tmp"):
        stale.unlink(missing_ok=True)


def config_hash(config: Any) -> str:
    """SHA-256 of a config as run (its mapping, keys sorted), in hex."""
    import hashlib

    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def provenance(seed: int, config_sha256: str) -> dict[str, str]:
    """What every Parquet file says of where it came from, in its key-value
    metadata: the package's version, the command line, the seed, the hash of
    the config as run (also in run.json / sweep.json), so a file moved away
    from them still says it.

    >>> sorted(provenance(1, "ab"))
    ['backtest.command', 'backtest.config_sha256', 'backtest.seed', 'backtest.version']
    """
    import shlex

    return {
        "backtest.version": __version__,
        "backtest.command": shlex.join(["backtest", *sys.argv[1:]]),
        "backtest.seed": str(seed),
        "backtest.config_sha256": config_sha256,
    }


def write_parquet(
    frame: pl.DataFrame | pl.LazyFrame, path: Path, metadata: dict[str, str] | None = None
) -> None:
    """Write a frame (a LazyFrame streams to the file) atomically, with
    `metadata` as the file's key-value metadata."""
    if isinstance(frame, pl.LazyFrame):
        from backtest.run.staging import signals_held

        # Ctrl-C is answered once the file is whole: polars' streaming sink,
        # interrupted, panics (a Rust panic on stderr) as it stops
        with signals_held(), atomic_path(path) as tmp:
            frame.sink_parquet(tmp, metadata=metadata)
        return
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp, metadata=metadata)


def write_json(data: Any, path: Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def write_run(
    out: Path,
    result: Any,
    paths: pl.DataFrame | None = None,
    committing: Callable[[], None] | None = None,
) -> list[str]:
    """summary.parquet, sessions.parquet, ledger.parquet (if kept), paths.parquet
    (bankroll after each hand of the first sessions, for plots),
    comparisons.parquet (each seat against the baseline, with two seats or
    more) and run.json.

    All are written in a hidden folder inside `out` first, so an error or an
    interruption while writing leaves an earlier run in `out` as it was. Then
    the earlier run's summary (the mark of a complete run) goes, the new files
    are renamed into place, any file of the earlier run this one does not
    write goes (an old ledger), and the summary comes last.
    `committing()` is called just before the first of them goes.
    """
    cfg = result.config
    sessions = result.n_sessions
    meta = {
        "kind": "run",
        "version": __version__,
        "name": cfg.name,
        "seed": result.seed,
        "sessions": sessions,
        "hands": result.hands,
        "rules": cfg.rules.to_mapping(),
        "config": dict(cfg.raw) | {"sessions": sessions},
        "bankroll": cfg.session.bankroll,
    }
    meta["config_sha256"] = config_hash(meta["config"])
    try:
        return _write_run(out, meta, result, paths, committing)
    except (OSError, pl.exceptions.PolarsError) as exc:
        # a full disk, say: what was in `out` before is as it was
        reason = (
            exc.strerror
            if isinstance(exc, OSError) and exc.strerror
            else " ".join(str(exc).split())
        )
        raise OutputError(
            f"--out {out}: cannot write the results: {reason}; the files "
            "already there are unchanged"
        ) from None


#: the hidden folders a run works in: its staged results (in --out) and its
#: spilled sessions (in --out, or the temporary folder), and what they hold
STAGED = ".run-"
SPILLED = ".sessions-"
_STAGED_FILES = (*RUN_FILES, ".*.tmp")
_SPILLED_FILES = ("sessions-*.arrow", "ledger-*.arrow", ".*.tmp")


def remove_stale_run_folders(out: Path | None) -> list[Path]:
    """Remove what runs killed outright (`kill -9`, a power cut) left: their
    staged results and spilled sessions in `out`, and spilled sessions in the
    temporary folder, each only when its owner is provably dead
    (`staging.remove_stale`). Returns the folders removed."""
    from backtest.run import staging

    removed = staging.remove_stale(None, SPILLED, _SPILLED_FILES)
    if out is not None and out.is_dir():
        removed += staging.remove_stale(out, STAGED, _STAGED_FILES)
        removed += staging.remove_stale(out, SPILLED, _SPILLED_FILES)
    return removed


def _write_run(
    out: Path,
    meta: dict[str, Any],
    result: Any,
    paths: pl.DataFrame | None,
    committing: Callable[[], None] | None = None,
) -> list[str]:
    from backtest.run import staging

    tags = provenance(meta["seed"], meta["config_sha256"])
    with staging.staging_dir(out, STAGED) as stage:
        write_parquet(result.sessions, stage / "sessions.parquet", tags)
        if paths is not None:
            write_parquet(paths, stage / "paths.parquet", tags)
        if result.ledger is not None:
            write_parquet(result.ledger, stage / "ledger.parquet", tags)
        paired = getattr(result, "comparisons", None)
        if paired is not None and paired.height:
            write_parquet(paired, stage / "comparisons.parquet", tags)
        write_json(meta, stage / "run.json")
        write_parquet(result.summary, stage / "summary.parquet", tags)
        written = [name for name in RUN_FILES if (stage / name).is_file()]
        if committing is not None:
            committing()
        (out / "summary.parquet").unlink(missing_ok=True)
        for name in RUN_FILES[:-1]:
            if name in written:
                os.replace(stage / name, out / name)
            else:
                (out / name).unlink(missing_ok=True)
        os.replace(stage / "summary.parquet", out / "summary.parquet")
    from backtest.present.report.write import remove_stale

    remove_stale(out)  # a report there told of the results just replaced
    return written


def _terminal_bar(label: str, shown: bool = True) -> Any | None:
    """A transient Rich progress display (label, bar, hands and rate, time left)
    drawn on stderr when stderr is a terminal, whatever stdout is (a redirected
    verdict stays clean); None elsewhere, or when not `shown` (--quiet). The stream
    checked is the stream drawn on."""
    if not shown or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn(label),
        BarColumn(),
        TextColumn("{task.fields[hands]} hands, {task.fields[rate]}"),
        TimeRemainingColumn(),
        transient=True,
        console=Console(stderr=True),
    )


def _rate(hands: int, start: float) -> str:
    return f"{hands / max(time.perf_counter() - start, 1e-9) / 1e6:.1f}M hands/s"


@contextmanager
def progress_bar(
    total_label: str = "sessions", shown: bool = True
) -> Iterator[Callable[[int, int, int], None] | None]:
    """A progress callback drawing a bar on a terminal; None elsewhere."""
    display = _terminal_bar("{task.description}", shown)
    if display is None:
        yield None
        return
    with display as bar:
        task = bar.add_task(total_label, total=None, hands="0", rate="")
        start = time.perf_counter()

        def update(done: int, hands: int, total: int | None = None) -> None:
            bar.update(
                task, completed=done, total=total, hands=f"{hands:,}", rate=_rate(hands, start)
            )

        yield update


@contextmanager
def cells_checked(shown: bool = True) -> Iterator[Callable[[int, int], None] | None]:
    """A progress callback for checking a sweep's cells, (checked, cells):
    a bar on a terminal (from the first call) unless not `shown` (--quiet),
    None elsewhere."""
    if not shown or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("checking the cells"),
        BarColumn(),
        MofNCompleteColumn(),
        transient=True,
        console=Console(stderr=True),
    ) as bar:
        tasks: list[Any] = []

        def update(checked: int, cells: int) -> None:
            if not tasks:
                tasks.append(bar.add_task("cells", total=cells))
            bar.update(tasks[0], completed=checked)

        yield update


@contextmanager
def sweep_progress(shown: bool = True) -> Iterator[Callable[[int, int, int, int], None] | None]:
    """A progress callback for sweeps: cells and hands done, and the rate."""
    display = _terminal_bar("cells {task.fields[cells]}", shown)
    if display is None:
        yield None
        return
    with display as bar:
        task = bar.add_task("sweep", total=None, cells="0", hands="0", rate="")
        start = time.perf_counter()

        def update(cells: int, total_cells: int, hands: int, expected: int) -> None:
            bar.update(
                task,
                completed=hands,
                total=max(expected, 1),
                cells=f"{cells}/{total_cells}",
                hands=f"{hands:,}",
                rate=_rate(hands, start),
            )

        yield update

"""Running a sweep: its cells in chunks of sessions on local processes or
a Dask cluster, each finished cell written atomically to `--out`, the
summary rebuilt, and `--resume` onto the same inputs only."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from backtest.core.errors import BacktestError, UsageError
from backtest.jit.buffers import Buffers
from backtest.present import outputs
from backtest.present.report.write import remove_stale
from backtest.run import chunks, cluster, engine, plan
from backtest.run.pool import check_workers, default_workers, process_pool
from backtest.sweep.cells import Cell, Sweep
from backtest.sweep.out_dir import (
    all_finished,
    cell_frames,
    check_out,
    made_with,
    read_cells,
    write_out,
    write_summary,
)

#: a sweep of more tasks on one worker loads the compiled deal first: a small
#: cell's shoes are otherwise dealt as plain Python (`generate_shoes`), about
#: 30 ms a cell, and loading the compiled deal costs about half a second once
PLAIN_DEALS = 16
#: finished cells are written together once this many seconds have passed since
#: the last were (a cell's frames and file cost a few milliseconds however small
#: it is; made together, less); a Ctrl-C or an error writes those waiting
WRITE_EVERY = 0.5


@dataclass(frozen=True)
class Task:
    cell: int
    lo: int
    hi: int


def _tasks(sweep: Sweep, todo: Sequence[int], workers: int) -> list[Task]:
    """Cells cut into chunks of sessions: large cells spread over the workers,
    and when there are few cells, each is cut finer so every worker has work."""
    tasks = []
    share = workers if len(todo) < 2 * workers else 1
    for i in todo:
        cell = sweep.cells[i]
        for lo, hi in plan.plan_chunks(cell.sessions, cell.per_session, share):
            tasks.append(Task(i, lo, hi))
    return tasks


def _check_executor(executor: str, address: str | None) -> None:
    if executor not in ("local", "dask"):
        raise UsageError(f"--executor must be local or dask, got {executor!r}")
    if address is not None and executor != "dask":
        raise UsageError("--address goes with --executor dask")


def run_sweep(
    sweep: Sweep,
    out: Path,
    workers: int | None = None,
    executor: str = "local",
    address: str | None = None,
    resume: bool = False,
    progress: Callable[[int, int, int, int], None] | None = None,
    starting: Callable[[], None] | None = None,
) -> pl.DataFrame:
    """Run every cell not yet finished in `out`; return the summary of all cells.

    Everything is checked, and a Dask scheduler reached, before anything is
    written into `out`. progress(cells_done, cells_total, hands_done,
    hands_expected) after each task; starting() once the checks have passed,
    if there are cells to run.
    """
    if workers is None:
        workers = default_workers()
    check_workers(workers, "--workers", UsageError)
    _check_executor(executor, address)
    meta = check_out(out, sweep, resume)
    chunks.forget_configs()  # rebuilt from the files as they are now
    # every cell finished already: read, nothing run (cells torn by a kill run again)
    resume = resume or all_finished(sweep, out)
    done, torn = read_cells(out, sweep) if resume else ({}, [])
    todo = [c.index for c in sweep.cells if c.index not in done]
    tasks = _tasks(sweep, todo, workers)
    if tasks and starting is not None:
        starting()
    expected_hands = sum(sweep.cells[i].sessions * sweep.cells[i].per_session for i in todo)
    pending = {i: len([t for t in tasks if t.cell == i]) for i in todo}
    parts: dict[int, dict[int, tuple[list[chunks.SeatResult], int]]] = {i: {} for i in todo}
    hands_done = 0
    last_write = 0.0
    with ExitStack() as stack:
        client = (
            stack.enter_context(cluster.dask_client(workers, address))
            if executor == "dask" and tasks
            else None
        )
        write_out(out, meta, torn)
        by_id = {c.id: c for c in sweep.cells}
        for f in torn:  # said once the sweep is sure to run
            cell = by_id[f.stem]
            warnings.warn(
                f"--out {out}: {f.relative_to(out)} cannot be read (cut short when "
                f"the sweep was stopped, or damaged since); running cell "
                f"{cell.index + 1} ({cell.label()}) again",
                stacklevel=2,
            )
        if progress:
            progress(len(done), len(sweep.cells), 0, expected_hands)
        written, summary = -1, pl.DataFrame()
        # cells run and not yet written: written together, once WRITE_EVERY has passed
        finished: list[tuple[Cell, list[tuple[list[chunks.SeatResult], int]]]] = []
        last_cells = time.monotonic()
        results = _execute(sweep, tasks, workers, client)
        try:
            for task, result in results:
                parts[task.cell][task.lo] = result
                hands_done += result[1]
                pending[task.cell] -= 1
                if pending[task.cell] == 0:
                    ordered = [parts[task.cell][lo] for lo in sorted(parts[task.cell])]
                    finished.append((sweep.cells[task.cell], ordered))
                    del parts[task.cell]
                    if time.monotonic() - last_cells > WRITE_EVERY:
                        _write_cells(out, sweep, finished, done)
                        last_cells = time.monotonic()
                    if time.monotonic() - last_write > 2.0:
                        summary = write_summary(out, sweep, done)
                        written, last_write = len(done), time.monotonic()
                if progress:
                    progress(len(done), len(sweep.cells), hands_done, expected_hands)
            _write_cells(out, sweep, finished, done)
            if progress:
                progress(len(done), len(sweep.cells), hands_done, expected_hands)
        finally:
            # interrupted or failed: the workers stop now (closing the generator ends
            # its pool, and the stack the Dask cluster; left to the garbage collector,
            # they would run on), the cells run are written (those left), and the
            # summary holds every finished cell
            results.close()
            stack.close()
            _write_cells(out, sweep, finished, done)
            if len(done) != written:
                summary = write_summary(out, sweep, done)
    return summary


def _write_cells(
    out: Path,
    sweep: Sweep,
    finished: list[tuple[Cell, list[tuple[list[chunks.SeatResult], int]]]],
    done: dict[int, pl.DataFrame],
) -> None:
    """Write the finished cells' files (each atomically) and add them to `done`."""
    if not finished:
        return
    for (cell, _), frame in zip(finished, cell_frames(finished)):
        outputs.write_parquet(
            frame,
            out / "cells" / f"{cell.id}.parquet",
            outputs.provenance(sweep.seed, sweep.spec_hash) | made_with(sweep, cell),
        )
        done[cell.index] = frame
    finished.clear()
    remove_stale(out)  # it told of fewer cells


@contextmanager
def _naming_the_cell(sweep: Sweep, task: Task) -> Iterator[None]:
    """An error a cell's run raises (a strategy's, found only as it plays),
    named by the sweep file and the cell, as the checks before any cell are."""
    try:
        yield
    except BacktestError as exc:
        cell = sweep.cells[task.cell]
        message = str(exc).removeprefix(cell.config.source + ": ")
        raise type(exc)(
            f"{sweep.source}: cell {cell.index + 1} ({cell.label()}): {message}"
        ) from None


def _execute(
    sweep: Sweep, tasks: Sequence[Task], workers: int, client: Any = None
) -> Generator[tuple[Task, tuple[list[chunks.SeatResult], int]], None, None]:
    """Each task's result as it finishes: on `client` (Dask) if given, else on
    `workers` local processes (in this one for a single worker)."""
    if not tasks:
        return
    users = _plays_user_code(sweep, tasks)
    if client is None and workers == 1 and not users:
        # in this process, on the cells' configs as checked (no process to send them to)
        if len(tasks) > PLAIN_DEALS:
            from backtest.shoes import kernels

            kernels.deal_shoes.dispatcher  # noqa: B018 (loaded on first use: a property)
        buffers = Buffers()
        for task in tasks:
            config = sweep.cells[task.cell].config
            with _naming_the_cell(sweep, task):
                strategies = engine.build_strategies(config)
                result = chunks.run_chunk(config, strategies, task.lo, task.hi, buffers=buffers)
            yield task, result
        return
    payload = [
        (
            dict(sweep.cells[t.cell].config.raw),
            str(sweep.cells[t.cell].config.base_dir),
            sweep.cells[t.cell].config.source,
            t.lo,
            t.hi,
            False,
        )
        for t in tasks
    ]
    if client is not None:
        yield from _execute_dask(sweep, tasks, payload, client)
        return
    from concurrent.futures import FIRST_COMPLETED, wait

    kinds: set[tuple[str, ...]] = set()
    for task in tasks:
        config = sweep.cells[task.cell].config
        key = tuple(sorted(s.strategy for s in config.seats)) + (str(config.shoe),)
        if key not in kinds and not users:
            kinds.add(key)
            with _naming_the_cell(sweep, task):
                chunks.warm(config, engine.build_strategies(config))
    with process_pool(workers) as pool:
        futures = {pool.submit(chunks.run_task, *args): task for task, args in zip(tasks, payload)}
        remaining = set(futures)
        while remaining:
            finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for fut in finished:
                with _naming_the_cell(sweep, futures[fut]):
                    result = fut.result()
                yield futures[fut], result


def _plays_user_code(sweep: Sweep, tasks: Sequence[Task]) -> bool:
    """Whether a cell seats a user's compiled class: its code then plays in
    worker processes alone, as a run's does (only ending its process stops a
    function that never returns)."""
    from backtest.loop import session_loop

    seen: set[tuple[str, ...]] = set()
    for task in tasks:
        config = sweep.cells[task.cell].config
        key = tuple(s.strategy for s in config.seats)
        if key not in seen:
            seen.add(key)
            if any(session_loop.form_of(s) == "user" for s in engine.build_strategies(config)):
                return True
    return False


def _execute_dask(
    sweep: Sweep, tasks: Sequence[Task], payload: Sequence[tuple[Any, ...]], client: Any
) -> Iterator[tuple[Task, tuple[list[chunks.SeatResult], int]]]:
    from dask.distributed import as_completed

    futures = {
        client.submit(chunks.run_task, *args, pure=False): task
        for task, args in zip(tasks, payload)
    }
    for fut in as_completed(list(futures)):
        with _naming_the_cell(sweep, futures[fut]):
            result = fut.result()
        yield futures[fut], result

"""Worker processes: how many, and a pool of them that stops cleanly on an
interrupt or a failed task."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, suppress

from backtest.core.errors import BacktestError, ConfigError
from backtest.jit.lazy_jit import cores

#: the most sessions one run has (its chunks are listed before it starts)
#: the most worker processes a run or a sweep starts on this machine
MAX_WORKERS = 256


def check_workers(
    workers: int, name: str = "workers", error: type[BacktestError] = ConfigError
) -> None:
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

    _wait_answers_ctrl_c()
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(method),
        initializer=_worker_start,
    )
    try:
        yield pool
    except BaseException as exc:
        workers_now = list(getattr(pool, "_processes", None) or {})
        pool.shutdown(wait=False, cancel_futures=True)
        for pid in workers_now:
            with suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        if isinstance(exc, Exception):
            # an error's message is printed and the process exits normally:
            # the pool's thread ends first, not while the interpreter does
            # (where it found its pipes closed: "Bad file descriptor")
            pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)


def _wait_answers_ctrl_c() -> None:
    """Let Ctrl-C end this process's wait for a worker, however long its task
    (a user's compiled function may never return). Polars, once imported,
    handles SIGINT itself, asking the system to resume an interrupted wait
    (SA_RESTART): a wait without a time limit would go on. Python's own
    handler, set again (in the main thread), does not ask that."""
    if threading.current_thread() is threading.main_thread():
        handler = signal.getsignal(signal.SIGINT)
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


def _worker_start() -> None:
    """In each worker: no Ctrl-C of its own, SIGTERM ends it (whatever handler it
    was forked with), and (Linux) a SIGTERM when its parent dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def default_workers() -> int:
    return cores()

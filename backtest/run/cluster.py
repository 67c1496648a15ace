"""A Dask client, of a scheduler the user runs or of a local cluster.

`backtest run` and `backtest sweep` both spread their work over one
(`--executor dask`, `--address HOST:PORT`).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from backtest.core.errors import UsageError


@contextmanager
def dask_client(workers: int, address: str | None) -> Iterator[Any]:
    """A Dask client of the scheduler at `address`, or of a local cluster of
    `workers` processes, closed (with the cluster) at the end."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError(
            "--executor dask needs dask.distributed: pip install 'baccarat-backtest[dask]'"
        ) from None
    if address:
        try:
            client = Client(address, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise UsageError(
                f"--address {address}: cannot reach a Dask scheduler there ({exc})"
            ) from None
        except ValueError as exc:  # not an address at all
            raise UsageError(
                f"--address {address}: not a scheduler address ({exc}); give "
                "HOST:PORT or tcp://HOST:PORT"
            ) from None
        with client:
            yield client
        return
    # the workers' own logs stay quiet: a task's error is reported once, as one
    # line; the scheduler, its workers and its web server listen on this
    # machine's loopback address alone (by default a local cluster's
    # dashboard listens on every interface), the web server on a free port
    # (with None it still takes 8787, and says so on stderr when another
    # cluster holds it); and they start with Ctrl-C ignored (a terminal sends
    # it to them too), so that only this process answers it, by closing the
    # cluster
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.CRITICAL + 1,
        )
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
    try:
        with Client(cluster) as client:
            yield client
    finally:
        cluster.close()

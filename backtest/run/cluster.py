"""A Dask client, of a scheduler the user runs or of a local cluster.

`backtest run` and `backtest sweep` both spread their work over one
(`--executor dask`, `--address HOST:PORT`). A scheduler the user names is
checked before the client is made, each step bounded in time and failing
with one line that says why: the address's port (a number from 1 to
65535), that something listens there (`probe`), that it speaks Dask's
handshake within `HANDSHAKE_SECONDS`, and that a worker joins it within
`WORKER_SECONDS`.
"""

from __future__ import annotations

import logging
import signal
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from backtest.core.errors import BacktestError, UsageError

#: seconds to connect to a scheduler's port and to read its handshake
HANDSHAKE_SECONDS = 5.0
#: seconds a scheduler has to have a worker before a run gives up
WORKER_SECONDS = 30.0
#: the most bytes a Dask handshake takes (it is a short mapping of versions)
_HANDSHAKE_BYTES = 1 << 16


class NoWorkers(BacktestError):
    """A Dask scheduler that has no worker to run the sessions on."""


def split_address(address: str) -> tuple[str, int]:
    """(host, port) of a scheduler's address, `HOST:PORT` or `tcp://HOST:PORT`
    (an IPv6 host in brackets); a usage error for anything else.

    >>> split_address("tcp://127.0.0.1:8786")
    ('127.0.0.1', 8786)
    >>> split_address("[::1]:8786")
    ('::1', 8786)
    """
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp"):
        raise UsageError(
            f"--address {address}: not a scheduler address (the {scheme}:// protocol is not "
            "taken); give HOST:PORT or tcp://HOST:PORT"
        )
    host, colon, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not host or not port.isdigit() or any(c.isspace() for c in host):
        raise UsageError(
            f"--address {address}: not a scheduler address; give HOST:PORT or tcp://HOST:PORT"
        )
    if not 1 <= int(port) <= 65535:
        raise UsageError(f"--address {address}: the port must be from 1 to 65535, got {port}")
    return host, int(port)


def probe(address: str, seconds: float | None = None) -> None:
    """Check that a Dask scheduler listens at `address` before a client is
    made (whose own connection waits without a bound for an answer, and reads
    what another kind of server says first as the length of a message):
    something takes a connection on its port, and speaks first, within
    `seconds` (by default `HANDSHAKE_SECONDS`), with a short message that
    reads as Dask's handshake."""
    seconds = HANDSHAKE_SECONDS if seconds is None else seconds
    host, port = split_address(address)
    where = f"--address {address}"
    try:
        conn = socket.create_connection((host, port), timeout=seconds)
    except socket.gaierror as exc:
        raise UsageError(f"{where}: no such host ({exc.strerror})") from None
    except ConnectionRefusedError:
        raise UsageError(
            f"{where}: nothing listens on port {port} of {host}; start a scheduler there "
            "(`dask scheduler`) or give the address it prints"
        ) from None
    except TimeoutError:
        raise UsageError(
            f"{where}: cannot reach a Dask scheduler there (no answer to a connection "
            f"in {seconds:g} s)"
        ) from None
    except OSError as exc:
        raise UsageError(
            f"{where}: cannot reach a Dask scheduler there ({exc.strerror or exc})"
        ) from None
    with conn:
        try:
            head = _read_exactly(conn, 8)
            (size,) = struct.unpack("<Q", head)
            if not 16 <= size <= _HANDSHAKE_BYTES:
                raise ValueError(size)
            body = _read_exactly(conn, size)
        except TimeoutError:
            raise UsageError(
                f"{where}: the server there says nothing in {seconds:g} s, as a Dask "
                "scheduler does at once; is it another kind of server?"
            ) from None
        except (ValueError, EOFError, OSError):
            raise UsageError(
                f"{where}: the server there does not answer as a Dask scheduler does; "
                "is it another kind of server?"
            ) from None
    if b"pickle-protocol" not in body:
        raise UsageError(
            f"{where}: the server there does not answer as a Dask scheduler does; "
            "is it another kind of server?"
        )


def _read_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        more = conn.recv(n - len(data))
        if not more:
            raise EOFError
        data += more
    return data


def wait_for_workers(client: Any, address: str, seconds: float | None = None) -> None:
    """Wait up to `seconds` (by default `WORKER_SECONDS`) for the scheduler
    to have a worker; one line if none joins."""
    seconds = WORKER_SECONDS if seconds is None else seconds
    try:
        client.wait_for_workers(1, timeout=seconds)
    except TimeoutError:
        count = len(client.scheduler_info().get("workers", {}))
        raise NoWorkers(
            f"--address {address}: the Dask scheduler there has {count} workers after "
            f"{seconds:g} s; start one (`dask worker {address}`) and run again"
        ) from None


@contextmanager
def dask_client(workers: int, address: str | None) -> Iterator[Any]:
    """A Dask client of the scheduler at `address` (checked first: `probe`,
    and a worker waited for), or of a local cluster of `workers` processes,
    closed (with the cluster) at the end."""
    if address is not None:
        split_address(address)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError(
            "--executor dask needs dask.distributed: pip install 'baccarat-backtest[dask]'"
        ) from None
    if address is not None:
        probe(address)
        try:
            client = Client(address, timeout=f"{HANDSHAKE_SECONDS}s")
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
            wait_for_workers(client, address)
            yield client
        return
    # the workers' own logs stay quiet: a task's error is reported once, as one
    # line; the scheduler, its workers and its web server listen on this
    # machine's loopback address alone (by default a local cluster's
    # dashboard listens on every interface), the web server on a free port
    # (with None it still takes 8787, and says so on stderr when another
    # cluster holds it); and Ctrl-C is left to this process (a terminal sends
    # it to the workers too), which answers it by closing the cluster
    import dask

    from backtest.run.staging import signals_held

    with dask.config.set({"distributed.worker.multiprocessing-method": _start_method()}):
        _start_fork_server()
        cluster = None
        try:
            with signals_held():  # answered once the cluster is whole, to be closed
                cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0",
                    silence_logs=logging.CRITICAL + 1,
                )
            with Client(cluster) as client:
                yield client
        finally:
            if cluster is not None:
                cluster.close()


def _start_method() -> str:
    """How a local cluster starts its workers: forked from a fork server
    (`_start_fork_server`), or spawned where there is none (Windows)."""
    import multiprocessing

    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _start_fork_server() -> None:
    """Start the fork server the workers are forked from, with Ctrl-C
    ignored, so that they ignore it too from their first instant (an ignored
    signal stays ignored across exec and fork; a handled one does not) while
    this process still answers it. Outside the main thread, nothing is done:
    the fork server starts with the first worker."""
    import multiprocessing
    from multiprocessing import forkserver

    from distributed.utils import get_mp_context

    if get_mp_context() is not multiprocessing.get_context("forkserver"):
        return  # (the call also names the modules the fork server loads, once)
    if threading.current_thread() is not threading.main_thread():
        return
    from backtest.run.staging import restore_signals

    previous: dict[int, Any] = {signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN)}
    try:
        forkserver.ensure_running()  # (a process started: a few milliseconds)
    finally:
        restore_signals(previous)

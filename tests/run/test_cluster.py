"""A Dask scheduler named by --address, checked before any work: each way it
can be wrong fails at once, or within a bounded wait, with one line. And a
local cluster, whose workers leave Ctrl-C to this process, which answers it
even while the cluster starts."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import backtest_here, one_line_error

from backtest.core.errors import UsageError
from backtest.run import cluster

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "address, says",
    [
        ("127.0.0.1:70000", "the port must be from 1 to 65535, got 70000"),
        ("127.0.0.1:0", "the port must be from 1 to 65535, got 0"),
        ("tls://127.0.0.1:8786", "the tls:// protocol is not taken"),
        ("127.0.0.1", "not a scheduler address; give HOST:PORT"),
        ("not a url", "not a scheduler address; give HOST:PORT"),
    ],
)
def test_an_address_that_cannot_be_one_is_refused_before_any_connection(
    address: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "create_connection", None)  # never reached
    with pytest.raises(UsageError, match=f"--address {address}: .*{says}"):
        cluster.probe(address)


def test_a_closed_port_is_said_at_once() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UsageError, match=f"nothing listens on port {port} of 127.0.0.1"):
        cluster.probe(f"127.0.0.1:{port}")


@pytest.fixture
def http_port() -> Iterator[int]:
    """A plain HTTP server on the loopback address, which waits for a request."""
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def speaking_port() -> Iterator[int]:
    """A server that speaks first (as SSH does), with what Dask would read as
    the length of a message of exabytes."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()


def test_a_server_that_says_nothing_is_given_up_on_within_the_handshake_time(
    http_port: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cluster, "HANDSHAKE_SECONDS", 0.5)
    address = f"tcp://127.0.0.1:{http_port}"
    code, out, err = backtest_here(
        monkeypatch, capsys, "run", "verdict", "--executor", "dask", "--address", address
    )
    assert one_line_error(code, err, 2) == (
        f"error: --address {address}: the server there says nothing in 0.5 s, as a Dask "
        "scheduler does at once; is it another kind of server?"
    )
    assert out == ""


def test_a_server_that_speaks_first_is_not_taken_for_a_scheduler(
    speaking_port: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    address = f"127.0.0.1:{speaking_port}"
    code, _, err = backtest_here(
        monkeypatch,
        capsys,
        "sweep",
        "martingale-ruin",
        "--out",
        str(tmp_path / "out"),
        "--executor",
        "dask",
        "--address",
        address,
    )
    assert one_line_error(code, err, 2) == (
        f"error: --address {address}: the server there does not answer as a Dask "
        "scheduler does; is it another kind of server?"
    )
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def lone_scheduler() -> Iterator[str]:
    """A real Dask scheduler, in this process, with no workers."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=0,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address=None,
    ) as local:
        yield local.scheduler_address


def test_a_scheduler_passes_the_probe(lone_scheduler: str) -> None:
    cluster.probe(lone_scheduler)


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_scheduler_without_workers_says_so_and_writes_nothing(
    command: str,
    lone_scheduler: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(cluster, "WORKER_SECONDS", 0.5)
    out = tmp_path / "out"
    args = ["verdict", "--sessions", "20"] if command == "run" else ["martingale-ruin"]
    code, stdout, err = backtest_here(
        monkeypatch,
        capsys,
        command,
        *args,
        "--out",
        str(out),
        "--executor",
        "dask",
        "--address",
        lone_scheduler,
    )
    assert one_line_error(code, err, 1) == (
        f"error: --address {lone_scheduler}: the Dask scheduler there has 0 workers after "
        f"0.5 s; start one (`dask worker {lone_scheduler}`) and run again"
    )
    assert stdout == "" and not out.exists()


@pytest.mark.slow
def test_the_workers_of_a_local_cluster_leave_ctrl_c_to_this_process() -> None:
    """A local cluster's workers start with Ctrl-C ignored (as the terminal
    sends it to them too): after one to every process, they still run."""
    pytest.importorskip("dask.distributed")
    with cluster.dask_client(1, None) as client:
        (pid,) = client.run(os.getpid).values()
        with pytest.raises(KeyboardInterrupt):
            os.kill(pid, signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            threading.Event().wait(1)
        assert list(client.run(os.getpid).values()) == [pid]


@pytest.mark.slow
def test_ctrl_c_while_a_local_cluster_starts_stops_the_run() -> None:
    """Sent, as a terminal does, to every process of the run as its first
    worker process starts (before it has joined the cluster), it is answered
    once the cluster has started."""
    psutil = pytest.importorskip("psutil")
    pytest.importorskip("dask.distributed")
    args = ["run", "verdict", "--executor", "dask", "--workers", "1", "--sessions", "2000", "-q"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "backtest", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:

        def worker_started() -> bool:  # spawned by the run, or forked by its fork server
            try:
                return any(
                    child.ppid() != proc.pid or "--multiprocessing-fork" in child.cmdline()
                    for child in psutil.Process(proc.pid).children(recursive=True)
                )
            except psutil.Error:  # (a process that ended as it was looked at)
                return False

        deadline = time.monotonic() + 120
        while not worker_started():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert (proc.returncode, stdout, stderr) == (130, "", "interrupted\n")

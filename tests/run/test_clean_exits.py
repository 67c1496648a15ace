"""How a command ends: results put in place are reported whatever signal
comes meanwhile, a Parquet file streamed to disk is written whole before a
Ctrl-C is answered, hidden folders go on Ctrl-C, a closed pipe ends quietly, a
closed standard output is an error, what a killed run held of standard
input is removed by the next run, and a user's compiled function that never
returns is stopped by Ctrl-C."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import backtest_here
from test_staging import SMALL, killed_owner

from backtest.present.outputs import write_parquet
from backtest.run import staging

REPO = Path(__file__).resolve().parents[2]


def test_a_signal_while_a_folder_is_cleaned_up_is_answered_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rmtree = staging.shutil.rmtree

    def rmtree_interrupted(p: Path, ignore_errors: bool = False) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        rmtree(p, ignore_errors=ignore_errors)

    monkeypatch.setattr(staging.shutil, "rmtree", rmtree_interrupted)
    with pytest.raises(KeyboardInterrupt):
        with staging.staging_dir(None, ".test-") as path:
            pass
    assert not path.exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_while_a_frame_streams_to_parquet_is_answered_once_it_is_written(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Polars' streaming sink, interrupted, panics on stderr as it stops
    (`thread 'async-executor-0' panicked at ... io_sinks/writers/parquet`)."""
    batches: list[int] = []

    def interrupting(values: pl.Series) -> pl.Series:
        batches.append(len(values))
        if len(batches) == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return values

    files = []
    for i in range(40):
        files.append(tmp_path / f"part-{i:02d}.arrow")
        pl.DataFrame({"a": range(i * 1000, (i + 1) * 1000)}).write_ipc(files[-1])
    lazy = pl.scan_ipc(files).with_columns(
        pl.col("a").map_batches(interrupting, return_dtype=pl.Int64, is_elementwise=True)
    )
    with pytest.raises(KeyboardInterrupt):
        write_parquet(lazy, tmp_path / "out.parquet")
    assert len(batches) > 2  # the signal came as the file was being written
    assert pl.read_parquet(tmp_path / "out.parquet")["a"].to_list() == list(range(40_000))
    assert "panicked" not in capfd.readouterr().err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_once_the_results_go_in_place_still_reports_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "small.yaml"
    config.write_text(SMALL, encoding="utf-8")
    out = tmp_path / "out"
    start = staging.Commit.start

    def start_and_interrupt(self: staging.Commit) -> None:
        start(self)
        os.kill(os.getpid(), signal.SIGINT)  # and in each clean-up after it, too
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(staging.Commit, "start", start_and_interrupt)
    code, stdout, err = backtest_here(monkeypatch, capsys, "run", str(config), "--out", str(out))
    assert code == 0, err
    assert "interrupted" not in err and stdout.startswith("small: ")
    assert (out / "summary.parquet").is_file()
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_closed_pipe_ends_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    config = tmp_path / "small.yaml"
    config.write_text(SMALL, encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", Gone())
    code, _, err = backtest_here(monkeypatch, capsys, "run", str(config))
    assert (code, err) == (141, "")


def test_a_closed_standard_output_is_an_error() -> None:
    proc = subprocess.run(
        ["sh", "-c", f"{sys.executable} -m backtest --version >&-"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert (proc.returncode, proc.stderr) == (
        1,
        "error: standard output is closed; send it somewhere (`> FILE`, `> /dev/null`)\n",
    )


def test_the_next_run_removes_what_a_killed_run_held_of_standard_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    left = killed_owner(temp, "backtest-stdin-", {"standard-input": b"B P B\n"})
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    config = tmp_path / "small.yaml"
    config.write_text(SMALL, encoding="utf-8")
    with staging.staging_dir(temp, "backtest-stdin-") as live:
        code, _, err = backtest_here(monkeypatch, capsys, "run", str(config))
        assert code == 0, err
        assert live.is_dir()
    assert not left.exists()
    assert list(temp.iterdir()) == []


#: a user's compiled class whose `decide` never returns when its `spins` is 1
SPINNING = """\
from dataclasses import dataclass

from backtest.core.rules import Bet
from strategies.base import P_OWN, Compiled
from strategies.params import CommonParams, param

BANKER = 1


def reset(p, s, si):
    s[0] = 0.0


def decide(p, s, si, ctx, hist, evs, out):
    while p[P_OWN] > 0.0:
        s[0] += 1.0
    out[BANKER] = 10.0


def update(p, s, si, ctx, stakes, unit, net):
    s[0] = 0.0


class Spinning(Compiled):
    name = "spinning"

    @dataclass(frozen=True)
    class Params(CommonParams):
        spins: int = param(0, "1: decide never returns")

    def encode_own(self):
        return [float(self.params.spins)]

    def main_bets(self):
        return {Bet.BANKER}

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)
"""


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_ctrl_c_stops_a_users_compiled_function_that_never_returns(
    tmp_path: Path, command: str
) -> None:
    """It plays in a worker process, which the run (or the sweep) ends;
    nothing is left in --out (a sweep's folder keeps what it resumes from)
    or the temporary folder. (A first run with `spins: 0` compiles the class.)"""
    psutil = pytest.importorskip("psutil")
    (tmp_path / "spinning.py").write_text(SPINNING, encoding="utf-8")
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path / "tmp")}
    for spins in (0, 1):
        seats = f"[{{strategy: 'spinning.py:Spinning', params: {{spins: {spins}}}}}]"
        (tmp_path / "c.yaml").write_text(
            f"seed: 1\nsessions: 3\nsession: {{max_hands: 5}}\nseats: {seats}\n"
            if command == "run"
            else "name: s\nseed: 1\nsessions: 3\n"
            f"run: {{session: {{max_hands: 5}}, seats: {seats}}}\n"
            "grid: {session.bankroll: [1000, 2000]}\n",
            encoding="utf-8",
        )
        args = [command, "c.yaml", "--out", "out", "-q"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "backtest", *args],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            if spins:  # interrupted once a second of work, past any loading, spins on
                tree = psutil.Process(proc.pid)
                deadline = time.monotonic() + 120
                while sum(p.cpu_times().user for p in [tree, *tree.children()]) < 5:
                    assert proc.poll() is None and time.monotonic() < deadline
                    time.sleep(0.1)
                workers = tree.children()
                os.killpg(proc.pid, signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=600 if not spins else 60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if not spins:
            assert proc.returncode == 0, stderr
            shutil.rmtree(tmp_path / "out")
    assert (proc.returncode, stdout, stderr) == (130, "", "interrupted\n")
    assert command == "sweep" or not (tmp_path / "out").exists()
    assert list((tmp_path / "tmp").iterdir()) == []
    assert workers

    def ended(worker: psutil.Process) -> bool:  # (a zombie: ended, not yet reaped)
        try:
            return bool(worker.status() == psutil.STATUS_ZOMBIE)
        except psutil.NoSuchProcess:
            return True

    assert all(ended(worker) for worker in workers)


def test_a_handler_set_outside_python_gives_way_to_python_s_default() -> None:
    """polars sets its own Ctrl-C handler, which Python reads as None: once a
    block that held or ignored Ctrl-C ends, Python's default answers it again,
    never the ignoring handler (which would leave the process deaf to Ctrl-C)."""
    from backtest.run.staging import restore_signals

    before = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        restore_signals({signal.SIGINT: None})
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)

"""A shoe file is read within a bound, whatever it is: a device is refused
unread, standard input and pipes are read once and capped, a named pipe no
program writes to is refused after a wait, and no line is read past the
longest a shoe can be (`recorded.text.input_kind`, `piped_bytes`)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_helpers import backtest_here

from backtest.core.errors import ShoeFormatError, UsageError
from backtest.shoes.recorded import read_shoes, text

REPO = Path(__file__).resolve().parents[2]
SHOE = REPO / "data" / "generated-8deck-seed1.txt"


def test_standard_input_from_a_device_is_refused_in_bounded_memory() -> None:
    """`deal - < /dev/zero` (under a 2 GB address-space limit, in which an
    unbounded read ends in a MemoryError traceback)."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run(
            [sys.executable, "-c", limit + "from backtest.cli import main; main()", "deal", "-"],
            stdin=zero,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=120,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "standard input is a device (such as /dev/zero), not a file or a pipe" in done.stderr


def test_standard_input_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "PIPED_BYTES", 1000)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"5 K 9 2 3 8\n" * 100)))
    with pytest.raises(UsageError, match="standard input: more than 0 MB, the most read of"):
        read_shoes("-")


def test_a_pipe_line_longer_than_the_bound_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "LINE_BYTES", 100)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"5 K 9\n" + b"K " * 100)))
    with pytest.raises(ShoeFormatError, match="standard input, line 2: more than 100 bytes"):
        read_shoes("-")


def test_a_pipe_is_read_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`deal <(cat FILE)`: its decks and its shoes are read of one read of
    the pipe (not "the file is empty" on a second)."""
    read, write = os.pipe()
    data = SHOE.read_bytes()
    writer = threading.Thread(target=lambda: (os.write(write, data), os.close(write)))
    writer.start()
    try:
        code, out, err = backtest_here(monkeypatch, capsys, "deal", f"/proc/self/fd/{read}")
    finally:
        writer.join()
        os.close(read)
    assert code == 0, err
    assert out.startswith("shoe 1: 81 hands")


def test_a_named_pipe_no_program_writes_to_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(text, "FIFO_WAIT", 0.2)
    with pytest.raises(UsageError, match="fifo: a pipe that no program wrote to in 0.2 seconds"):
        read_shoes(fifo)


def test_a_named_pipe_is_read_when_a_program_writes_to_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as fh:
            fh.write(b"5 K 9 2 3 8   2 9 3 K\n")

    writer = threading.Thread(target=write)
    writer.start()
    try:
        hands = read_shoes(fifo)
    finally:
        writer.join()
    assert hands.to_frame()["winner"].to_list() == ["player", "banker"]

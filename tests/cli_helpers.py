"""Running the command line from tests: as real processes, or in this one."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from backtest.cli import entry, main


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


def backtest_process(
    args: Sequence[str],
    cwd: Path | None = None,
    timeout: float = 600,
    env: Mapping[str, str] | None = None,
) -> Run:
    """`python -m backtest ARGS` in a new process (the real error boundary and
    exit codes), with `env` as its environment if given."""
    proc = subprocess.run(
        [sys.executable, "-m", "backtest", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=env,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def backtest_processes(
    commands: Mapping[str, Sequence[str]], cwd: Path | None = None, at_once: int = 4
) -> dict[str, Run]:
    """Several commands, `at_once` processes at a time, by name."""
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        futures = {
            name: pool.submit(backtest_process, args, cwd) for name, args in commands.items()
        }
        return {name: future.result() for name, future in futures.items()}


def backtest_here(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """The real entry point in this process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["backtest", *args])
    # an interrupted command exits at once (os._exit), which would end the tests
    monkeypatch.setattr(entry, "exit_now", sys.exit)
    code = 0
    try:
        main()
    except SystemExit as done:
        code = int(done.code or 0)
    got = capsys.readouterr()
    return code, got.out, got.err


def one_line_error(code: int, err: str, expected_code: int) -> str:
    """The one `error: ...` line a refused command prints, its exit code
    `expected_code` and no traceback."""
    assert code == expected_code, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]

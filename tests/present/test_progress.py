"""The progress bar of `backtest run` (`outputs.progress_bar`).

A run on a terminal draws a bar (sessions done, hands, the rate) while it
works; a run whose diagnostics go to a file or a pipe draws nothing, gets no
progress callback, and leaves no terminal escape codes in what it writes.

The command runs in this process (the real entry point `cli.main`) with its
standard streams replaced by buffers that say whether they are a terminal,
and Rich's global console made afresh for them, as it is in a new process.
"""

from __future__ import annotations

import io
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import rich

from backtest import cli
from backtest.cli import entry
from backtest.run import engine

CONFIG = """\
name: progress
seed: 4
sessions: 3
shoe: {decks: 8}
session: {bankroll: 1000}
table: {min: 10, max: 1000}
seats:
  - strategy: flat
    params: {bets: {banker: 10}}
"""

ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: the bar as drawn once the run is done: label, bar, hands and rate
BAR = re.compile(r"sessions +━+ +([\d,]+) hands, [\d.]+M hands/s")


def plain(text: str) -> str:
    """Text as a terminal would show its lines: escape codes out, a carriage
    return starting a line again."""
    return ESCAPE.sub("", text).replace("\r", "\n")


class Stream(io.StringIO):
    """A standard stream that is a terminal, or not."""

    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


@dataclass
class Ran:
    code: int
    out: str
    err: str
    #: the `progress` callback each engine run was given (None: no bar)
    callbacks: list[Callable[..., None] | None] = field(default_factory=list)
    #: what the engine reported through it: (sessions done, hands done, sessions)
    updates: list[tuple[int, ...]] = field(default_factory=list)

    def drawn(self, text: str) -> list[str]:
        """The hands counts of the bar as drawn in one stream's text."""
        return BAR.findall(plain(text))

    def hands(self) -> int:
        """The hands the run reports in its verdict (`NAME: N hands, seed ...`)."""
        found = re.search(r"^progress: ([\d,]+) hands, seed 4", plain(self.out), re.M)
        assert found, self.out
        return int(found.group(1).replace(",", ""))


def run_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, stdout_terminal: bool, stderr_terminal: bool
) -> Ran:
    """`backtest run` of CONFIG with each standard stream a terminal or not."""
    config = tmp_path / "progress.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)  # each would overrule isatty in Rich
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "120")
    out, err = Stream(stdout_terminal), Stream(stderr_terminal)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(rich, "_console", None)  # made again, for these streams
    monkeypatch.setattr(sys, "argv", ["backtest", "run", str(config)])
    monkeypatch.setattr(entry, "exit_now", sys.exit)
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # main sets its own
    ran = Ran(0, "", "")
    real_run = engine.run

    def spy(run_config: Any, **kwargs: Any) -> Any:
        progress = kwargs.pop("progress", None)
        ran.callbacks.append(progress)

        def update(*done: int) -> None:
            ran.updates.append(done)
            progress(*done)

        return real_run(run_config, progress=None if progress is None else update, **kwargs)

    monkeypatch.setattr(engine, "run", spy)
    try:
        cli.main()
    except SystemExit as done:
        ran.code = int(done.code or 0)
    ran.out, ran.err = out.getvalue(), err.getvalue()
    return ran


def test_a_run_on_a_terminal_draws_the_progress_bar(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran = run_on(monkeypatch, tmp_path, stdout_terminal=True, stderr_terminal=True)
    assert ran.code == 0, ran.err
    hands = ran.hands()
    assert len(ran.callbacks) == 1 and ran.callbacks[0] is not None
    assert ran.updates and ran.updates[-1] == (3, hands, 3)
    # the bar is on the terminal (whichever stream), at the run's final count
    drawn = ran.drawn(ran.out) + ran.drawn(ran.err)
    assert drawn and drawn[-1] == f"{hands:,}", (ran.out, ran.err)
    assert "\x1b[" in ran.out + ran.err


@pytest.mark.parametrize("stdout_terminal", [False, True], ids=["stdout-piped", "stdout-terminal"])
def test_a_run_whose_stderr_is_not_a_terminal_draws_no_bar(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stdout_terminal: bool
) -> None:
    ran = run_on(monkeypatch, tmp_path, stdout_terminal=stdout_terminal, stderr_terminal=False)
    assert ran.code == 0, ran.err
    ran.hands()  # the verdict is written as ever
    assert ran.callbacks == [None] and ran.updates == []
    assert ran.drawn(ran.out) == [] and ran.drawn(ran.err) == []
    assert "hands/s" not in ran.out + ran.err
    assert not ESCAPE.search(ran.out) and not ESCAPE.search(ran.err)


def test_a_run_with_its_output_redirected_draws_the_bar_on_the_terminal_stderr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`backtest run config.yaml > verdict.txt`: the verdict goes to the file,
    the bar to the terminal, and the file holds no escape codes."""
    ran = run_on(monkeypatch, tmp_path, stdout_terminal=False, stderr_terminal=True)
    assert ran.code == 0, ran.err
    hands = ran.hands()
    assert not ESCAPE.search(ran.out) and ran.drawn(ran.out) == []
    assert ran.drawn(ran.err)[-1:] == [f"{hands:,}"], ran.err

"""What `run` says of a config that is no regular file, and what a user's
strategy prints while a run writes machine output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helpers import backtest_here

SMALL = "seed: 1\nsessions: 5\nseats: [{strategy: flat}]\n"


def test_a_config_from_a_shells_pipe_is_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`backtest run <(printf ...)`: the shell hands over /dev/fd/N, a pipe."""
    read, write = os.pipe()
    os.write(write, SMALL.encode())
    os.close(write)
    try:
        code, out, err = backtest_here(monkeypatch, capsys, "run", f"/dev/fd/{read}", "-f", "csv")
    finally:
        os.close(read)
    assert code == 0, err
    assert out.startswith("seat,")


def test_a_named_pipe_as_the_config_is_said_to_be_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    code, _, err = backtest_here(monkeypatch, capsys, "run", str(fifo))
    assert (code, err) == (
        2,
        f"error: config file {fifo} is a named pipe (FIFO), not a file; give the config's file\n",
    )


def test_a_strategys_prints_go_to_stderr_while_json_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "loud.py").write_text(
        'print("loud at import")\n'
        "from strategies import registry\n"
        "class Loud(registry.get('flat')):\n"
        "    name = 'loud'\n",
        encoding="utf-8",
    )
    config = tmp_path / "c.yaml"
    config.write_text(
        "seed: 1\nsessions: 5\nseats: [{strategy: 'loud.py:Loud', params: {bets: {banker: 10}}}]\n",
        encoding="utf-8",
    )
    code, out, err = backtest_here(monkeypatch, capsys, "run", str(config), "-f", "json")
    assert code == 0, err
    assert json.loads(out)[0]["seat"] == "loud"
    assert "loud at import" in err

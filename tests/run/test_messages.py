"""What `run` says of a config that is no regular file, and what a user's
strategy prints while a run or a sweep writes machine output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helpers import backtest_here, backtest_process

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


#: a user's strategy that prints as it is imported and on every hand it stakes
LOUD_STAKES = """\
print("loud at import")
from strategies.base import Strategy


class Loud(Strategy):
    name = "loud"

    def stakes(self, view):
        print("loud in stakes")
        return {"banker": 10}
"""


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_strategys_prints_go_to_stderr_while_a_sweep_writes_json(
    tmp_path: Path, workers: str
) -> None:
    """In this process (one worker) and in forked workers (two): a real process,
    whose workers write to its own standard output and error."""
    (tmp_path / "loud.py").write_text(LOUD_STAKES, encoding="utf-8")
    (tmp_path / "c.yaml").write_text(
        "seed: 1\nsessions: 4\nsession: {max_hands: 3}\nseats: [{strategy: 'loud.py:Loud'}]\n",
        encoding="utf-8",
    )
    (tmp_path / "s.yaml").write_text(
        "base: c.yaml\ngrid: {session.bankroll: [500, 1000]}\n", encoding="utf-8"
    )
    done = backtest_process(
        ["sweep", "s.yaml", "--out", "out", "-f", "json", "--workers", workers], cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert [row["seat"] for row in json.loads(done.stdout)] == ["loud", "loud"]
    assert "loud at import" in done.stderr
    assert "loud in stakes" in done.stderr

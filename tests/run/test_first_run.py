"""A machine's first run: the table compiles in the background while the run
plays in plain Python, with the same numbers; the compile goes on after the
run and fills the cache, and the next run plays compiled at once."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

CONFIG = """\
name: first
seed: 7
sessions: 2000
shoe: {decks: 8, cut_card: 14, burn: true}
session: {bankroll: 1000, win_goal: 200}
table: {min: 10, max: 1000}
seats:
  - strategy: flat
    params: {bets: {banker: 10}}
  - strategy: martingale
    params: {bet: banker, base: 10}
  - strategy: follow-the-shoe
    params: {base: 10}
"""


def _run(config: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "backtest", "run", str(config)],
        capture_output=True,
        text=True,
        env=env,
        cwd=config.parent,
        timeout=600,
    )


def _wait_for_lock(cache: Path, seconds: float) -> None:
    """Until no process holds the compiling child's lock in `cache`."""
    (lock,) = cache.glob("baccarat-backtest/numba-*/loop_*/session-loop.lock")
    deadline = time.monotonic() + seconds
    with open(lock, "a") as f:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                assert time.monotonic() < deadline, "the compile did not end"
                time.sleep(0.2)
                continue
            fcntl.flock(f, fcntl.LOCK_UN)
            return


@pytest.mark.slow
def test_a_first_run_plays_python_while_the_table_compiles(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")  # a machine's first run: nothing cached
    env["COLUMNS"] = "80"
    config = tmp_path / "first.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    first = _run(config, env)
    assert first.returncode == 0, first.stderr
    assert "playing in plain Python meanwhile, with the same numbers" in first.stderr
    _wait_for_lock(tmp_path / "xdg", 600)
    # the next run loads what the child compiled (the loop, the deal, the
    # pricing): it compiles nothing, and says nothing of compiling
    env["NUMBA_DEBUG_CACHE"] = "1"
    second = _run(config, env)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stderr
    shown = [line for line in second.stdout.splitlines() if not line.startswith("[cache]")]
    saved = [line for line in second.stdout.splitlines() if line.startswith("[cache] data saved")]
    assert saved == []
    assert shown == first.stdout.splitlines()

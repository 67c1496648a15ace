"""A machine's first run compiles the table in the foreground, and says so;
the next run, in a fresh process, compiles nothing (numba's cache holds the
loop, the deal, the pricing and a user's compiled class) and says nothing
of compiling, with the same numbers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = """\
name: first
seed: 7
sessions: 1000
shoe: {decks: 8, cut_card: 14, burn: true}
session: {bankroll: 1000, win_goal: 200}
table: {min: 10, max: 1000}
seats:
  - strategy: martingale
    params: {bet: banker, base: 10}
  - strategy: mine.py:BankerDoubling
"""

MINE = """\
from backtest.core.rules import Bet
from strategies.base import Compiled

BANKER = 1


def reset(p, s, si):
    s[0] = 10.0


def decide(p, s, si, ctx, hist, evs, out):
    out[BANKER] = s[0]


def update(p, s, si, ctx, stakes, unit, net):
    if unit[BANKER] < 0.0:
        s[0] = 2.0 * s[0]
    elif unit[BANKER] > 0.0:
        s[0] = 10.0


class BankerDoubling(Compiled):
    name = "banker-doubling"

    def main_bets(self):
        return {Bet.BANKER}

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)
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


@pytest.mark.slow
def test_a_first_run_says_it_compiles_and_the_next_compiles_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")  # a machine's first run: nothing cached
    env["COLUMNS"] = "80"
    config = tmp_path / "first.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    (tmp_path / "mine.py").write_text(MINE, encoding="utf-8")
    first = _run(config, env)
    assert first.returncode == 0, first.stderr
    assert "compiling the table (first run only, about " in first.stderr
    assert "compiling the table for compiled strategies of your own" in first.stderr
    env["NUMBA_DEBUG_CACHE"] = "1"  # numba prints each function it saves to its cache
    second = _run(config, env)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stderr
    shown = [line for line in second.stdout.splitlines() if not line.startswith("[cache]")]
    saved = [line for line in second.stdout.splitlines() if line.startswith("[cache] data saved")]
    assert saved == []
    assert shown == first.stdout.splitlines()

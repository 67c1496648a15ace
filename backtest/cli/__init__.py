"""The command line: parse, call one library function, render.

One error boundary (`entry.main`) turns a `BacktestError` into a one-line
message on stderr and exit code 2 (usage) or 1 (everything else). The
package, by job: `shell` (the app and what the commands share), a module for
each group of commands (`shoes`, `table`, `runs`, `lists`), and `entry` (the
commands registered in order, and `main`).
"""

from __future__ import annotations

from backtest.cli.entry import main
from backtest.cli.shell import app

__all__ = ["app", "main"]

"""The one error family the library raises for bad input.

The CLI catches `BacktestError` at its edge and prints `str(error)` as a single
line; `exit_code` says which code the process ends with (2 for usage errors,
1 for everything else).
"""

from __future__ import annotations


class BacktestError(Exception):
    """Base of every error a user can cause; the message says what and where."""

    exit_code = 1


class UsageError(BacktestError):
    """The command line itself is wrong (bad option value, missing file)."""

    exit_code = 2


class ConfigError(BacktestError):
    """A YAML config or a key in it is invalid."""


class RulesError(BacktestError):
    """Invalid rules settings, or a bet the rules do not allow."""


class ShoeFormatError(BacktestError):
    """A recorded shoe file cannot be read as what it claims to be."""


class StrategyError(BacktestError):
    """A strategy is unknown, badly parameterised, or misbehaved."""


class MissingDataError(BacktestError):
    """A recorded shoe lacks a column a bet needs to be settled."""

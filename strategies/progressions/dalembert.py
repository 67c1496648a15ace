"""The D'Alembert: one unit more after a loss, one less after a win (never
below one unit).

This file is the model of a progression: to write a new one, copy it and
change the names, the docstrings, the parameters and the three functions.

- The parameters: a frozen dataclass of `ProgressionParams` (which gives
  the bet and the base stake), each field a `param` with its default, help
  text and bounds; `arguments` lists the numbers the functions read, which
  land in the parameter vector `p` from `ARG` on. Name each slot.
- The state: numbers in the float array `s` (and, for whole numbers, the
  integer array `si`), kept from one hand to the next. Name each slot.
- `reset` starts the progression, at the start of each session and when a
  stake over the table maximum restarts it (`on_max: reset`); `decide`
  returns the stake of the coming hand, in currency, on the bet p[BET];
  `update` reads how the hand went (`outcome`) and moves the state on,
  choosing each new number with a conditional expression on those flags,
  between numbers worked out first (`units = down if won else units`: see
  `progression` for why). numba compiles the three into the session loop:
  plain numbers, arrays, `if`, `for`, `min` and `max` are all they need. A
  function that one of them calls (a helper, or `reset` called by
  `update`, as in `labouchere.py`) is marked `@jit` (`backtest.jit.lazy_jit`).
- The class: its `name` (for configs), a one-line `description`, its
  `Params`, and `kind`, the next free number (a kind given twice, or a gap,
  fails on import with the one to give). Add its ready config to
  `configs/strategies/`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strategies.params import param
from strategies.progressions.progression import (
    ARG,
    BASE,
    Progression,
    ProgressionParams,
    outcome,
)

# the parameter vector, after the bet and the base stake
STEP = ARG  # the units added after a loss and taken off after a win

# the state
UNITS = 0  # the stake, in units


def reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Start at one unit."""
    s[UNITS] = 1.0


def decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    """Stake the base stake times the units reached."""
    return p[BASE] * s[UNITS]


def update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    """Add `step` units after a loss; take them off after a win, never going
    below one unit; a push leaves the stake where it is."""
    placed, won, lost, restart = outcome(p, stakes, unit)
    if placed:
        units = s[UNITS]
        down = max(units - p[STEP], 1.0)
        up = units + p[STEP]
        units = down if won else units
        units = up if lost else units
        s[UNITS] = 1.0 if restart else units


@dataclass(frozen=True)
class DAlembertParams(ProgressionParams):
    step: int = param(1, "units added after a loss and taken off after a win", min=1)


class DAlembert(Progression):
    """Start at one unit; one `step` more after a loss, one less after a win
    (never below one unit)."""

    name = "dalembert"
    kind = 5
    description = "Add a unit after a loss, take one off after a win."
    Params = DAlembertParams

    def arguments(self) -> list[float]:
        return [self.params.step]

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

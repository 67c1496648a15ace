"""The Martingale: double the stake after each loss; go back to the base
stake after a win.

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
  `update` reads how the hand went (`outcome`) and moves the state on.
  They are compiled by numba into the session loop: plain numbers, arrays,
  `if`, `for`, `min` and `max` are all they need.
- The class: its `name` (for configs), a one-line `description`, its
  `Params`, and `kind`, the next free number (a kind given twice, or a gap,
  fails on import with the one to give). Add its ready config to
  `configs/strategies/`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.jit.lazy_jit import jit
from strategies.params import param
from strategies.progressions.progression import (
    ARG,
    BASE,
    LOST,
    RESTART,
    WON,
    Progression,
    ProgressionParams,
    outcome,
)

# the parameter vector, after the bet and the base stake
MULTIPLIER = ARG  # the stake's multiplier after a loss

# the state
LEVEL = 0  # losses in a row (counted up to MAX_LEVEL)
UNITS = 1  # the stake, in units: MULTIPLIER ** LEVEL (kept as a running product)

MAX_LEVEL = 1000.0  # losses in a row after which the stake stays where it is


@jit  # (`update` calls it too)
def reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Start at one unit."""
    s[LEVEL] = 0.0
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
    """After a loss multiply the stake by the multiplier; after a win start
    again at one unit; a push leaves the stake where it is."""
    hand = outcome(p, stakes, unit)
    if hand == LOST and s[LEVEL] < MAX_LEVEL:
        s[LEVEL] += 1.0
        s[UNITS] *= p[MULTIPLIER]
    elif hand == WON or hand == RESTART:
        reset(p, s, si)


@dataclass(frozen=True)
class MartingaleParams(ProgressionParams):
    multiplier: float = param(2.0, "stake multiplier after each loss", min=1, exclusive_min=True)


class Martingale(Progression):
    """Start at one unit; multiply the stake by `multiplier` after each loss;
    back to one unit after a win."""

    name = "martingale"
    kind = 1
    description = "Double the stake after each loss, back to the base stake after a win."
    Params = MartingaleParams

    def arguments(self) -> list[float]:
        return [self.params.multiplier]

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

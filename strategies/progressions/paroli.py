"""The Paroli, or reverse Martingale: double the stake after each win, up to
a target number of wins in a row; go back to the base stake after a loss.
Written as `dalembert.py` is."""

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
    restarted,
)

# the parameter vector, after the bet and the base stake
TARGET = ARG  # the wins in a row that end a series
MULTIPLIER = ARG + 1  # the stake's multiplier after a win

# the state
WINS = 0  # wins in a row
UNITS = 1  # the stake, in units: MULTIPLIER ** WINS (kept as a running product)


def reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Start at one unit."""
    s[WINS] = 0.0
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
    """After a win multiply the stake, until the target's wins in a row:
    then, and after a loss, start again at one unit; a push leaves the stake
    where it is."""
    placed, won, lost, restart = outcome(p, stakes, unit)
    if placed:
        # by arithmetic on 0/1 numbers: with conditional expressions, 0.70x
        up = 1.0 if won else 0.0  # 1: one win more
        # 0: back to one unit (the target's test as a number too: `won & (...)`
        # compiles to a branch on the win, to skip reading the target)
        done = up * (1.0 if s[WINS] + 1.0 >= p[TARGET] else 0.0)
        keep = (0.0 if lost | restart else 1.0) * (1.0 - done)
        s[WINS] = (s[WINS] + up) * keep
        s[UNITS] = restarted(s[UNITS] * (p[MULTIPLIER] * up + (1.0 - up)), keep)


@dataclass(frozen=True)
class ParoliParams(ProgressionParams):
    target: int = param(3, "consecutive wins after which the stake goes back to one unit", min=1)
    multiplier: float = param(2.0, "stake multiplier after each win", min=1, exclusive_min=True)


class Paroli(Progression):
    """Reverse Martingale: start at one unit; multiply the stake after each win
    until `target` wins in a row, then back to one unit; a loss resets."""

    name = "paroli"
    kind = 3
    description = (
        "Reverse Martingale: double after each win up to a target streak; reset on a loss."
    )
    Params = ParoliParams

    def arguments(self) -> list[float]:
        return [self.params.target, self.params.multiplier]

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

"""The D'Alembert: one unit more after a loss, one less after a win.
Written as `martingale.py` is."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    hand = outcome(p, stakes, unit)
    if hand == LOST:
        s[UNITS] += p[STEP]
    elif hand == WON:
        s[UNITS] = max(s[UNITS] - p[STEP], 1.0)
    elif hand == RESTART:
        s[UNITS] = 1.0


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

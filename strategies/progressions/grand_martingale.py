"""The Grand Martingale: after each loss double the stake and add one unit;
go back to the base stake after a win. Written as `martingale.py` is."""

from __future__ import annotations

import numpy as np

from backtest.jit.lazy_jit import jit
from strategies.progressions.progression import (
    BASE,
    LOST,
    RESTART,
    WON,
    Progression,
    outcome,
)

# the state
UNITS = 0  # the stake, in units

MAX_UNITS = 1e300  # the stake, in units, stops growing here


@jit  # (`update` calls it too)
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
    """After a loss stake twice the last stake and one unit more; after a win
    start again at one unit; a push leaves the stake where it is."""
    hand = outcome(p, stakes, unit)
    if hand == LOST:
        s[UNITS] = min(2.0 * s[UNITS] + 1.0, MAX_UNITS)
    elif hand == WON or hand == RESTART:
        reset(p, s, si)


class GrandMartingale(Progression):
    """Start at one unit; after a loss stake twice the last stake plus one unit;
    back to one unit after a win."""

    name = "grand-martingale"
    kind = 2
    description = "After each loss double the stake and add one unit; reset after a win."

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

"""The Grand Martingale: after each loss double the stake and add one unit;
go back to the base stake after a win. Written as `dalembert.py` is."""

from __future__ import annotations

import numpy as np

from strategies.progressions.progression import (
    BASE,
    Progression,
    outcome,
)

# the state
UNITS = 0  # the stake, in units

MAX_UNITS = 1e300  # the stake, in units, stops growing here


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
    placed, won, lost, restart = outcome(p, stakes, unit)
    if placed:
        units = s[UNITS]
        grown = min(2.0 * units + 1.0, MAX_UNITS)
        units = grown if lost else units
        s[UNITS] = 1.0 if won | restart else units


class GrandMartingale(Progression):
    """Start at one unit; after a loss stake twice the last stake plus one unit;
    back to one unit after a win."""

    name = "grand-martingale"
    kind = 2
    description = "After each loss double the stake and add one unit; reset after a win."

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

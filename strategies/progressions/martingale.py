"""The Martingale: double the stake after each loss; go back to the base
stake after a win. Written as `dalembert.py` is, but its update chooses by
arithmetic (see `update`)."""

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
MULTIPLIER = ARG  # the stake's multiplier after a loss

# the state
LEVEL = 0  # losses in a row (counted up to MAX_LEVEL)
UNITS = 1  # the stake, in units: MULTIPLIER ** LEVEL (kept as a running product)

MAX_LEVEL = 1000.0  # losses in a row after which the stake stays where it is


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
    placed, won, lost, restart = outcome(p, stakes, unit)
    if placed:
        # by arithmetic on 0/1 numbers: with conditional expressions, 0.72x
        up = 1.0 if lost & (s[LEVEL] < MAX_LEVEL) else 0.0  # 1: one level up
        keep = 0.0 if won | restart else 1.0  # 0: back to one unit
        s[LEVEL] = (s[LEVEL] + up) * keep
        s[UNITS] = restarted(s[UNITS] * (p[MULTIPLIER] * up + (1.0 - up)), keep)


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

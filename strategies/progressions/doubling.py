"""The doubling progressions: Martingale, Grand Martingale, and Paroli (the
reverse Martingale)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strategies._common import outcome, restarted
from strategies.params import param
from strategies.progressions.progression import (
    ARG,
    BET,
    Progression,
    ProgressionParams,
    factor_decide,
    factor_reset,
    units_decide,
    units_reset,
)

# --- Martingale ------------------------------------------------------------------


def _martingale_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        level = s[0]
        up = 1.0 if loss & (level < 1000.0) else 0.0
        keep = 0.0 if win | push_reset else 1.0
        s[0] = (level + up) * keep
        s[1] = restarted(s[1] * (p[ARG] * up + (1.0 - up)), keep)


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

    k_reset = staticmethod(factor_reset)
    k_decide = staticmethod(factor_decide)
    k_update = staticmethod(_martingale_update)


# --- Grand Martingale --------------------------------------------------------------


def _grand_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        units = s[0]
        grown = 2.0 * units + 1.0
        grown = 1e300 if grown > 1e300 else grown
        units = grown if loss else units
        restart = win | push_reset
        units = 1.0 if restart else units
        s[0] = units


class GrandMartingale(Progression):
    """Start at one unit; after a loss stake twice the last stake plus one unit;
    back to one unit after a win."""

    name = "grand-martingale"
    kind = 2
    description = "After each loss double the stake and add one unit; reset after a win."

    k_reset = staticmethod(units_reset)
    k_decide = staticmethod(units_decide)
    k_update = staticmethod(_grand_update)


# --- Paroli (reverse Martingale) ----------------------------------------------------


def _paroli_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        level = s[0]
        up = 1.0 if win else 0.0
        # the target reached, as a number too: `win & (...)` compiles to a
        # branch on the win, to skip reading the target
        done = up * (1.0 if level + 1.0 >= p[ARG] else 0.0)
        keep = (0.0 if loss | push_reset else 1.0) * (1.0 - done)
        s[0] = (level + up) * keep
        s[1] = restarted(s[1] * (p[ARG + 1] * up + (1.0 - up)), keep)


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

    k_reset = staticmethod(factor_reset)
    k_decide = staticmethod(factor_decide)
    k_update = staticmethod(_paroli_update)

"""The Labouchere: stake the first plus the last number of a line; a win
crosses both out, a loss adds the stake lost at the end of the line.
Written as `dalembert.py` is."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.jit.lazy_jit import jit
from strategies.params import param
from strategies.progressions.progression import (
    ARG,
    BASE,
    BET,
    MAX_LINE,
    Progression,
    ProgressionParams,
    check_units,
    outcome,
)
from strategies.slots import STATE_FLOATS

# the parameter vector, after the bet and the base stake
START_LENGTH = ARG  # the starting line's length
START_LINE = ARG + 1  # the starting line's numbers, in units

# the state: the line is s[FIRST] to s[FIRST + LENGTH - 1], in currency (so
# that a stake is two numbers added and a loss adds the stake as placed).
# A win crosses out the first number by moving FIRST on.
LENGTH = 0  # in si: the numbers in the line
FIRST = 1  # in si: where the line starts in s


@jit  # (`update` calls it too)
def reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Start a new line: the starting line, in currency."""
    n = int(p[START_LENGTH])
    si[LENGTH] = n
    si[FIRST] = 0
    for i in range(n):
        s[i] = p[START_LINE + i] * p[BASE]


def decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    """Stake the first and the last number of the line added (the one
    number, on a line of one)."""
    n = si[LENGTH]  # at least 1: the update starts a new line when one is crossed out
    first = si[FIRST]
    last = s[first + n - 1]
    return s[first] + (last if n > 1 else 0.0)


def update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    """After a win cross out the first and the last number; after a loss add
    the stake lost at the end of the line. A line crossed out, one that would
    grow past MAX_LINE numbers, or a push under `on_push: reset`, starts a
    new line."""
    placed, won, lost, restart = outcome(p, stakes, unit)
    if not placed:
        return
    n = si[LENGTH]
    first = si[FIRST]
    if first + n >= STATE_FLOATS:  # no room after the line: move it to the front
        for i in range(n):
            s[i] = s[first + i]
        first = 0
    # what a loss adds, written whatever the outcome: past the line's end it
    # is not part of the line unless the line grows over it
    s[first + n] = stakes[int(p[BET])]
    length = n - 2 if won else n + 1 if lost else n
    si[LENGTH] = length
    si[FIRST] = first + 1 if won else first
    if (length <= 0) | (lost & (n >= MAX_LINE)) | restart:
        reset(p, s, si)


@dataclass(frozen=True)
class LabouchereParams(ProgressionParams):
    line: list[float] = param(
        [1.0, 2.0, 3.0, 4.0], "the starting line, in units; the stake is its first plus last number"
    )

    def validate(self, path: str) -> None:
        check_units(self.line, f"{path}.line")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate("params")


class Labouchere(Progression):
    """Cancellation: stake the first plus the last number of the line (units);
    a win crosses both out, a loss appends the amount lost. When the line is
    crossed out a new line starts: the series has won the line's sum, less
    what Banker wins paid short (0.95, or 0.5 on a no-commission 6), since any
    win crosses out its two numbers. A line that would grow past 512 numbers
    is abandoned for a new one."""

    name = "labouchere"
    kind = 6
    description = (
        "Cancellation system: bet first+last of a line, cross out on a win, append on a loss."
    )
    Params = LabouchereParams

    def arguments(self) -> list[float]:
        return [len(self.params.line), *self.params.line]

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

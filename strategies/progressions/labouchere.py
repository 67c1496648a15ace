"""The Labouchere: a line of numbers, a stake the first and the last added."""

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
)
from strategies.slots import P_ON_PUSH, STATE_FLOATS

# --- Labouchere ---------------------------------------------------------------------------
# state: the line in s from s[si[1]], in currency (each number times the
# base: a stake is two numbers added, and a loss appends the stake as it
# was placed, so neither a multiplication nor a division sits on the chain
# from one hand's result to the next stake); si[0] its length. A win crosses
# out the first number by moving the start, not the line. The update works
# out both outcomes and chooses with selects (see the package docstring); only
# a new line, once a series, branches.


@jit
def _new_line(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    n = int(p[ARG])
    si[0] = n
    si[1] = 0
    for i in range(n):
        s[i] = p[ARG + 1 + i] * p[BASE]


def _labouchere_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    _new_line(p, s, si)


def _labouchere_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    n = si[0]  # at least 1: the update starts a new line when one is crossed out
    first = si[1]
    last = s[first + n - 1]
    return s[first] + (last if n > 1 else 0.0)


def _labouchere_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    bet = int(p[BET])
    # `outcome`'s flags, written out: through the helper this loop measured
    # 3 per cent slower (four in-process comparisons)
    stake = stakes[bet]
    if stake <= 0.0:
        return
    r = unit[bet]
    n = si[0]
    first = si[1]
    if first + n >= STATE_FLOATS:  # no room after the line: move it to the front
        for i in range(n):
            s[i] = s[first + i]
        first = 0
    # what a loss appends, written whatever the outcome: past the line's end
    # it is not part of the line unless the length grows over it
    s[first + n] = stake
    win = r > 0.0
    loss = r < 0.0
    length = n - 2 if win else n
    length = n + 1 if loss else length
    si[0] = length
    si[1] = first + 1 if win else first
    if (length <= 0) | (loss & (n >= MAX_LINE)) | ((r == 0.0) & (p[P_ON_PUSH] == 1.0)):
        _new_line(p, s, si)


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

    k_reset = staticmethod(_labouchere_reset)
    k_decide = staticmethod(_labouchere_decide)
    k_update = staticmethod(_labouchere_update)

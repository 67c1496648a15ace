"""The Fibonacci progression: stakes follow 1, 1, 2, 3, 5, 8 ... units, one
step on after a loss and two back after a win. Written as `dalembert.py` is."""

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

LAST_STEP = 1400  # the furthest step along the sequence

# the parameter vector, after the bet and the base stake
BACK = ARG  # the steps back after a win
NUMBERS = ARG + 1  # the sequence's numbers, steps 0 to LAST_STEP (`fibonacci_numbers`)

# the state
STEP = 0  # the step along the sequence


def fibonacci_numbers() -> list[float]:
    """1, 1, 2, 3, 5 ... up to step LAST_STEP, as floats (exact below 2**53)."""
    numbers = []
    a = b = 1.0
    for _ in range(LAST_STEP + 1):
        numbers.append(a)
        a, b = b, a + b
    return numbers


def reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Start at the first step, one unit."""
    s[STEP] = 0.0


def decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    """Stake the base stake times the number at the step reached."""
    return p[BASE] * p[NUMBERS + int(s[STEP])]


def update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    """One step on after a loss (up to the last step); `back` steps back
    after a win (never before the first); a push stays."""
    placed, won, lost, restart = outcome(p, stakes, unit)
    if placed:
        step = s[STEP]
        back = max(step - p[BACK], 0.0)
        on = min(step + 1.0, float(LAST_STEP))
        step = back if won else step
        step = on if lost else step
        s[STEP] = 0.0 if restart else step


@dataclass(frozen=True)
class FibonacciParams(ProgressionParams):
    back: int = param(2, "steps back along the sequence after a win", min=1)


class Fibonacci(Progression):
    """Stakes follow 1, 1, 2, 3, 5, 8 ... units: one step on after a loss,
    `back` steps back after a win (never before the start)."""

    name = "fibonacci"
    kind = 4
    description = "Move one step up the Fibonacci sequence after a loss, two back after a win."
    Params = FibonacciParams

    def arguments(self) -> list[float]:
        return [self.params.back, *fibonacci_numbers()]

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

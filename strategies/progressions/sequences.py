"""The progressions along a sequence of units: Fibonacci, and 1-3-2-6 (any
sequence)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strategies._common import outcome
from strategies.params import param
from strategies.progressions.progression import (
    ARG,
    BASE,
    BET,
    Progression,
    ProgressionParams,
    check_units,
    level_reset,
)

# --- Fibonacci ----------------------------------------------------------------------

FIBONACCI_STEPS = 1400  # the furthest step along the sequence


def fibonacci_numbers() -> list[float]:
    """1, 1, 2, 3, 5 ... up to step FIBONACCI_STEPS, as floats (exact below 2**53)."""
    numbers = []
    a = b = 1.0
    for _ in range(FIBONACCI_STEPS + 1):
        numbers.append(a)
        a, b = b, a + b
    return numbers


def _fibonacci_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    # the numbers are in the parameter vector: a loop up to the step would end
    # at a different count each hand, a branch the processor cannot predict
    return p[BASE] * p[ARG + 1 + int(s[0])]


def _fibonacci_update(
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
        step = s[0]
        back = step - p[ARG]
        back = 0.0 if back < 0.0 else back
        on = step + 1.0
        on = FIBONACCI_STEPS if on > FIBONACCI_STEPS else on
        step = back if win else step
        step = on if loss else step
        step = 0.0 if push_reset else step
        s[0] = step


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

    k_reset = staticmethod(level_reset)
    k_decide = staticmethod(_fibonacci_decide)
    k_update = staticmethod(_fibonacci_update)


# --- 1-3-2-6 ---------------------------------------------------------------------------------


def _sequence_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    return p[BASE] * p[ARG + 1 + int(s[0])]


def _sequence_update(
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
        step = s[0]
        on = 1.0 if win else 0.0
        done = on * (1.0 if step + 1.0 >= p[ARG] else 0.0)  # as in `_paroli_update`
        keep = (0.0 if loss | push_reset else 1.0) * (1.0 - done)
        s[0] = (step + on) * keep


@dataclass(frozen=True)
class SequenceParams(ProgressionParams):
    sequence: list[float] = param([1.0, 3.0, 2.0, 6.0], "stakes in units, one step on per win")

    def validate(self, path: str) -> None:
        check_units(self.sequence, f"{path}.sequence")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate("params")


class OneThreeTwoSix(Progression):
    """Stake 1, 3, 2, 6 units on consecutive wins; a loss or a completed
    sequence starts again at the first step."""

    name = "1-3-2-6"
    kind = 7
    description = (
        "Positive progression 1-3-2-6 units over four wins; reset on a loss or at the end."
    )
    Params = SequenceParams

    def arguments(self) -> list[float]:
        return [len(self.params.sequence), *self.params.sequence]

    k_reset = staticmethod(level_reset)
    k_decide = staticmethod(_sequence_decide)
    k_update = staticmethod(_sequence_update)

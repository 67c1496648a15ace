"""The 1-3-2-6: stake 1, 3, 2 and 6 units on wins in a row (or any other
sequence), and start again after a loss or at its end. Written as
`dalembert.py` is."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strategies.params import param
from strategies.progressions.progression import (
    ARG,
    BASE,
    Progression,
    ProgressionParams,
    check_units,
    outcome,
)

# the parameter vector, after the bet and the base stake
LENGTH = ARG  # the number of steps of the sequence
SEQUENCE = ARG + 1  # its stakes, in units, one a step

# the state
STEP = 0  # the step along the sequence: the wins in a row


def reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Start at the first step."""
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
    """Stake the base stake times the sequence's number at the step reached."""
    return p[BASE] * p[SEQUENCE + int(s[STEP])]


def update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    """One step on after a win; after a loss, or a win on the last step,
    start again at the first; a push stays."""
    placed, won, lost, restart = outcome(p, stakes, unit)
    if placed:
        step = s[STEP] + 1.0 if won else s[STEP]
        s[STEP] = 0.0 if lost | restart | (step >= p[LENGTH]) else step


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

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

"""Small compiled helpers the built-in strategies share."""

from __future__ import annotations

import numpy as np

from backtest.kernels import jit

WIN, LOSS, PUSH, NO_BET = 1, -1, 0, 2


@jit
def main_result(bet: int, stakes: np.ndarray, unit: np.ndarray) -> int:
    """How the main bet `bet` went: WIN, LOSS, PUSH, or NO_BET if none was placed."""
    if stakes[bet] <= 0.0:
        return NO_BET
    r = unit[bet]
    if r > 0.0:
        return WIN
    if r < 0.0:
        return LOSS
    return PUSH


@jit
def last_decisive(hist: np.ndarray) -> int:
    """The last non-tie winner of the shoe (0 Player, 1 Banker), or -1."""
    for i in range(hist.shape[0] - 1, -1, -1):
        if hist[i] != 2:
            return int(hist[i])
    return -1


@jit
def run_length(hist: np.ndarray) -> int:
    """Length of the current run of the last decisive winner (ties skipped)."""
    side = -1
    n = 0
    for i in range(hist.shape[0] - 1, -1, -1):
        w = hist[i]
        if w == 2:
            continue
        if side == -1:
            side = w
        if w != side:
            break
        n += 1
    return n

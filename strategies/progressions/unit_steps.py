"""The progressions by a unit at a time: D'Alembert, and Oscar's Grind."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.jit.lazy_jit import jit
from strategies._common import _HUGE, outcome
from strategies.params import param
from strategies.progressions.progression import (
    ARG,
    BASE,
    BET,
    Progression,
    ProgressionParams,
    units_decide,
    units_reset,
)

# --- D'Alembert -----------------------------------------------------------------------


def _dalembert_update(
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
        down = units - p[ARG]
        down = 1.0 if down < 1.0 else down
        up = units + p[ARG]
        units = down if win else units
        units = up if loss else units
        units = 1.0 if push_reset else units
        s[0] = units


@dataclass(frozen=True)
class DAlembertParams(ProgressionParams):
    step: int = param(1, "units added after a loss and taken off after a win", min=1)


class DAlembert(Progression):
    """Start at one unit; one `step` more after a loss, one less after a win
    (never below one unit)."""

    name = "dalembert"
    kind = 5
    description = "Add a unit after a loss, take one off after a win."
    Params = DAlembertParams

    def arguments(self) -> list[float]:
        return [self.params.step]

    k_reset = staticmethod(units_reset)
    k_decide = staticmethod(units_decide)
    k_update = staticmethod(_dalembert_update)


# --- Oscar's Grind ----------------------------------------------------------------------------
# state: s[0] the next stake before the goal's cap (currency: the last stake
# placed, one unit more after a win), s[1] what the series still needs to win
# (currency, less a slack of 1e-9 units: `_oscar_short`), s[2] the stake the
# next decide asks for, worked out by the update (and the reset) as soon as
# the hand before is settled.
#
# The series is a chain from one hand's stake to the next: each stake depends
# on what the last one won. The update walks that chain with one multiply and
# one subtraction (what is still needed, not the profit so far: the goal's
# test is then a comparison with a number known before the hand), a select,
# and the cap; the decide only reads the stake. Sums stay in currency, exact
# while the stakes are whole cents (sums in units would lose that at large
# stakes); the slack keeps a series that needs exactly a whole number of units
# from asking one unit more.

_OSCAR_SLACK = 1e-9  # in units


@jit
def _oscar_short(p: np.ndarray) -> float:
    """What a new series needs to win, less the slack: more than zero, so that
    its first cap is one unit at least (a goal below the slack ends a series
    on its first win)."""
    base = p[BASE]
    return max(p[ARG] * base - _OSCAR_SLACK * base, 1e-200)


@jit
def _oscar_ask(base: float, kept: float, short: float) -> float:
    """The next stake: `kept`, but never more than a win needs to finish the
    series, in whole units as if it paid even money; one unit at least."""
    cap = base * np.ceil(short * (1.0 / base))
    return min(cap, max(kept, base))


def _oscar_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    base = p[BASE]
    s[0] = base
    s[1] = _oscar_short(p)
    s[2] = _oscar_ask(base, base, s[1])


def _oscar_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    return s[2]


def _oscar_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    bet = int(p[BET])
    placed, win, loss, push_reset = outcome(p, bet, stakes, unit)
    if placed:
        # the stake placed, read as the one asked for when the loop placed
        # exactly that, as on almost every hand: the same number, but the
        # processor predicts this branch, so the chain does not wait on the
        # loop's conversion of the stake to cents and back
        if stakes[bet] != s[2]:
            s[2] = stakes[bet]
        stake = s[2]
        kept = s[0]
        base = p[BASE]
        r = unit[bet]
        # a loss is -1, a push 0: one product for every outcome
        short = s[1] - stake * r
        # the series ends on a win that leaves nothing to win, or on a push
        # under `on_push: reset`: a limit to compare `short` with, known
        # before it (a select on one comparison of two numbers compiles
        # without a branch)
        limit = (0.0 if r > 0.0 else -_HUGE) + (1.0 if push_reset else 0.0) * 2.0 * _HUGE
        w = 1.0 if win else 0.0
        lo = 1.0 if loss else 0.0
        # after a win one unit more than the stake just won, after a loss the
        # stake just lost; a push leaves it where it is
        nxt = (stake + base * w) * (w + lo) + kept * (1.0 - w - lo)
        done = short <= limit
        short = _oscar_short(p) if done else short
        nxt = base if done else nxt
        s[0] = nxt
        s[1] = short
        s[2] = _oscar_ask(base, nxt, short)


@dataclass(frozen=True)
class OscarParams(ProgressionParams):
    goal: float = param(1.0, "the profit, in units, that ends a series", min=0, exclusive_min=True)


class OscarsGrind(Progression):
    """A series aims to win `goal` units: start at one unit; after a win stake
    one unit more than the stake just won, after a loss the stake just lost;
    never stake more than a win needs to reach the goal, in whole units as if
    it paid even money (a Banker win at 0.95 may leave a few cents to win on
    the next hand); when the goal is reached, start a new series."""

    name = "oscars-grind"
    kind = 8
    description = (
        "Raise a unit after each win, never more than needed to finish the series +1 unit."
    )
    Params = OscarParams

    def arguments(self) -> list[float]:
        return [self.params.goal]

    k_reset = staticmethod(_oscar_reset)
    k_decide = staticmethod(_oscar_decide)
    k_update = staticmethod(_oscar_update)

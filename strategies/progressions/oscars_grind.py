"""Oscar's Grind: a series aims to win one unit (`goal`). Stake one unit
more after a win, the same after a loss, never more than a win needs to
finish the series. Written as `dalembert.py` is."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.jit.lazy_jit import jit
from strategies.params import param
from strategies.progressions.progression import (
    ARG,
    BASE,
    BET,
    HUGE,
    Progression,
    ProgressionParams,
    outcome,
)

# the parameter vector, after the bet and the base stake
GOAL = ARG  # what a series aims to win, in units

# the state, in currency
KEPT = 0  # the next stake before the goal's cap: the last stake, one unit more after a win
SHORT = 1  # what the series still needs to win, less a slack of SLACK units
ASKED = 2  # the stake the next hand asks for: KEPT, capped by what the series needs

# Sums are kept in currency, exact while the stakes are whole cents (sums in
# units would lose that at large stakes); the slack keeps a series that
# needs exactly a whole number of units from asking for one unit more.
SLACK = 1e-9  # in units


@jit
def _series_short(p: np.ndarray) -> float:
    """What a new series needs to win, less the slack: more than zero, so
    that its first stake is one unit at least (a goal below the slack ends a
    series on its first win)."""
    base = p[BASE]
    return max(p[GOAL] * base - SLACK * base, 1e-200)


@jit
def _ask(base: float, kept: float, short: float) -> float:
    """The next stake: `kept`, but never more than a win needs to finish the
    series, in whole units as if it paid even money; one unit at least."""
    cap = base * np.ceil(short * (1.0 / base))
    return min(cap, max(kept, base))


def reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    """Start a series at one unit."""
    base = p[BASE]
    s[KEPT] = base
    s[SHORT] = _series_short(p)
    s[ASKED] = _ask(base, base, s[SHORT])


def decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    """Stake what the last update worked out."""
    return s[ASKED]


def update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    """After a win stake one unit more than the stake just won, after a loss
    the stake just lost, after a push the same; when a win reaches the goal
    (or a push under `on_push: reset`), start a new series. Then cap the
    stake at what a win needs to finish the series."""
    placed, won, lost, restart = outcome(p, stakes, unit)
    if placed:
        bet = int(p[BET])
        # the stake placed, read as the one asked for when the loop placed
        # exactly that, as on almost every hand: the same number, but this
        # branch is predicted (a store: never a select), and the next stake
        # then need not wait on the loop's rounding of this one to cents
        if stakes[bet] != s[ASKED]:
            s[ASKED] = stakes[bet]
        stake = s[ASKED]
        kept = s[KEPT]
        base = p[BASE]
        result = unit[bet]
        short = s[SHORT] - stake * result  # what the hand won comes off
        # by arithmetic on 0/1 numbers, and the end of the series as one
        # comparison with a limit known before `short` (chosen on `result`
        # itself: on `won`, 0.78x): with conditional expressions, 0.80x
        limit = (0.0 if result > 0.0 else -HUGE) + (1.0 if restart else 0.0) * 2.0 * HUGE
        w = 1.0 if won else 0.0
        lo = 1.0 if lost else 0.0
        kept = (stake + base * w) * (w + lo) + kept * (1.0 - w - lo)
        new_series = short <= limit
        short = _series_short(p) if new_series else short
        kept = base if new_series else kept
        s[KEPT] = kept
        s[SHORT] = short
        s[ASKED] = _ask(base, kept, short)


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

    k_reset = staticmethod(reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(update)

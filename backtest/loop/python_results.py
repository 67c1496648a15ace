"""What the plain-Python loop gives a strategy after a hand, and what it
checks of the strategy: a run's `Result` class (`results_class`, raw numbers
worked out as read), whether a strategy learns at all (`no_update`), whether
a debugger or tracer watches (`untraced`: the loop then makes a new Result
each hand), and an error a strategy raised, with the hand (`Raised`).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from backtest.core.errors import describe_raised
from backtest.core.rules import Bet, Winner
from strategies.base import (
    Result,
    Strategy,
)
from strategies.view import winners_of

_BETS = tuple(Bet)


class Raised(Exception):
    """The strategy's code (or a check of what it returned) raised an error
    while the loop played hand index `at`; the engine says which seat, hand,
    shoe and session."""

    def __init__(self, at: int, error: BaseException) -> None:
        super().__init__(at, error)
        self.at = at
        self.error = error

    def describe(self) -> str:
        """The error in words, and where a strategy's own code raised it."""
        return describe_raised(self.error)


def results_class(winner: np.ndarray, unit: np.ndarray, den: int) -> type[Result]:
    """A `Result` class for one run's hands.

    A hand's Result holds raw numbers: its net, the bets placed as (bet code,
    cents) pairs in `Bet` order, and the hand's index into the run's columns.
    What every hand shares (the unit results, the winners) is held by the
    class, and the winner and the three dicts are worked out each time they
    are read, never kept: the loop fills one Result again for the next hand
    when the strategy has not kept it, so nothing read from it may outlive
    its hand inside it."""
    won = winners_of(winner)
    scale = 100.0 * den

    class HandResult(Result):
        __slots__ = ("_placed", "_i")
        __init__ = object.__init__  # type: ignore[assignment]
        _placed: tuple[tuple[int, int], ...]
        _i: int

        @property
        def winner(self) -> Winner:  # type: ignore[override]
            """The hand's winner."""
            return won[self._i]

        @property  # type: ignore[misc]
        def stakes(self) -> dict[Bet, float]:
            """The stakes actually placed (after table limits), by bet."""
            return {_BETS[b]: c * 0.01 for b, c in self._placed}

        @property  # type: ignore[misc]
        def nets(self) -> dict[Bet, float]:
            """Net result of each placed bet."""
            row = unit[:, self._i].tolist()
            return {_BETS[b]: c * row[b] / scale for b, c in self._placed}

        @property  # type: ignore[misc]
        def units(self) -> dict[Bet, float]:
            """Result per unit staked of every bet on this hand (payout, 0 push, -1 loss)."""
            return {
                bet: (u / den if u > -(2**62) else 0.0)
                for bet, u in zip(_BETS, unit[:, self._i].tolist())
            }

        def __reduce__(self) -> tuple[type[Result], tuple[Any, ...]]:
            # a copy (or a pickle) is a plain Result with its dicts
            return Result, (self.winner, self.net, self.stakes, self.nets, self.units)

    HandResult.__name__ = HandResult.__qualname__ = "Result"
    return HandResult


def untraced() -> bool:
    """Whether no trace or profile function (a debugger, a coverage tool) is
    set, nor a debugger on `sys.monitoring`."""
    monitoring = getattr(sys, "monitoring", None)
    return (
        sys.gettrace() is None
        and sys.getprofile() is None
        and (monitoring is None or monitoring.get_tool(monitoring.DEBUGGER_ID) is None)
    )


def no_update(strategy: Strategy) -> bool:
    """Whether the strategy's `update` is the base class's, which does nothing."""
    return "update" not in vars(strategy) and type(strategy).update is Strategy.update

"""What every progression shares: its parameters (the bet, the base stake),
their slots in the parameter vector, and how a hand went for its bet.

A progression's parameter vector is the common head, then `BET`, `BASE`,
and from `ARG` on the progression's own numbers (its `arguments`).

An update chooses each new number with a conditional expression on the
flags `outcome` gives, between numbers it has worked out before
(`units = down if won else units`), not with if/else statements. A hand's
outcome is a coin toss to the processor's branch predictor, and a
mispredicted branch costs more than the whole update: such a conditional
expression compiles to a select, while if/else statements that store, or a
side of the expression that reads an array, compile to branches (D'Alembert
ran at 0.64x its speed that way, side by side on an AMD EPYC). Where even
the conditional expression is a branch (a choice between two numbers that
the next stake waits on: the Martingale, the Paroli, Oscar's Grind), the
update chooses by exact arithmetic on 0/1 numbers (`1.0 if won else 0.0`
is a conversion, not a branch), and says so with its figure."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.core.errors import StrategyError
from backtest.core.rules import Bet
from backtest.jit.lazy_jit import jit
from strategies.base import Builtin
from strategies.params import CommonParams, Money, param
from strategies.slots import P_ON_PUSH, P_OWN, STATE_FLOATS

BET = P_OWN  # the code of the bet the progression plays
BASE = P_OWN + 1  # the base stake, one unit, in currency
ARG = P_OWN + 2  # the first of the progression's own numbers (`arguments`)

#: the longest line a Labouchere keeps (its line lives in the float state)
MAX_LINE = STATE_FLOATS - 8


@dataclass(frozen=True)
class ProgressionParams(CommonParams):
    bet: Bet = param("banker", "the bet the progression plays")
    base: Money = param(10.0, "the base stake (one unit), in currency", min=0, exclusive_min=True)


def check_units(values: list[float], where: str) -> None:
    """A list of 1 to 64 positive numbers of units (a line, a sequence)."""
    if not 1 <= len(values) <= 64:
        raise StrategyError(f"{where}: must hold 1 to 64 numbers, got {len(values)}")
    for i, v in enumerate(values):
        if v <= 0:
            raise StrategyError(f"{where}[{i}]: numbers must be positive, got {v!r}")


class Progression(Builtin):
    """A progression on one bet; subclasses add their own numbers (`arguments`)."""

    Params = ProgressionParams
    bet_slot = BET  # every decide returns its stake on the bet p[BET]

    def encode_own(self) -> list[float]:
        return [Bet(self.params.bet).code, self.params.base, *self.arguments()]

    def arguments(self) -> list[float]:
        """The progression's own numbers, at p[ARG] on."""
        return []

    def main_bets(self) -> set[Bet]:
        return {Bet(self.params.bet)}


@jit
def outcome(p: np.ndarray, stakes: np.ndarray, unit: np.ndarray) -> tuple[bool, bool, bool, bool]:
    """How the hand went for the progression's bet: (placed, won, lost,
    restart), where `restart` is a push under `on_push: reset`. A win is any
    hand the bet made money on, a loss any it lost money on."""
    bet = int(p[BET])
    result = unit[bet]
    return stakes[bet] > 0.0, result > 0.0, result < 0.0, (result == 0.0) & (p[P_ON_PUSH] == 1.0)


# the largest float: twice it is infinite, so 1.0 + keep * 2.0 * HUGE is 1 or infinity
HUGE = float(np.finfo(np.float64).max)


@jit
def restarted(units: float, keep: float) -> float:
    """`units` (1 or more, perhaps infinite) if `keep` is 1.0, or 1.0 if
    `keep` is 0.0, exactly and without a branch: the lesser of `units` and 1
    or infinity (`1.0 if keep else units` compiles to a branch)."""
    return min(units, 1.0 + keep * 2.0 * HUGE)

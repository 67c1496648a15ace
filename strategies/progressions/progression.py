"""What every progression shares: its parameters (the bet, the base stake),
their slots in the parameter vector, and how a hand went for its bet.

A progression's parameter vector is the common head, then `BET`, `BASE`,
and from `ARG` on the progression's own numbers (its `arguments`)."""

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

# how a hand went for the progression's bet (`outcome`)
SAT_OUT = 0  # no stake on the bet
WON = 1  # the bet made money, whatever it paid
LOST = 2  # the bet lost money
PUSHED = 3  # the bet was pushed (a tie under Player or Banker) and the progression stands
RESTART = 4  # the bet was pushed and `on_push: reset` restarts the progression


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
def outcome(p: np.ndarray, stakes: np.ndarray, unit: np.ndarray) -> int:
    """How the hand went for the progression's bet: SAT_OUT, WON, LOST,
    PUSHED, or RESTART (a push under `on_push: reset`)."""
    bet = int(p[BET])
    if stakes[bet] <= 0.0:
        return SAT_OUT
    result = unit[bet]
    if result > 0.0:
        return WON
    if result < 0.0:
        return LOST
    return RESTART if p[P_ON_PUSH] == 1.0 else PUSHED

"""What every progression shares: its parameters (the bet, the base stake), its
slots in the parameter vector, and the state resets and stakes several use."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.core.errors import StrategyError
from backtest.core.rules import Bet
from strategies.base import Builtin
from strategies.params import CommonParams, Money, param
from strategies.slots import P_OWN, STATE_FLOATS

BET = P_OWN  # the bet's code
BASE = P_OWN + 1  # base stake
ARG = P_OWN + 2  # first argument of the progression

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
    """A progression on one bet; subclasses add their arguments."""

    Params = ProgressionParams
    bet_slot = BET  # every decide returns its stake on the bet p[BET]

    def encode_own(self) -> list[float]:
        return [Bet(self.params.bet).code, self.params.base, *self.arguments()]

    def arguments(self) -> list[float]:
        return []

    def main_bets(self) -> set[Bet]:
        return {Bet(self.params.bet)}


def level_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    s[0] = 0.0


# state of the multiplying progressions: s[0] the level, s[1] multiplier ** level
# (kept as a running product: a power per hand would cost more than the hand)


def factor_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    s[0] = 0.0
    s[1] = 1.0


def factor_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    """Martingale and Paroli: the base stake times the running product."""
    return p[BASE] * s[1]


def units_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    s[0] = 1.0
    s[1] = 0.0


def units_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    return p[BASE] * s[0]

"""Flat betting: the same stakes on every hand, on any bet or combination."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.core.errors import StrategyError
from backtest.core.rules import Bet
from strategies._common import stateless_reset, stateless_update
from strategies.base import Builtin
from strategies.params import CommonParams, Money, param
from strategies.slots import N_BETS, P_OWN

# the parameter vector, after the common head
STAKES = P_OWN  # the stake on each bet, N_BETS of them, in `Bet` order


@dataclass(frozen=True)
class FlatParams(CommonParams):
    bets: dict[str, Money] = param(
        {"banker": 10.0}, "stake on each bet, every hand, e.g. {banker: 10, tie: 1}"
    )

    def validate(self, path: str) -> None:
        if not any(v > 0 for v in self.bets.values()):
            raise StrategyError(f"{path}.bets: give at least one bet with a positive stake")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate("params")


def decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> None:
    """Stake the same on every bet as on every hand before."""
    for bet in range(N_BETS):
        out[bet] = p[STAKES + bet]


class Flat(Builtin):
    """The same stakes every hand: the control every system is measured against."""

    name = "flat"
    kind = 0
    description = "The same stake on the same bet(s) every hand."
    Params = FlatParams

    def encode_own(self) -> list[float]:
        own = [0.0] * N_BETS
        for name, stake in self.params.bets.items():
            own[Bet(name).code] = stake
        return own

    def main_bets(self) -> set[Bet]:
        return {Bet(b) for b, s in self.params.bets.items() if s > 0}

    def fixed_stakes(self) -> dict[Bet, float]:
        stakes = {Bet(b): s for b, s in self.params.bets.items() if s > 0}
        for b, s in self.params.side_bets.items():
            if s > 0:
                stakes[Bet(b)] = stakes.get(Bet(b), 0.0) + s
        return stakes

    k_reset = staticmethod(stateless_reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(stateless_update)

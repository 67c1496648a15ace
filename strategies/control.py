"""The random bettor: the control group every system should be compared with."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.core.rules import Bet
from backtest.shoes.rng import seed_state, uniform
from strategies._common import stateless_reset, stateless_update
from strategies.base import Builtin
from strategies.params import CommonParams, Money, param
from strategies.slots import P_OWN

BASE = P_OWN


@dataclass(frozen=True)
class RandomParams(CommonParams):
    base: Money = param(10.0, "the stake, in currency", min=0, exclusive_min=True)
    banker_share: float = param(0.5, "probability of choosing Banker over Player", min=0, max=1)
    skip: float = param(0.0, "probability of sitting a hand out", min=0, max=1)


def _random_init(p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    seed_state(np.uint64(seed), np.uint64(0), si.view(np.uint64)[:4])


def _random_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    state = si.view(np.uint64)[:4]
    if uniform(state) < p[BASE + 2]:
        return 0, 0.0
    side = 1 if uniform(state) < p[BASE + 1] else 0
    return side, p[BASE]


class RandomBettor(Builtin):
    """Each hand, a seeded coin decides Player or Banker (and whether to sit out)."""

    name = "random"
    kind = 13
    description = "Bet Player or Banker at random: the control group."
    picks_one = True
    Params = RandomParams

    def encode_own(self) -> list[float]:
        return [self.params.base, self.params.banker_share, self.params.skip]

    def main_bets(self) -> set[Bet]:
        return {Bet.PLAYER, Bet.BANKER}

    k_reset = staticmethod(stateless_reset)
    k_init = staticmethod(_random_init)
    k_decide = staticmethod(_random_decide)
    k_update = staticmethod(stateless_update)

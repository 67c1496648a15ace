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

# the parameter vector, after the common head
BASE = P_OWN  # the stake, in currency
BANKER_SHARE = P_OWN + 1  # the chance of choosing Banker over Player
SKIP = P_OWN + 2  # the chance of sitting a hand out

# the state: the coin, a seeded generator's four words (si[0:4] as unsigned integers)
COIN = 4


@dataclass(frozen=True)
class RandomParams(CommonParams):
    base: Money = param(10.0, "the stake, in currency", min=0, exclusive_min=True)
    banker_share: float = param(0.5, "probability of choosing Banker over Player", min=0, max=1)
    skip: float = param(0.0, "probability of sitting a hand out", min=0, max=1)


def init(p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    """Seed the coin with the session's own seed."""
    seed_state(np.uint64(seed), np.uint64(0), si.view(np.uint64)[:COIN])


def decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    """Toss the coin: sit out with the chance `skip`; else bet Banker with
    the chance `banker_share`, Player otherwise."""
    coin = si.view(np.uint64)[:COIN]
    if uniform(coin) < p[SKIP]:
        return 0, 0.0
    side = 1 if uniform(coin) < p[BANKER_SHARE] else 0
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
    k_init = staticmethod(init)
    k_decide = staticmethod(decide)
    k_update = staticmethod(stateless_update)

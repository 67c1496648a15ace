"""Reading the derived roads: bet on the colour a scoreboard shows next.

Players at live tables watch the big eye boy, small road and cockroach pig
and bet so that the road's next mark repeats its last colour (`follow`), or
breaks it (`chop`). Before each hand the road's next mark for a Banker win is
known (a Player win always adds the opposite colour), so the wanted colour
names the side to bet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from backtest.rules import Bet
from strategies._common import road_marks, stateless_init, stateless_reset, stateless_update
from strategies.base import P_OWN, Builtin
from strategies.params import CommonParams, param

BASE = P_OWN
ROADS = {"big-eye-boy": 1, "small-road": 2, "cockroach-pig": 3}


@dataclass(frozen=True)
class RoadParams(CommonParams):
    base: float = param(10.0, "the stake, in currency", min=0, exclusive_min=True)
    road: Literal["big-eye-boy", "small-road", "cockroach-pig"] = param(
        "big-eye-boy", "the derived road to read")
    mode: Literal["follow", "chop"] = param(
        "follow", "`follow`: bet so the road's next mark repeats its last colour; "
                  "`chop`: so that it changes colour")


def _road_decide(p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray,
                 hist: np.ndarray, evs: np.ndarray, out: np.ndarray) -> None:
    # the scratch for the big road's column lengths is the state array
    ncols, side, last, banker_mark = road_marks(hist, int(p[BASE + 1]), s)
    if last == 0 or banker_mark == 0:
        return
    wanted = last if p[BASE + 2] == 0.0 else -last
    out[1 if banker_mark == wanted else 0] = p[BASE]


class RoadReader(Builtin):
    """Bet Player or Banker so that a derived road's next mark follows (or
    chops) its last colour; sit out until the road has a mark."""

    name = "road-reader"
    description = "Follow (or chop) the colour of the big eye boy, small road or cockroach pig."
    kind = 15
    Params = RoadParams

    def encode_own(self) -> list[float]:
        return [self.params.base, ROADS[self.params.road],
                0.0 if self.params.mode == "follow" else 1.0]

    def main_bets(self) -> set[Bet]:
        return {Bet.PLAYER, Bet.BANKER}

    k_reset = staticmethod(stateless_reset)
    k_init = staticmethod(stateless_init)
    k_decide = staticmethod(_road_decide)
    k_update = staticmethod(stateless_update)

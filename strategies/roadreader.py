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

from backtest.core.rules import Bet
from backtest.jit.lazy_jit import jit
from strategies._common import derived_mark, road_step, stateless_reset, stateless_update
from strategies.base import Builtin
from strategies.params import CommonParams, Money, param
from strategies.slots import P_OWN

BASE = P_OWN
ROADS = {"big-eye-boy": 1, "small-road": 2, "cockroach-pig": 3}


@dataclass(frozen=True)
class RoadParams(CommonParams):
    base: Money = param(10.0, "the stake, in currency", min=0, exclusive_min=True)
    road: Literal["big-eye-boy", "small-road", "cockroach-pig"] = param(
        "big-eye-boy", "the derived road to read"
    )
    mode: Literal["follow", "chop"] = param(
        "follow",
        "`follow`: bet so the road's next mark repeats its last colour; "
        "`chop`: so that it changes colour",
    )


# state: s[0..7] the big road's column lengths (the ring of
# `_common.road_marks`); si[0] the hands of the shoe read so far, si[1] the
# big road's columns, si[2] its last side, si[3] the derived road's last
# colour, si[4] the last column's length. Each hand reads only the hands new
# since the last (a new shoe, whose history is shorter, starts the roads
# again), so a shoe costs its length, not its length squared.


@jit
def _clear_roads(si: np.ndarray) -> None:
    si[0] = 0
    si[1] = 0
    si[2] = -1
    si[3] = 0
    si[4] = 0


def _road_init(p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    _clear_roads(si)


def _road_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    offset = int(p[BASE + 1])
    n = hist.shape[0]
    if n < si[0] or n == 0:
        _clear_roads(si)
    ncols, cur, side, last = si[1], si[4], si[2], si[3]
    for i in range(si[0], n):
        ncols, cur, side, last = road_step(s, ncols, cur, side, last, offset, int(hist[i]))
    si[0] = n
    si[1] = ncols
    si[2] = side
    si[3] = last
    si[4] = cur
    banker_mark = derived_mark(s, ncols, cur, side, offset, 1)
    wanted = last if p[BASE + 2] == 0.0 else -last
    # no bet until the road has a mark and the next one is known; the side
    # is chosen with a select: it is a coin toss to the processor
    stake = p[BASE] if (last != 0) & (banker_mark != 0) else 0.0
    return (1 if banker_mark == wanted else 0), stake


class RoadReader(Builtin):
    """Bet Player or Banker so that a derived road's next mark follows (or
    chops) its last colour; sit out until the road has a mark."""

    name = "road-reader"
    kind = 15
    description = "Follow (or chop) the colour of the big eye boy, small road or cockroach pig."
    Params = RoadParams
    # Player or Banker is a coin toss: the reader chooses it with selects and
    # returns it, and the loop takes it without a branch (see `picks_one`)
    picks_one = True

    def encode_own(self) -> list[float]:
        return [
            self.params.base,
            ROADS[self.params.road],
            0.0 if self.params.mode == "follow" else 1.0,
        ]

    def main_bets(self) -> set[Bet]:
        return {Bet.PLAYER, Bet.BANKER}

    # a session starts the roads; the table maximum's restart leaves them (a flat
    # stake has no progression to restart, and reading the shoe again is slow)
    k_init = staticmethod(_road_init)
    k_reset = staticmethod(stateless_reset)
    k_decide = staticmethod(_road_decide)
    k_update = staticmethod(stateless_update)

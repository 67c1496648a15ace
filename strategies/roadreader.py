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
from strategies._common import (
    BANKER,
    PLAYER,
    derived_mark,
    road_step,
    stateless_reset,
    stateless_update,
)
from strategies.base import Builtin
from strategies.params import CommonParams, Money, param
from strategies.slots import P_OWN

ROADS = {"big-eye-boy": 1, "small-road": 2, "cockroach-pig": 3}

# the parameter vector, after the common head
BASE = P_OWN  # the stake, in currency
ROAD = P_OWN + 1  # the derived road read, as its offset (`ROADS`)
CHOP = P_OWN + 2  # 1 to bet that the road changes colour, 0 that it repeats it

# the state: in s, the big road's column lengths (the ring of
# `_common.road_marks`); in si, the roads as read so far. Each hand reads
# only the hands new since the last (a new shoe, whose history is shorter,
# starts the roads again), so a shoe costs its length, not its length squared.
READ = 0  # the hands of the shoe read so far
COLUMNS = 1  # the big road's columns
SIDE = 2  # the side of its last column (-1: none yet)
LAST_MARK = 3  # the derived road's last colour (+1 red, -1 blue, 0 none yet)
COLUMN_LENGTH = 4  # the length of the big road's last column


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


@jit  # (the decide calls it too)
def init(p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    """Start the roads afresh."""
    si[READ] = 0
    si[COLUMNS] = 0
    si[SIDE] = -1
    si[LAST_MARK] = 0
    si[COLUMN_LENGTH] = 0


def decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    """Add the new hands to the roads; then bet the side whose win gives the
    road the colour wanted: its last colour (`follow`) or the other (`chop`).
    Sit out until the road has a mark."""
    offset = int(p[ROAD])
    n = hist.shape[0]
    if n < si[READ] or n == 0:  # a new shoe
        init(p, s, si, 0)
    columns, length, side, last = si[COLUMNS], si[COLUMN_LENGTH], si[SIDE], si[LAST_MARK]
    for i in range(si[READ], n):
        columns, length, side, last = road_step(
            s, columns, length, side, last, offset, int(hist[i])
        )
    si[READ] = n
    si[COLUMNS] = columns
    si[SIDE] = side
    si[LAST_MARK] = last
    si[COLUMN_LENGTH] = length
    banker_mark = derived_mark(s, columns, length, side, offset, BANKER)
    if last == 0 or banker_mark == 0:
        return 0, 0.0
    wanted = -last if p[CHOP] == 1.0 else last
    return (BANKER if banker_mark == wanted else PLAYER), p[BASE]


class RoadReader(Builtin):
    """Bet Player or Banker so that a derived road's next mark follows (or
    chops) its last colour; sit out until the road has a mark."""

    name = "road-reader"
    kind = 15
    description = "Follow (or chop) the colour of the big eye boy, small road or cockroach pig."
    Params = RoadParams
    picks_one = True  # its decide returns (bet, stake)

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
    k_init = staticmethod(init)
    k_reset = staticmethod(stateless_reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(stateless_update)

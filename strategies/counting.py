"""Exact-odds card counting: bet only when a bet's exact expected value, for
the cards not yet seen, is positive."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.core.errors import StrategyError
from backtest.core.rules import PAIR_ALONE, PAIR_MASK, Bet
from backtest.jit.lazy_jit import jit
from strategies._common import stateless_reset, stateless_update
from strategies.base import Builtin
from strategies.params import CommonParams, Money, param
from strategies.slots import N_BETS, P_OWN, P_PAIRS_ALONE, SEVERAL, combination

# the parameter vector, after the common head
BASE = P_OWN  # the stake on each favourable bet, in currency
MIN_EV = P_OWN + 1  # a bet is favourable when its EV a unit is above this
CONSIDERED = P_OWN + 2  # for each bet, in `Bet` order: 1 if the counter considers it


@dataclass(frozen=True)
class CounterParams(CommonParams):
    base: Money = param(
        10.0, "the stake on each favourable bet, in currency", min=0, exclusive_min=True
    )
    min_ev: float = param(0.0, "bet only when the expected value per unit is above this")
    bets: list[str] = param(
        ["player", "banker", "tie", "player_pair", "banker_pair"],
        "the bets considered (add dragon7 and panda8 at an EZ table)",
    )

    def validate(self, path: str) -> None:
        names = [b.value for b in Bet]
        if not self.bets:
            raise StrategyError(f"{path}.bets: name at least one bet")
        for i, b in enumerate(self.bets):
            if b not in names:
                raise StrategyError(
                    f"{path}.bets[{i}]: unknown bet {b!r}; bets are {', '.join(names)}"
                )
            if b in self.bets[:i]:
                raise StrategyError(
                    f"{path}.bets[{i}]: {b!r} is given twice (first as "
                    f"bets[{self.bets.index(b)}]); name each bet once"
                )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate("params")


@jit
def _favourable(p: np.ndarray, evs: np.ndarray, b: int, pairs: bool) -> bool:
    """Whether the counter stakes bet `b`: one it considers, whose EV is above
    `min_ev`; a pair bet only with `pairs`."""
    return (
        p[CONSIDERED + b] == 1.0 and evs[b] > p[MIN_EV] and (pairs or ((PAIR_MASK >> b) & 1) == 0)
    )


def decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    """Stake `base` on each favourable bet: on a table that takes a pair bet
    only beside a main bet, and with no main bet favourable, on none of the
    pair bets. Return the one bet staked, or none; write several in `out`."""
    n = 0
    pick = 0
    placed = 0  # the favourable bets, as a `rules.bet_mask`
    for b in range(N_BETS):
        if _favourable(p, evs, b, True):
            n += 1
            pick = b
            placed |= 1 << b
    pairs = combination(placed, True, p[P_PAIRS_ALONE] == 0.0) != PAIR_ALONE
    if not pairs:  # a pair bet the table takes only beside a main bet: the others alone
        n = 0
        pick = 0
        for b in range(N_BETS):
            if _favourable(p, evs, b, False):
                n += 1
                pick = b
    if n <= 1:  # as on almost every hand: one bet or none, returned
        return pick, p[BASE] if n == 1 else 0.0
    for b in range(N_BETS):
        out[b] = p[BASE] if _favourable(p, evs, b, pairs) else 0.0
    return SEVERAL, p[BASE]


class ExactCounter(Builtin):
    """Before each hand, the exact EV of every considered bet is computed for
    the cards not yet seen (burned cards count as unseen); each bet whose EV is
    above `min_ev` gets the `base` stake. Where a pair bet needs a main bet
    beside it (no-commission tables), a favourable pair bet with no favourable
    main bet is not placed."""

    name = "counter"
    kind = 14
    description = "Bet only when a bet's exact EV for the remaining cards is positive."
    Params = CounterParams
    uses_cards = True
    picks_one = True  # (bet, stake), or (SEVERAL, stake) with the stakes in `out`

    def encode_own(self) -> list[float]:
        mask = [0.0] * N_BETS
        for b in self.params.bets:
            mask[Bet(b).code] = 1.0
        return [self.params.base, self.params.min_ev, *mask]

    def main_bets(self) -> set[Bet]:
        return {Bet(b) for b in self.params.bets}

    k_reset = staticmethod(stateless_reset)
    k_decide = staticmethod(decide)
    k_update = staticmethod(stateless_update)

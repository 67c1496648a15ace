"""Exact-odds card counting: bet only when a bet's exact expected value, for
the cards not yet seen, is positive."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.errors import StrategyError
from backtest.rules import Bet
from strategies._common import stateless_reset, stateless_update
from strategies.base import N_BETS, P_OWN, P_PAIRS_ALONE, Builtin
from strategies.params import CommonParams, param

BASE = P_OWN
MIN_EV = P_OWN + 1
MASK = P_OWN + 2
_TIE, _PLAYER_PAIR, _BANKER_PAIR = Bet.TIE.code, Bet.PLAYER_PAIR.code, Bet.BANKER_PAIR.code


@dataclass(frozen=True)
class CounterParams(CommonParams):
    base: float = param(10.0, "the stake on each favourable bet, in currency",
                        min=0, exclusive_min=True)
    min_ev: float = param(0.0, "bet only when the expected value per unit is above this")
    bets: list[str] = param(["player", "banker", "tie", "player_pair", "banker_pair"],
                            "the bets considered (add dragon7 and panda8 at an EZ table)")

    def validate(self, path: str) -> None:
        names = [b.value for b in Bet]
        if not self.bets:
            raise StrategyError(f"{path}.bets: name at least one bet")
        for i, b in enumerate(self.bets):
            if b not in names:
                raise StrategyError(f"{path}.bets[{i}]: unknown bet {b!r}; bets are {', '.join(names)}")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate("params")


def _counter_decide(p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray,
                    hist: np.ndarray, evs: np.ndarray, out: np.ndarray) -> None:
    main = False
    for b in range(N_BETS):
        if p[MASK + b] == 1.0 and evs[b] > p[MIN_EV]:
            out[b] = p[BASE]
            main = main or b <= _TIE
    if not main and p[P_PAIRS_ALONE] == 0.0:   # a pair bet the table takes only beside one
        out[_PLAYER_PAIR] = 0.0
        out[_BANKER_PAIR] = 0.0


class ExactCounter(Builtin):
    """Before each hand, the exact EV of every considered bet is computed for
    the cards not yet seen (burned cards count as unseen); each bet whose EV is
    above `min_ev` gets the `base` stake. Where a pair bet needs a main bet
    beside it (no-commission tables), a favourable pair bet with no favourable
    main bet is not placed."""

    name = "counter"
    description = "Bet only when a bet's exact EV for the remaining cards is positive."
    kind = 14
    Params = CounterParams
    uses_cards = True

    def encode_own(self) -> list[float]:
        mask = [0.0] * N_BETS
        for b in self.params.bets:
            mask[Bet(b).code] = 1.0
        return [self.params.base, self.params.min_ev, *mask]

    def main_bets(self) -> set[Bet]:
        return {Bet(b) for b in self.params.bets}

    k_reset = staticmethod(stateless_reset)
    k_decide = staticmethod(_counter_decide)
    k_update = staticmethod(stateless_update)

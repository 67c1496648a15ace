"""What the exact odds count, and the tableau both their paths enumerate.

The events of the first six cards (`Event`), the indices of the compiled
event and payout arrays, and the drawing rules as tables (`STAGE`,
`BANKER_DRAWS`, built from `rules.player_draws` and `rules.banker_draws`).
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np

from backtest.core.errors import RulesError
from backtest.core.rules import Bet, banker_draws, is_natural, player_draws

#: cards a hand may need; a composition with fewer has no exact odds here
HAND_CARDS = 6


class Event(StrEnum):
    """What the outcome table counts (for the first six cards of the shoe)."""

    PLAYER = "player"  # Player wins
    BANKER = "banker"  # Banker wins
    TIE = "tie"
    BANKER_SIX_TWO_CARD = "banker_six_two_card"  # Banker wins with a two-card 6
    BANKER_SIX_THREE_CARD = "banker_six_three_card"  # Banker wins with a three-card 6
    BANKER_THREE_CARD_SEVEN = "banker_three_card_seven"  # Banker wins with a three-card 7
    PLAYER_THREE_CARD_EIGHT = "player_three_card_eight"  # Player wins with a three-card 8
    PLAYER_NATURAL_8 = "player_natural_8"
    PLAYER_NATURAL_9 = "player_natural_9"
    BANKER_NATURAL_8 = "banker_natural_8"
    BANKER_NATURAL_9 = "banker_natural_9"
    NATURAL = "natural"  # either side has a natural
    BANKER_SIX = "banker_six"  # Banker wins with a 6 (2 or 3 cards)
    PLAYER_PAIR = "player_pair"
    BANKER_PAIR = "banker_pair"
    EITHER_PAIR = "either_pair"
    BOTH_PAIRS = "both_pairs"

    @property
    def code(self) -> int:
        """Index of the event in event arrays (the order of this enum)."""
        return list(Event).index(self)


# Indices into the compiled event array: the first twelve members of Event,
# in its order (numba needs plain integer constants).
E_PLAYER, E_BANKER, E_TIE, E_B6_2, E_B6_3, E_B7_3, E_P8_3 = range(7)
E_PN8, E_PN9, E_BN8, E_BN9, E_NATURAL = range(7, 12)
N_DEAL_EVENTS = 12

# Indices of `payout_vector`: net payout per unit of each kind of win; NaN = not offered.
PAY_PLAYER, PAY_BANKER, PAY_BANKER_SIX, PAY_BANKER_THREE_CARD_SEVEN = range(4)
PAY_TIE, PAY_PLAYER_PAIR, PAY_BANKER_PAIR, PAY_DRAGON_7, PAY_PANDA_8 = range(4, 9)
N_PAYOUTS = 9
N_BETS = len(Bet)
#: what a counter keeps beside the EVs before a hand (`ev_fill_ahead`'s
#: `kept`, a row of N_KEPT a hand), for the variance of its stakes: from
#: ROW_KINDS the chance of each of the winner's `N_KINDS` kinds
#: (`settlement.WINNER_ATOMS`); at ROW_PAIRS the chances of a Player pair (as
#: of a Banker pair) and of both; from ROW_CROSS the chance of each kind with
#: a Player pair, then with a Banker pair (`moments`, worked out for a hand
#: that stakes a pair bet beside a main bet). NaN where not worked out. Apart
#: from the EVs' rows, which a counter reads on every hand.
N_KINDS = 6
ROW_KINDS = 0
ROW_PAIRS = ROW_KINDS + N_KINDS
ROW_CROSS = ROW_PAIRS + 2
N_KEPT = ROW_CROSS + 2 * N_KINDS
# Positions of the bets in `ev_array`'s result (the order of Bet).
B_PLAYER, B_BANKER, B_TIE = Bet.PLAYER.code, Bet.BANKER.code, Bet.TIE.code
B_PLAYER_PAIR, B_BANKER_PAIR = Bet.PLAYER_PAIR.code, Bet.BANKER_PAIR.code
B_DRAGON_7, B_PANDA_8 = Bet.DRAGON_7.code, Bet.PANDA_8.code


# --- the tableau as tables ----------------------------------------------------------


def stage_table() -> np.ndarray:
    """STAGE[p2, b2]: 0 both stand, 1 only the Banker draws, 2 the Player draws
    (the Banker then follows `BANKER_DRAWS`). From the rules functions."""
    stage = np.zeros((10, 10), dtype=np.int64)
    for p2 in range(10):
        for b2 in range(10):
            if is_natural(p2) or is_natural(b2):
                continue
            if player_draws(p2):
                stage[p2, b2] = 2
            elif banker_draws(b2, None):
                stage[p2, b2] = 1
    return stage


STAGE = stage_table()
#: BANKER_DRAWS[b2, v]: the Banker draws on b2 after a Player's third card of value v
BANKER_DRAWS = np.array(
    [[banker_draws(b2, v) for v in range(10)] for b2 in range(10)], dtype=np.bool_
)


def check_cards_left(n: int) -> None:
    if n == 0:
        raise RulesError("the shoe is empty: a hand needs up to 6 cards")
    if n < HAND_CARDS:
        raise RulesError(
            f"only {n} card{'s' if n != 1 else ''} left in the shoe: exact odds "
            f"need at least {HAND_CARDS} (a hand may use six)"
        )

"""What the exact odds count, and the tableau both their paths enumerate.

The events of the first six cards (`Event`), the layout of the compiled
event arrays and payout matrix, and the drawing rules as tables (`STAGE`,
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

# The payout matrix (`pricing.payout_vector`, flat: row r at r * P_ROW, so
# that compiled code takes it as the one float array it always took): a row a
# bet, holding the bet's net per unit on each chance the compiled path works
# out (NaN for a chance the bet does not read), then at P_LOSS the chance of
# losing (a column, or -1: one less every chance the row reads) and at
# P_FAMILY what the bet reads (F_*; NaN for a bet not offered); the last row's
# first entry is the bit mask of the deal events to count
# (`pricing.wanted_events`), its second 1 where a bet reads both pairs. The
# chances: the Banker's wins with no special total, with a 6, with a
# three-card 7; the Player's wins with no special total, with a three-card 8;
# every Player win, every Banker win, a tie (the winner's columns, in the
# order their terms are summed); then a Player pair, a Banker pair, both, a
# Player pair alone, a Banker pair alone, neither (the pairs' columns).
Q_BANKER_PLAIN, Q_BANKER_SIX, Q_BANKER_SEVEN, Q_PLAYER_PLAIN, Q_PLAYER_EIGHT = range(5)
Q_PLAYER_WINS, Q_BANKER_WINS, Q_TIE = range(5, 8)
Q_PLAYER_PAIR, Q_BANKER_PAIR, Q_BOTH_PAIRS = range(8, 11)
Q_PLAYER_PAIR_ONLY, Q_BANKER_PAIR_ONLY, Q_NO_PAIR = range(11, 14)
N_Q = 14
P_LOSS, P_FAMILY = N_Q, N_Q + 1
#: what a bet's row reads: the winner's kind, one pair (its chance a closed
#: form in two numbers), or both pairs together
F_WINNER, F_PAIR, F_PAIRS = 0.0, 1.0, 2.0
N_BETS = len(Bet)
P_WANTED = N_BETS  # the row of the deal events to count
P_ROW = N_Q + 2
#: the payout matrix's rows and columns, and its size as the flat vector
PAYOUT_SHAPE = (N_BETS + 1, P_ROW)
N_PAYOUTS = (N_BETS + 1) * P_ROW
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

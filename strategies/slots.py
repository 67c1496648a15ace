"""The layout of the arrays a compiled strategy reads and writes: the context
of the coming hand, the head of every parameter vector, the state's sizes, and
the codes of the common parameters. Every per-bet part follows `Bet` (one
entry a bet, at its `Bet.code`), and which bets combine is `rules.combination`'s."""

from __future__ import annotations

from backtest.core import rules
from backtest.core.rules import Bet
from backtest.jit.lazy_jit import jit

N_BETS = len(Bet)

#: `rules.combination`, for compiled code (the loop's and the strategies')
combination = jit(rules.combination)

# layout of the context array a compiled strategy reads
CTX_BANKROLL = 0  # bankroll before the hand, in currency units
CTX_HAND = 1  # number of the coming hand in its shoe (1-based)
CTX_SESSION_HAND = 2  # hands already dealt in this session
CTX_LAST_NET = 3  # the seat's net on its previous hand (0 at the start)
CTX_SHOE = 4  # shoe number within the session (0-based)
CTX_INDEX = 5  # the hand's index in the run's columns (what a plain-Python View reads)
CTX_SHOE_START = 6  # the index of its shoe's first hand in this session (the View's too)
CTX_SIZE = 8

# layout of the head of every built-in strategy's parameter vector
P_ON_MAX = 0  # 0 reset, 1 cap
P_ON_BANKROLL = 1  # 0 stop, 1 all-in
P_ON_PUSH = 2  # 0 stand, 1 reset
P_SIDE = 3  # P_SIDE + bet.code: the side-bet stake on each bet
P_PAIRS_ALONE = P_SIDE + N_BETS  # 1 when the table takes a pair bet with no main bet (`at_table`)
P_OWN = P_PAIRS_ALONE + 1  # first strategy-specific slot

#: the bet a `picks_one` strategy's decide returns when it stakes more than
#: one bet on the hand: it has then written every stake in `out`
SEVERAL = -2
#: what a plain-Python strategy's functions answer when its code raised
#: (the loop stops, and the engine raises the error it kept)
RAISED = -3

STATE_FLOATS = 520
STATE_INTS = 8

ON_MAX = {"reset": 0, "cap": 1}
ON_BANKROLL = {"stop": 0, "all-in": 1}
ON_PUSH = {"stand": 0, "reset": 1}

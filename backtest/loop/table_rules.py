"""The table's rules over a seat's stakes, as the session loop applies them
for every strategy: stakes to whole cents within the limits (`limits`), the
table maximum, the table's own rules and the bankroll (`place`), the stop
rules, and each session's seed; with the codes they answer in and the
session statistics' columns. Inlined into the loop."""

from __future__ import annotations

import numpy as np

from backtest.core.rules import TAKEN
from backtest.jit.lazy_jit import kernel
from backtest.shoes import rng
from strategies.base import N_BETS
from strategies.slots import combination

# how a session ended
ENDED_LIMIT, ENDED_RUIN, ENDED_STOP_LOSS, ENDED_WIN_GOAL = 0, 1, 2, 3
ENDED_BY = ("limit", "ruin", "stop-loss", "win-goal")

# columns of the per-session statistics (int64 ticks and counts)
(
    S_HANDS,
    S_BETS,
    S_WAGERED,
    S_NET,
    S_FINAL,
    S_PEAK,
    S_DRAWDOWN,
    S_LOSING_STREAK,
    S_LARGEST,
    S_MAX_HITS,
    S_BANKROLL_STOPS,
    S_ENDED,
    S_WINS,
    S_LOSSES,
    S_PUSHES,
    S_CUR_STREAK,
    S_BELOW_MIN,
) = range(17)
N_STATS = 17
STAT_NAMES = (
    "hands",
    "bets",
    "wagered",
    "net",
    "final_bankroll",
    "peak_bankroll",
    "max_drawdown",
    "longest_losing_streak",
    "largest_stake",
    "max_hits",
    "bankroll_stops",
    "ended_by",
    "wins",
    "losses",
    "pushes",
    "",
    "raised_to_min",
)

# place() results
(
    PLACE_OK,
    PLACE_RUIN,
    PLACE_BAD_STAKE,
    PLACE_FORBIDDEN,
    PLACE_NOT_SETTLED,
    PLACE_UNDECLARED,
    PLACE_RAISED,  # a plain-Python strategy's code raised: the engine has its error
) = range(7)
PLACE_ERRORS = {
    PLACE_BAD_STAKE: "asked for a negative or non-numeric stake",
    PLACE_UNDECLARED: "staked a bet it does not declare (main_bets() and side_bets say the bets "
    "it may place)",
    PLACE_FORBIDDEN: "placed a combination of bets the table does not take",
    PLACE_NOT_SETTLED: "placed a bet this table or this recorded shoe cannot settle",
}

#: the largest stake, in cents: a larger one (infinity too) is this
MAX_CENTS = 2**52
_NEVER = 2**62  # a bankroll no session reaches


@kernel(inline=True, nrt=False)
def limits(
    out: np.ndarray,
    side_c: np.ndarray,
    cents: np.ndarray,
    min_c: np.ndarray,
    max_c: np.ndarray,
    active: np.ndarray,
) -> tuple[int, int]:
    """The strategy's stakes (currency, in `out`) to whole cents in `cents`, with
    the side bets (`side_c`, cents) beside a main bet, raised to the table
    minimum. Only the bets in `active` (those the strategy can place) are read
    or written.

    Returns (code, stakes raised to the minimum): code is PLACE_BAD_STAKE for
    a negative or NaN stake, else PLACE_OK, plus 10 if a stake is over the
    table maximum.
    """
    any_bet = False
    for a in range(active.shape[0]):
        b = active[a]
        x = out[b]
        if not (x >= 0.0):
            return PLACE_BAD_STAKE, 0
        c = np.floor(x * 100.0 + 1e-6)
        cents[b] = MAX_CENTS if c > MAX_CENTS else np.int64(c)
        if cents[b] > 0:
            any_bet = True
    over = 0
    below = 0
    for a in range(active.shape[0]):
        b = active[a]
        if any_bet:
            cents[b] += side_c[b]
        c = cents[b]
        if c > 0:
            if c < min_c[b]:
                cents[b] = min_c[b]
                below += 1
            if cents[b] > max_c[b]:
                over = 1
    return 10 * over, below


@kernel(inline=True, nrt=False)
def place(
    all_in: bool,
    cents: np.ndarray,
    min_c: np.ndarray,
    max_c: np.ndarray,
    bankroll: int,
    den: int,
    offered: np.ndarray,
    pb_together: bool,
    pairs_need_main: bool,
    active: np.ndarray,
) -> tuple[int, int]:
    """Finish placing the stakes in `cents` (after `limits` and any restart of
    the progression): cap at the table maximum, check the table's rules, and
    hold the total to the bankroll (`all_in`: scale down to what is left).
    Returns (PLACE_* code, 1 if the bankroll stopped the stakes else 0)."""
    total = 0
    placed = 0  # the bets placed, as a `rules.bet_mask`
    for a in range(active.shape[0]):
        b = active[a]
        if cents[b] > max_c[b]:
            cents[b] = max_c[b]
        if cents[b] > 0:
            if not offered[b]:
                return PLACE_NOT_SETTLED, 0
            placed |= 1 << int(b)
        total += cents[b]
    if combination(placed, pb_together, pairs_need_main) != TAKEN:
        return PLACE_FORBIDDEN, 0
    if total * den <= bankroll:
        return PLACE_OK, 0
    if not all_in:
        return PLACE_RUIN, 1
    # all-in: scale every stake down to what is left, whole cents
    left = bankroll // den
    placed = 0
    for a in range(active.shape[0]):
        b = active[a]
        cents[b] = cents[b] * left // total
        placed += cents[b]
    if placed == 0:
        return PLACE_RUIN, 1
    for a in range(active.shape[0]):
        b = active[a]
        if 0 < cents[b] < min_c[b]:
            return PLACE_RUIN, 1
    return PLACE_OK, 1


@kernel(inline=True, nrt=False)
def short_path_bounds(
    min_c: np.ndarray,
    max_c: np.ndarray,
    offered: np.ndarray,
    pairs_need_main: bool,
    sides: int,
    fast_c: np.ndarray,
) -> None:
    """The common hand's bounds on its one stake, in cents, by bet, into
    `fast_c` (2, N_BETS): from fast_c[0] (the minimum, at least one cent) to
    fast_c[1] (the maximum; 0 for a bet that never takes the short path: one
    not offered, one the table takes only beside another, as a pair bet that
    needs a main bet, any bet of a seat with `sides` side bets). Both loops
    ask this."""
    for b in range(N_BETS):
        fast_c[0, b] = max(min_c[b], 1)
        alone = offered[b] and sides == 0 and combination(1 << b, True, pairs_need_main) == TAKEN
        fast_c[1, b] = max_c[b] if alone else 0


@kernel(inline=True, nrt=False)
def plays_on(ruin_below: int, stop_loss: int, win_goal: int, bankroll0: int) -> tuple[int, int]:
    """The stop rules as one interval of bankrolls that play on, [lo, hi):
    below lo is ruin or the stop-loss, from hi the win goal (both loops ask this)."""
    lo = ruin_below if stop_loss < 0 else max(ruin_below, bankroll0 - stop_loss + 1)
    hi = bankroll0 + win_goal if win_goal >= 0 else _NEVER
    return lo, hi


@kernel(inline=True, nrt=False)
def ended_by(final: int, ruin_below: int, stop_loss: int, bankroll0: int) -> int:
    """Why a session that left the bankrolls that play on ended: ruin before
    the stop-loss, the stop-loss before the win goal (both loops ask this)."""
    if final < ruin_below:
        return ENDED_RUIN
    if stop_loss >= 0 and bankroll0 - final >= stop_loss:
        return ENDED_STOP_LOSS
    return ENDED_WIN_GOAL


@kernel(inline=True, nrt=False)
def session_seed(seat_key: np.uint64, session_id: int, state: np.ndarray) -> int:
    """The random seed a strategy gets for one session (from the seat's key);
    `state` is four words of scratch."""
    rng.seed_state(seat_key, np.uint64(session_id), state)
    # signed in compiled code (see rng.bounded); mypy cannot see numba's int64 -> int
    return np.int64(state[0] >> np.uint64(1))  # type: ignore[return-value]

"""The compiled path's prices: each bet's EV from the chances of what a hand
shows, with its nets on them read from the settlement (`payout_vector`, a
matrix built once from `Rules`), so that a new bet or payout is priced here
without a formula of its own.

A bet's row holds its net per unit on each chance it reads (the layout is
`events`' Q_* columns): the chances it wins or pushes on, and the chance it
loses. A side (every Player win, or every Banker win) on whose kinds the bet
is paid alike is read as that side's one chance; a bet that loses on
exactly one side's wins reads that side's chance as its loss, any other the
chance of every hand it is not paid on (one less the chances it reads). So
every EV is sum(net * chance) - loss, summed in the columns' order: the
same double as the bets' own formulas gave (Player p - b, Banker
0.95 b - p, Tie 8 t - (1 - t), ...).

>>> from backtest.core.rules import Bet, Rules
>>> m = payout_vector(Rules.preset("no-commission")).reshape(PAYOUT_SHAPE)
>>> [float(x) for x in m[Bet.BANKER.code, :Q_PLAYER_PLAIN]], int(m[Bet.BANKER.code, P_LOSS])
([1.0, 0.5, 1.0], 5)
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from backtest.core.rules import Bet, Rules
from backtest.jit.numba_cache import njit_plain
from backtest.odds.covariance import joint_nets
from backtest.odds.deals import (
    K_BANKER,
    K_BANKER_SIX,
    K_BANKER_THREE_CARD_SEVEN,
    K_PLAYER,
    K_PLAYER_THREE_CARD_EIGHT,
    K_TIE,
    N_WINNER_KINDS,
)
from backtest.odds.events import (
    F_PAIR,
    F_PAIRS,
    F_WINNER,
    HAND_CARDS,
    N_BETS,
    N_Q,
    P_FAMILY,
    P_LOSS,
    P_ROW,
    P_WANTED,
    PAYOUT_SHAPE,
    Q_BANKER_PAIR,
    Q_BANKER_PAIR_ONLY,
    Q_BANKER_PLAIN,
    Q_BANKER_SEVEN,
    Q_BANKER_SIX,
    Q_BANKER_WINS,
    Q_BOTH_PAIRS,
    Q_NO_PAIR,
    Q_PLAYER_EIGHT,
    Q_PLAYER_PAIR,
    Q_PLAYER_PAIR_ONLY,
    Q_PLAYER_PLAIN,
    Q_PLAYER_WINS,
    Q_TIE,
)
from backtest.odds.polynomial import _C_B6, _C_B7_3, _C_BANKER, _C_P8_3, _C_PLAYER

LOSE = Fraction(-1)

#: the winner's two sides: the column of the side's every win, and its kinds
#: with their own columns (the plain win first) and the deal event that
#: counts each special one
_SIDES = (
    (
        Q_PLAYER_WINS,
        ((K_PLAYER, Q_PLAYER_PLAIN, -1), (K_PLAYER_THREE_CARD_EIGHT, Q_PLAYER_EIGHT, _C_P8_3)),
    ),
    (
        Q_BANKER_WINS,
        (
            (K_BANKER, Q_BANKER_PLAIN, -1),
            (K_BANKER_SIX, Q_BANKER_SIX, _C_B6),
            (K_BANKER_THREE_CARD_SEVEN, Q_BANKER_SEVEN, _C_B7_3),
        ),
    ),
)


def payout_vector(rules: Rules) -> np.ndarray:
    """The payout matrix of `rules` as the compiled path reads it: float64,
    flat (`events.N_PAYOUTS`; `reshape(PAYOUT_SHAPE)` gives the rows): a row
    a bet, its net on each chance it reads (see the module's doc and
    `events`' Q_*, P_*); NaN for a bet the table does not offer."""
    return payout_matrix_of(rules).copy()


@lru_cache(maxsize=64)
def payout_matrix_of(rules: Rules) -> np.ndarray:
    out = np.full(PAYOUT_SHAPE, math.nan)
    wanted = (1 << _C_PLAYER) | (1 << _C_BANKER)  # a tie is every other deal
    for bet, nets in zip(Bet, joint_nets(rules), strict=True):
        if rules.payout(bet) is None:
            continue
        # nets[4 * kind + 2 * player pair + banker pair] (`OutcomeTable.joint`)
        by_kind = [nets[4 * k : 4 * k + 4] for k in range(N_WINNER_KINDS)]
        by_pairs = [nets[s::4] for s in range(4)]
        if all(len(set(row)) == 1 for row in by_kind):
            wanted |= _winner_row(out[bet.code], [row[0] for row in by_kind])
        elif all(len(set(row)) == 1 for row in by_pairs):
            _pairs_row(out[bet.code], [row[0] for row in by_pairs])
        else:
            raise ValueError(f"the {bet} bet reads the winner and a pair together: not priced here")
    out[P_WANTED, 0] = wanted
    out[P_WANTED, 1] = (out[:P_WANTED, P_FAMILY] == F_PAIRS).any()  # a bet on both pairs
    return out.ravel()


def _winner_row(row: np.ndarray, nets: list[Fraction]) -> int:
    """Fill a bet's row from its net on each of the winner's kinds; return
    the deal events it needs counted: a special kind it pays apart from its
    side's plain win (one not counted is in the plain win's count)."""
    wanted = 0
    lost = {k for k, net in enumerate(nets) if net == LOSE}
    for whole, kinds in _SIDES:
        side = {nets[k] for k, _, _ in kinds}
        if len(side) == 1:
            if nets[kinds[0][0]] != LOSE:
                row[whole] = float(nets[kinds[0][0]])
            if lost == {k for k, _, _ in kinds}:
                row[P_LOSS] = whole
            continue
        plain = nets[kinds[0][0]]
        for k, column, event in kinds:
            if nets[k] != LOSE:
                row[column] = float(nets[k])
            if event >= 0 and nets[k] != plain:
                wanted |= 1 << event
    if nets[K_TIE] != LOSE:
        row[Q_TIE] = float(nets[K_TIE])
    if math.isnan(row[P_LOSS]):
        row[P_LOSS] = -1
    row[P_FAMILY] = F_WINNER
    return wanted


def _pairs_row(row: np.ndarray, nets: list[Fraction]) -> None:
    """Fill a bet's row from its net on each state of the pairs (neither,
    a Banker pair alone, a Player pair alone, both)."""
    neither, banker, player, both = nets
    row[P_LOSS] = -1
    if neither == banker == LOSE and player == both:
        row[Q_PLAYER_PAIR] = float(both)
        row[P_FAMILY] = F_PAIR
    elif neither == player == LOSE and banker == both:
        row[Q_BANKER_PAIR] = float(both)
        row[P_FAMILY] = F_PAIR
    else:
        for column, net in (
            (Q_BOTH_PAIRS, both),
            (Q_PLAYER_PAIR_ONLY, player),
            (Q_BANKER_PAIR_ONLY, banker),
            (Q_NO_PAIR, neither),
        ):
            if net != LOSE:
                row[column] = float(net)
        row[P_FAMILY] = F_PAIRS


# --- the compiled prices --------------------------------------------------------------


@njit_plain(inline="always")
def wanted_events(payouts):  # type: ignore[no-untyped-def]
    """The deal events (bit mask, `fast.ev_events`') the table's bets need:
    Player and Banker wins always (a tie is every other deal), a special
    win only where a bet pays it apart from the plain win."""
    return int(payouts[P_WANTED * P_ROW])


@njit_plain(inline="always")
def price(payouts, b, q, lo, hi, out):  # type: ignore[no-untyped-def]
    """out[b]: bet b's EV from the chances q of the columns lo .. hi - 1
    (q[j - lo] for column j): its nets times the chances it reads, in the
    columns' order, less its chance of losing."""
    row = b * P_ROW
    acc = 0.0
    held = 0.0
    for j in range(lo, hi):
        w = payouts[row + j]
        if not np.isnan(w):
            x = q[j - lo]
            acc += w * x
            held += x
    lose = payouts[row + P_LOSS]
    if lose >= 0.0:
        out[b] = acc - q[int(lose) - lo]
    else:
        out[b] = acc - (1.0 - held)


@njit_plain(inline="always")
def price_deals(e, n, payouts, out):  # type: ignore[no-untyped-def]
    """The EV of every bet that reads the winner, into `out`, from the deal
    events `e` (as `fast.ev_events` counts them) of `n` cards."""
    deals = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    scale = 1.0 / deals
    p, b = e[_C_PLAYER] * scale, e[_C_BANKER] * scale
    t = (deals - e[_C_PLAYER] - e[_C_BANKER]) * scale
    six, seven, p83 = e[_C_B6] * scale, e[_C_B7_3] * scale, e[_C_P8_3] * scale
    q = (b - six - seven, six, seven, p - p83, p83, p, b, t)
    for bet in range(N_BETS):
        if payouts[bet * P_ROW + P_FAMILY] == F_WINNER:
            price(payouts, bet, q, Q_BANKER_PLAIN, Q_PLAYER_PAIR, out)


@njit_plain(inline="always")
def pair_evs(same, n, payouts, out):  # type: ignore[no-untyped-def]
    """The EV of every bet that reads one pair, from two numbers a counting
    loop can keep as it takes cards out: `n` the cards left and `same` the
    sum over ranks of c (c - 1) for the c cards of each (ordered pairs of one
    rank). Writes those bets' places in `out` (NaN when fewer than six cards
    are left) and nothing else: the caller has NaN in every other bet's
    place. Integers below 2**53 give the same doubles as the sums over the
    counts, so both paths agree to the bit."""
    if n < HAND_CARDS:
        for bet in range(N_BETS):
            if payouts[bet * P_ROW + P_FAMILY] == F_PAIR:
                out[bet] = np.nan
        return
    pair = same / (n * (n - 1.0))
    q = (pair, pair)
    for bet in range(N_BETS):
        if payouts[bet * P_ROW + P_FAMILY] == F_PAIR:
            price(payouts, bet, q, Q_PLAYER_PAIR, Q_BOTH_PAIRS, out)


@njit_plain(inline="always")
def pair_chances(ranks, n):  # type: ignore[no-untyped-def]
    """(the chance of a Player pair, which is a Banker pair's, the chance of
    both) for rank counts `ranks` (index 1..13) of `n` >= 4 cards: from the
    ordered pairs of one rank, sum c(c-1), and for both pairs the ordered
    four of two ranks or of one."""
    s2 = sq = q4 = 0.0
    for r in range(1, 14):
        c = float(ranks[r])
        s2 += c * (c - 1.0)
        sq += (c * (c - 1.0)) ** 2
        q4 += c * (c - 1.0) * (c - 2.0) * (c - 3.0)
    one = s2 / (n * (n - 1.0))
    both = (s2 * s2 - sq + q4) / (n * (n - 1.0) * (n - 2.0) * (n - 3.0))
    return one, both


@njit_plain(inline="always")
def pairs_evs(ranks, n, payouts, out):  # type: ignore[no-untyped-def]
    """The EV of every bet that reads both pairs (none at the tables today),
    into `out`, for rank counts `ranks` (index 1..13) of `n` >= 6 cards."""
    if payouts[P_WANTED * P_ROW + 1] != 1.0:  # no such bet (`payout_matrix_of`)
        return
    one, both = pair_chances(ranks, n)
    q = (one, one, both, one - both, one - both, 1.0 - 2.0 * one + both)
    for bet in range(N_BETS):
        if payouts[bet * P_ROW + P_FAMILY] == F_PAIRS:
            price(payouts, bet, q, Q_PLAYER_PAIR, N_Q, out)

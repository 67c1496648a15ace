"""The fast path, for card counting: each bet's EV as a float, from each
event's count as a polynomial in the counts (`polynomial`): `ev_fill`,
compiled, allocation-free (`ahead.ev_fill_ahead` for several hands at
once); `bet_evs` and `ev_array` from Python."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numba import njit

from backtest.core import settlement
from backtest.core.rules import Bet, Rules
from backtest.core.settlement import E
from backtest.jit import numba_cache
from backtest.odds.compositions import check_counts
from backtest.odds.events import (
    B_BANKER,
    B_BANKER_PAIR,
    B_DRAGON_7,
    B_PANDA_8,
    B_PLAYER,
    B_PLAYER_PAIR,
    B_TIE,
    HAND_CARDS,
    N_BETS,
    N_PAYOUTS,
    PAY_BANKER,
    PAY_BANKER_PAIR,
    PAY_BANKER_SIX,
    PAY_BANKER_THREE_CARD_SEVEN,
    PAY_DRAGON_7,
    PAY_PANDA_8,
    PAY_PLAYER,
    PAY_PLAYER_PAIR,
    PAY_TIE,
    check_cards_left,
)
from backtest.odds.polynomial import (  # noqa: F401 (ev_work and the sizes, for the package)
    _C_B6,
    _C_B7_3,
    _C_BANKER,
    _C_P8_3,
    _C_PLAYER,
    _EV_FACTORS,
    _EV_OUT,
    _EV_SUMS,
    _FIRST_HAND,
    _LEVEL,
    _N_COLUMNS,
    _N_SETS,
    ALL_EVENTS,
    EV_WORK,
    EV_WORK_AHEAD,
    EXACT_CARDS,
    ev_work,
)

numba_cache.install()  # before this module's functions are decorated for numba's cache

# --- the fast path: floats, compiled ---------------------------------------------------


def payout_vector(rules: Rules) -> np.ndarray:
    """The payouts of `rules` as the float64 array `ev_array` reads (see PAY_*).

    NaN marks a bet the table does not offer. PAY_BANKER_SIX is the payout of
    a Banker win with 6, PAY_BANKER_THREE_CARD_SEVEN that of a Banker win
    with a three-card 7 (0 where it pushes).
    """
    return _payout_vector(rules).copy()


#: the hand each payout is read on: (the bet, the events the hand shows)
_PAID_ON = {
    PAY_PLAYER: (Bet.PLAYER, (E.PLAYER_WINS,)),
    PAY_BANKER: (Bet.BANKER, (E.BANKER_WINS,)),
    PAY_BANKER_SIX: (Bet.BANKER, (E.BANKER_WINS, E.BANKER_SIX)),
    PAY_BANKER_THREE_CARD_SEVEN: (Bet.BANKER, (E.BANKER_WINS, E.BANKER_THREE_CARD_SEVEN)),
    PAY_TIE: (Bet.TIE, (E.TIE,)),
    PAY_PLAYER_PAIR: (Bet.PLAYER_PAIR, (E.PLAYER_PAIR,)),
    PAY_BANKER_PAIR: (Bet.BANKER_PAIR, (E.BANKER_PAIR,)),
    PAY_DRAGON_7: (Bet.DRAGON_7, (E.BANKER_WINS, E.BANKER_THREE_CARD_SEVEN)),
    PAY_PANDA_8: (Bet.PANDA_8, (E.PLAYER_WINS, E.PLAYER_THREE_CARD_EIGHT)),
}


@lru_cache(maxsize=64)
def _payout_vector(rules: Rules) -> np.ndarray:
    """Each payout as the settlement gives it on its hand (`_PAID_ON`)."""
    out = np.full(N_PAYOUTS, math.nan)
    for k, (bet, shown) in _PAID_ON.items():
        if settlement.terms(bet, rules):
            out[k] = float(settlement.net_on(bet, shown, rules))
    return out


@njit(cache=True, _nrt=False, fastmath={"reassoc"})  # type: ignore[call-overload]
def _sums_exact(coef, f, out, wanted, top=6):  # type: ignore[no-untyped-def]
    """out[event, size - 4]: the sum of coef[event] * f over the multisets of
    that size (4 to `top`), for the events in the bit mask `wanted`, in any
    order (vectorised): only for sums that are exact."""
    for e in range(_N_COLUMNS):
        if not (wanted >> e) & 1:
            continue
        row = coef[e]
        for size in range(4, top + 1):
            acc = 0.0
            for i in range(_LEVEL[size] - _FIRST_HAND, _LEVEL[size + 1] - _FIRST_HAND):
                acc += row[i] * f[_FIRST_HAND + i]
            out[e, size - 4] = acc


# The same sums in source order, for shoes of more than EXACT_CARDS cards, so
# that their rounding does not depend on the machine's vector width. A
# separate function because numba's cache does not key on compile flags.
@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def _sums_ordered(coef, f, out, wanted):  # type: ignore[no-untyped-def]
    for e in range(_N_COLUMNS):
        if not (wanted >> e) & 1:
            continue
        for size in range(4, 7):
            acc = 0.0
            for i in range(_LEVEL[size], _LEVEL[size + 1]):
                acc += coef[e, i - _FIRST_HAND] * f[i]
            out[e, size - 4] = acc


_PLAYER_BANKER = (1 << _C_PLAYER) | (1 << _C_BANKER)


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def _sums_six_player_banker(coef, f, g, parent, factor, out):  # type: ignore[no-untyped-def]
    """`_sums_exact`'s sums of six values for Player and Banker, each product
    made here from its parent of five (f holds sizes up to 5) and added to
    both sums at once: only for sums that are exact, so that the four partial
    sums below (two products a step) give the same whole numbers in any
    order. Not vectorised: a vector loop gathers f[parent] and g[factor], and
    gathers are slow where microcode guards them (a 2.8 GHz Xeon: 23 us a
    call vectorised, against 9 us for the unfused sums)."""
    cp = coef[_C_PLAYER]
    cb = coef[_C_BANKER]
    p0 = p1 = b0 = b1 = 0.0
    i = np.uint64(_LEVEL[6])
    hi = np.uint64(_LEVEL[7])
    first = np.uint64(_FIRST_HAND)
    one = np.uint64(1)
    while i + one < hi:
        x = f[parent[i]] * g[factor[i]]
        y = f[parent[i + one]] * g[factor[i + one]]
        p0 += cp[i - first] * x
        b0 += cb[i - first] * x
        p1 += cp[i + one - first] * y
        b1 += cb[i + one - first] * y
        i += np.uint64(2)
    if i < hi:
        x = f[parent[i]] * g[factor[i]]
        p0 += cp[i - first] * x
        b0 += cb[i - first] * x
    out[_C_PLAYER, 2] = p0 + p1
    out[_C_BANKER, 2] = b0 + b1


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def ev_events(counts, nodes, coef, work, out, wanted):  # type: ignore[no-untyped-def]
    """The deal events the bets need, counted as ordered six-card draws (as
    `outcome_table` does) and returned as floats: Player, Banker, Tie, Banker
    wins with a 6, with a three-card 7, Player wins with a three-card 8.

    Exact (whole numbers) for up to `EXACT_CARDS` cards. Writes them into
    `out` (6): those in the bit mask `wanted` (bit i for out[i];
    `ALL_EVENTS` for all), 0 for the others. The caller checks that at
    least six cards are left. nodes, coef and work: from `ev_work`.
    """
    f = work[:_N_SETS]
    g = work[_EV_FACTORS:]
    for v in range(10):
        g[8 * v] = 0.0
    for r in range(1, 14):
        g[8 * (r if r < 10 else 0)] += counts[r]
    n = 0.0
    for v in range(10):
        n += g[8 * v]
        for j in range(1, 7):
            g[8 * v + j] = g[8 * v] - j
    # f[m] = prod over values of (c_v)_(k_v), parent before child
    f[0] = 1.0
    parent = nodes[0]
    factor = nodes[1]
    # Player and Banker alone (a commission table): the six-card products are
    # summed as they are made, not stored and read again (-24 % a call)
    fused = n <= EXACT_CARDS and wanted == _PLAYER_BANKER
    for size in range(1, 6 if fused else 7):
        for i in range(np.uint64(_LEVEL[size]), np.uint64(_LEVEL[size + 1])):
            f[i] = f[parent[i]] * g[factor[i]]
    by_size = work[_EV_SUMS:_EV_OUT].reshape((_N_COLUMNS, 3))
    if fused:
        _sums_exact(coef, f, by_size, wanted, 5)
        _sums_six_player_banker(coef, f, g, parent, factor, by_size)
    elif n <= EXACT_CARDS:
        _sums_exact(coef, f, by_size, wanted)
    else:
        _sums_ordered(coef, f, by_size, wanted)
    four = (n - 4.0) * (n - 5.0)
    five = n - 5.0
    for e in range(_N_COLUMNS):
        out[e] = 0.0
        if (wanted >> e) & 1:
            out[e] = by_size[e, 0] * four + by_size[e, 1] * five + by_size[e, 2]


def ev_array(counts: np.ndarray, payouts: np.ndarray) -> np.ndarray:
    """EV per unit staked of every bet, in `Bet` order (float64 array of N_BETS).

    counts: int64 rank counts, length 14 (index 0 unused); payouts: from
    `payout_vector`. A bet with a NaN payout gets NaN. It does not check its
    input (`bet_evs` does) and returns all NaN when fewer than 6 cards are
    left. Compiled code calls `ev_fill` instead.
    """
    out = np.full(N_BETS, np.nan)
    ev_fill(counts, payouts, out, *ev_work())
    return out


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def pair_counts(counts):  # type: ignore[no-untyped-def]
    """The two whole numbers `pair_evs` prices from, for rank counts `counts`:
    (the cards left, the ordered pairs of one rank among them)."""
    n = 0
    same = 0
    for r in range(1, 14):
        n += counts[r]
        same += counts[r] * (counts[r] - 1)
    return n, same


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def pair_evs(same, n, payouts, out):  # type: ignore[no-untyped-def]
    """`ev_fill` with `deals` false, from two numbers a counting loop can keep
    as it takes cards out: `n` the cards left and `same` the sum over ranks of
    c (c - 1) for the c cards of each (ordered pairs of one rank). Writes the
    pair bets' EVs into `out` (NaN when fewer than six cards are left) and
    nothing else: the caller has NaN in every other bet's place. Integers
    below 2**53 give the same doubles as the sums over the counts, so both
    paths agree to the bit."""
    if n < HAND_CARDS:
        out[B_PLAYER_PAIR] = out[B_BANKER_PAIR] = np.nan
        return
    pair = same / (n * (n - 1.0))
    out[B_PLAYER_PAIR] = payouts[PAY_PLAYER_PAIR] * pair - (1.0 - pair)
    out[B_BANKER_PAIR] = payouts[PAY_BANKER_PAIR] * pair - (1.0 - pair)


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def wanted_events(payouts):  # type: ignore[no-untyped-def]
    """The deal events (bit mask) the table's payouts need: Player and Banker
    wins always (a tie is every other deal), the special Banker and Player
    wins only where they pay differently or have a bet of their own."""
    wanted = (1 << _C_PLAYER) | (1 << _C_BANKER)
    if payouts[PAY_BANKER_SIX] != payouts[PAY_BANKER]:
        wanted |= 1 << _C_B6
    if payouts[PAY_BANKER_THREE_CARD_SEVEN] != payouts[PAY_BANKER] or not np.isnan(
        payouts[PAY_DRAGON_7]
    ):
        wanted |= 1 << _C_B7_3
    if not np.isnan(payouts[PAY_PANDA_8]):
        wanted |= 1 << _C_P8_3
    return wanted


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def price_deals(e, n, payouts, out):  # type: ignore[no-untyped-def]
    """Every bet's EV but the pairs', into `out`, from the deal events `e`
    (as `ev_events` counts them) of `n` cards."""
    deals = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    scale = 1.0 / deals
    p, b = e[_C_PLAYER] * scale, e[_C_BANKER] * scale
    t = (deals - e[_C_PLAYER] - e[_C_BANKER]) * scale
    six, seven, p83 = e[_C_B6] * scale, e[_C_B7_3] * scale, e[_C_P8_3] * scale
    out[B_PLAYER] = payouts[PAY_PLAYER] * p - b
    out[B_BANKER] = (
        payouts[PAY_BANKER] * (b - six - seven)
        + payouts[PAY_BANKER_SIX] * six
        + payouts[PAY_BANKER_THREE_CARD_SEVEN] * seven
        - p
    )
    out[B_TIE] = payouts[PAY_TIE] * t - (1.0 - t)
    out[B_DRAGON_7] = payouts[PAY_DRAGON_7] * seven - (1.0 - seven)
    out[B_PANDA_8] = payouts[PAY_PANDA_8] * p83 - (1.0 - p83)


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def ev_fill(counts, payouts, out, nodes, coef, work, deals=True):  # type: ignore[no-untyped-def]
    """`ev_array` without allocating, callable from compiled code: writes into
    `out` (N_BETS); nodes, coef and work come from `ev_work`.

    Counts only the events the table's payouts need (`wanted_events`). With
    `deals` false, only the pair bets' EVs, which need no deal counted (the
    others are NaN): a few operations instead of microseconds.
    """
    left, same = pair_counts(counts)
    n = float(left)
    for i in range(N_BETS):
        out[i] = np.nan
    pair_evs(float(same), n, payouts, out)
    if not deals or n < HAND_CARDS:
        return
    e = work[_EV_OUT:_EV_FACTORS]
    ev_events(counts, nodes, coef, work, e, wanted_events(payouts))
    price_deals(e, n, payouts, out)


def bet_evs(counts: Sequence[int] | np.ndarray, rules: Rules) -> dict[Bet, float]:
    """EV per unit staked of every bet `rules` offers, for a composition (floats).

    The card counter's path: checks the composition, then runs `ev_array`.

    >>> from backtest.odds import composition
    >>> evs = bet_evs(composition(8), Rules.preset("commission"))
    >>> round(evs[Bet.BANKER], 6), round(evs[Bet.TIE], 6)
    (-0.010579, -0.143596)
    """
    arr = check_counts(counts)
    check_cards_left(int(arr.sum()))
    evs = ev_array(arr, _payout_vector(rules))
    return {bet: float(evs[bet.code]) for bet in rules.offered_bets()}

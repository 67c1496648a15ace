"""The fast path, for card counting: each bet's EV as a float, from each
event's count as a polynomial in the counts (`polynomial`), priced by the
table's payout matrix (`pricing`): `ev_fill`, compiled, allocation-free
(`ahead.ev_fill_ahead` for several hands at once); `bet_evs` and
`ev_array` from Python."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from backtest.core.rules import Bet, Rules
from backtest.jit.numba_cache import njit_plain
from backtest.odds.compositions import check_counts
from backtest.odds.events import HAND_CARDS, N_BETS, check_cards_left
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
from backtest.odds.pricing import (  # noqa: F401 (payout_vector, for the package)
    pair_evs,
    pairs_evs,
    payout_matrix_of,
    payout_vector,
    price_deals,
    wanted_events,
)

# --- the fast path: floats, compiled ---------------------------------------------------


@njit_plain(fastmath={"reassoc"})
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
@njit_plain()
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


@njit_plain()
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


@njit_plain()
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


@njit_plain(inline="always")
def pair_counts(counts):  # type: ignore[no-untyped-def]
    """The two whole numbers `pair_evs` prices from, for rank counts `counts`:
    (the cards left, the ordered pairs of one rank among them)."""
    # (not literal zeros: inlined in the session loop, a literal would have
    # numba compile the counter's functions for it, then again for int64)
    n = np.int64(0)
    same = np.int64(0)
    for r in range(1, 14):
        n += counts[r]
        same += counts[r] * (counts[r] - 1)
    return n, same


@njit_plain()
def ev_fill(counts, payouts, out, nodes, coef, work, deals=True):  # type: ignore[no-untyped-def]
    """`ev_array` without allocating, callable from compiled code: writes into
    `out` (N_BETS); nodes, coef and work come from `ev_work`.

    Counts only the events the table's payouts need (`wanted_events`). With
    `deals` false, only the EVs of the bets on one pair (`pair_evs`), which
    need no deal counted (the others are NaN): a few operations instead of
    microseconds.
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
    pairs_evs(counts, n, payouts, out)


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
    evs = ev_array(arr, payout_matrix_of(rules))
    return {bet: float(evs[bet.code]) for bet in rules.offered_bets()}

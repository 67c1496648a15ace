"""The fast path's tables: each event's count as a polynomial in the value
counts, over the multisets of up to six card values (`ev_work` hands them
to `fast.ev_events` and `ahead.ev_fill_ahead`), and the layout of the work
arrays both use."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit

from backtest.jit import numba_cache
from backtest.jit.lanes import LANES
from backtest.odds.events import BANKER_DRAWS, N_BETS, N_KEPT, STAGE

numba_cache.install()  # before this module's functions are decorated for numba's cache

# --- the fast path: each bet's EV as a polynomial in the counts --------------------
#
# The chance of one ordered sequence of card values depends only on its
# multiset: with c_v cards of value v among n, a sequence that holds k_v cards
# of each value has prod_v (c_v)_(k_v) / (n)_L ways, (x)_k = x (x-1) ... (x-k+1).
# So an event's count is a fixed polynomial in the counts: the sum, over the
# multisets of 4, 5 and 6 values, of how many finished hands deal that multiset
# (in some order) with that event, times the product. The coefficients are
# counted once (`_ev_tables`); each composition then costs one pass over the
# 7,722 multisets. For up to 8 decks every product and partial sum is an
# integer below 2**53, so the float sums are exact in any order and the fast
# path gives the exact event counts.

_MULTISETS = tuple(math.comb(size + 9, 9) for size in range(7))  # of 0..6 values
#: _LEVEL[s]: index of the first multiset of s values; the multisets of s
#: values are _LEVEL[s] .. _LEVEL[s + 1] - 1 (the empty one is 0)
_LEVEL = tuple(sum(_MULTISETS[:s]) for s in range(8))
_N_SETS = _LEVEL[7]
_FIRST_HAND = _LEVEL[4]  # a hand has at least four cards
_N_HANDS = _N_SETS - _FIRST_HAND  # multisets that can be a hand: 7,722
#: events the fast path counts, in the rows of the coefficient table
_C_PLAYER, _C_BANKER, _C_TIE, _C_B6, _C_B7_3, _C_P8_3 = range(6)
_N_COLUMNS = 6
# The work array of `ev_events`: the products, the sums by hand size, room
# for ev_fill's event counts, then the factors (c_v - j) at 8 v + j.
_EV_SUMS = _N_SETS
_EV_OUT = _EV_SUMS + 3 * _N_COLUMNS
_EV_FACTORS = _EV_OUT + _N_COLUMNS
EV_WORK = _EV_FACTORS + 80
# Then, in a work array made for `ev_fill_ahead` (`ev_work(ahead=True)`):
# the products of up to five values and the factors, a row of LANES a
# multiset or factor; the sums by hand size of two events; the event counts
# and the rank counts of each lane; and the EV rows of a counter that keeps
# them for itself (`ahead_rows`).
_LANE_F = EV_WORK
_LANE_G = _LANE_F + _LEVEL[6] * LANES
_LANE_SUMS = _LANE_G + 80 * LANES
_LANE_EVENTS = _LANE_SUMS + 3 * 2 * LANES
_LANE_RANKS = _LANE_EVENTS + LANES * _N_COLUMNS
_LANE_ROWS = _LANE_RANKS + LANES * 14
_LANE_KEPT = _LANE_ROWS + LANES * N_BETS
EV_WORK_AHEAD = _LANE_KEPT + LANES * N_KEPT
#: up to this many cards the fast path's sums are exact (8 decks: (416)_6 < 2**53)
EXACT_CARDS = 416
#: `ev_events`' bit mask for every event
ALL_EVENTS = (1 << _N_COLUMNS) - 1


@njit(cache=True)
def _set_of(vals, k, child):
    """The index of the multiset of vals[:k] (which it sorts)."""
    for i in range(1, k):
        x = vals[i]
        j = i - 1
        while j >= 0 and vals[j] > x:
            vals[j + 1] = vals[j]
            j -= 1
        vals[j + 1] = x
    node = 0
    for i in range(k):
        node = child[node, vals[i]]
    return node


@njit(cache=True)
def _count_hand(coef, vals, k, child, pt, bt, p3, b3):
    """Count one finished hand (its card values vals[:k], totals, third cards)."""
    col = _set_of(vals, k, child) - _FIRST_HAND
    if pt > bt:
        coef[_C_PLAYER, col] += 1.0
        if p3 and pt == 8:
            coef[_C_P8_3, col] += 1.0
    elif bt > pt:
        coef[_C_BANKER, col] += 1.0
        if bt == 6:
            coef[_C_B6, col] += 1.0
        elif bt == 7 and b3:
            coef[_C_B7_3, col] += 1.0
    else:
        coef[_C_TIE, col] += 1.0


@njit(cache=True)
def _build_ev_tables(stage, draws):
    """(nodes, coef): the multiset tree and the event coefficients.

    Multisets of values are numbered by size, and each one of s values comes
    from one of s - 1 by adding a value no smaller than its largest:
    nodes[0, i] is that parent and nodes[1, i] = 8 v + j says the value v
    added, of which the parent holds j (the new factor is c_v - j).
    coef[event, i - _FIRST_HAND] counts the finished hands, as ordered card
    values, that deal multiset i and end in the event.
    """
    nodes = np.zeros((2, _N_SETS), np.uint32)
    top = np.zeros(_N_SETS, np.int64)  # largest value of the multiset
    run = np.zeros(_N_SETS, np.int64)  # how many of it
    child = np.full((_N_SETS, 10), -1, np.int64)
    k = 1
    for size in range(6):
        for m in range(_LEVEL[size], _LEVEL[size + 1]):
            for v in range(top[m], 10):
                j = run[m] if v == top[m] else 0
                nodes[0, k] = m
                nodes[1, k] = 8 * v + j
                top[k] = v
                run[k] = j + 1
                child[m, v] = k
                k += 1
    coef = np.zeros((_N_COLUMNS, _N_HANDS))
    vals = np.zeros(6, np.int64)
    for a in range(10):
        for b in range(10):
            for c in range(10):
                for d in range(10):
                    p2 = (a + c) % 10
                    b2 = (b + d) % 10
                    s = stage[p2, b2]
                    vals[0], vals[1], vals[2], vals[3] = a, b, c, d
                    if s == 0:
                        _count_hand(coef, vals, 4, child, p2, b2, False, False)
                        continue
                    if s == 1:
                        for f in range(10):
                            vals[0], vals[1], vals[2], vals[3], vals[4] = a, b, c, d, f
                            _count_hand(coef, vals, 5, child, p2, (b2 + f) % 10, False, True)
                        continue
                    for e in range(10):
                        pt = (p2 + e) % 10
                        if not draws[b2, e]:
                            vals[0], vals[1], vals[2], vals[3], vals[4] = a, b, c, d, e
                            _count_hand(coef, vals, 5, child, pt, b2, True, False)
                            continue
                        for f in range(10):
                            vals[0], vals[1], vals[2], vals[3], vals[4], vals[5] = a, b, c, d, e, f
                            _count_hand(coef, vals, 6, child, pt, (b2 + f) % 10, True, True)
    return nodes, coef


@lru_cache(maxsize=1)
def _ev_tables() -> tuple[np.ndarray, np.ndarray]:
    nodes, coef = _build_ev_tables(STAGE, BANKER_DRAWS)
    nodes.flags.writeable = False
    coef.flags.writeable = False
    return nodes, coef


def ev_work(needed: bool = True, ahead: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The last three arguments of `ev_fill` and `ev_events`: the shared
    (read-only) multiset tree and coefficients, and a new work array; with
    `ahead`, one large enough for `ev_fill_ahead` too (464 kB, not 65 kB).

    With `needed=False`, empty arrays of the same types, for a compiled loop
    that takes them but never calls `ev_fill` (the tables are not built). Read-only
    too: numba types a read-only array apart, and would compile `ev_fill` and
    its callees a second time (about 3 s, on a cold cache) for writable ones.
    """
    if not needed:
        nodes, coef = np.zeros((2, 0), np.uint32), np.zeros((_N_COLUMNS, 0))
        nodes.flags.writeable = False
        coef.flags.writeable = False
        return nodes, coef, np.zeros(0)
    return (*_ev_tables(), np.zeros(EV_WORK_AHEAD if ahead else EV_WORK))

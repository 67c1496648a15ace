"""The fast path, for card counting: each bet's EV as a float, from each
event's count as a polynomial in the counts (`ev_fill` and `ev_fill_ahead`,
compiled, allocation-free; `bet_evs` and `ev_array` from Python)."""

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
from backtest.jit.lanes import LANES, lane_products, lane_sums
from backtest.odds.compositions import check_counts
from backtest.odds.events import (
    B_BANKER,
    B_BANKER_PAIR,
    B_DRAGON_7,
    B_PANDA_8,
    B_PLAYER,
    B_PLAYER_PAIR,
    B_TIE,
    BANKER_DRAWS,
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
    STAGE,
    check_cards_left,
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
EV_WORK_AHEAD = _LANE_ROWS + LANES * N_BETS
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
def _wanted_events(payouts):  # type: ignore[no-untyped-def]
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
def _price_deals(e, n, payouts, out):  # type: ignore[no-untyped-def]
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

    Counts only the events the table's payouts need (`_wanted_events`). With
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
    ev_events(counts, nodes, coef, work, e, _wanted_events(payouts))
    _price_deals(e, n, payouts, out)


def ahead_rows(work: np.ndarray) -> np.ndarray:
    """The rows in `work` (from `ev_work`) where a counter that keeps its EVs
    to itself has `ev_fill_ahead` write them: LANES rows of N_BETS."""
    return work[_LANE_ROWS:EV_WORK_AHEAD].reshape((LANES, N_BETS))


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def ahead_rows_compiled(work):  # type: ignore[no-untyped-def]
    """`ahead_rows` for compiled code (compiled without reference counting,
    it cannot hand a view back to Python)."""
    return work[_LANE_ROWS:EV_WORK_AHEAD].reshape((LANES, N_BETS))


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def _cards_left(g, lane):  # type: ignore[no-untyped-def]
    """The cards of a lane's composition, from its factor rows (as `ev_events`
    sums them, value by value)."""
    n = 0.0
    for v in range(10):
        n += g[8 * v, lane]
    return n


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def ev_fill_ahead(
    counts,
    cards,
    hand_no,
    k,
    payouts,
    rows,
    nodes,
    coef,  # type: ignore[no-untyped-def]
    work,
    deals=True,
):
    """`ev_fill` for hand index `k` and the hands after it in its shoe, up to
    LANES of them, at once: rows[m] gets the EVs before hand k + m.

    `counts`: the rank counts before hand k; cards and hand_no: the hands'
    cards (rank in the low 4 bits, 0 for none) and numbers in their shoe (1
    for a shoe's first hand, where the hands that follow stop). Every
    composition is a lane of `lanes.lane_sums`, which walks the tree of
    products once for all of them. Up to `EXACT_CARDS` cards its event
    counts are the same whole numbers as `ev_events`', so every EV is the
    same double as `ev_fill`'s; a larger shoe is priced by `ev_fill`, one
    hand. With `deals` false, only the pair bets' EVs, as `ev_fill`'s.
    Returns how many rows it wrote (at least one). `rows` needs that many;
    nodes, coef and work come from `ev_work(ahead=True)`.
    """
    if work.shape[0] < EV_WORK_AHEAD:
        raise ValueError("ev_fill_ahead needs the work array of ev_work(ahead=True)")
    ranks = work[_LANE_RANKS:_LANE_ROWS].reshape((LANES, 14))
    for r in range(14):
        ranks[0, r] = counts[r]
    m = 1
    while m < LANES and k + m < hand_no.shape[0] and hand_no[k + m] != 1:
        for r in range(14):
            ranks[m, r] = ranks[m - 1, r]
        for c in range(6):
            ranks[m, cards[k + m - 1, c] & 15] -= 1.0  # an empty slot: rank 0, not read
        m += 1
    n0 = 0.0
    for r in range(1, 14):
        n0 += ranks[0, r]
    if n0 > EXACT_CARDS:
        ev_fill(counts, payouts, rows[0], nodes, coef, work, deals)
        return 1
    g = work[_LANE_G:_LANE_SUMS].reshape((80, LANES))
    for q in range(80):
        for lane in range(LANES):
            g[q, lane] = 0.0
    for lane in range(m):
        left = same = 0.0
        for r in range(1, 14):
            c = ranks[lane, r]
            g[8 * (r if r < 10 else 0), lane] += c
            left += c
            same += c * (c - 1.0)
        row = rows[lane]
        for b in range(N_BETS):
            row[b] = np.nan
        pair_evs(same, left, payouts, row)
    if not deals or n0 < HAND_CARDS:
        return m
    for v in range(10):
        for j in range(1, 7):
            for lane in range(LANES):
                g[8 * v + j, lane] = g[8 * v, lane] - j
    f = work[_LANE_F:_LANE_G].reshape((_LEVEL[6], LANES))
    for lane in range(LANES):
        f[0, lane] = 1.0
    parent = nodes[0]
    factor = nodes[1]
    lane_products(f, g, parent, factor, 1, _LEVEL[4])
    sums = work[_LANE_SUMS:_LANE_EVENTS].reshape((3, 2, LANES))
    events = work[_LANE_EVENTS:_LANE_RANKS].reshape((LANES, _N_COLUMNS))
    for lane in range(LANES):
        for e in range(_N_COLUMNS):
            events[lane, e] = 0.0
    wanted = _wanted_events(payouts)
    # two events a walk, in their order: Player and Banker, then the Banker 6
    # (beside the tie, which is every other deal and not summed), then the
    # three-card 7 and the Player three-card 8, each if wanted; the products
    # of four and five values are stored by the first walk
    for walk in range(3):
        ea = 2 * walk
        eb = ea + 1
        if not ((wanted >> ea) & 1 or (wanted >> eb) & 1):
            continue
        for size in range(4, 7):
            s = sums[size - 4]
            for lane in range(LANES):
                s[0, lane] = 0.0
                s[1, lane] = 0.0
            lane_sums(
                f,
                g,
                parent,
                factor,
                coef[ea],
                coef[eb],
                _FIRST_HAND,
                _LEVEL[size],
                _LEVEL[size + 1],
                walk == 0 and size < 6,
                s,
            )
        for lane in range(m):
            n = _cards_left(g, lane)
            four = (n - 4.0) * (n - 5.0)
            five = n - 5.0
            for x in range(2):
                if (wanted >> (ea + x)) & 1:
                    events[lane, ea + x] = (
                        sums[0, x, lane] * four + sums[1, x, lane] * five + sums[2, x, lane]
                    )
    for lane in range(m):
        n = _cards_left(g, lane)
        if n >= HAND_CARDS:
            _price_deals(events[lane], n, payouts, rows[lane])
    return m


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

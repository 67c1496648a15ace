"""The EVs of the hands ahead: a counter's exact EVs for up to LANES hands
of a shoe at once (`ev_fill_ahead`), with the chances of the winner's kinds
beside them in each row (`events.EV_ROW`), and where a lone counter keeps
them (`ahead_rows`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from backtest.jit import numba_cache
from backtest.jit.lanes import LANES, lane_products, lane_sums
from backtest.odds.deals import (
    K_BANKER,
    K_BANKER_SIX,
    K_BANKER_THREE_CARD_SEVEN,
    K_PLAYER,
    K_PLAYER_THREE_CARD_EIGHT,
    K_TIE,
)
from backtest.odds.events import EV_ROW, HAND_CARDS, N_BETS, ROW_KINDS, ROW_PAIRS
from backtest.odds.fast import ev_fill, pair_evs, price_deals, wanted_events
from backtest.odds.polynomial import (
    _C_B6,
    _C_B7_3,
    _C_BANKER,
    _C_P8_3,
    _C_PLAYER,
    _EV_FACTORS,
    _EV_OUT,
    _FIRST_HAND,
    _LANE_EVENTS,
    _LANE_F,
    _LANE_G,
    _LANE_RANKS,
    _LANE_ROWS,
    _LANE_SUMS,
    _LEVEL,
    _N_COLUMNS,
    EV_WORK_AHEAD,
    EXACT_CARDS,
)

numba_cache.install()  # before this module's functions are decorated for numba's cache


def ahead_rows(work: np.ndarray) -> np.ndarray:
    """The rows in `work` (from `ev_work`) where a counter that keeps its EVs
    to itself has `ev_fill_ahead` write them: LANES rows of EV_ROW."""
    return work[_LANE_ROWS:EV_WORK_AHEAD].reshape((LANES, EV_ROW))


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def ahead_rows_compiled(work):  # type: ignore[no-untyped-def]
    """`ahead_rows` for compiled code (compiled without reference counting,
    it cannot hand a view back to Python)."""
    return work[_LANE_ROWS:EV_WORK_AHEAD].reshape((LANES, EV_ROW))


@njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
def _cards_left(g, lane):  # type: ignore[no-untyped-def]
    """The cards of a lane's composition, from its factor rows (as `ev_events`
    sums them, value by value)."""
    n = 0.0
    for v in range(10):
        n += g[8 * v, lane]
    return n


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def keep_kinds(e, n, deals, row):  # type: ignore[no-untyped-def]
    """Into row[ROW_KINDS:] (when the row has room, `EV_ROW`): the chance of
    each of the winner's kinds, from the deal events `e` of `n` cards (as
    `ev_events` counts them; an event not counted is 0 there, its hands then
    in the plain win's kind, which every bet the table offers settles
    alike); NaN when the deals were not counted or fewer than six cards
    are left."""
    if row.shape[0] < EV_ROW:
        return
    if not deals or n < HAND_CARDS:
        for i in range(ROW_KINDS, ROW_PAIRS):
            row[i] = np.nan
        return
    total = n * (n - 1.0) * (n - 2.0) * (n - 3.0) * (n - 4.0) * (n - 5.0)
    scale = 1.0 / total
    row[ROW_KINDS + K_PLAYER_THREE_CARD_EIGHT] = e[_C_P8_3] * scale
    row[ROW_KINDS + K_PLAYER] = (e[_C_PLAYER] - e[_C_P8_3]) * scale
    row[ROW_KINDS + K_BANKER_SIX] = e[_C_B6] * scale
    row[ROW_KINDS + K_BANKER_THREE_CARD_SEVEN] = e[_C_B7_3] * scale
    row[ROW_KINDS + K_BANKER] = (e[_C_BANKER] - e[_C_B6] - e[_C_B7_3]) * scale
    row[ROW_KINDS + K_TIE] = (total - e[_C_PLAYER] - e[_C_BANKER]) * scale


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]
def keep_pairs(ranks, n, row):  # type: ignore[no-untyped-def]
    """Into row[ROW_PAIRS:] (when the row has room): the chances of a Player
    pair (as of a Banker pair) and of both, for rank counts `ranks` (index
    1..13) of `n` cards; left as they are (NaN) when fewer than six cards
    are left."""
    if row.shape[0] < EV_ROW or n < HAND_CARDS:
        return
    s2 = sq = q4 = 0.0
    for r in range(1, 14):
        c = float(ranks[r])
        s2 += c * (c - 1.0)
        sq += (c * (c - 1.0)) ** 2
        q4 += c * (c - 1.0) * (c - 2.0) * (c - 3.0)
    row[ROW_PAIRS] = s2 / (n * (n - 1.0))
    row[ROW_PAIRS + 1] = (s2 * s2 - sq + q4) / (n * (n - 1.0) * (n - 2.0) * (n - 3.0))


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
    LANES of them, at once: rows[m] gets the EVs before hand k + m (and,
    in a row of `EV_ROW`, the chances of the winner's kinds: `keep_kinds`).

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
        row = rows[0]
        ev_fill(counts, payouts, row, nodes, coef, work, deals)
        for i in range(N_BETS, row.shape[0]):
            row[i] = np.nan
        keep_kinds(work[_EV_OUT:_EV_FACTORS], n0, deals, row)
        keep_pairs(ranks[0], n0, row)
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
        for b in range(row.shape[0]):
            row[b] = np.nan
        pair_evs(same, left, payouts, row)
        keep_pairs(ranks[lane], left, row)
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
    wanted = wanted_events(payouts)
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
            price_deals(events[lane], n, payouts, rows[lane])
        keep_kinds(events[lane], n, True, rows[lane])
    return m

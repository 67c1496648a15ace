"""The EVs of the hands ahead: a counter's exact EVs for up to LANES hands
of a shoe at once (`ev_fill_ahead`), with the chances of the winner's kinds
beside them (`events.N_KEPT`), and where a lone counter keeps them
(`ahead_rows`, `ahead_kept`)."""

from __future__ import annotations

import numpy as np

from backtest.jit.lanes import LANES, lane_products, lane_sums
from backtest.jit.numba_cache import njit_plain
from backtest.odds.deals import (
    K_BANKER,
    K_BANKER_SIX,
    K_BANKER_THREE_CARD_SEVEN,
    K_PLAYER,
    K_PLAYER_THREE_CARD_EIGHT,
    K_TIE,
)
from backtest.odds.events import HAND_CARDS, N_BETS, N_KEPT, ROW_KINDS, ROW_PAIRS
from backtest.odds.fast import ev_fill
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
    _LANE_KEPT,
    _LANE_RANKS,
    _LANE_ROWS,
    _LANE_SUMS,
    _LEVEL,
    _N_COLUMNS,
    EV_WORK_AHEAD,
    EXACT_CARDS,
)
from backtest.odds.pricing import pair_chances, pair_evs, pairs_evs, price_deals, wanted_events


def ahead_rows(work: np.ndarray) -> np.ndarray:
    """The rows in `work` (from `ev_work`) where a counter that keeps its EVs
    to itself has `ev_fill_ahead` write them: LANES rows of N_BETS."""
    return work[_LANE_ROWS:_LANE_KEPT].reshape((LANES, N_BETS))


def ahead_kept(work: np.ndarray) -> np.ndarray:
    """Beside `ahead_rows`, what `ev_fill_ahead` keeps for the variance of a
    hand's stakes: LANES rows of N_KEPT (`events.N_KEPT`)."""
    return work[_LANE_KEPT:EV_WORK_AHEAD].reshape((LANES, N_KEPT))


@njit_plain(inline="always")
def ahead_kept_compiled(work):  # type: ignore[no-untyped-def]
    """`ahead_kept` for compiled code."""
    return work[_LANE_KEPT:EV_WORK_AHEAD].reshape((LANES, N_KEPT))


@njit_plain(inline="always")
def ahead_rows_compiled(work):  # type: ignore[no-untyped-def]
    """`ahead_rows` for compiled code (compiled without reference counting,
    it cannot hand a view back to Python)."""
    return work[_LANE_ROWS:_LANE_KEPT].reshape((LANES, N_BETS))


@njit_plain(inline="always")
def _cards_left(g, lane):  # type: ignore[no-untyped-def]
    """The cards of a lane's composition, from its factor rows (as `ev_events`
    sums them, value by value)."""
    n = 0.0
    for v in range(10):
        n += g[8 * v, lane]
    return n


@njit_plain()
def keep_kinds(e, n, deals, row):  # type: ignore[no-untyped-def]
    """Into row[ROW_KINDS:] (when the row has room, `N_KEPT`): the chance of
    each of the winner's kinds, from the deal events `e` of `n` cards (as
    `ev_events` counts them; an event not counted is 0 there, its hands then
    in the plain win's kind, which every bet the table offers settles
    alike); NaN when the deals were not counted or fewer than six cards
    are left."""
    if row.shape[0] < N_KEPT:
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


@njit_plain()
def keep_pairs(ranks, n, row):  # type: ignore[no-untyped-def]
    """Into row[ROW_PAIRS:] (when the row has room): the chances of a Player
    pair (as of a Banker pair) and of both, for rank counts `ranks` (index
    1..13) of `n` cards; left as they are (NaN) when fewer than six cards
    are left."""
    if row.shape[0] < N_KEPT or n < HAND_CARDS:
        return
    row[ROW_PAIRS], row[ROW_PAIRS + 1] = pair_chances(ranks, n)


@njit_plain()
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
    kept=None,
):
    """`ev_fill` for hand index `k` and the hands after it in its shoe, up to
    LANES of them, at once: rows[m] gets the EVs before hand k + m, and
    kept[m], if given (rows of `events.N_KEPT`), the chances the variance of
    its stakes reads (`keep_kinds`, `keep_pairs`; the rest NaN).

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
        if kept is not None:
            for i in range(N_KEPT):
                kept[0, i] = np.nan
            keep_kinds(work[_EV_OUT:_EV_FACTORS], n0, deals, kept[0])
            keep_pairs(ranks[0], n0, kept[0])
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
        if kept is not None:
            for i in range(N_KEPT):
                kept[lane, i] = np.nan
            keep_pairs(ranks[lane], left, kept[lane])
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
            pairs_evs(ranks[lane], n, payouts, rows[lane])
        if kept is not None:
            keep_kinds(events[lane], n, True, kept[lane])
    return m

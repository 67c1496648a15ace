"""The session loop: one seat, over the hands of many sessions.

Two runners share every rule of the table: `run_compiled` (numba, for the
built-in strategies, dispatching on their `kind`) and `python_loop.run_python`
(for any `Strategy` object, a user's class included). The table's rules live in the
compiled helpers `place` (stakes against limits and bankroll) and `book`
(settlement and statistics), which both runners call, so the two paths
cannot drift apart; a test runs every built-in through both and compares
the ledgers.

Money is exact: stakes are whole cents, results are cents times the unit
results of `payouts.unit_results` (whole 1/D units), so one currency unit
is 100 * D ticks and every sum is an integer.
"""

from __future__ import annotations

import numpy as np

from backtest import kernels
from backtest.kernels import njit_nrt_free
from backtest.odds import ev_fill
from strategies import compiled
from strategies.base import (CTX_BANKROLL, CTX_HAND, CTX_LAST_NET, CTX_SESSION_HAND, CTX_SHOE,
                             CTX_SIZE, N_BETS, P_ON_BANKROLL, P_ON_MAX, P_SIDE, STATE_FLOATS,
                             STATE_INTS)

# how a session ended
ENDED_LIMIT, ENDED_RUIN, ENDED_STOP_LOSS, ENDED_WIN_GOAL = 0, 1, 2, 3
ENDED_BY = ("limit", "ruin", "stop-loss", "win-goal")

# columns of the per-session statistics (int64 ticks and counts)
S_HANDS, S_BETS, S_WAGERED, S_NET, S_FINAL, S_PEAK, S_DRAWDOWN, S_LOSING_STREAK, \
    S_LARGEST, S_MAX_HITS, S_BANKROLL_STOPS, S_ENDED, S_WINS, S_LOSSES, S_PUSHES, \
    S_CUR_STREAK, S_BELOW_MIN = range(17)
N_STATS = 17
STAT_NAMES = ("hands", "bets", "wagered", "net", "final_bankroll", "peak_bankroll",
              "max_drawdown", "longest_losing_streak", "largest_stake", "max_hits",
              "bankroll_stops", "ended_by", "wins", "losses", "pushes", "", "raised_to_min")

# place() results
PLACE_OK, PLACE_RUIN, PLACE_BAD_STAKE, PLACE_FORBIDDEN, PLACE_NOT_SETTLED = 0, 1, 2, 3, 4
PLACE_ERRORS = {
    PLACE_BAD_STAKE: "asked for a negative or non-numeric stake",
    PLACE_FORBIDDEN: "placed a combination of bets the table does not take",
    PLACE_NOT_SETTLED: "placed a bet this table or this recorded shoe cannot settle",
}

_MAX_CENTS = 2 ** 52


@njit_nrt_free(inline=True)
def _to_cents(out: np.ndarray, p: np.ndarray, cents: np.ndarray) -> int:
    """Strategy stakes (currency) to whole cents, with the side bets beside a
    main bet. Returns PLACE_BAD_STAKE for a negative or NaN stake."""
    any_bet = False
    for b in range(N_BETS):
        x = out[b]
        if not (x >= 0.0):
            return PLACE_BAD_STAKE
        c = np.floor(x * 100.0 + 1e-6)
        cents[b] = _MAX_CENTS if c > _MAX_CENTS else np.int64(c)
        if cents[b] > 0:
            any_bet = True
    if any_bet:
        for b in range(N_BETS):
            side = p[P_SIDE + b]
            if side > 0.0:
                cents[b] += np.int64(np.floor(side * 100.0 + 1e-6))
    return PLACE_OK


@njit_nrt_free(inline=True)
def limits(out: np.ndarray, p: np.ndarray, cents: np.ndarray, min_c: np.ndarray,
           max_c: np.ndarray, st: np.ndarray) -> int:
    """Convert and apply the table minimum. Returns a PLACE_* code, and whether
    a stake is over the table maximum (1) in the tens digit."""
    code = _to_cents(out, p, cents)
    if code != PLACE_OK:
        return code
    over = 0
    for b in range(N_BETS):
        if cents[b] > 0:
            if cents[b] < min_c[b]:
                cents[b] = min_c[b]
                st[S_BELOW_MIN] += 1
            if cents[b] > max_c[b]:
                over = 1
    return 10 * over


@njit_nrt_free(inline=True)
def place(p: np.ndarray, cents: np.ndarray, min_c: np.ndarray, max_c: np.ndarray,
          bankroll: int, den: int, offered: np.ndarray, pb_together: bool,
          pairs_need_main: bool, st: np.ndarray) -> int:
    """Finish placing the stakes in `cents` (after `limits` and any restart of
    the progression): cap at the table maximum, check the table's rules, and
    hold the total to the bankroll. Returns a PLACE_* code."""
    for b in range(N_BETS):
        if cents[b] > max_c[b]:
            cents[b] = max_c[b]
    total = 0
    for b in range(N_BETS):
        if cents[b] > 0 and not offered[b]:
            return PLACE_NOT_SETTLED
        total += cents[b]
    if not pb_together and cents[0] > 0 and cents[1] > 0:
        return PLACE_FORBIDDEN
    if pairs_need_main and (cents[3] > 0 or cents[4] > 0) and \
            cents[0] == 0 and cents[1] == 0 and cents[2] == 0:
        return PLACE_FORBIDDEN
    if total * den > bankroll:
        st[S_BANKROLL_STOPS] += 1
        if p[P_ON_BANKROLL] == 0.0:
            return PLACE_RUIN
        # all-in: scale every stake down to what is left, whole cents
        left = bankroll // den
        placed = 0
        for b in range(N_BETS):
            cents[b] = cents[b] * left // total
            placed += cents[b]
        if placed == 0:
            return PLACE_RUIN
        for b in range(N_BETS):
            if 0 < cents[b] < min_c[b]:
                return PLACE_RUIN
    return PLACE_OK


@njit_nrt_free(inline=True)
def book(i: int, cents: np.ndarray, unit: np.ndarray, den: int, evs: np.ndarray,
         st: np.ndarray, wag: np.ndarray, expected: np.ndarray) -> int:
    """Settle hand `i` for stakes `cents`; update the session statistics.
    Returns the net in ticks."""
    net = 0
    total = 0
    for b in range(N_BETS):
        c = cents[b]
        if c > 0:
            net += c * unit[i, b]
            total += c
            wag[b] += c * den
            expected[0] += c * 0.01 * evs[b]
    st[S_HANDS] += 1
    if total > 0:
        st[S_BETS] += 1
        st[S_WAGERED] += total * den
        if total * den > st[S_LARGEST]:
            st[S_LARGEST] = total * den
        if net > 0:
            st[S_WINS] += 1
            st[S_CUR_STREAK] = 0
        elif net < 0:
            st[S_LOSSES] += 1
            st[S_CUR_STREAK] += 1
            if st[S_CUR_STREAK] > st[S_LOSING_STREAK]:
                st[S_LOSING_STREAK] = st[S_CUR_STREAK]
        else:
            st[S_PUSHES] += 1
    st[S_NET] += net
    st[S_FINAL] += net
    if st[S_FINAL] > st[S_PEAK]:
        st[S_PEAK] = st[S_FINAL]
    if st[S_PEAK] - st[S_FINAL] > st[S_DRAWDOWN]:
        st[S_DRAWDOWN] = st[S_PEAK] - st[S_FINAL]
    return net


@njit_nrt_free(inline=True)
def stop_rule(st: np.ndarray, bankroll0: int, stop_loss: int, win_goal: int, ruin_below: int) -> int:
    """After a hand: which stop rule, if any, ends the session (-1: none)."""
    if st[S_FINAL] < ruin_below:
        return ENDED_RUIN
    if stop_loss >= 0 and bankroll0 - st[S_FINAL] >= stop_loss:
        return ENDED_STOP_LOSS
    if win_goal >= 0 and st[S_FINAL] - bankroll0 >= win_goal:
        return ENDED_WIN_GOAL
    return -1


@njit_nrt_free(inline=True)
def session_seed(seat_key: np.uint64, session_id: int, state: np.ndarray) -> int:
    """The random seed a strategy gets for one session (from the seat's key);
    `state` is four words of scratch."""
    kernels.seed_state(seat_key, np.uint64(session_id), state)
    # signed in compiled code (see kernels.bounded); mypy cannot see numba's int64 -> int
    return np.int64(state[0] >> np.uint64(1))  # type: ignore[return-value]


def scratch() -> tuple[np.ndarray, ...]:
    """The work arrays `run_compiled` needs (it allocates nothing itself)."""
    return (np.zeros(STATE_FLOATS), np.zeros(STATE_INTS, np.int64), np.zeros(CTX_SIZE),
            np.zeros(N_BETS), np.zeros(N_BETS), np.zeros(N_BETS), np.zeros(N_BETS, np.int64),
            np.zeros(14, np.int64), np.zeros(N_BETS), np.zeros(4, np.uint64), np.zeros(10),
            np.zeros((10, 10, 2, 2)), np.zeros(16))


@njit_nrt_free()
def run_compiled(kind: tuple[int, ...], p: np.ndarray, seat_key: np.uint64, session_ids: np.ndarray,
                 bounds: np.ndarray, winner: np.ndarray, hand_no: np.ndarray,
                 shoe_no: np.ndarray, unit: np.ndarray, den: int, min_c: np.ndarray,
                 max_c: np.ndarray, offered: np.ndarray, pb_together: bool,
                 pairs_need_main: bool, bankroll0: int, stop_loss: int, win_goal: int,
                 max_hands: int, ruin_below: int, use_cards: bool, cards: np.ndarray,
                 full_counts: np.ndarray, ev_table: np.ndarray, evs_full: np.ndarray,
                 stats: np.ndarray, wagered: np.ndarray, expected: np.ndarray,
                 ledger: bool, led_idx: np.ndarray, led_cents: np.ndarray,
                 led_net: np.ndarray, led_bank: np.ndarray, s: np.ndarray, si: np.ndarray,
                 ctx: np.ndarray, out: np.ndarray, stakes: np.ndarray, unit_f: np.ndarray,
                 cents: np.ndarray, counts: np.ndarray, evs: np.ndarray, seed_work: np.ndarray,
                 ev_v: np.ndarray, ev_bins: np.ndarray, ev_e: np.ndarray) -> tuple[int, int, int]:
    """Run sessions bounds[j]..bounds[j+1] (hand indices) for one built-in seat;
    `kind` is `compiled.kind_marker(strategy.kind)`.

    The last arguments are work arrays (see `scratch`): compiled without
    reference counting, this loop allocates nothing. Returns (status, hand
    index of an error or -1, ledger rows written).
    """
    for r in range(14):
        counts[r] = full_counts[r]
    for b in range(N_BETS):
        evs[b] = evs_full[b]
    rows = 0
    scale = 100.0 * den
    for j in range(session_ids.shape[0]):
        st = stats[j]
        st[S_FINAL] = bankroll0
        st[S_PEAK] = bankroll0
        ended = ENDED_LIMIT
        compiled.init(kind, p, s, si, session_seed(seat_key, session_ids[j], seed_work))
        last_net = 0
        shoe_start = bounds[j]
        for i in range(bounds[j], bounds[j + 1]):
            if hand_no[i] == 1:
                shoe_start = i
                if use_cards:
                    for r in range(14):
                        counts[r] = full_counts[r]
            if max_hands >= 0 and st[S_HANDS] >= max_hands:
                break
            if use_cards:
                ev_fill(counts, ev_table, evs, ev_v, ev_bins, ev_e)
            ctx[CTX_BANKROLL] = st[S_FINAL] / scale
            ctx[CTX_HAND] = hand_no[i]
            ctx[CTX_SESSION_HAND] = st[S_HANDS]
            ctx[CTX_LAST_NET] = last_net / scale
            ctx[CTX_SHOE] = shoe_no[i]
            hist = winner[shoe_start:i]
            out[:] = 0.0
            compiled.decide(kind, p, s, si, ctx, hist, evs, out)
            code = limits(out, p, cents, min_c, max_c, st)
            if code >= 10:
                st[S_MAX_HITS] += 1
                if p[P_ON_MAX] == 0.0:
                    compiled.reset(kind, p, s, si)
                    out[:] = 0.0
                    compiled.decide(kind, p, s, si, ctx, hist, evs, out)
                    code = limits(out, p, cents, min_c, max_c, st) % 10
                else:
                    code = code % 10
            if code == PLACE_OK:
                code = place(p, cents, min_c, max_c, st[S_FINAL], den, offered, pb_together,
                             pairs_need_main, st)
            if code == PLACE_RUIN:
                ended = ENDED_RUIN
                break
            if code != PLACE_OK:
                return code, i, rows
            net = book(i, cents, unit, den, evs, st, wagered[j], expected[j:j + 1])
            last_net = net
            for b in range(N_BETS):
                stakes[b] = cents[b] * 0.01
                unit_f[b] = unit[i, b] / den if unit[i, b] > -(2 ** 62) else 0.0
            compiled.update(kind, p, s, si, ctx, stakes, unit_f, net / scale)
            if ledger:
                led_idx[rows] = i
                for b in range(N_BETS):
                    led_cents[rows, b] = cents[b]
                led_net[rows] = net
                led_bank[rows] = st[S_FINAL]
                rows += 1
            if use_cards:
                for c in range(6):
                    if cards[i, c] != 0:
                        counts[cards[i, c] & 15] -= 1
            stop = stop_rule(st, bankroll0, stop_loss, win_goal, ruin_below)
            if stop >= 0:
                ended = stop
                break
        st[S_ENDED] = ended
    return PLACE_OK, -1, rows

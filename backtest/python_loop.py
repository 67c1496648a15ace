"""The session loop for any `Strategy` object, in plain Python.

`run_python` is `session_loop.run_compiled` step for step, written out in
Python numbers (calling the compiled helpers from Python costs more than the
work they do). A test runs every built-in strategy through both and compares
the ledgers.
"""

from __future__ import annotations

import math

import numpy as np

from backtest.odds import ev_fill
from backtest.rules import Bet
from backtest.session_loop import (_MAX_CENTS, ENDED_LIMIT, ENDED_RUIN, ENDED_STOP_LOSS,
                                   ENDED_WIN_GOAL, PLACE_BAD_STAKE, PLACE_FORBIDDEN,
                                   PLACE_NOT_SETTLED, PLACE_OK, PLACE_RUIN, S_BANKROLL_STOPS,
                                   S_BELOW_MIN, S_BETS, S_CUR_STREAK, S_DRAWDOWN, S_ENDED,
                                   S_FINAL, S_HANDS, S_LARGEST, S_LOSING_STREAK, S_LOSSES,
                                   S_MAX_HITS, S_NET, S_PEAK, S_PUSHES, S_WAGERED, S_WINS,
                                   session_seed)
from strategies.base import N_BETS, P_ON_BANKROLL, P_ON_MAX, P_SIDE, Result, Strategy, View


def _head_params(strategy: Strategy) -> np.ndarray:
    """The common parameter head (edges, side bets) of any strategy."""
    from strategies.base import Builtin, ON_BANKROLL, ON_MAX, ON_PUSH, P_OWN

    if isinstance(strategy, Builtin):
        return strategy.encode()
    head = np.zeros(P_OWN)
    params = strategy.params
    head[P_ON_MAX] = ON_MAX[getattr(params, "on_max", "reset")]
    head[P_ON_BANKROLL] = ON_BANKROLL[getattr(params, "on_bankroll", "stop")]
    head[2] = ON_PUSH[getattr(params, "on_push", "stand")]
    for name, stake in dict(getattr(params, "side_bets", {}) or {}).items():
        head[P_SIDE + Bet(name).code] = stake
    return head


_BETS = tuple(Bet)
_BET_BY_NAME = {b.value: b for b in Bet} | {b: b for b in Bet}


def run_python(strategy: Strategy, seat_key: np.uint64, session_ids: np.ndarray,
               bounds: np.ndarray, winner: np.ndarray, hand_no: np.ndarray,
               shoe_no: np.ndarray, unit: np.ndarray, den: int, min_c: np.ndarray,
               max_c: np.ndarray, offered: np.ndarray, pb_together: bool,
               pairs_need_main: bool, bankroll0: int, stop_loss: int, win_goal: int,
               max_hands: int, ruin_below: int, use_cards: bool, cards: np.ndarray,
               full_counts: np.ndarray, ev_table: np.ndarray, evs_full: np.ndarray,
               stats: np.ndarray, wagered: np.ndarray, expected: np.ndarray,
               ledger: bool, led_idx: np.ndarray, led_cents: np.ndarray,
               led_net: np.ndarray, led_bank: np.ndarray) -> tuple[int, int, int]:
    """`run_compiled`, step for step, for any Strategy object, in plain Python.

    Written out in Python numbers rather than calling the compiled helpers,
    which cost more to call from Python than the work they do; a test runs
    every built-in strategy through both and compares the ledgers.
    """
    from backtest.rules import Winner

    p = [float(x) for x in _head_params(strategy)]
    side = [p[P_SIDE + b] for b in range(N_BETS)]
    has_side = any(x > 0.0 for x in side)
    reset_on_max = p[P_ON_MAX] == 0.0
    all_in = p[P_ON_BANKROLL] != 0.0
    min_l = [int(x) for x in min_c]
    max_l = [int(x) for x in max_c]
    offered_l = [bool(x) for x in offered]
    win_l = winner.tolist()
    hand_l = hand_no.tolist()
    shoe_l = shoe_no.tolist()
    unit_rows = [tuple(r) for r in unit.tolist()]
    winners = tuple(Winner)
    view = View()
    counts = full_counts.copy()
    evs = evs_full.copy()
    view._evs = evs
    view._counts = counts if use_cards else None
    ev_work = (np.zeros(10), np.zeros((10, 10, 2, 2)), np.zeros(16))
    seed_work = np.zeros(4, np.uint64)
    winner_ro = winner.view()
    winner_ro.flags.writeable = False
    scale = 100.0 * den
    evs_l = evs.tolist()
    rows = 0
    for j in range(session_ids.shape[0]):
        final = peak = bankroll0
        hands = bets = wag_total = net_total = drawdown = longest = cur = largest = 0
        max_hits = stops = wins = losses = pushes = below_min = 0
        wag = [0] * N_BETS
        exp_net = 0.0
        ended = ENDED_LIMIT
        strategy.start_session(int(session_seed(seat_key, int(session_ids[j]), seed_work)))
        last_net = 0
        lo, hi = int(bounds[j]), int(bounds[j + 1])
        shoe_start = lo
        for i in range(lo, hi):
            if hand_l[i] == 1:
                shoe_start = i
                if use_cards:
                    counts[:] = full_counts
            if max_hands >= 0 and hands >= max_hands:
                break
            if use_cards:
                ev_fill(counts, ev_table, evs, *ev_work)
                evs_l = evs.tolist()
            view._bankroll = final / scale
            view._hand = hand_l[i]
            view._session_hand = hands
            view._last_net = last_net / scale
            view._shoe = shoe_l[i]
            view._history = winner_ro[shoe_start:i]
            # limits: stakes to cents, side bets, the table minimum; over the maximum?
            for attempt in (0, 1):
                asked = _py_cents(_stake_list(strategy.stakes(view), strategy), side, has_side)
                if asked is None:
                    return PLACE_BAD_STAKE, i, rows
                cents = asked
                over = False
                for b in range(N_BETS):
                    c = cents[b]
                    if c > 0:
                        if c < min_l[b]:
                            cents[b] = min_l[b]
                            below_min += 1
                        if cents[b] > max_l[b]:
                            over = True
                if not over or attempt == 1:
                    break
                max_hits += 1
                if not reset_on_max:
                    break
                strategy.restart_progression()
            # place: cap, the table's rules, the bankroll
            total = 0
            code = PLACE_OK
            for b in range(N_BETS):
                if cents[b] > max_l[b]:
                    cents[b] = max_l[b]
                if cents[b] > 0 and not offered_l[b]:
                    code = PLACE_NOT_SETTLED
                total += cents[b]
            if code == PLACE_OK and not pb_together and cents[0] > 0 and cents[1] > 0:
                code = PLACE_FORBIDDEN
            if code == PLACE_OK and pairs_need_main and (cents[3] > 0 or cents[4] > 0) and \
                    cents[0] == 0 and cents[1] == 0 and cents[2] == 0:
                code = PLACE_FORBIDDEN
            if code == PLACE_OK and total * den > final:
                stops += 1
                if not all_in:
                    code = PLACE_RUIN
                else:
                    left = final // den
                    cents = [c * left // total for c in cents]
                    if sum(cents) == 0 or any(0 < cents[b] < min_l[b] for b in range(N_BETS)):
                        code = PLACE_RUIN
            if code == PLACE_RUIN:
                ended = ENDED_RUIN
                break
            if code != PLACE_OK:
                return code, i, rows
            # book: settle and count
            row = unit_rows[i]
            net = 0
            total = 0
            for b in range(N_BETS):
                c = cents[b]
                if c > 0:
                    net += c * row[b]
                    total += c
                    wag[b] += c * den
                    exp_net += c * 0.01 * evs_l[b]
            hands += 1
            if total > 0:
                bets += 1
                wag_total += total * den
                if total * den > largest:
                    largest = total * den
                if net > 0:
                    wins += 1
                    cur = 0
                elif net < 0:
                    losses += 1
                    cur += 1
                    if cur > longest:
                        longest = cur
                else:
                    pushes += 1
            net_total += net
            final += net
            if final > peak:
                peak = final
            if peak - final > drawdown:
                drawdown = peak - final
            last_net = net
            units = {bet: (u / den if u > -(2 ** 62) else 0.0) for bet, u in zip(_BETS, row)}
            placed = {_BETS[b]: cents[b] * 0.01 for b in range(N_BETS) if cents[b] > 0}
            nets = {_BETS[b]: cents[b] * row[b] / scale for b in range(N_BETS) if cents[b] > 0}
            strategy.update(view, Result(winners[win_l[i]], net / scale, placed, nets, units))
            if ledger:
                led_idx[rows] = i
                led_cents[rows] = cents
                led_net[rows] = net
                led_bank[rows] = final
                rows += 1
            if use_cards:
                for c in cards[i]:
                    if c:
                        counts[c & 15] -= 1
            if final < ruin_below:
                ended = ENDED_RUIN
            elif stop_loss >= 0 and bankroll0 - final >= stop_loss:
                ended = ENDED_STOP_LOSS
            elif win_goal >= 0 and final - bankroll0 >= win_goal:
                ended = ENDED_WIN_GOAL
            else:
                continue
            break
        st = stats[j]
        st[S_HANDS], st[S_BETS], st[S_WAGERED], st[S_NET] = hands, bets, wag_total, net_total
        st[S_FINAL], st[S_PEAK], st[S_DRAWDOWN], st[S_LOSING_STREAK] = final, peak, drawdown, longest
        st[S_LARGEST], st[S_MAX_HITS], st[S_BANKROLL_STOPS], st[S_ENDED] = largest, max_hits, stops, ended
        st[S_WINS], st[S_LOSSES], st[S_PUSHES], st[S_CUR_STREAK] = wins, losses, pushes, cur
        st[S_BELOW_MIN] = below_min
        wagered[j] = wag
        expected[j] = exp_net
    return PLACE_OK, -1, rows


def _py_cents(stakes: list[float], side: list[float], has_side: bool) -> list[int] | None:
    """`_to_cents` in Python numbers (None for a negative or NaN stake)."""
    cents = []
    any_bet = False
    for x in stakes:
        if not x >= 0.0:
            return None
        c = math.floor(x * 100.0 + 1e-6)
        c = _MAX_CENTS if c > _MAX_CENTS else c
        if c > 0:
            any_bet = True
        cents.append(c)
    if any_bet and has_side:
        for b in range(N_BETS):
            if side[b] > 0.0:
                cents[b] += math.floor(side[b] * 100.0 + 1e-6)
    return cents


def _stake_list(stakes: object, strategy: Strategy) -> list[float]:
    """A strategy's stakes mapping as a list in `Bet` order."""
    out = [0.0] * N_BETS
    if not stakes:
        return out
    _fill(out, stakes, strategy)
    return out


def _fill(out: list[float], stakes: object, strategy: Strategy) -> None:
    """A strategy's stakes mapping into the stake list (Bet order)."""
    from backtest.errors import StrategyError
    try:
        items = stakes.items()  # type: ignore[attr-defined]
    except AttributeError:
        raise StrategyError(f"strategy {strategy.name or type(strategy).__name__}: stakes() must "
                            f"return a mapping of bet to stake, got {stakes!r}") from None
    for key, value in items:
        bet = _BET_BY_NAME.get(key)
        if bet is None:
            raise StrategyError(f"strategy {strategy.name or type(strategy).__name__}: unknown bet "
                                f"{key!r} (bets are {', '.join(b.value for b in Bet)})")
        try:
            out[bet.code] = float(value)
        except (TypeError, ValueError):
            raise StrategyError(f"strategy {strategy.name or type(strategy).__name__}: the stake "
                                f"on {bet} must be a number, got {value!r}") from None

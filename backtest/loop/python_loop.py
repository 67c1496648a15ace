"""The session loop for any `Strategy` object, in plain Python.

`run_python` follows the table rules of `session_loop.run_sessions`, written
out in Python numbers (calling the compiled helpers from Python costs more
than the work they do), with a short path for the common hand. Tests run
every built-in strategy, and user classes that mirror some of them, through
both and compare the ledgers and every session statistic.
"""

from __future__ import annotations

from collections.abc import Callable
from sys import getrefcount
from typing import Any

import numpy as np

from backtest import odds
from backtest.core.rules import Bet
from backtest.loop.inputs import Dealt, Outputs, SharedEvs, Stops, Table
from backtest.loop.python_results import Raised, no_update, results_class, untraced
from backtest.loop.python_stakes import (
    BET_BY_NAME,
    TableRules,
    place_general,
    short_cents,
)
from backtest.loop.table_rules import (
    ENDED_LIMIT,
    ENDED_RUIN,
    PLACE_OK,
    PLACE_RUIN,
    S_BANKROLL_STOPS,
    S_BELOW_MIN,
    S_BETS,
    S_CUR_STREAK,
    S_DRAWDOWN,
    S_ENDED,
    S_FINAL,
    S_HANDS,
    S_LARGEST,
    S_LOSING_STREAK,
    S_LOSSES,
    S_MAX_HITS,
    S_NET,
    S_PEAK,
    S_PUSHES,
    S_WAGERED,
    S_WINS,
    ended_by,
    plays_on,
    session_seed,
    short_path_bounds,
)
from strategies.base import (
    N_BETS,
    P_ON_BANKROLL,
    P_ON_MAX,
    P_SIDE,
    Result,
    Strategy,
    View,
    head_params,
)

_BETS = tuple(Bet)
_CODE_BY_NAME = {key: bet.code for key, bet in BET_BY_NAME.items()}
_NUMBERS = frozenset((float, int))
_UNSEEN = (-1, ())  # a stake the short path has not seen (its cents, the bets placed)


def run_python(
    strategy: Strategy,
    seat_key: np.uint64,
    dealt: Dealt,
    table: Table,
    stop_rules: Stops,
    shared: SharedEvs,
    outputs: Outputs,
) -> tuple[int, int, int]:
    """`session_loop.run_sessions`'s table rules, for any Strategy object, in plain Python.

    Most hands take a short path: the strategy asks for one bet (or none), with
    no side bets, within the table's limits and the bankroll. Any other hand
    goes through `place_general`, the general rules written out as `limits` and
    `place` are. Money is summed in whole cents and multiplied by the
    denominator once a session, which is the same integer. Only what a
    strategy reads of its `View` and `Result` is worked out.
    """
    winner, hand_no, shoe_no, unit, cards, bounds, session_ids = dealt
    (
        den,
        min_c,
        max_c,
        offered,
        pb_together,
        pairs_need_main,
        full_counts,
        ev_table,
        evs_full,
        cov_a,
        nets,
    ) = table
    bankroll0, stop_loss, win_goal, max_hands, ruin_below = stop_rules
    ev_rows, ev_done, ev_deals, ev_kept = shared
    stats, wagered, expected, variance, ledger, led_idx, led_cents, led_net, led_bank = outputs
    cov = cov_a.tolist()
    use_cards = bool(strategy.uses_cards)
    p = [float(x) for x in head_params(strategy)]
    side = [p[P_SIDE + b] for b in range(N_BETS)]
    has_side = any(x > 0.0 for x in side)
    reset_on_max = p[P_ON_MAX] == 0.0
    all_in = p[P_ON_BANKROLL] != 0.0
    min_l = [int(x) for x in min_c]
    rules = TableRules(
        side, min_c, max_c, offered, pb_together, pairs_need_main, den, all_in, reset_on_max
    )
    # the short path's bounds on a single stake, by bet code; code 7, an unknown
    # bet, never takes it
    fast = np.zeros((2, N_BETS), np.int64)
    short_path_bounds(min_c, max_c, offered, pairs_need_main, 1 if has_side else 0, fast)
    low = fast[0].tolist() + [1]
    high = fast[1].tolist() + [0]
    hand_l = hand_no.tolist()
    cols: list[list[int] | None] = [None] * N_BETS  # unit results by bet, as they are needed
    winner_ro = winner.view()
    winner_ro.flags.writeable = False
    scale = 100.0 * den
    view = View(winner_ro, hand_l, shoe_no, scale)
    counts = full_counts.copy()
    evs = evs_full.copy()
    evs_ro = evs.view()
    evs_ro.flags.writeable = False
    # what a strategy reads (read-only): NaN for a bet the table does not
    # settle, as ev_fill gives a counter (the loop's own copy has 0 there, never used)
    view._evs = evs_ro if use_cards else np.where(offered, evs_full, np.nan)
    # what a strategy reads of the cards seen, read-only: the loop's own counts
    counts_ro = counts.view()
    counts_ro.flags.writeable = False
    view._counts = counts_ro if use_cards else None
    shared = ev_rows.shape[0] != 0
    rows_ro = ev_rows.view()
    rows_ro.flags.writeable = False
    ev_tables = odds.ev_work(ahead=True) if use_cards else ()
    # a lone counter's EVs of hands ahead_lo .. ahead_hi - 1 (`ev_fill_ahead`)
    ahead = odds.ahead_rows(ev_tables[2]) if use_cards and not shared else None
    kept = odds.ahead_kept(ev_tables[2]) if use_cards and not shared else None
    ahead_lo = ahead_hi = 0
    seed_work = np.zeros(4, np.uint64)
    evs_l = evs.tolist()
    # a counter's variance for each hand's composition, as run_sessions
    var_s = np.zeros(N_BETS)
    mom = np.zeros(odds.MOMENTS_WORK if use_cards else 0)

    def hand_variance(i: int) -> float:
        """s' C_h s for the stakes in var_s, as run_sessions works it out
        (one bet: from the EVs where they tell it)."""
        row = ev_kept[i] if shared else kept[i - ahead_lo]  # type: ignore[index]
        bet = int(odds.single_bet(var_s))
        if bet >= 0:
            now = ev_rows[i] if shared else evs
            one = float(odds.one_bet_variance(bet, var_s[bet], now, ev_table, row, nets))
            if one >= 0.0:
                return one
        return float(odds.stake_variance(var_s, counts, row, nets, ev_table, *ev_tables, mom))

    ask = strategy.stakes
    tell = None if no_update(strategy) else strategy.update
    keep = tell is not None or ledger  # what is placed is kept for a Result or the ledger
    # (a plain Result is never made: there is no update to give it to)
    new_result: Callable[[], Any] = results_class(winner, unit, den) if tell is not None else Result  # type: ignore[assignment]
    # one Result serves every hand while nothing but this loop holds it: a
    # strategy that keeps one (a reference the count sees) gets a new one next.
    # `held`: the count where the loop reads it, when only the loop holds it,
    # read on the first hand; never under a debugger or a tracer, which may
    # keep a copy of the loop's variables that the count would take for the loop
    result: Any = new_result() if tell is not None else None
    held = -1 if untraced() else -2
    cents_of: dict[float, int] = {}
    # by bet code (7 an unknown bet): stakes whose cents lie within the short
    # path's bounds, and their cents with the bets placed, ((code, cents),)
    fits: list[dict[float, tuple[int, tuple[tuple[int, int]]]]] = [{} for _ in range(N_BETS + 1)]
    code_of = _CODE_BY_NAME
    keep_lo, keep_hi = (int(x) for x in plays_on(ruin_below, stop_loss, win_goal, bankroll0))
    placed: tuple[tuple[int, int], ...] = ()
    rows = 0
    led_i: list[int] = []
    led_c: list[list[int]] = []
    led_n: list[int] = []
    led_b: list[int] = []
    i = int(bounds[0]) if len(bounds) else 0  # the hand an error is reported on
    try:
        for j in range(session_ids.shape[0]):
            # counted as they happen: wins, losses, pushes (hands with a stake) and the
            # stakes by bet, in cents; hands, bets, wagered and net follow from them
            final = peak = bankroll0
            drawdown = longest = cur = largest = 0
            max_hits = stops = wins = losses = pushes = below_min = 0
            wag = [0] * N_BETS
            exp_net = 0.0
            var_net = 0.0  # as run_sessions: sum of s' C s over the hands
            ended = ENDED_LIMIT
            strategy.start_session(int(session_seed(seat_key, int(session_ids[j]), seed_work)))
            lo, hi = int(bounds[j]), int(bounds[j + 1])
            end = hi if max_hands < 0 else min(hi, lo + max_hands)
            if not keep_lo <= final < keep_hi:  # as run_sessions: before the first hand
                ended = int(ended_by(final, ruin_below, stop_loss, bankroll0))
                end = lo
            view._lo = view._first = lo
            view._ticks = final
            view._last_ticks = 0
            hands = end - lo  # unless the session ends early
            for i in range(lo, end):
                if hand_l[i] == 1:
                    view._lo = i
                    if use_cards:
                        counts[:] = full_counts
                if use_cards:
                    # the table's EVs, worked out by the first seat to play the hand,
                    # for it and the hands after it in its shoe, as run_sessions
                    # does (what the strategy sees is read-only: other seats read
                    # the row)
                    if not shared:
                        if not ahead_lo <= i < ahead_hi:
                            ahead_hi = i + odds.ev_fill_ahead(
                                counts,
                                cards,
                                hand_no,
                                i,
                                ev_table,
                                ahead,
                                *ev_tables,
                                ev_deals,
                                kept,
                            )
                            ahead_lo = i
                        evs[:] = ahead[i - ahead_lo]
                    else:
                        if not ev_done[i]:
                            priced = odds.ev_fill_ahead(
                                counts,
                                cards,
                                hand_no,
                                i,
                                ev_table,
                                ev_rows[i:],
                                *ev_tables,
                                ev_deals,
                                ev_kept[i:],
                            )
                            ev_done[i : i + priced] = True
                        view._evs = rows_ro[i]
                    evs_l = view._evs.tolist()
                view._i = i
                asked = ask(view)
                # the short path: no bet, or one bet within the limits and the bankroll
                b = -1
                if type(asked) is dict:
                    if len(asked) == 1:
                        for key in asked:
                            b = code_of.get(key, 7)
                        x = asked[key]
                        # a stake seen before within the bet's bounds: its cents,
                        # and the bets placed if it is placed (`seen` says both
                        # for the stake the short path places)
                        try:
                            seen = fits[b].get(x, _UNSEEN)
                        except TypeError:  # unhashable: the general path says why
                            seen = _UNSEEN
                        c = seen[0]
                        if c == 100 and type(x) not in _NUMBERS:
                            c = -1  # True equals 1 and hashes as 1: not a stake
                        if c >= 0 and c * den <= final:
                            pass
                        else:
                            c = short_cents(x, b, low, high, fits, cents_of)
                            if low[b] <= c <= high[b] and c * den <= final:
                                seen = (c, ((b, c),))
                            elif b == 7 or c < 0:
                                b = -1
                            elif c == 0:
                                b = -2
                            elif c < min_l[b] and min_l[b] <= high[b] and min_l[b] * den <= final:
                                c = min_l[b]
                                seen = (c, ((b, c),))
                                below_min += 1
                            else:
                                b = -1
                    elif not asked:
                        b = -2
                elif asked is None:
                    b = -2
                if b >= 0:
                    col = cols[b]
                    if col is None:
                        col = cols[b] = unit[b].tolist()
                    net = c * col[i]
                    wag[b] += c
                    if use_cards:
                        exp_net += c * 0.01 * evs_l[b]
                        var_s[:] = 0.0
                        var_s[b] = c * 0.01
                        var_net += hand_variance(i)
                    else:
                        var_net += (c * 0.01) * (c * 0.01) * cov[b][b]
                    if c > largest:
                        largest = c
                    staked = True
                    if keep:
                        placed = seen[1]
                elif b == -2 and final >= 0:
                    net = 0
                    staked = False
                    placed = ()
                else:
                    code, cents, raised_n, hits, stop_n = place_general(
                        asked, strategy, view, rules, final
                    )
                    stops += stop_n
                    if code == PLACE_RUIN:  # unplayed: its raises and hits not counted
                        ended = ENDED_RUIN
                        hands = i - lo
                        break
                    below_min += raised_n
                    max_hits += hits
                    if code != PLACE_OK:
                        return (
                            code,
                            i,
                            _flush(
                                rows,
                                led_i,
                                led_c,
                                led_n,
                                led_b,
                                led_idx,
                                led_cents,
                                led_net,
                                led_bank,
                            ),
                        )
                    # book: settle and count
                    net = 0
                    total = 0
                    for b in range(N_BETS):
                        c = cents[b]
                        if c > 0:
                            col = cols[b]
                            if col is None:
                                col = cols[b] = unit[b].tolist()
                            net += c * col[i]
                            total += c
                            wag[b] += c
                            if use_cards:
                                exp_net += c * 0.01 * evs_l[b]
                                continue
                            for b2 in range(N_BETS):
                                c2 = cents[b2]
                                if c2 > 0:
                                    var_net += (c * 0.01) * (c2 * 0.01) * cov[b][b2]
                    if use_cards and total > 0:
                        var_s[:] = cents
                        var_s *= 0.01
                        var_net += hand_variance(i)
                    if total > largest:
                        largest = total
                    staked = total > 0
                    placed = tuple((b, c) for b, c in enumerate(cents) if c > 0)
                if not staked:
                    pass
                elif net > 0:
                    wins += 1
                    cur = 0
                    final += net
                    if final > peak:
                        peak = final
                elif net < 0:
                    losses += 1
                    cur += 1
                    if cur > longest:
                        longest = cur
                    final += net
                    if peak - final > drawdown:
                        drawdown = peak - final
                else:
                    pushes += 1
                if tell is not None:
                    # raw numbers; the dicts are worked out if the strategy reads them
                    count = getrefcount(result)
                    if count != held:
                        if held == -1:  # the first hand: no strategy has seen it yet
                            held = count
                        else:
                            result = new_result()
                    result.net = net / scale
                    result._placed = placed
                    result._i = i
                    tell(view, result)
                view._ticks = final
                view._last_ticks = net
                if ledger:
                    led_i.append(i)
                    row = [0] * N_BETS
                    for b, c in placed:
                        row[b] = c
                    led_c.append(row)
                    led_n.append(net)
                    led_b.append(final)
                if use_cards:
                    for card in cards[i]:
                        if card:
                            counts[card & 15] -= 1
                if keep_lo <= final < keep_hi:
                    continue
                ended = int(ended_by(final, ruin_below, stop_loss, bankroll0))
                hands = i + 1 - lo
                break
            wag_total = sum(wag)
            if not use_cards:  # as run_sessions: from the cents on each bet, once
                for b in range(N_BETS):
                    if wag[b] != 0:
                        exp_net += wag[b] * 0.01 * evs_l[b]
            st = stats[j]
            st[S_HANDS], st[S_BETS], st[S_WAGERED], st[S_NET] = (
                hands,
                wins + losses + pushes,
                wag_total * den,
                final - bankroll0,
            )
            st[S_FINAL], st[S_PEAK], st[S_DRAWDOWN], st[S_LOSING_STREAK] = (
                final,
                peak,
                drawdown,
                longest,
            )
            st[S_LARGEST], st[S_MAX_HITS], st[S_BANKROLL_STOPS], st[S_ENDED] = (
                largest * den,
                max_hits,
                stops,
                ended,
            )
            st[S_WINS], st[S_LOSSES], st[S_PUSHES], st[S_CUR_STREAK] = wins, losses, pushes, cur
            st[S_BELOW_MIN] = below_min
            wagered[j] = [w * den for w in wag]
            expected[j] = exp_net
            variance[j] = var_net
            if ledger:
                rows = _flush(
                    rows, led_i, led_c, led_n, led_b, led_idx, led_cents, led_net, led_bank
                )
    except (Exception, SystemExit) as exc:  # the strategy's code raised (or exited), or the
        raise Raised(i, exc) from exc  # loop's checks of what it returned did
    return PLACE_OK, -1, rows


def _flush(
    rows: int,
    led_i: list[int],
    led_c: list[list[int]],
    led_n: list[int],
    led_b: list[int],
    led_idx: np.ndarray,
    led_cents: np.ndarray,
    led_net: np.ndarray,
    led_bank: np.ndarray,
) -> int:
    """Write the ledger rows kept so far into the ledger's arrays; the rows written."""
    n = len(led_i)
    if n:
        led_idx[rows : rows + n] = led_i
        led_cents[rows : rows + n] = led_c
        led_net[rows : rows + n] = led_n
        led_bank[rows : rows + n] = led_b
        for kept in (led_i, led_c, led_n, led_b):
            kept.clear()
    return rows + n

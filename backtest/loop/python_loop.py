"""The session loop for any `Strategy` object, in plain Python.

`run_python` follows the table rules of `session_loop.run_sessions`, written
out in Python numbers (calling the compiled helpers from Python costs more
than the work they do), with a short path for the common hand
(`python_stakes.short_stake`). A counter's EVs and variance are
`python_counter`'s; the general path's stakes settled, the statistics and
the ledger written, `python_books`'.
Tests run every built-in strategy, and user classes that mirror some of
them, through both and compare the ledgers and every session statistic.
"""

from __future__ import annotations

from collections.abc import Callable
from sys import getrefcount
from typing import Any

import numpy as np

from backtest.loop.inputs import BASE_READS, BASE_WRITES, Dealt, Outputs, SharedEvs, Stops, Table
from backtest.loop.python_books import Ledger, book, write_session
from backtest.loop.python_builtins import hooks as builtin_hooks
from backtest.loop.python_counter import Counter
from backtest.loop.python_results import Raised, no_update, results_class, untraced
from backtest.loop.python_stakes import (
    BET_BY_NAME,
    NUMBERS,
    UNSEEN,
    TableRules,
    place_general,
    short_stake,
)
from backtest.loop.table_rules import (
    ENDED_LIMIT,
    ENDED_RUIN,
    PLACE_OK,
    PLACE_RUIN,
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

_CODE_BY_NAME = {key: bet.code for key, bet in BET_BY_NAME.items()}


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
    strategy reads of its `View` and `Result` is worked out. Returns (a
    PLACE_* code, the hand it refers to or -1, the ledger rows written).
    """
    seat = _Seat(strategy, seat_key, dealt, table, stop_rules, shared, outputs)
    for j in range(dealt.session_ids.shape[0]):
        code, at = _play_session(seat, j)
        if code != PLACE_OK:
            return code, at, seat.ledger.flush() if seat.ledger else 0
    return PLACE_OK, -1, seat.ledger.rows if seat.ledger else 0


class _Seat:
    """What every session of a seat shares: the strategy and what it is
    asked and told, the table's rules and the short path's bounds, the
    hands, and what is kept from session to session."""

    def __init__(
        self,
        strategy: Strategy,
        seat_key: np.uint64,
        dealt: Dealt,
        table: Table,
        stop_rules: Stops,
        shared: SharedEvs,
        outputs: Outputs,
    ) -> None:
        self.strategy, self.seat_key, self.dealt, self.stop_rules = (
            strategy,
            seat_key,
            dealt,
            stop_rules,
        )
        den, min_c, max_c, offered = table.den, table.min_c, table.max_c, table.offered
        self.den = den
        self.cov = table.cov.tolist()
        p = [float(x) for x in head_params(strategy)]
        side = [p[P_SIDE + b] for b in range(N_BETS)]
        self.rules = TableRules(
            side,
            min_c,
            max_c,
            offered,
            table.pb_together,
            table.pairs_need_main,
            den,
            p[P_ON_BANKROLL] != 0.0,
            p[P_ON_MAX] == 0.0,
        )
        self.min_l = [int(x) for x in min_c]
        # the short path's bounds on a single stake, by bet code; code N_BETS,
        # an unknown bet, never takes it
        fast = np.zeros((2, N_BETS), np.int64)
        has_side = any(x > 0.0 for x in side)
        short_path_bounds(min_c, max_c, offered, table.pairs_need_main, int(has_side), fast)
        self.low = fast[0].tolist() + [1]
        self.high = fast[1].tolist() + [0]
        # by bet code (N_BETS an unknown bet): stakes whose cents lie within the
        # short path's bounds, and their cents with the bets placed, ((code, cents),)
        self.fits: list[dict[float, tuple[int, tuple[tuple[int, int]]]]] = [
            {} for _ in range(N_BETS + 1)
        ]
        self.memo: dict[float, int] = {}  # the cents of the stakes seen
        self.hand_l = dealt.hand_no.tolist()
        self.cols: list[list[int] | None] = [None] * N_BETS  # unit results by bet, as needed
        winner_ro = dealt.winner.view()
        winner_ro.flags.writeable = False
        self.scale = 100.0 * den
        self.view = View(winner_ro, self.hand_l, dealt.shoe_no, self.scale)
        self.evs_l = table.evs_full.tolist()
        self.counter = None
        if strategy.uses_cards:
            self.counter = Counter(dealt.cards, dealt.hand_no, table, shared, self.view)
        else:
            # what a strategy reads: NaN for a bet the table does not settle,
            # as ev_fill gives a counter (the loop's own list has 0 there)
            self.view._evs = np.where(offered, table.evs_full, np.nan)
            self.view._counts = None
        # a built-in is asked as the compiled loop asks it; any other through the Strategy API
        direct = builtin_hooks(strategy, dealt.unit, den)
        if direct is not None:
            self.ask, self.tell = direct
        else:
            self.ask = strategy.stakes
            self.tell = None if no_update(strategy) else strategy.update
        # what is placed is kept for a Result or the ledger (a plain Result is
        # never made: there is no update to give it to)
        self.outputs = outputs[:4]  # each session's statistics, stakes, expected net, variance
        self.ledger = Ledger(*outputs[5:9]) if outputs.ledger else None
        # the baseline's stakes on each hand: written by the baseline, read by
        # the other seats (each plays after it), as run_sessions does
        self.largest, self.cross = outputs.largest, outputs.cross
        self.base_out = outputs.base_cents if outputs.base_role == BASE_WRITES else None
        self.base_in: list[list[int]] | None = (
            outputs.base_cents.tolist() if outputs.base_role == BASE_READS else None
        )
        self.keep = self.tell is not None or self.ledger is not None
        make: Any = (
            results_class(dealt.winner, dealt.unit, den) if self.tell is not None else Result
        )
        self.new_result: Callable[[], Any] = make
        # one Result serves every hand while nothing but the loop holds it: a
        # strategy that keeps one (a reference the count sees) gets a new one
        # next. `held`: the count where the loop reads it, when only the loop
        # holds it, read on the first hand; never under a debugger or a
        # tracer, which may keep a copy of the loop's variables that the
        # count would take for the loop
        self.result: Any = self.new_result() if self.tell is not None else None
        self.held = -1 if untraced() else -2
        self.keep_lo, self.keep_hi = (
            int(x)
            for x in plays_on(
                stop_rules.ruin_below,
                stop_rules.stop_loss,
                stop_rules.win_goal,
                stop_rules.bankroll0,
            )
        )
        self.seed_work = np.zeros(4, np.uint64)
        bounds = dealt.bounds
        self.at = int(bounds[0]) if len(bounds) else 0  # the hand an error is reported on
        #: what `_play_session` reads, in one tuple
        self.fixed = (
            strategy, den, self.view, self.counter, self.ledger, self.hand_l, self.cols,
            dealt.unit, self.cov, self.scale, self.ask, self.tell, self.keep, self.keep_lo,
            self.keep_hi, _CODE_BY_NAME, self.fits,
            (self.low, self.high, self.min_l, self.fits, self.memo, den),
            self.evs_l, bounds, dealt.session_ids,
        )  # fmt: skip


def _play_session(seat: _Seat, j: int) -> tuple[int, int]:
    """Play session `j` and write its statistics (and ledger rows): PLACE_OK
    and -1, or a PLACE_* error code and the hand it refers to. An error the
    strategy raises is `Raised`."""
    (
        strategy, den, view, counter, ledger, hand_l, cols, unit, cov, scale, ask, tell, keep,
        keep_lo, keep_hi, code_of, fits, short, evs_l, bounds, session_ids,
    ) = seat.fixed  # fmt: skip
    bankroll0, stop_loss, win_goal, max_hands, ruin_below = seat.stop_rules
    result, held = seat.result, seat.held
    seat.result = None  # the loop's one reference to it while the session is played
    if ledger is not None:
        led_i, led_c, led_n, led_b = ledger.i, ledger.c, ledger.n, ledger.b
    placed: tuple[tuple[int, int], ...] = ()
    i = seat.at
    try:
        # counted as they happen: wins, losses, pushes (hands with a stake) and the
        # stakes by bet, in cents; hands, bets, wagered and net follow from them
        final = peak = bankroll0
        drawdown = longest = cur = largest = 0
        max_hits = stops = wins = losses = pushes = below_min = 0
        wag = [0] * N_BETS
        exp_net = 0.0
        var_net = 0.0  # as run_sessions: sum of s' C s over the hands
        var_max = 0.0  # the largest one hand's s' C s
        cross = 0.0  # the covariance with the baseline's net: sum of s_base' C s
        base_in, base_out = seat.base_in, seat.base_out
        ended = ENDED_LIMIT
        seed = session_seed(seat.seat_key, int(session_ids[j]), seat.seed_work)
        strategy.start_session(int(seed))
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
                if counter is not None:
                    counter.new_shoe()
            if counter is not None:
                evs_l = counter.evs_before(i)
            view._i = i
            var_before = var_net
            asked = ask(view)
            # the short path: no bet, or one bet within the limits and the bankroll
            b = -1
            if type(asked) is dict:
                if len(asked) == 1:
                    for key in asked:
                        b = code_of.get(key, N_BETS)
                    x = asked[key]
                    # a stake seen before within the bet's bounds: its cents,
                    # and the bets placed if it is placed
                    try:
                        c, seen = fits[b].get(x, UNSEEN)
                    except TypeError:  # unhashable: the general path says why
                        c, seen = UNSEEN
                    if c == 100 and type(x) not in NUMBERS:
                        c = -1  # True equals 1 and hashes as 1: not a stake
                    if c < 0 or c * den > final:
                        b, c, seen, raised = short_stake(b, x, *short, final)
                        below_min += raised
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
                if counter is not None:
                    exp_net += c * 0.01 * evs_l[b]
                    var_h = counter.one_variance(i, b, c)
                    var_net += var_h
                    if base_in is not None:
                        mine = [0] * N_BETS
                        mine[b] = c
                        cross += _counter_cross(counter, i, base_in[i], mine, var_h)
                else:
                    var_net += (c * 0.01) * (c * 0.01) * cov[b][b]
                    if base_in is not None:
                        row_b = base_in[i]
                        for b2 in range(N_BETS):
                            bc = row_b[b2]
                            if bc > 0:
                                cross += (c * 0.01) * (bc * 0.01) * cov[b][b2]
                if base_out is not None:
                    base_out[i, b] = c
                if c > largest:
                    largest = c
                staked = True
                if keep:
                    placed = seen
            elif b == -2 and final >= 0:
                net = 0
                staked = False
                placed = ()
            else:
                code, cents, raised_n, hits, stop_n = place_general(
                    asked, strategy, view, seat.rules, final
                )
                stops += stop_n
                if code == PLACE_RUIN:  # unplayed: its raises and hits not counted
                    ended = ENDED_RUIN
                    hands = i - lo
                    break
                below_min += raised_n
                max_hits += hits
                if code != PLACE_OK:
                    return code, i
                net, total, exp_net, var_net = book(
                    cents, i, wag, cols, unit, evs_l, cov, counter, exp_net, var_net
                )
                if total > 0 and base_in is not None:
                    if counter is not None:
                        # this seat's s' C_h s, as `book` added it
                        var_h = counter.variance(i, cents)
                        cross += _counter_cross(counter, i, base_in[i], cents, var_h)
                    else:
                        row_b = base_in[i]
                        for b in range(N_BETS):
                            c = cents[b]
                            if c > 0:
                                for b2 in range(N_BETS):
                                    bc = row_b[b2]
                                    if bc > 0:
                                        cross += (c * 0.01) * (bc * 0.01) * cov[b][b2]
                if total > 0 and base_out is not None:
                    base_out[i] = cents
                if total > largest:
                    largest = total
                staked = total > 0
                placed = tuple((b, c) for b, c in enumerate(cents) if c > 0)
            if var_net - var_before > var_max:
                var_max = var_net - var_before
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
                        result = seat.new_result()
                result.net = net / scale
                result._placed = placed
                result._i = i
                tell(view, result)
            view._ticks = final
            view._last_ticks = net
            if ledger is not None:
                led_i.append(i)
                row = [0] * N_BETS
                for b, c in placed:
                    row[b] = c
                led_c.append(row)
                led_n.append(net)
                led_b.append(final)
            if counter is not None:
                counter.take_out(i)
            if keep_lo <= final < keep_hi:
                continue
            ended = int(ended_by(final, ruin_below, stop_loss, bankroll0))
            hands = i + 1 - lo
            break
    except (Exception, SystemExit) as exc:  # the strategy's code raised (or exited), or the
        raise Raised(i, exc) from exc  # loop's checks of what it returned did
    seat.result, seat.held, seat.at = result, held, i
    stats, wagered, expected, variance = seat.outputs
    if counter is None:  # as run_sessions: from the cents on each bet, once
        for b in range(N_BETS):
            if wag[b] != 0:
                exp_net += wag[b] * 0.01 * evs_l[b]
    write_session(
        stats[j], den, bankroll0, hands, wins, losses, pushes, wag, final, peak, drawdown,
        longest, largest, max_hits, stops, ended, cur, below_min,
    )  # fmt: skip
    wagered[j] = [w * den for w in wag]
    expected[j] = exp_net
    variance[j] = var_net
    seat.largest[j] = var_max
    seat.cross[j] = cross
    if ledger is not None:
        ledger.flush()
    return PLACE_OK, -1


def _counter_cross(
    counter: Counter, i: int, base: list[int], mine: list[int], var_h: float
) -> float:
    """A counter's s_base' C_h s on hand `i`, as run_sessions works it out
    (`counter_hand.cross_variance`): (v(a + b) - v(a) - v(b)) / 2, `var_h`
    being v(b), this seat's; 0 where the baseline staked nothing."""
    if not any(c > 0 for c in base):
        return 0.0
    v_a = counter.variance(i, base)
    v_ab = counter.variance(i, [x + y for x, y in zip(base, mine, strict=True)])
    return (v_ab - v_a - var_h) * 0.5

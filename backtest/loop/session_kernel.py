"""The session loop's compiled body (`sessions_kernel`): one seat over the
hands of many sessions, with the table rules, settlement, the counter's
exact EVs and the session statistics; `session_loop` compiles it (once for
the built-ins, once for a user's classes) and calls it. Its smaller parts
are in `session_parts` (inlined) and a counter's work in `counter_hand`.
Compiled without reference counting, it allocates nothing.
"""

from __future__ import annotations

import numpy as np

from backtest.loop.counter_hand import (
    Counted,
    count_up,
    cross_variance,
    hand_variance,
    price_ahead,
)
from backtest.loop.inputs import BASE_READS, BASE_WRITES
from backtest.loop.session_parts import (
    end_session,
    learn,
    ledger_row,
    put_stake,
    start_seat,
    tell_context,
    undeclared,
)
from backtest.loop.table_rules import (
    ENDED_LIMIT,
    ENDED_RUIN,
    MAX_CENTS,
    PLACE_OK,
    PLACE_RAISED,
    PLACE_RUIN,
    PLACE_UNDECLARED,
    ended_by,
    limits,
    place,
    plays_on,
    session_seed,
)
from backtest.odds import (
    ahead_kept_compiled,
    ahead_rows_compiled,
    pair_counts,
    pair_evs,
)
from strategies import dispatch
from strategies.base import (
    N_BETS,
    P_ON_BANKROLL,
    P_ON_MAX,
    SEVERAL,
)
from strategies.slots import RAISED


def sessions_kernel(seat, fns, dealt, table, stops, shared, outputs, work):  # type: ignore[no-untyped-def]
    """`run_sessions`, compiled: sessions bounds[j]..bounds[j+1] (hand
    indices) for one seat.

    A counter reads the exact EVs before each hand from the table's shared
    rows (`shared_evs`), working them out for a hand no seat has played yet.
    The loop reads and writes only the bets the strategy can place
    (`seat.active`). Compiled without reference counting, it allocates
    nothing; a session's statistics live in local variables until it ends.
    """
    kind, slot, writes_out, learns, reads_ctx, cards_seen = dispatch.fixed(fns, seat)
    p = seat.p
    active = seat.active
    winner, hand_no, shoe_no, unit = dealt.winner, dealt.hand_no, dealt.shoe_no, dealt.unit
    cards = dealt.cards
    bounds, session_ids = dealt.bounds, dealt.session_ids
    den, min_c, max_c, offered = table.den, table.min_c, table.max_c, table.offered
    pb_together, pairs_need_main = table.pb_together, table.pairs_need_main
    full_counts, ev_table, evs_full = table.full_counts, table.ev_table, table.evs_full
    cov = table.cov
    bankroll0, stop_loss, win_goal = stops.bankroll0, stops.stop_loss, stops.win_goal
    max_hands, ruin_below = stops.max_hands, stops.ruin_below
    ev_rows, ev_done, ev_deals, ev_kept = shared.rows, shared.done, shared.deals, shared.kept
    stats, wagered, expected = outputs.stats, outputs.wagered, outputs.expected
    variance, ledger = outputs.variance, outputs.ledger
    largest_v, cross_v, base_cents = outputs.largest, outputs.cross, outputs.base_cents
    writes_base = outputs.base_role == BASE_WRITES
    reads_base = outputs.base_role == BASE_READS
    s, si, ctx, out, stakes, unit_f = work.s, work.si, work.ctx, work.out, work.stakes, work.unit_f
    cents, side_c, evs, seed_work = work.cents, work.side_c, work.evs, work.seed_work
    counts, ev_nodes, ev_coef, ev_work_ = work.counts, work.ev_nodes, work.ev_coef, work.ev_work
    fast_c, allowed = work.fast_c, work.allowed
    evs_seen, hist_seen = work.evs_seen, work.hist_seen
    user = dispatch.is_user(fns)  # known while compiling
    counted = -1  # the hand `counts` is brought up to (the cards before it taken out)
    # the cards left and the ordered pairs of one rank among them, kept as the
    # cards come out: all the pair bets' EVs need (`pair_evs`)
    full_left, full_same = pair_counts(full_counts)
    left = full_left
    same = full_same
    start_seat(p, evs_full, evs, out, cents, stakes, unit_f, side_c, table, fast_c)
    reset_on_max = p[P_ON_MAX] == 0.0
    shared_rows = ev_rows.shape[0] != 0  # the table's EV rows, when two seats or more count
    # a lone counter's EVs, worked out LANES hands at a time: those of hands
    # ahead_lo .. ahead_hi - 1 (whatever the session: they depend on the cards)
    ahead = ev_rows
    ahead_k = ev_kept  # what is kept beside them, for the variance
    if cards_seen and ev_deals and not shared_rows:
        ahead = ahead_rows_compiled(ev_work_)
        ahead_k = ahead_kept_compiled(ev_work_)
    # (not the literal 0: numba would compile `price_ahead` for it, then again)
    ahead_lo = ahead_hi = np.int64(0)
    if cards_seen and not ev_deals:
        for b in range(N_BETS):
            evs[b] = np.nan  # `pair_evs` writes the pair bets' places alone
    all_in = p[P_ON_BANKROLL] != 0.0
    na = active.shape[0]
    # a strategy that stakes one bet, on every hand: its update reads that bet alone
    single = slot >= 0
    the_bet = int(p[slot]) if single else -1
    rows = 0
    scale = 100.0 * den
    keep_lo, keep_hi = plays_on(ruin_below, stop_loss, win_goal, bankroll0)
    for j in range(session_ids.shape[0]):
        wag = wagered[j]  # this session's stakes by bet: cents, then ticks at its end
        for b in range(N_BETS):
            wag[b] = 0
        final = peak = bankroll0
        hands = bets = drawdown = longest = cur = largest = 0
        max_hits = stops_n = wins = losses = below_min = 0
        exp_net = 0.0
        var_net = 0.0  # the net's variance, given the stakes: sum of s' C s over the hands
        var_max = 0.0  # the largest one hand's s' C s
        cross = 0.0  # the covariance with the baseline's net: sum of s_base' C s
        ended = ENDED_LIMIT
        seed = session_seed(seat.key, session_ids[j], seed_work)
        if dispatch.init_any(kind, fns, p, s, si, seed) != 0:
            return PLACE_RAISED, bounds[j], rows
        last_net = 0
        shoe_start = lo = bounds[j]
        end = bounds[j + 1] if max_hands < 0 else min(bounds[j + 1], lo + max_hands)
        if not keep_lo <= final < keep_hi:
            # a bankroll below every table minimum the seat could bet: ruined
            # before the first hand, whether or not it would bet on that hand
            ended = ended_by(final, ruin_below, stop_loss, bankroll0)
            end = lo
        for k in range(lo, end):
            i = np.uint64(k)  # unsigned: its uses skip the negative-index fix-up
            var_before = var_net
            if hand_no[i] == 1:
                shoe_start = k
            if cards_seen:
                # the exact EVs for the cards not yet seen: the table's, worked
                # out once by the first seat to play this hand (microseconds),
                # for it and the hands after it in its shoe; the counts are
                # brought up to it only then, from the shoe's first hand or
                # from the last hand counted
                if shared_rows and ev_done[i]:
                    for b in range(N_BETS):
                        evs[b] = ev_rows[i, b]
                elif not shared_rows and ahead_lo <= k < ahead_hi:
                    for b in range(N_BETS):
                        evs[b] = ahead[k - ahead_lo, b]
                else:
                    left, same = count_up(
                        counts, cards, full_counts, counted, shoe_start, k, left, same
                    )
                    counted = k
                    if ev_deals:
                        ahead_lo, ahead_hi = price_ahead(
                            k,
                            shared_rows,
                            ev_rows,
                            ev_done,
                            ev_kept,
                            ahead,
                            ahead_k,
                            ahead_lo,
                            ahead_hi,
                            counts,
                            cards,
                            hand_no,
                            ev_table,
                            evs,
                            ev_nodes,
                            ev_coef,
                            ev_work_,
                        )
                    else:
                        pair_evs(float(same), float(left), ev_table, evs)
                        if shared_rows:
                            for b in range(N_BETS):
                                ev_rows[i, b] = evs[b]
                            for b in range(ev_kept.shape[1]):
                                ev_kept[i, b] = np.nan  # nothing kept: counted if staked
                            ev_done[i] = True
            if reads_ctx:
                tell_context(
                    ctx,
                    final / scale,
                    hand_no[i],
                    hands,
                    last_net / scale,
                    shoe_no[i],
                    k,
                    shoe_start,
                )
            hist = winner[shoe_start:k]
            evs_d = evs
            if user:
                # a user's function reads copies: what it writes there changes
                # nothing of the table's (the winners, the shared EVs) nor of
                # the loop's (the EVs its expected net is priced at)
                if k > shoe_start:
                    hist_seen[k - shoe_start - 1] = winner[k - 1]
                hist = hist_seen[: k - shoe_start]
                for b in range(N_BETS):
                    evs_seen[b] = evs[b]
                evs_d = evs_seen
            # the common hand: one bet, no side bets, within the limits and the
            # bankroll, settled in registers (the general rules below give the
            # same result for it; they run for every other hand)
            if writes_out or user:
                for a in range(na):
                    out[active[a]] = 0.0
            pick, x = dispatch.decide_any(kind, fns, p, s, si, ctx, hist, evs_d, out)
            if user and (pick == RAISED or undeclared(pick, x, out, allowed)):
                return PLACE_RAISED if pick == RAISED else PLACE_UNDECLARED, k, rows
            one = -1
            if not single and pick == SEVERAL:
                # the stakes are in `out`: one bet, or several (-2); never for
                # a strategy of one bet
                for a in range(na):
                    y = out[active[a]]
                    if y != 0.0:
                        one = int(np.int64(active[a])) if one == -1 else -2
                        x = y
            else:
                # without a branch: for the shoe readers, whether they bet is a
                # coin toss to the processor
                one = pick if x != 0.0 else -1
            cc = 0
            u1 = np.uint64(max(one, 0))  # (read only where one >= 0)
            if one >= 0 and x > 0.0:
                # whole cents: truncation is the floor of a positive number
                cc = int(min(x * 100.0 + 1e-6, float(MAX_CENTS)))
                if not (fast_c[0, u1] <= cc and cc <= fast_c[1, u1] and cc * den <= final):
                    cc = 0
            quiet = one == -1  # every stake zero: the hand is sat out
            if cc > 0:
                net = cc * unit[u1, i]
                total = cc
                wag[u1] += cc
                if cards_seen:
                    exp_net += cc * 0.01 * evs[u1]
                else:
                    var_net += (cc * 0.01) * (cc * 0.01) * cov[u1, u1]
            else:
                one = -1
            if quiet:
                # what the general rules make of no stakes: nothing placed or settled
                for a in range(na):
                    cents[active[a]] = 0
                net = 0
                total = 0
            elif one < 0:
                # a stake the bankroll refuses ends the session unplayed: its
                # raises and maximum hits are not counted
                below_before = below_min
                hits_before = max_hits
                if pick != SEVERAL:
                    # the stake the strategy returned, where the general rules read it
                    for a in range(na):
                        out[active[a]] = 0.0
                    put_stake(out, pick, x)
                code, below = limits(out, side_c, cents, min_c, max_c, active)
                below_min += below
                if code >= 10:
                    max_hits += 1
                    code -= 10
                    if reset_on_max:
                        if dispatch.reset_any(kind, fns, p, s, si) != 0:
                            return PLACE_RAISED, k, rows
                        for a in range(na):
                            out[active[a]] = 0.0
                        pick, x = dispatch.decide_again(kind, fns, p, s, si, ctx, hist, evs_d, out)
                        if user and (pick == RAISED or undeclared(pick, x, out, allowed)):
                            return PLACE_RAISED if pick == RAISED else PLACE_UNDECLARED, k, rows
                        if pick != SEVERAL:
                            put_stake(out, pick, x)
                        code, below = limits(out, side_c, cents, min_c, max_c, active)
                        below_min += below
                        code %= 10
                if code == PLACE_OK:
                    code, stopped = place(
                        all_in,
                        cents,
                        min_c,
                        max_c,
                        final,
                        den,
                        offered,
                        pb_together,
                        pairs_need_main,
                        active,
                    )
                    stops_n += stopped
                if code == PLACE_RUIN:
                    below_min = below_before
                    max_hits = hits_before
                    ended = ENDED_RUIN
                    break
                if code != PLACE_OK:
                    return code, k, rows
                # settle, and count
                net = 0
                total = 0
                for a in range(na):
                    b = active[a]
                    c = cents[b]
                    if c > 0:
                        net += c * unit[b, i]
                        total += c
                        wag[b] += c
                        if cards_seen:
                            exp_net += c * 0.01 * evs[b]
                            continue
                        for a2 in range(na):
                            c2 = cents[active[a2]]
                            if c2 > 0:
                                var_net += (c * 0.01) * (c2 * 0.01) * cov[b, active[a2]]
            if cards_seen and total > 0:
                # a counter's variance for this hand's composition: s' C_h s,
                # from what is kept beside its EVs (one bet: from the EVs, mostly)
                row = ev_kept[i] if shared_rows else (ahead_k[k - ahead_lo] if ev_deals else evs)
                var_h, at = hand_variance(
                    k, one, cc, cents, active, evs, row, cards, table, work,
                    Counted(shoe_start, counted, left, same),
                )  # fmt: skip
                var_net += var_h
                if reads_base:
                    cov_h, at = cross_variance(
                        k, var_h, one, cc, cents, active, base_cents, evs, row, cards, table,
                        work, at,
                    )  # fmt: skip
                    cross += cov_h
                counted, left, same = at.counted, at.left, at.same
            elif reads_base and total > 0:
                # s_base' C s, C the shoe's covariance, in the order of s' C s above
                if one >= 0:
                    for b2 in range(N_BETS):
                        bc = base_cents[i, b2]
                        if bc > 0:
                            cross += (cc * 0.01) * (bc * 0.01) * cov[u1, b2]
                else:
                    for a in range(na):
                        b = active[a]
                        c = cents[b]
                        if c > 0:
                            for b2 in range(N_BETS):
                                bc = base_cents[i, b2]
                                if bc > 0:
                                    cross += (c * 0.01) * (bc * 0.01) * cov[b, b2]
            if writes_base and total > 0:
                if one >= 0:
                    base_cents[i, u1] = cc
                else:
                    for a in range(na):
                        base_cents[i, active[a]] = cents[active[a]]
            var_max = max(var_max, var_net - var_before)
            hands += 1
            # counted without branches: the outcome of a hand is a coin toss
            # to the processor's branch predictor
            placed = int(total > 0)
            won = int(net > 0)
            lost = int(net < 0)
            bets += placed
            largest = max(largest, total)
            wins += won
            losses += lost
            cur = (cur + lost) * (1 - won)
            longest = max(longest, cur)
            final += net
            peak = max(peak, final)
            drawdown = max(drawdown, peak - final)
            last_net = net
            if learns and learn(
                kind,
                fns,
                p,
                s,
                si,
                ctx,
                stakes,
                unit_f,
                unit,
                i,
                den,
                the_bet,
                one,
                cc,
                cents,
                active,
                net / scale,
            ):
                return PLACE_RAISED, k, rows
            if ledger:
                ledger_row(outputs, rows, k, cents, one, cc, net, final)
                rows += 1
            if keep_lo <= final < keep_hi:
                continue
            ended = ended_by(final, ruin_below, stop_loss, bankroll0)
            break
        expected[j] = end_session(
            stats[j],
            wag,
            den,
            evs,
            cards_seen,
            exp_net,
            hands,
            bets,
            final,
            bankroll0,
            peak,
            drawdown,
            longest,
            largest,
            max_hits,
            stops_n,
            ended,
            wins,
            losses,
            cur,
            below_min,
        )
        variance[j] = var_net
        largest_v[j] = var_max
        cross_v[j] = cross
    return PLACE_OK, -1, rows

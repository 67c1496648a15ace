"""A built-in strategy in the plain-Python loop: its functions called as the
compiled loop calls them (`session_kernel`), not through the Strategy API.

`Compiled.stakes` and `Compiled.update` serve any caller: they fill the
context, zero the stakes, and turn the arrays into dicts and back on every
hand, which is most of the time a built-in takes in plain Python. Here the
loop asks a built-in for what the compiled loop asks it, from the same
facts (`strategies.compiled.facts`): the context only for one that reads
it, the stakes array only for one that writes it, and after the hand the
stakes and unit results of the bets it can place alone. Tests hold every
built-in to the same ledgers both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from backtest.core.rules import Bet
from backtest.jit.lazy_jit import as_called
from strategies.base import (
    CTX_BANKROLL,
    CTX_HAND,
    CTX_LAST_NET,
    CTX_SESSION_HAND,
    CTX_SHOE,
    SEVERAL,
    Compiled,
    Result,
    View,
)
from strategies.compiled import USER, facts, kind_of

_BETS = tuple(Bet)

Ask = Callable[[View], Any]
Tell = Callable[[View, Result], None]


def hooks(strategy: object, unit: np.ndarray, den: int) -> tuple[Ask, Tell | None] | None:
    """(ask, tell) for a built-in strategy's class exactly (tell None: it
    learns nothing), reading the hands' unit results `unit` (bets by hands,
    in ticks per cent); None for any other strategy, which the loop asks
    through its `stakes` and `update`."""
    if not isinstance(strategy, Compiled) or kind_of(strategy) == USER:
        return None
    cls = type(strategy)
    f = facts(cls)
    strategy._arrays()
    p, s, si, ctx = strategy._p, strategy._s, strategy._si, strategy._ctx
    out, stakes_a, unit_a = strategy._out, strategy._stakes, strategy._unit
    decide: Callable[..., Any] = as_called(cls.k_decide)
    slot_bet = _BETS[int(p[f.slot])] if f.slot >= 0 else None
    reads_ctx, picks, writes_out = f.reads_ctx, f.picks, f.writes_out

    def several() -> dict[Bet, float]:
        # the stakes in `out`, which is left zero for the next hand
        placed = {_BETS[b]: x for b, x in enumerate(out.tolist()) if x != 0.0}
        out[:] = 0.0
        return placed

    def ask(view: View) -> dict[Bet, float]:
        if reads_ctx:
            ctx[CTX_BANKROLL] = view.bankroll
            ctx[CTX_HAND] = view.hand
            ctx[CTX_SESSION_HAND] = view.session_hand
            ctx[CTX_LAST_NET] = view.last_net
            ctx[CTX_SHOE] = view.shoe
        value = decide(p, s, si, ctx, view._history, view._evs, out)
        if slot_bet is not None:
            x = float(value)
            return {slot_bet: x} if x != 0.0 else {}
        if picks:
            bet, stake = value
            if bet == SEVERAL:
                return several()
            x = float(stake)
            return {_BETS[int(bet)]: x} if x != 0.0 else {}
        if writes_out:
            return several()
        return {}

    if not f.learns:
        return ask, None
    update = as_called(cls.k_update)
    active = sorted(b.code for b in strategy.possible_bets())
    # each active bet's unit results, as Python numbers, read when first needed
    cols: list[list[int] | None] = [None] * len(_BETS)

    def tell(view: View, result: Any) -> None:
        i = result._i
        for b in active:
            stakes_a[b] = 0.0
            col = cols[b]
            if col is None:
                col = cols[b] = unit[b].tolist()
            u = col[i]
            unit_a[b] = u / den if u > -(2**62) else 0.0
        for b, c in result._placed:
            stakes_a[b] = c * 0.01
        update(p, s, si, ctx, stakes_a, unit_a, result.net)

    return ask, tell

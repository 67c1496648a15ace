"""The rules' settlement, vectorised over `Hands`.

`unit_results` gives, for every hand and every bet, the net result of one
unit staked, as a whole number of 1/D units where D is the rules' money
denominator (e.g. D = 20 under a 5% commission: a Banker win is 19). The
engine multiplies stakes in cents by these to get exact money; nothing is
rounded. Each entry agrees with `settlement.bet_result` (tested hand by hand, at
every preset and at tables drawn from every setting of `Rules`).
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache
from typing import Any

import numpy as np

from backtest.core import settlement
from backtest.core.hands import Hands
from backtest.core.rules import Bet, Rules
from backtest.jit.buffers import Buffers
from backtest.jit.lazy_jit import kernel

#: marks a result the recorded shoe cannot give (a needed column is missing)
UNKNOWN = np.iinfo(np.int64).min


def unit_results(
    hands: Hands, rules: Rules, bets: Collection[Bet] | None = None, buffers: Buffers | None = None
) -> np.ndarray:
    """(len(Bet), n) int64: row b is bet b's net per unit staked on every
    hand, in 1/rules.money_denominator.

    One row per bet, so that a loop over the hands that reads one bet streams
    through 8 bytes a hand rather than a row of every bet. A bet the
    table does not offer, or one the recorded shoe cannot settle (a needed
    column is missing), is UNKNOWN on every hand.

    `bets`: only these rows are worked out (default: all); the others are
    zero. The engine asks only for the bets its seats can place, and gives
    `buffers` to write in: the rows not asked for are then left as they
    were (whatever a chunk before wrote there), for no one reads them.

    Each hand's events (`settlement.SettleEvent`) are read into a mask, and
    each row is the settlement's net for that mask (`settlement.unit_table`).
    """
    wanted = set(Bet) if bets is None else set(bets)
    # per row: 0 not wanted, 1 worked out, 2 UNKNOWN (not offered, or not settleable)
    rows = np.array(
        [
            0
            if b not in wanted
            else 2
            if rules.payout(b) is None or missing_for(b, hands, rules)
            else 1
            for b in Bet
        ],
        dtype=np.int8,
    )
    shape = (len(Bet), len(hands))
    out = np.zeros(shape, np.int64) if buffers is None else buffers.empty("unit", shape, np.int64)
    _unit_results(
        hands.winner,
        hands.player_total,
        hands.banker_total,
        hands.player_pair,
        hands.banker_pair,
        hands.player_card_count,
        hands.banker_card_count,
        _unit_table(rules),
        rows,
        out,
    )
    return out


@lru_cache(maxsize=64)
def _unit_table(rules: Rules) -> np.ndarray:
    table = np.array(settlement.unit_table(rules), dtype=np.int64)
    table.flags.writeable = False
    return table


_PW, _BW, _TIE, _B6, _B7, _P8, _PP, _BP = (1 << int(e) for e in settlement.SettleEvent)
assert [_PW, _BW, _TIE, _B6, _B7, _P8, _PP, _BP] == [e.bit for e in settlement.SettleEvent]


@kernel(inline=True)
def _event_mask(w: Any, pt: Any, bt: Any, ppair: Any, bpair: Any, pn: Any, bn: Any) -> Any:
    """A hand's events as the bits of `settlement.SettleEvent`, from its
    columns' values: for one hand (compiled), or for arrays of hands at once
    (numpy, element by element: the same operators)."""
    pw = w == 0
    bw = w == 1
    return (
        pw * _PW
        | bw * _BW
        | (w == 2) * _TIE
        | (bw & (bt == 6)) * _B6
        | (bw & (bn == 3) & (bt == 7)) * _B7
        | (pw & (pn == 3) & (pt == 8)) * _P8
        | (ppair != 0) * _PP
        | (bpair != 0) * _BP
    )


@kernel()
def _unit_results(
    winner: np.ndarray,
    pt: np.ndarray,
    bt: np.ndarray,
    ppair: np.ndarray,
    bpair: np.ndarray,
    pn: np.ndarray,
    bn: np.ndarray,
    table: np.ndarray,
    rows: np.ndarray,
    out: np.ndarray,
) -> None:
    """Each hand's event mask (the bits of `settlement.SettleEvent`), then
    out[b, i] = table[b, mask] for every row b worked out: two loops without
    branches, which the compiler vectorises. Columns a shoe does not record
    hold zeros: the events read from them are wrong, and the rows of the
    bets that read them UNKNOWN."""
    n = winner.shape[0]
    masks = np.empty(n, np.uint8)
    for i in range(n):
        masks[i] = _event_mask(winner[i], pt[i], bt[i], ppair[i], bpair[i], pn[i], bn[i])
    for b in range(rows.shape[0]):
        r = out[b]
        if rows[b] == 2:
            r[:] = UNKNOWN
        elif rows[b] == 1:
            row = table[b]
            for i in range(n):
                r[i] = row[masks[i]]


@_unit_results.in_python
def _unit_results_numpy(
    winner: np.ndarray,
    pt: np.ndarray,
    bt: np.ndarray,
    ppair: np.ndarray,
    bpair: np.ndarray,
    pn: np.ndarray,
    bn: np.ndarray,
    table: np.ndarray,
    rows: np.ndarray,
    out: np.ndarray,
) -> None:
    """`_unit_results` in whole-array operations, for `interpreted` runs."""
    masks = _event_mask.py_func(winner, pt, bt, ppair, bpair, pn, bn)
    for b in range(rows.shape[0]):
        if rows[b] == 2:
            out[b] = UNKNOWN
        elif rows[b] == 1:
            out[b] = table[b][masks]


def missing_for(bet: Bet, hands: Hands, rules: Rules) -> bool:
    """Whether settling `bet` on these hands needs a column they lack."""
    return bool(missing_columns(bet, hands, rules))


def missing_columns(bet: Bet, hands: Hands, rules: Rules) -> list[str]:
    """The columns settling `bet` under `rules` needs that these hands lack, sorted."""
    return sorted(set(settlement.needs(bet, rules)) - hands.known)

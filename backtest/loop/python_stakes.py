"""A plain-Python strategy's stakes under the table's rules, for
`python_loop`: a stake to whole cents (`cents_of`, remembered by the short
path), the short path for one bet within the limits (`short_stake`), and
the general rules for any other hand (`place_general`: the compiled
`table_rules.limits` and `place` themselves, in their Python form).
"""

from __future__ import annotations

import math

import numpy as np

from backtest.core.errors import StrategyError, shown
from backtest.core.rules import Bet
from backtest.loop.table_rules import (
    MAX_CENTS,
    PLACE_OK,
    limits,
    place,
)
from strategies.base import (
    N_BETS,
    Strategy,
    View,
)

#: what a strategy may name a bet by: its name or the Bet
BET_BY_NAME = {b.value: b for b in Bet} | {b: b for b in Bet}
#: the stakes remembered as cents, at most (then forgotten, all at once)
_CACHE_SIZE = 4096


def cents_of(x: object, cache: dict[float, int]) -> int:
    """One stake in whole cents as `table_rules.limits` converts it, or -1 for anything
    the general path must see (a bad stake or value). Numbers are remembered."""
    if type(x) is not float and type(x) is not int:
        return -1
    try:
        f = float(x)
    except OverflowError:
        return -1
    if not f >= 0.0:
        return -1
    c = whole_cents(f)
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[x] = c  # type: ignore[index]
    return c


def short_cents(
    x: object,
    b: int,
    low: list[int],
    high: list[int],
    fits: list[dict[float, tuple[int, tuple[tuple[int, int]]]]],
    memo: dict[float, int],
) -> int:
    """The stake `x` on bet code `b` in whole cents, or -1 for anything the
    general path must see; a number whose cents lie within the short path's
    bounds for the bet is remembered in `fits[b]`, with its bets placed
    (`memo`: the cents of the numbers seen, as `cents_of` keeps them)."""
    if type(x) is not float and type(x) is not int:
        return -1
    c = memo.get(x, -1)
    if c < 0:
        c = cents_of(x, memo)
    if low[b] <= c <= high[b]:
        fit = fits[b]
        if len(fit) >= _CACHE_SIZE:
            fit.clear()
        fit[x] = (c, ((b, c),))
    return c


#: the types a stake the short path remembers may have
NUMBERS = frozenset((float, int))
#: a stake the short path has not seen: (its cents, the bets placed)
UNSEEN: tuple[int, tuple[tuple[int, int], ...]] = (-1, ())


def short_stake(
    b: int,
    x: object,
    low: list[int],
    high: list[int],
    min_l: list[int],
    fits: list[dict[float, tuple[int, tuple[tuple[int, int]]]]],
    memo: dict[float, int],
    den: int,
    final: int,
) -> tuple[int, int, tuple[tuple[int, int], ...], int]:
    """The short path for a strategy's answer of one stake `x` on bet code
    `b` (N_BETS: not a bet) that it has not seen within the bet's bounds (the loop
    looks those up in `fits` itself): (the bet's code, or -1 for the general
    path, or -2 for no stake; its cents; the bets placed, ((code, cents),);
    1 if the stake was raised to the table minimum, else 0). It takes a stake
    within the bet's bounds (`short_path_bounds`) and the bankroll `final`
    (ticks), raised to the minimum where that fits."""
    c = short_cents(x, b, low, high, fits, memo)
    if low[b] <= c <= high[b] and c * den <= final:
        return b, c, ((b, c),), 0
    if b == N_BETS or c < 0:
        return -1, c, (), 0
    if c == 0:
        return -2, c, (), 0
    if c < min_l[b] and min_l[b] <= high[b] and min_l[b] * den <= final:
        return b, min_l[b], ((b, min_l[b]),), 1
    return -1, c, (), 0


class TableRules:
    """The table rules' arrays for `place_general`: the general path runs
    `table_rules.limits` and `table_rules.place` themselves, in their
    Python form (numba's `py_func`), on these."""

    def __init__(
        self,
        side: list[float],
        min_c: np.ndarray,
        max_c: np.ndarray,
        offered: np.ndarray,
        pb_together: bool,
        pairs_need_main: bool,
        den: int,
        all_in: bool,
        reset_on_max: bool,
    ) -> None:
        self.side_c = np.array([whole_cents(x) if x > 0.0 else 0 for x in side], np.int64)
        self.min_c, self.max_c = min_c, max_c
        self.offered, self.pb_together, self.pairs_need_main = offered, pb_together, pairs_need_main
        self.den, self.all_in, self.reset_on_max = den, all_in, reset_on_max
        self.active = np.arange(N_BETS, dtype=np.uint64)  # a Python strategy may place any bet
        self.out = np.zeros(N_BETS)
        self.cents = np.zeros(N_BETS, np.int64)

    def limits(self) -> tuple[int, int]:
        """`table_rules.limits` of the stakes in `out`, into `cents`. A stake
        past every float's cents is the largest stake, as in the compiled loop
        (numpy's scalars would say so with a warning that means nothing here)."""
        with np.errstate(over="ignore"):
            return _limits(self.out, self.side_c, self.cents, self.min_c, self.max_c, self.active)


_limits = limits.py_func


_place_stakes = place.py_func


def place_general(
    first: object, strategy: Strategy, view: View, rules: TableRules, final: int
) -> tuple[int, list[int], int, int, int]:
    """The general rules (`table_rules.limits` and `place`) for stakes the
    short path does not take, starting from the strategy's answer `first`:
    (a PLACE_* code, the cents placed, stakes raised to the minimum, times
    over the maximum, bankroll stops)."""
    out, cents = rules.out, rules.cents
    out[:] = stake_list(first, strategy)
    code, below_min = rules.limits()
    max_hits = 0
    if code >= 10:
        max_hits = 1
        code -= 10
        if rules.reset_on_max:
            strategy.restart_progression()
            out[:] = stake_list(strategy.stakes(view), strategy)
            code, below = rules.limits()
            below_min += below
            code %= 10
    stops = 0
    if code == PLACE_OK:
        code, stops = _place_stakes(
            rules.all_in,
            cents,
            rules.min_c,
            rules.max_c,
            final,
            rules.den,
            rules.offered,
            rules.pb_together,
            rules.pairs_need_main,
            rules.active,
        )
    return int(code), cents.tolist(), int(below_min), max_hits, int(stops)


def whole_cents(x: float) -> int:
    """A stake (currency, not negative) in whole cents, as `table_rules.limits`
    converts it."""
    y = x * 100.0 + 1e-6
    # as the compiled loop: anything from 2**52 cents up (infinity too) is 2**52
    return math.floor(y) if y < MAX_CENTS else MAX_CENTS


def stake_list(stakes: object, strategy: Strategy) -> list[float]:
    """A strategy's stakes mapping as a list in `Bet` order."""
    out = [0.0] * N_BETS
    if not stakes:
        return out
    fill_stakes(out, stakes, strategy)
    return out


def fill_stakes(out: list[float], stakes: object, strategy: Strategy) -> None:
    """A strategy's stakes mapping into the stake list (Bet order)."""
    try:
        items = stakes.items()  # type: ignore[attr-defined]
    except AttributeError:
        raise StrategyError(
            f"strategy {strategy.name or type(strategy).__name__}: stakes() must "
            f"return a mapping of bet to stake, got {stakes!r}"
        ) from None
    for key, value in items:
        bet = BET_BY_NAME.get(key)
        if bet is None:
            raise StrategyError(
                f"strategy {strategy.name or type(strategy).__name__}: unknown bet "
                f"{key!r} (bets are {', '.join(b.value for b in Bet)})"
            )
        if isinstance(
            value, (str, bytes, bool, np.bool_)
        ):  # not numbers, though float() takes them
            raise StrategyError(
                f"strategy {strategy.name or type(strategy).__name__}: the stake "
                f"on {bet} must be a number, got {shown(value)}"
            )
        try:
            out[bet.code] = float(value)
        except OverflowError:  # an integer beyond any float: as large as a stake gets
            out[bet.code] = math.inf if value > 0 else -math.inf
        except (TypeError, ValueError):
            raise StrategyError(
                f"strategy {strategy.name or type(strategy).__name__}: the stake "
                f"on {bet} must be a number, got {shown(value)}"
            ) from None
        if not out[bet.code] >= 0.0:  # negative, or NaN
            raise StrategyError(
                f"strategy {strategy.name or type(strategy).__name__}: the stake "
                f"on {bet} must be 0 or more, got {shown(value)}"
            )

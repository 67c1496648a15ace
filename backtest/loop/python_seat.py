"""A plain-Python strategy at the compiled session loop.

The loop calls a strategy through four functions: reset, init, decide and
update (`strategies.dispatch`). For a user's compiled class they are
compiled; for any `Strategy` object, `PythonSeat` gives them as Python
callbacks the loop calls through pointers (numba's first-class functions).
So the table rules, settlement, the statistics and the ledger are the
loop's, the same for every strategy. A callback answers RAISED where the
strategy's code raised, and the loop stops; `PythonSeat.raised` keeps the
error for the engine.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from backtest.core.errors import StrategyError, describe_raised, shown
from backtest.core.rules import Bet, Winner
from backtest.jit.lazy_jit import JIT_DISABLED
from backtest.loop.inputs import Dealt, Seat, Table, Work, work_for
from strategies import compiled
from strategies.base import Strategy, head_params
from strategies.slots import CTX_INDEX, CTX_SHOE_START, RAISED, SEVERAL
from strategies.view import Result, View, winners_of

_BETS = tuple(Bet)
#: the code of a bet by what a strategy may name it by: its name or the Bet
_CODE_BY_NAME: dict[object, int] = {**{b.value: b.code for b in Bet}, **{b: b.code for b in Bet}}


class PythonSeat:
    """A `Strategy` object's four callbacks for the loop (`fns`), its `Seat`
    and work arrays, and the error its code raised, if any (`raised`, with
    `at`, the index of the hand)."""

    def __init__(self, strategy: Strategy, key: np.uint64, dealt: Dealt, table: Table) -> None:
        self.strategy = strategy
        p = np.array(head_params(strategy), np.float64)
        p.flags.writeable = False
        bets = sorted(b.code for b in strategy.possible_bets())
        cls = type(strategy)
        learns = (
            compiled.facts(cls).learns
            if isinstance(strategy, compiled.Compiled)
            else cls.update is not Strategy.update
        )
        self.seat = Seat(
            compiled.USER,
            np.uint64(key),
            p,
            np.array(bets, np.uint64),
            -1,
            False,
            True,
            learns,
            True,
            bool(strategy.uses_cards),
        )
        self.work: Work = work_for(self.seat, dealt)
        self.raised: BaseException | None = None
        self.at = -1
        self._view = View(
            _read_only(dealt.winner),
            _read_only(self.work.ctx),
            _read_only(self.work.evs_seen),
            table.offered,
            (dealt.cards, table.full_counts) if strategy.uses_cards else None,
        )
        # (a memoryview's items are read and written as Python floats, faster than numpy's)
        self._ctx: Any = memoryview(self.work.ctx)  # type: ignore[arg-type]
        self._out: Any = memoryview(self.work.out)  # type: ignore[arg-type]
        self._stakes = self.work.stakes
        self._result = _results_class(dealt.winner, dealt.unit, table.den)
        hooks = (self._reset, self._init, self._decide, self._update)
        if JIT_DISABLED:
            self.fns: tuple[Any, ...] = hooks  # the loop runs as Python, and calls them so
        else:
            from numba.core.types import WrapperAddressProtocol

            from strategies.dispatch import python_signatures

            WrapperAddressProtocol.register(PythonCallback)

            sigs = python_signatures()
            self.fns = tuple(PythonCallback(h, sigs[n]) for h, n in zip(hooks, sigs, strict=True))

    # the four callbacks (`dispatch.python_signatures`): the seat reads the
    # loop's arrays as the numpy arrays it holds

    def _reset(self) -> int:
        try:
            self.strategy.restart_progression()
        except BaseException as exc:  # noqa: BLE001 (the loop stops; the engine raises it)
            return self._raise(exc)
        return 0

    def _init(self, seed: int) -> int:
        try:
            self.strategy.start_session(seed)
        except BaseException as exc:  # noqa: BLE001
            return self._raise(exc)
        return 0

    def _decide(self) -> int:
        view = self._view
        ctx = self._ctx
        view._i = int(ctx[CTX_INDEX])
        view._lo = int(ctx[CTX_SHOE_START])
        try:
            stakes = self.strategy.stakes(view)
            if not stakes:
                return -1
            _fill(self._out, stakes, self.strategy)
        except BaseException as exc:  # noqa: BLE001
            return self._raise(exc)
        return SEVERAL

    def _update(self, net: float) -> int:
        cls = self._result
        result: Any = cls.__new__(cls)
        result._i = self._view._i
        result.net = net
        result._placed = self._stakes.tolist()
        try:
            self.strategy.update(self._view, result)
        except BaseException as exc:  # noqa: BLE001
            return self._raise(exc)
        return 0

    def _raise(self, exc: BaseException) -> int:
        self.raised = exc
        self.at = self._view._i
        return RAISED

    def error(self) -> StrategyError | BaseException:
        """What the engine raises for the kept error: a Ctrl-C as it is; any
        other error (an exit too) as a StrategyError in words, with the line
        of the strategy's code that raised it (the engine adds the seat and
        the hand)."""
        exc = self.raised
        if isinstance(exc, KeyboardInterrupt):
            return exc
        return StrategyError(describe_raised(exc))  # type: ignore[arg-type]


def _fill(out: Any, stakes: object, strategy: Strategy) -> None:
    """A strategy's stakes mapping into `out` (by bet code), checked. A
    stake that is a float or an int from 0 to 1e300 goes straight in."""
    try:
        items = stakes.items()  # type: ignore[attr-defined]
    except AttributeError:
        raise StrategyError(
            f"{_who(strategy)}: stakes() must return a mapping of bet to stake, got {stakes!r}"
        ) from None
    for key, value in items:
        code = _CODE_BY_NAME.get(key, -1)
        if code < 0:
            raise StrategyError(
                f"{_who(strategy)}: unknown bet {key!r} (bets are "
                f"{', '.join(b.value for b in Bet)})"
            )
        kind = type(value)
        if (kind is float or kind is int) and 0 <= value <= 1e300:
            out[code] = float(value)
        else:
            out[code] = _stake(value, _BETS[code], strategy)


def _stake(value: object, bet: Bet, strategy: Strategy) -> float:
    """Any other stake a strategy gave, as a float of 0 or more, or a StrategyError."""
    said = f"{_who(strategy)}: the stake on {bet} must be"
    if isinstance(value, (str, bytes, bool, np.bool_)):  # not numbers, though float() takes them
        raise StrategyError(f"{said} a number, got {shown(value)}")
    try:
        x = float(value)  # type: ignore[arg-type]
    except OverflowError:  # an integer beyond any float: as large as a stake gets
        x = math.inf if value > 0 else -math.inf  # type: ignore[operator]
    except (TypeError, ValueError):
        raise StrategyError(f"{said} a number, got {shown(value)}") from None
    if not x >= 0.0:  # negative, or NaN
        raise StrategyError(f"{said} 0 or more, got {shown(value)}")
    return x


def _who(strategy: Strategy) -> str:
    return f"strategy {strategy.name or type(strategy).__name__}"


def _results_class(winner: np.ndarray, unit: np.ndarray, den: int) -> type[Result]:
    """A `Result` class for one run's hands: a hand's Result holds its
    index, its net and the stakes placed (by bet code), and works the
    winner and the three dicts out when they are read."""
    won = winners_of(winner)
    scale = 100.0 * den

    class HandResult(Result):
        __slots__ = ("_placed", "_i")
        _placed: list[float]
        _i: int

        @property  # type: ignore[misc]
        def winner(self) -> Winner:  # type: ignore[override]
            """The hand's winner."""
            return won[self._i]

        @property  # type: ignore[misc]
        def stakes(self) -> dict[Bet, float]:
            """The stakes actually placed (after table limits), by bet."""
            return {_BETS[b]: x for b, x in enumerate(self._placed) if x > 0.0}

        @property  # type: ignore[misc]
        def nets(self) -> dict[Bet, float]:
            """Net result of each placed bet."""
            row = unit[:, self._i].tolist()
            return {
                _BETS[b]: round(x * 100.0) * row[b] / scale
                for b, x in enumerate(self._placed)
                if x > 0.0
            }

        @property  # type: ignore[misc]
        def units(self) -> dict[Bet, float]:
            """Result per unit staked of every bet on this hand (payout, 0 push, -1 loss)."""
            row = unit[:, self._i].tolist()
            return {
                bet: (u / den if u > -(2**62) else 0.0) for bet, u in zip(_BETS, row, strict=True)
            }

        def __reduce__(self) -> tuple[type[Result], tuple[Any, ...]]:
            # a copy (or a pickle) is a plain Result with its dicts
            return Result, (self.winner, self.net, self.stakes, self.nets, self.units)

    HandResult.__name__ = HandResult.__qualname__ = "Result"
    return HandResult


class PythonCallback:
    """A Python function as a first-class function of numba signature
    `sig`, through a C callback: numba's Wrapper Address Protocol (its
    `__wrapper_address__` and `signature`, which numba reads of any object
    that has them, once its base class is registered)."""

    _TYPES: dict[str, Any] = {"int64": ctypes.c_int64, "float64": ctypes.c_double}

    def __init__(self, fn: Any, sig: Any) -> None:
        self.sig = sig
        ctype = self._TYPES
        self.c_fn = ctypes.CFUNCTYPE(
            ctype[str(sig.return_type)], *(ctype[str(a)] for a in sig.args)
        )(fn)

    def __wrapper_address__(self) -> int:
        return ctypes.cast(self.c_fn, ctypes.c_void_p).value or 0

    def signature(self) -> Any:
        return self.sig


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view

"""The strategy API.

A strategy is a small class: a frozen, validated `Params` dataclass, a method
that decides the stakes of the next hand from a small read-only `View`, and a
method that updates its state after settlement. Write your own like this::

    from dataclasses import dataclass
    from strategies.base import Strategy, View, Result
    from strategies.params import Money, param

    class BankerAfterTwoPlayers(Strategy):
        name = "banker-after-two-players"
        description = "Bet Banker after two Player wins in a row."

        @dataclass(frozen=True)
        class Params:
            stake: Money = param(10.0, "stake per bet")

        def stakes(self, view: View) -> dict[str, float]:
            if view.road().replace("T", "").endswith("PP"):
                return {"banker": self.params.stake}
            return {}

and use it from a config as `strategy: mymodule:BankerAfterTwoPlayers` (or
`path/to/file.py:BankerAfterTwoPlayers`).

Built-in strategies are written as four small functions over numbers and
arrays (`reset`, `init`, `decide`, `update`, see `Compiled`), so that numba can
compile them into the session loop; the same functions run in plain Python
through the same engine semantics, and a test proves both give identical
ledgers.

`View` and `Result` are written in `strategies.view` and the compiled arrays'
layout (context, parameter head, state sizes) in `strategies.slots`; this
module, the API, gives them too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

import numpy as np

from backtest.core.errors import StrategyError
from backtest.core.rules import Bet, Rules
from strategies.params import CommonParams, build_params, describe_params
from strategies.slots import (
    CTX_BANKROLL,
    CTX_HAND,
    CTX_LAST_NET,
    CTX_SESSION_HAND,
    CTX_SHOE,
    CTX_SIZE,
    N_BETS,
    ON_BANKROLL,
    ON_MAX,
    ON_PUSH,
    P_ON_BANKROLL,
    P_ON_MAX,
    P_ON_PUSH,
    P_OWN,
    P_PAIRS_ALONE,
    P_SIDE,
    SEVERAL,
    STATE_FLOATS,
    STATE_INTS,
)
from strategies.view import Result, View

_BETS = tuple(Bet)


class Strategy(ABC):
    """Base of every strategy. Subclasses set `name`, `description`, `Params`,
    and implement `stakes` (and `update`, `reset` when they keep state)."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    Params: ClassVar[type] = CommonParams
    #: set True to have `view.evs` and `view.counts` kept current before each hand
    uses_cards: ClassVar[bool] = False

    def __init__(self, params: Any = None) -> None:
        if params is None or isinstance(params, Mapping):
            params = build_params(self.Params, params or {})
        self.params = params

    @classmethod
    def from_config(cls, data: Mapping[str, Any] | None, path: str = "params") -> Strategy:
        return cls(build_params(cls.Params, data, path))

    @classmethod
    def parameters(cls) -> list[tuple[str, str, Any, str]]:
        return describe_params(cls.Params)

    def possible_bets(self) -> set[Bet]:
        """Bets this strategy may place (checked against the table before a run).
        The default, every bet, is safe; built-ins say exactly."""
        return set(Bet)

    def at_table(self, rules: Rules) -> None:  # noqa: B027 (a hook: doing nothing is its default)
        """Called once, before any session, with the rules of the table the
        strategy is seated at (payouts, which bets it offers and takes
        together); the default does nothing."""

    def reset(self) -> None:  # noqa: B027 (a hook: doing nothing is its default)
        """Called at the start of every session."""

    def start_session(self, seed: int) -> None:
        """Called at the start of every session with its own random seed."""
        self.reset()

    def restart_progression(self) -> None:
        """Called when a stake was over the table maximum and `on_max` is reset."""
        self.reset()

    @abstractmethod
    def stakes(self, view: View) -> Mapping[Bet, float] | Mapping[str, float]:
        """The stakes of the coming hand, by bet, in currency; an empty mapping
        sits it out. Stakes are placed in whole cents, rounded down (under a
        cent is no bet), then held to the table's limits and the bankroll."""

    def update(self, view: View, result: Result) -> None:  # noqa: B027 (a hook, as reset)
        """Called after every hand this strategy was seated for."""


# the signatures of a built-in's four functions (see `Compiled`)
class _Reset(Protocol):
    def __call__(self, p: np.ndarray, s: np.ndarray, si: np.ndarray, /) -> None: ...


class _Init(Protocol):
    def __call__(self, p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int, /) -> None: ...


class _Decide(Protocol):
    def __call__(
        self,
        p: np.ndarray,
        s: np.ndarray,
        si: np.ndarray,
        ctx: np.ndarray,
        hist: np.ndarray,
        evs: np.ndarray,
        out: np.ndarray,
        /,
    ) -> float | tuple[int, float] | None: ...


class _Update(Protocol):
    def __call__(
        self,
        p: np.ndarray,
        s: np.ndarray,
        si: np.ndarray,
        ctx: np.ndarray,
        stakes: np.ndarray,
        unit: np.ndarray,
        net: float,
        /,
    ) -> None: ...


class Compiled(Strategy):
    """A strategy written as array functions, run in the compiled session loop.

    Subclasses give the four plain functions below (as staticmethods), in the
    subset of Python numba compiles. The built-ins are such classes; so is a
    user's own, which the loop calls through first-class functions, compiled
    once per class (the loop itself is not compiled again):

    - ``reset(p, s, si)``: start a progression (state arrays to their start);
    - ``init(p, s, si, seed)``: start a session; leave it out (``k_init = None``)
      and a session starts as ``reset`` restarts the progression;
    - ``decide(p, s, si, ctx, hist, evs, out)``: write stakes into `out`
      (zeroed, in `Bet` order, currency units); `hist` is the shoe's winners so
      far, `ctx` the CTX_* numbers, `evs` the per-unit EV of each bet. A
      strategy with a `bet_slot` returns its one stake instead, one that
      `picks_one` returns (bet code, stake), or (SEVERAL, any stake but 0)
      on a hand it stakes more than one bet, written in `out`;
    - ``update(p, s, si, ctx, stakes, unit, net)``: after settlement, with the
      stakes actually placed, each bet's result per unit, and the total net.
    """

    #: a built-in's branch in the compiled dispatch, which it declares (from 0
    #: up: `strategies.compiled` finds the built-ins by it); -1 for any other
    kind: ClassVar[int] = -1
    #: whether `k_decide` or `k_update` reads `ctx` (the bankroll, the hand and
    #: shoe numbers, the last net): the loop fills it for a built-in only then
    #: (a test holds every built-in to what its code reads)
    reads_context: ClassVar[bool] = False
    Params: ClassVar[type] = CommonParams
    #: for a strategy that stakes one bet on every hand, the slot of the
    #: parameter vector holding its code, and its `decide` returns the stake
    #: instead of writing `out`; -1 for any other. The session loop then has
    #: the stake at once, without looking for the bets staked, and its
    #: `update` is given that bet's stake and unit result alone (the other
    #: entries of `stakes` and `unit` are not kept current).
    bet_slot: ClassVar[int] = -1
    #: whether its `decide` returns (bet code, stake) for the one bet it
    #: stakes on a hand (stake 0.0: it sits the hand out) instead of writing
    #: `out`: the shoe readers and the random bettor, whose bet changes from
    #: hand to hand like a coin toss, and the counter, which seldom stakes
    #: more than one (then it returns SEVERAL and writes `out`)
    picks_one: ClassVar[bool] = False
    #: a user's class: its functions check every index they use, so that one
    #: out of its array is an IndexError naming the line, never a write over
    #: the loop's memory. False runs them unchecked, about a third faster.
    bounds_checked: ClassVar[bool] = True

    # the four functions, which each built-in gives as staticmethods
    k_reset: ClassVar[_Reset]
    k_init: ClassVar[_Init | None] = None  # None: a session starts as `k_reset` does
    k_decide: ClassVar[_Decide]
    k_update: ClassVar[_Update]

    def at_table(self, rules: Rules) -> None:  # noqa: B027 (a hook: doing nothing is its default)
        """The table's rules go into the parameter vector's head (whether a pair
        bet may stand alone), for strategies that place bets by what the table
        allows (the counter)."""
        self._pairs_alone = 0.0 if rules.pairs_need_main_bet else 1.0
        if hasattr(self, "_p"):
            del self._p

    def encode(self) -> np.ndarray:
        """The parameter vector: the common head, then `encode_own`."""
        p = self.params
        head = np.zeros(P_OWN)
        head[P_PAIRS_ALONE] = getattr(self, "_pairs_alone", 1.0)
        head[P_ON_MAX] = ON_MAX[p.on_max]
        head[P_ON_BANKROLL] = ON_BANKROLL[p.on_bankroll]
        head[P_ON_PUSH] = ON_PUSH[p.on_push]
        for name, stake in p.side_bets.items():
            head[P_SIDE + Bet(name).code] = stake
        return np.concatenate([head, np.asarray(self.encode_own(), dtype=np.float64)])

    def encode_own(self) -> list[float]:
        return []

    def main_bets(self) -> set[Bet]:
        return {Bet.PLAYER, Bet.BANKER}

    def fixed_stakes(self) -> dict[Bet, float] | None:
        """The stakes placed on every hand, for a strategy that never varies them
        (checked against the table's rules before any hand); None otherwise."""
        return None

    def possible_bets(self) -> set[Bet]:
        return self.main_bets() | {Bet(b) for b, s in self.params.side_bets.items() if s > 0}

    # -- the plain-Python path: the same functions, through the Strategy API

    def _arrays(self) -> None:
        if not hasattr(self, "_p"):
            self._p = self.encode()
            self._p.flags.writeable = False  # a session cannot change what the next one plays
            self._s = np.zeros(STATE_FLOATS)
            self._si = np.zeros(STATE_INTS, np.int64)
            self._ctx = np.zeros(CTX_SIZE)
            self._out = np.zeros(N_BETS)
            self._stakes = np.zeros(N_BETS)
            self._unit = np.zeros(N_BETS)

    def start_session(self, seed: int) -> None:
        self._arrays()
        init = type(self).k_init
        if init is None:
            type(self).k_reset(self._p, self._s, self._si)
        else:
            init(self._p, self._s, self._si, seed)

    def restart_progression(self) -> None:
        self._arrays()
        type(self).k_reset(self._p, self._s, self._si)

    def reset(self) -> None:
        self.start_session(0)

    def stakes(self, view: View) -> dict[Bet, float]:
        self._arrays()
        ctx = self._ctx
        ctx[CTX_BANKROLL] = view.bankroll
        ctx[CTX_HAND] = view.hand
        ctx[CTX_SESSION_HAND] = view.session_hand
        ctx[CTX_LAST_NET] = view.last_net
        ctx[CTX_SHOE] = view.shoe
        out = self._out
        out[:] = 0.0
        value = type(self).k_decide(self._p, self._s, self._si, ctx, view._history, view._evs, out)
        if isinstance(value, tuple):  # picks_one: (bet, stake), or SEVERAL with `out` written
            bet, stake = value
            if stake != 0.0 and bet != SEVERAL:
                out[int(bet)] = stake
        elif value is not None:  # bet_slot: the stake on that bet
            out[int(self._p[self.bet_slot])] = value
        return {_BETS[i]: x for i, x in enumerate(out.tolist()) if x != 0.0}

    def update(self, view: View, result: Result) -> None:
        self._arrays()
        stakes, units = result.stakes, result.units  # (each worked out as it is read)
        self._stakes[:] = [stakes.get(b, 0.0) for b in _BETS]
        self._unit[:] = [units[b] for b in _BETS]
        type(self).k_update(
            self._p, self._s, self._si, self._ctx, self._stakes, self._unit, result.net
        )


#: the built-ins' name for `Compiled`
Builtin = Compiled


#: a Compiled class's functions, and their arguments
_FUNCTIONS = {
    "k_reset": "p, s, si",
    "k_init": "p, s, si, seed",
    "k_decide": "p, s, si, ctx, hist, evs, out",
    "k_update": "p, s, si, ctx, stakes, unit, net",
}


def head_params(strategy: Strategy) -> np.ndarray:
    """The common parameter head (edges, side bets) of any strategy; a
    StrategyError for a user's class whose params cannot say them."""
    if isinstance(strategy, Compiled):
        cls = type(strategy)
        for name, args in _FUNCTIONS.items():
            fn = getattr(cls, name, None)
            if not callable(fn) and not (name == "k_init" and fn is None):
                raise StrategyError(
                    f"{cls.__name__}.{name} must be a function of ({args}), set as "
                    f"`{name} = staticmethod(...)`; it is {'missing' if fn is None else repr(fn)}"
                )
        try:
            return strategy.encode()
        except (TypeError, ValueError):
            raise StrategyError(
                f"{cls.__name__}.encode_own() must return a list of numbers, got "
                f"{strategy.encode_own()!r}"
            ) from None
    head = np.zeros(P_OWN)
    try:
        params = strategy.params
    except AttributeError:
        raise StrategyError(
            f"{type(strategy).__name__} has no params: its __init__ must call "
            "super().__init__(params)"
        ) from None
    for slot, key, choices, default in (
        (P_ON_MAX, "on_max", ON_MAX, "reset"),
        (P_ON_BANKROLL, "on_bankroll", ON_BANKROLL, "stop"),
        (P_ON_PUSH, "on_push", ON_PUSH, "stand"),
    ):
        value = getattr(params, key, default)
        if value not in choices:
            raise StrategyError(
                f"params.{key} must be {' or '.join(map(repr, choices))}, got {value!r}"
            )
        head[slot] = choices[value]
    for name, stake in dict(getattr(params, "side_bets", {}) or {}).items():
        head[P_SIDE + Bet(name).code] = stake
    return head

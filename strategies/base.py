"""The strategy API.

A strategy is a small class: a frozen, validated `Params` dataclass, a method
that decides the stakes of the next hand from a small read-only `View`, and a
method that updates its state after settlement. Write your own like this::

    from dataclasses import dataclass
    from strategies.base import Strategy, View, Result
    from strategies.params import param

    class BankerAfterTwoPlayers(Strategy):
        name = "banker-after-two-players"
        description = "Bet Banker after two Player wins in a row."

        @dataclass(frozen=True)
        class Params:
            stake: float = param(10.0, "stake per bet", min=0)

        def stakes(self, view: View) -> dict[str, float]:
            if view.road().replace("T", "").endswith("PP"):
                return {"banker": self.params.stake}
            return {}

and use it from a config as `strategy: mymodule:BankerAfterTwoPlayers` (or
`path/to/file.py:BankerAfterTwoPlayers`).

Built-in strategies are written as four small functions over numbers and
arrays (`reset`, `init`, `decide`, `update`, see `Builtin`), so that numba can
compile them into the session loop; the same functions run in plain Python
through the same engine semantics, and a test proves both give identical
ledgers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

import numpy as np

from backtest.rules import Bet, Winner
from strategies.params import CommonParams, build_params, describe_params

N_BETS = len(Bet)

# layout of the context array a compiled strategy reads
CTX_BANKROLL = 0      # bankroll before the hand, in currency units
CTX_HAND = 1          # number of the coming hand in its shoe (1-based)
CTX_SESSION_HAND = 2  # hands already dealt in this session
CTX_LAST_NET = 3      # the seat's net on its previous hand (0 at the start)
CTX_SHOE = 4          # shoe number within the session (0-based)
CTX_SIZE = 8

# layout of the head of every built-in strategy's parameter vector
P_ON_MAX = 0          # 0 reset, 1 cap
P_ON_BANKROLL = 1     # 0 stop, 1 all-in
P_ON_PUSH = 2         # 0 stand, 1 reset
P_SIDE = 3            # 3 .. 9: side-bet stakes in Bet order
P_OWN = 10            # first strategy-specific slot

STATE_FLOATS = 520
STATE_INTS = 8

ON_MAX = {"reset": 0, "cap": 1}
ON_BANKROLL = {"stop": 0, "all-in": 1}
ON_PUSH = {"stand": 0, "reset": 1}


class View:
    """What a strategy may read before a hand. Read-only; the engine refreshes it."""

    __slots__ = ("_bankroll", "_hand", "_session_hand", "_last_net", "_shoe", "_history",
                 "_evs", "_counts")

    def __init__(self) -> None:
        self._bankroll = 0.0
        self._hand = 1
        self._session_hand = 0
        self._last_net = 0.0
        self._shoe = 0
        self._history: np.ndarray = np.zeros(0, np.int8)
        self._evs: np.ndarray = np.zeros(N_BETS)
        self._counts: np.ndarray | None = None

    @property
    def bankroll(self) -> float:
        """Money left, before this hand."""
        return self._bankroll

    @property
    def hand(self) -> int:
        """Number of the coming hand in its shoe (1-based)."""
        return self._hand

    @property
    def shoe(self) -> int:
        """Shoe number within the session (0-based)."""
        return self._shoe

    @property
    def session_hand(self) -> int:
        """Hands already dealt in this session."""
        return self._session_hand

    @property
    def last_net(self) -> float:
        """This seat's net result on its previous hand (0 before the first)."""
        return self._last_net

    @property
    def history(self) -> np.ndarray:
        """Winners of this shoe's hands so far: 0 Player, 1 Banker, 2 Tie (read-only)."""
        return self._history

    def road(self) -> str:
        """The shoe so far as a string of P, B and T."""
        return "".join("PBT"[int(w)] for w in self._history)

    @property
    def evs(self) -> dict[Bet, float]:
        """Exact expected value per unit of each bet for the cards not yet seen
        (only kept current for strategies with `uses_cards = True`; otherwise the
        full shoe's values)."""
        return {b: float(self._evs[i]) for i, b in enumerate(Bet)}

    @property
    def counts(self) -> np.ndarray | None:
        """Rank counts (index 1..13) of the cards not yet seen, for counting strategies."""
        return self._counts


class Result:
    """What a strategy learns after a hand: the winner, and its own net per bet."""

    __slots__ = ("winner", "net", "stakes", "nets", "units")

    def __init__(self, winner: Winner, net: float, stakes: dict[Bet, float],
                 nets: dict[Bet, float], units: dict[Bet, float]) -> None:
        self.winner = winner
        #: total net of the hand, in currency units
        self.net = net
        #: the stakes actually placed (after table limits), by bet
        self.stakes = stakes
        #: net result of each placed bet
        self.nets = nets
        #: result per unit staked of every bet on this hand (payout, 0 push, -1 loss)
        self.units = units


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

    def reset(self) -> None:
        """Called at the start of every session."""

    def start_session(self, seed: int) -> None:
        """Called at the start of every session with its own random seed."""
        self.reset()

    def restart_progression(self) -> None:
        """Called when a stake was over the table maximum and `on_max` is reset."""
        self.reset()

    @abstractmethod
    def stakes(self, view: View) -> Mapping[Bet, float] | Mapping[str, float]:
        """The stakes of the coming hand, by bet; an empty mapping sits it out."""

    def update(self, view: View, result: Result) -> None:
        """Called after every hand this strategy was seated for."""


# the signatures of a built-in's four functions (see `Builtin`)
class _Reset(Protocol):
    def __call__(self, p: np.ndarray, s: np.ndarray, si: np.ndarray, /) -> None: ...


class _Init(Protocol):
    def __call__(self, p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int, /) -> None: ...


class _Decide(Protocol):
    def __call__(self, p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray,
                 hist: np.ndarray, evs: np.ndarray, out: np.ndarray, /) -> None: ...


class _Update(Protocol):
    def __call__(self, p: np.ndarray, s: np.ndarray, si: np.ndarray, ctx: np.ndarray,
                 stakes: np.ndarray, unit: np.ndarray, net: float, /) -> None: ...


class Builtin(Strategy):
    """A strategy written as array functions, compiled into the session loop.

    Subclasses give `kind` (its number in `strategies.compiled`) and the four
    plain functions below, in the subset of Python numba compiles:

    - ``reset(p, s, si)``: start a progression (state arrays to their start);
    - ``init(p, s, si, seed)``: start a session (defaults to reset);
    - ``decide(p, s, si, ctx, hist, evs, out)``: write stakes into `out`
      (zeroed, in `Bet` order, currency units); `hist` is the shoe's winners so
      far, `ctx` the CTX_* numbers, `evs` the per-unit EV of each bet;
    - ``update(p, s, si, ctx, stakes, unit, net)``: after settlement, with the
      stakes actually placed, each bet's result per unit, and the total net.
    """

    kind: ClassVar[int] = -1
    Params: ClassVar[type] = CommonParams

    # the four functions, which each built-in gives as staticmethods
    k_reset: ClassVar[_Reset]
    k_init: ClassVar[_Init]
    k_decide: ClassVar[_Decide]
    k_update: ClassVar[_Update]

    def encode(self) -> np.ndarray:
        """The parameter vector: the common head, then `encode_own`."""
        p = self.params
        head = np.zeros(P_OWN)
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
            self._s = np.zeros(STATE_FLOATS)
            self._si = np.zeros(STATE_INTS, np.int64)
            self._ctx = np.zeros(CTX_SIZE)
            self._out = np.zeros(N_BETS)
            self._stakes = np.zeros(N_BETS)
            self._unit = np.zeros(N_BETS)

    def start_session(self, seed: int) -> None:
        self._arrays()
        type(self).k_init(self._p, self._s, self._si, seed)

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
        type(self).k_decide(self._p, self._s, self._si, ctx, view._history, view._evs, out)
        return {b: float(out[i]) for i, b in enumerate(Bet) if out[i] != 0.0}

    def update(self, view: View, result: Result) -> None:
        self._arrays()
        for i, b in enumerate(Bet):
            self._stakes[i] = result.stakes.get(b, 0.0)
            self._unit[i] = result.units[b]
        type(self).k_update(self._p, self._s, self._si, self._ctx, self._stakes, self._unit,
                            result.net)

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
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

import numpy as np

from backtest.core.errors import StrategyError
from backtest.core.rules import Bet, Rules, Winner
from strategies.params import CommonParams, build_params, describe_params

N_BETS = len(Bet)
_BETS = tuple(Bet)

# layout of the context array a compiled strategy reads
CTX_BANKROLL = 0  # bankroll before the hand, in currency units
CTX_HAND = 1  # number of the coming hand in its shoe (1-based)
CTX_SESSION_HAND = 2  # hands already dealt in this session
CTX_LAST_NET = 3  # the seat's net on its previous hand (0 at the start)
CTX_SHOE = 4  # shoe number within the session (0-based)
CTX_SIZE = 8

# layout of the head of every built-in strategy's parameter vector
P_ON_MAX = 0  # 0 reset, 1 cap
P_ON_BANKROLL = 1  # 0 stop, 1 all-in
P_ON_PUSH = 2  # 0 stand, 1 reset
P_SIDE = 3  # 3 .. 9: side-bet stakes in Bet order
P_PAIRS_ALONE = 10  # 1 when the table takes a pair bet with no main bet (see `at_table`)
P_OWN = 11  # first strategy-specific slot

#: the bet a `picks_one` strategy's decide returns when it stakes more than
#: one bet on the hand: it has then written every stake in `out`
SEVERAL = -2

STATE_FLOATS = 520
STATE_INTS = 8

ON_MAX = {"reset": 0, "cap": 1}
ON_BANKROLL = {"stop": 0, "all-in": 1}
ON_PUSH = {"stand": 0, "reset": 1}


class View:
    """What a strategy may read before a hand. Read-only; the engine refreshes it.

    The engine stores raw numbers (ticks, indices into the run's columns) and
    each property works out its value when read, so a strategy pays only for
    what it reads."""

    __slots__ = (
        "_ticks",
        "_last_ticks",
        "_scale",
        "_i",
        "_lo",
        "_first",
        "_hands",
        "_shoes",
        "_winners",
        "_road_all",
        "_won",
        "_decisive",
        "_evs",
        "_counts",
    )

    def __init__(
        self,
        winners: np.ndarray | None = None,
        hands: list[int] | None = None,
        shoes: np.ndarray | None = None,
        scale: float = 1.0,
    ) -> None:
        #: bankroll and last net in ticks (1 / scale of a currency unit)
        self._ticks = 0
        self._last_ticks = 0
        self._scale = scale
        #: the coming hand's index in the columns, its shoe's first hand's, its session's
        self._i = 0
        self._lo = 0
        self._first = 0
        if winners is None:
            winners = np.zeros(0, np.int8)
        self._winners = winners
        self._hands = hands if hands is not None else [1]
        self._shoes = shoes if shoes is not None else np.zeros(1, np.int64)
        # worked out from `_winners` once per run, when first needed
        self._road_all: str | None = None
        self._won: list[Winner] | None = None
        self._decisive: list[int] | None = None
        self._evs: np.ndarray = np.zeros(N_BETS)
        self._counts: np.ndarray | None = None

    @property
    def bankroll(self) -> float:
        """Money left, before this hand."""
        return self._ticks / self._scale

    @property
    def hand(self) -> int:
        """Number of the coming hand in its shoe (1-based)."""
        return self._hands[self._i]

    @property
    def shoe(self) -> int:
        """Shoe number within the session (0-based)."""
        return int(self._shoes[self._i])

    @property
    def session_hand(self) -> int:
        """Hands already dealt in this session."""
        return self._i - self._first

    @property
    def last_net(self) -> float:
        """This seat's net result on its previous hand (0 before the first)."""
        return self._last_ticks / self._scale

    @property
    def history(self) -> np.ndarray:
        """Winners of this shoe's hands so far: 0 Player, 1 Banker, 2 Tie (read-only)."""
        return self._winners[self._lo : self._i]

    @property
    def _history(self) -> np.ndarray:
        return self._winners[self._lo : self._i]

    def _road(self) -> str:
        road = self._road_all
        if road is None:
            # every hand's winner as one letter, worked out once per run of the engine
            road = self._road_all = (
                np.frombuffer(b"PBT", np.uint8)[self._winners].tobytes().decode("ascii")
            )
        return road

    def road(self) -> str:
        """The shoe so far as a string of P, B and T."""
        return self._road()[self._lo : self._i]

    def _winner_tables(self) -> tuple[list[Winner], list[int]]:
        """Every hand's winner, and before each hand the index of the last hand
        Player or Banker won (-1 for none), whatever the shoe."""
        w = self._winners
        won = winners_of(w)
        decisive = np.where(w != 2, np.arange(len(w)), -1)
        self._decisive = np.concatenate(([-1], np.maximum.accumulate(decisive))).tolist()
        self._won = won
        return won, self._decisive

    @property
    def last_winner(self) -> Winner | None:
        """The winner of this shoe's previous hand (None on its first hand).
        A `Winner` is also its bet's name: ``{view.last_winner: 10}`` bets it."""
        i = self._i
        if i <= self._lo:
            return None
        won = self._won
        if won is None:
            won = self._winner_tables()[0]
        return won[i - 1]

    @property
    def last_decisive(self) -> Winner | None:
        """The last Player or Banker win of this shoe so far, ties skipped
        (None before the first): ``{view.last_decisive: 10}`` follows the shoe."""
        won, decisive = self._won, self._decisive
        if won is None or decisive is None:
            won, decisive = self._winner_tables()
        k = decisive[self._i]
        return won[k] if k >= self._lo else None

    @property
    def evs(self) -> dict[Bet, float]:
        """Exact expected value per unit of each bet for the cards not yet seen
        (only kept current for strategies with `uses_cards = True`; otherwise the
        full shoe's values); NaN for a bet the rules do not offer."""
        return {b: float(self._evs[i]) for i, b in enumerate(Bet)}

    @property
    def counts(self) -> np.ndarray | None:
        """Rank counts (index 1..13) of the cards not yet seen, for counting strategies."""
        return self._counts


_WINNERS = tuple(Winner)


def winners_of(codes: np.ndarray) -> list[Winner]:
    """Every hand's `Winner`, from the winner codes (0 Player, 1 Banker, 2 Tie)."""
    return np.array(_WINNERS, dtype=object)[codes].tolist()


class Result:
    """What a strategy learns after a hand: the winner, and its own net per bet.

    The plain-Python loop passes a subclass of its own that holds raw numbers
    and works the winner and the three dicts out when a strategy reads them."""

    __slots__ = ("winner", "net", "_stakes", "_nets", "_units")

    def __init__(
        self,
        winner: Winner,
        net: float,
        stakes: dict[Bet, float],
        nets: dict[Bet, float],
        units: dict[Bet, float],
    ) -> None:
        self.winner = winner
        #: total net of the hand, in currency units
        self.net = net
        self._stakes = stakes
        self._nets = nets
        self._units = units

    @property
    def stakes(self) -> dict[Bet, float]:
        """The stakes actually placed (after table limits), by bet."""
        return self._stakes

    @stakes.setter
    def stakes(self, value: dict[Bet, float]) -> None:
        self._stakes = value

    @property
    def nets(self) -> dict[Bet, float]:
        """Net result of each placed bet."""
        return self._nets

    @nets.setter
    def nets(self, value: dict[Bet, float]) -> None:
        self._nets = value

    @property
    def units(self) -> dict[Bet, float]:
        """Result per unit staked of every bet on this hand (payout, 0 push, -1 loss)."""
        return self._units

    @units.setter
    def units(self, value: dict[Bet, float]) -> None:
        self._units = value


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


def head_params(strategy: Strategy) -> np.ndarray:
    """The common parameter head (edges, side bets) of any strategy; a
    StrategyError for a user's class whose params cannot say them."""
    if isinstance(strategy, Compiled):
        return strategy.encode()
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

"""What a strategy sees before a hand (`View`: the bankroll, the hand and shoe,
the road, the exact EVs) and learns after it (`Result`: the winner and its
net per bet)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from backtest.core.rules import Bet, Winner
from strategies.slots import (
    CTX_BANKROLL,
    CTX_HAND,
    CTX_LAST_NET,
    CTX_SESSION_HAND,
    CTX_SHOE,
    CTX_SIZE,
    N_BETS,
)


class View:
    """What a strategy may read before a hand. Read-only; the session loop
    fills what it reads from (the context and the EVs) before each hand,
    and each property works its value out when read, so a strategy pays
    only for what it reads."""

    __slots__ = (
        "_i",
        "_lo",
        "_ctx",
        "_winners",
        "_evs",
        "_offered",
        "_cards",
        "_road_all",
        "_won",
        "_decisive",
    )

    def __init__(
        self,
        winners: np.ndarray | None = None,
        ctx: np.ndarray | None = None,
        evs: np.ndarray | None = None,
        offered: np.ndarray | None = None,
        cards: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        #: the coming hand's index in the columns, and its shoe's first hand's
        self._i = 0
        self._lo = 0
        #: the CTX_* numbers of the coming hand (`strategies.slots`; a
        #: memoryview's items are read as Python floats, faster than numpy's)
        self._ctx: Any = memoryview(ctx if ctx is not None else np.zeros(CTX_SIZE))  # type: ignore[arg-type]
        self._winners = winners if winners is not None else np.zeros(0, np.int8)
        self._evs = evs if evs is not None else np.zeros(N_BETS)
        self._offered = offered if offered is not None else np.ones(N_BETS, np.bool_)
        #: for a counting strategy: the cards of every hand and the full shoe's rank counts
        self._cards = cards
        # worked out from `_winners` once per run, when first needed
        self._road_all: str | None = None
        self._won: list[Winner] | None = None
        self._decisive: list[int] | None = None

    @property
    def bankroll(self) -> float:
        """Money left, before this hand."""
        return self._ctx[CTX_BANKROLL]  # type: ignore[no-any-return]

    @property
    def hand(self) -> int:
        """Number of the coming hand in its shoe (1-based)."""
        return int(self._ctx[CTX_HAND])

    @property
    def shoe(self) -> int:
        """Shoe number within the session (0-based)."""
        return int(self._ctx[CTX_SHOE])

    @property
    def session_hand(self) -> int:
        """Hands already dealt in this session."""
        return int(self._ctx[CTX_SESSION_HAND])

    @property
    def last_net(self) -> float:
        """This seat's net result on its previous hand (0 before the first)."""
        return self._ctx[CTX_LAST_NET]  # type: ignore[no-any-return]

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
        return {
            b: float(x) if on else math.nan
            for b, x, on in zip(Bet, self._evs.tolist(), self._offered.tolist(), strict=True)
        }

    @property
    def counts(self) -> np.ndarray | None:
        """Rank counts (index 1..13) of the cards not yet seen, for counting
        strategies (`uses_cards = True`; None for any other)."""
        if self._cards is None:
            return None
        cards, full = self._cards
        seen = np.bincount((cards[self._lo : self._i] & 15).ravel(), minlength=full.shape[0])
        left = full - seen
        left[0] = full[0]
        left.flags.writeable = False
        return left


_WINNERS = tuple(Winner)


def winners_of(codes: np.ndarray) -> list[Winner]:
    """Every hand's `Winner`, from the winner codes (0 Player, 1 Banker, 2 Tie)."""
    return np.array(_WINNERS, dtype=object)[codes].tolist()


class Result:
    """What a strategy learns after a hand: the winner, and its own net per bet.

    The session loop passes a subclass of its own that holds raw numbers
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

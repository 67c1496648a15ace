"""The built-in strategies at the table, checked hand by hand.

* Golden shoes: recorded card-level shoes whose every hand is known, and for
  each system a ledger worked out independently: by hand in comments for the
  edge cases (table maximum, Labouchere's line, pushes), and by a small
  reference model per system written from its documented rules (`Reference`
  below), never by calling the strategy code.
* Any road at any table: Hypothesis draws roads, limits, bankrolls and stop
  rules, and the engine's ledger must be the reference model's.
* The table's edges: bankroll stop and all-in, ruin, stop-loss, win goal.
* A contract over every registered strategy and a user's plain-Python class.
* The compiled and the plain-Python session loops give identical ledgers.
* User strategies, registry look-ups and parameter errors.
* Convergence: over a million hands each, every system's measured edge is
  within four standard errors of the exact edge of the bets it placed.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from itertools import count, cycle
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scenarios import SCENARIOS

from backtest import odds
from backtest.core.errors import ConfigError, StrategyError
from backtest.core.rules import Bet, Rules
from backtest.loop.table_rules import S_BANKROLL_STOPS, S_BELOW_MIN, S_BETS, S_MAX_HITS
from backtest.run import chunks, engine, plan
from backtest.run.config import RunConfig, parse_config
from strategies import registry
from strategies.base import Strategy
from strategies.patterns import TABLE_WIDTH
from strategies.registry import BUILTIN_NAMES

DATA = Path(__file__).resolve().parents[1] / "data"
GOLDEN_CARDS = DATA / "golden-cards.txt"
LEDGER_COLUMNS = (
    "session",
    "shoe",
    "hand",
    "winner",
    "stake_player",
    "stake_banker",
    "stake_tie",
    "net",
    "bankroll",
)
WINNER_NAME = {"P": "player", "B": "banker", "T": "tie"}
TICK = 2000  # one currency unit in the engine's ticks at a commission table (100 cents * 20)

# --- recorded shoes built from roads ------------------------------------------------------
#
# Every hand below is a natural (or a low total against a natural), so both hands
# stand on their first two cards and the winner is plain to see. Cards are dealt
# P1 B1 P2 B2; no hand has a pair.
HAND_CARDS = {
    "P": (
        "9 T J Q",  # Player 9+0=9, Banker 0+0=0
        "8 K Q 5",  # Player 8+0=8, Banker 0+5=5
        "9 4 K 2",
    ),  # Player 9+0=9, Banker 4+2=6
    "B": (
        "T 9 J Q",  # Player 0, Banker 9
        "K 8 5 Q",  # Player 0+5=5, Banker 8+0=8
        "4 9 2 K",
    ),  # Player 4+2=6, Banker 9+0=9
    "T": (
        "9 9 T J",  # 9 - 9
        "8 8 Q K",  # 8 - 8
        "K 9 9 Q",
    ),  # 0+9=9 - 9+0=9
}

ROADS = (
    "TPPPPBTBBBPBPTPPBBBBPTPBPP",
    "BBPTPBPPPPPBTTBPBBPBBBBTPB",
    "PBPBPBBTPPBBPPPTBPPPB",
)


def shoe_line(road: str) -> str:
    """The card-level line of a shoe whose hands have the winners of `road`."""
    variants = {w: cycle(cards) for w, cards in HAND_CARDS.items()}
    return "  ".join(next(variants[w]) for w in road)


def write_shoes(path: Path, roads: Sequence[str]) -> Path:
    path.write_text("".join(shoe_line(r) + "\n" for r in roads), encoding="utf-8")
    return path


def recorded_config(
    shoes: Path,
    seats: list[dict[str, Any]],
    *,
    sessions: int,
    bankroll: float = 1000,
    table: Mapping[str, Any] | None = None,
    rules: str = "commission",
    **session: Any,
) -> RunConfig:
    session = {"bankroll": bankroll, "max_shoes": 1, **session}
    data = {
        "seed": 1,
        "sessions": sessions,
        "rules": rules,
        "shoes": {"file": str(shoes), "decks": 8},
        "session": session,
        "table": dict(table or {"min": 10, "max": 1_000_000}),
        "seats": seats,
    }
    return parse_config(data, base_dir=shoes.parent, source="golden.yaml")


def ledger_of(result: engine.RunResult) -> pl.DataFrame:
    assert result.ledger is not None, "run with ledger=True"
    return result.ledger


def ledger_rows(result: engine.RunResult, seat: str | None = None) -> list[tuple[Any, ...]]:
    led = ledger_of(result)
    if seat is not None:
        led = led.filter(pl.col("seat") == seat)
    return led.select(LEDGER_COLUMNS).rows()


# --- the reference model ------------------------------------------------------------------
#
# Net per unit staked at a commission table, by bet and winner.
PAYS = {
    "player": {"P": Fraction(1), "B": Fraction(-1), "T": Fraction(0)},
    "banker": {"P": Fraction(-1), "B": Fraction(19, 20), "T": Fraction(0)},
    "tie": {"P": Fraction(-1), "B": Fraction(-1), "T": Fraction(8)},
}
SIDE = {"P": "player", "B": "banker", "T": "tie"}
OTHER = {"P": "banker", "B": "player"}


class Reference:
    """A system as its documentation states it: stakes (currency) from the
    shoe's road so far; `settled` gets the stakes placed and each one's
    per-unit result."""

    def start(self) -> None:
        """A new progression (also what `on_max: reset` does)."""

    def stakes(self, road: str) -> dict[str, Fraction]:
        raise NotImplementedError

    def settled(self, placed: dict[str, tuple[Fraction, Fraction]]) -> None:
        pass


class FlatRef(Reference):
    def __init__(self, bets: Mapping[str, float]) -> None:
        self.bets = {b: Fraction(s) for b, s in bets.items()}

    def stakes(self, road: str) -> dict[str, Fraction]:
        return dict(self.bets)


class ProgressionRef(Reference):
    """One bet; `units` times the base stake. A win, a loss, a push move it."""

    def __init__(self, bet: str = "banker", base: float = 10, on_push: str = "stand") -> None:
        self.bet, self.base, self.on_push = bet, Fraction(base), on_push
        self.start()

    def units(self) -> Fraction:
        raise NotImplementedError

    def stakes(self, road: str) -> dict[str, Fraction]:
        return {self.bet: self.base * self.units()}

    def settled(self, placed: dict[str, tuple[Fraction, Fraction]]) -> None:
        stake, unit = placed[self.bet]
        if unit > 0:
            self.win(stake, unit)
        elif unit < 0:
            self.lose(stake)
        elif self.on_push == "reset":
            self.start()

    def win(self, stake: Fraction, unit: Fraction) -> None:
        raise NotImplementedError

    def lose(self, stake: Fraction) -> None:
        raise NotImplementedError


class MartingaleRef(ProgressionRef):
    """x multiplier after a loss, back to one unit after a win."""

    def __init__(self, *args: Any, multiplier: float = 2, **kw: Any) -> None:
        self.multiplier = Fraction(multiplier)
        super().__init__(*args, **kw)

    def start(self) -> None:
        self.level = 0

    def units(self) -> Fraction:
        return self.multiplier**self.level

    def win(self, stake: Fraction, unit: Fraction) -> None:
        self.level = 0

    def lose(self, stake: Fraction) -> None:
        self.level += 1


class GrandMartingaleRef(ProgressionRef):
    """After a loss: twice the last stake plus a unit; one unit after a win."""

    def start(self) -> None:
        self.u = Fraction(1)

    def units(self) -> Fraction:
        return self.u

    def win(self, stake: Fraction, unit: Fraction) -> None:
        self.u = Fraction(1)

    def lose(self, stake: Fraction) -> None:
        self.u = 2 * self.u + 1


class ParoliRef(ProgressionRef):
    """x multiplier after each win until `target` wins in a row; a loss resets."""

    def __init__(self, *args: Any, target: int = 3, multiplier: float = 2, **kw: Any) -> None:
        self.target, self.multiplier = target, Fraction(multiplier)
        super().__init__(*args, **kw)

    def start(self) -> None:
        self.wins = 0

    def units(self) -> Fraction:
        return self.multiplier**self.wins

    def win(self, stake: Fraction, unit: Fraction) -> None:
        self.wins = 0 if self.wins + 1 >= self.target else self.wins + 1

    def lose(self, stake: Fraction) -> None:
        self.wins = 0


class FibonacciRef(ProgressionRef):
    """1, 1, 2, 3, 5 ... units: a step on after a loss, `back` steps back after a win."""

    def __init__(self, *args: Any, back: int = 2, **kw: Any) -> None:
        self.back = back
        super().__init__(*args, **kw)

    def start(self) -> None:
        self.step = 0

    def units(self) -> Fraction:
        seq = [1, 1]
        while len(seq) <= self.step:
            seq.append(seq[-1] + seq[-2])
        return Fraction(seq[self.step])

    def win(self, stake: Fraction, unit: Fraction) -> None:
        self.step = max(0, self.step - self.back)

    def lose(self, stake: Fraction) -> None:
        self.step += 1


class DAlembertRef(ProgressionRef):
    """`step` units more after a loss, fewer after a win, never below one unit."""

    def __init__(self, *args: Any, step: int = 1, **kw: Any) -> None:
        self.step = step
        super().__init__(*args, **kw)

    def start(self) -> None:
        self.u = 1

    def units(self) -> Fraction:
        return Fraction(self.u)

    def win(self, stake: Fraction, unit: Fraction) -> None:
        self.u = max(1, self.u - self.step)

    def lose(self, stake: Fraction) -> None:
        self.u += self.step


class LabouchereRef(ProgressionRef):
    """Stake first + last of the line; a win crosses both out, a loss appends
    the units lost; a crossed-out line starts again."""

    def __init__(self, *args: Any, line: Sequence[float] = (1, 2, 3, 4), **kw: Any) -> None:
        self.first_line = [Fraction(x) for x in line]
        super().__init__(*args, **kw)

    def start(self) -> None:
        self.line = list(self.first_line)

    def units(self) -> Fraction:
        return self.line[0] if len(self.line) == 1 else self.line[0] + self.line[-1]

    def win(self, stake: Fraction, unit: Fraction) -> None:
        self.line = self.line[1:-1]
        if not self.line:
            self.start()

    def lose(self, stake: Fraction) -> None:
        self.line.append(stake / self.base)


class SequenceRef(ProgressionRef):
    """1-3-2-6: one step on per win, back to the start on a loss or at the end."""

    def __init__(self, *args: Any, sequence: Sequence[float] = (1, 3, 2, 6), **kw: Any) -> None:
        self.sequence = [Fraction(x) for x in sequence]
        super().__init__(*args, **kw)

    def start(self) -> None:
        self.i = 0

    def units(self) -> Fraction:
        return self.sequence[self.i]

    def win(self, stake: Fraction, unit: Fraction) -> None:
        self.i = (self.i + 1) % len(self.sequence)

    def lose(self, stake: Fraction) -> None:
        self.i = 0


class OscarRef(ProgressionRef):
    """A series aims at `goal` units of profit: after a win one unit more than
    the stake just won, after a loss the stake just lost (as placed), never
    more than a win needs to finish the series, at least one unit."""

    def __init__(self, *args: Any, goal: float = 1, **kw: Any) -> None:
        self.goal = Fraction(goal)
        super().__init__(*args, **kw)

    def start(self) -> None:
        self.u = Fraction(1)
        self.profit = Fraction(0)

    def units(self) -> Fraction:
        needed = math.ceil((self.goal * self.base - self.profit) / self.base)
        return max(Fraction(1), min(self.u, Fraction(needed)))

    def win(self, stake: Fraction, unit: Fraction) -> None:
        self.profit += stake * unit
        if self.profit >= self.goal * self.base:
            self.start()
        else:
            self.u = stake / self.base + 1

    def lose(self, stake: Fraction) -> None:
        self.profit -= stake
        self.u = stake / self.base


class ReaderRef(Reference):
    """Flat `base` on the side read from this shoe's road (ties skipped)."""

    def __init__(self, base: float = 10, first: str = "skip") -> None:
        self.base, self.first = Fraction(base), first

    def side(self, decisive: str) -> str | None:
        raise NotImplementedError

    def stakes(self, road: str) -> dict[str, Fraction]:
        decisive = road.replace("T", "")
        side = self.side(decisive) if decisive else (None if self.first == "skip" else self.first)
        return {side: self.base} if side else {}


class FollowRef(ReaderRef):
    def side(self, decisive: str) -> str | None:
        return SIDE[decisive[-1]]


class ChopRef(ReaderRef):
    def side(self, decisive: str) -> str | None:
        return OTHER[decisive[-1]]


class StreakRef(ReaderRef):
    def __init__(self, base: float = 10, length: int = 3, mode: str = "follow") -> None:
        super().__init__(base)
        self.length, self.mode = length, mode

    def side(self, decisive: str) -> str | None:
        last = decisive[-1]
        run = len(decisive) - len(decisive.rstrip(last))
        if run < self.length:
            return None
        return SIDE[last] if self.mode == "follow" else OTHER[last]


class PatternRef(Reference):
    """The longest pattern matching the end of the road places its bet."""

    def __init__(
        self, patterns: Mapping[str, str], base: float = 10, ignore_ties: bool = True
    ) -> None:
        self.patterns, self.base, self.ignore_ties = dict(patterns), Fraction(base), ignore_ties

    def stakes(self, road: str) -> dict[str, Fraction]:
        seen = road.replace("T", "") if self.ignore_ties else road
        matches = [p for p in self.patterns if seen.endswith(p)]
        if not matches:
            return {}
        best = max(matches, key=len)  # max keeps the first of equal lengths
        return {SIDE[self.patterns[best]]: self.base}


class BankerAfterTwoPlayersRef(Reference):
    def stakes(self, road: str) -> dict[str, Fraction]:
        return {"banker": Fraction(10)} if road.replace("T", "").endswith("PP") else {}


def play(
    system: Reference,
    shoes: Sequence[str],
    *,
    bankroll: float = 1000,
    minimum: float = 10,
    maximum: float = 1_000_000,
    on_max: str = "reset",
    on_bankroll: str = "stop",
    stop_loss: float | None = None,
    win_goal: float | None = None,
    session: int = 1,
) -> tuple[list[tuple[Any, ...]], str]:
    """One session of `system` over the roads `shoes`, at a commission table,
    by the table rules as documented: a stake under the minimum is raised to it;
    over the maximum the progression restarts (`reset`) or the stake is capped
    (`cap`); stakes over the bankroll end the session (`stop`) or are scaled down
    to it (`all-in`; a scaled stake under the minimum is ruin too); after the
    hand, ruin below the minimum, then the stop-loss, then the win goal. A
    bankroll below the minimum from the start is ruin before the first hand.
    Returns the ledger rows and how the session ended."""
    lo, hi = Fraction(minimum), Fraction(maximum)
    money = start = Fraction(bankroll)
    rows: list[tuple[Any, ...]] = []
    system.start()
    if money < lo:
        return rows, "ruin"

    def at_table(stakes: Mapping[str, Fraction]) -> dict[str, Fraction]:
        return {b: max(s, lo) for b, s in stakes.items() if s > 0}

    for shoe_no, road in enumerate(shoes, start=1):
        for hand, winner in enumerate(road, start=1):
            seen = road[: hand - 1]
            want = at_table(system.stakes(seen))
            if any(s > hi for s in want.values()) and on_max == "reset":
                system.start()
                want = at_table(system.stakes(seen))
            want = {b: min(s, hi) for b, s in want.items()}
            total = sum(want.values())
            if total > money:
                if on_bankroll == "stop":
                    return rows, "ruin"
                # all in: every stake scaled down in proportion, in whole cents
                left = math.floor(money * 100)
                want = {b: Fraction(math.floor(s * left / total), 100) for b, s in want.items()}
                want = {b: s for b, s in want.items() if s > 0}
                if not want or any(s < lo for s in want.values()):
                    return rows, "ruin"
            results = {b: (s, PAYS[b][winner]) for b, s in want.items()}
            net = sum((s * u for s, u in results.values()), Fraction(0))
            money += net
            system.settled(results)
            rows.append(
                (
                    session,
                    shoe_no,
                    hand,
                    WINNER_NAME[winner],
                    float(want.get("player", 0)),
                    float(want.get("banker", 0)),
                    float(want.get("tie", 0)),
                    float(net),
                    float(money),
                )
            )
            if money < lo:
                return rows, "ruin"
            if stop_loss is not None and start - money >= stop_loss:
                return rows, "stop-loss"
            if win_goal is not None and money - start >= win_goal:
                return rows, "win-goal"
    return rows, "limit"


# --- golden ledgers worked out by hand -----------------------------------------------------

PATHS = pytest.mark.parametrize("force_python", [False, True], ids=["compiled", "python"])


@PATHS
def test_flat_on_recorded_cards_by_hand(force_python: bool) -> None:
    """tests/data/golden-cards.txt, its hands worked out in its comments."""
    cfg = recorded_config(
        GOLDEN_CARDS,
        [
            {
                "strategy": "flat",
                "name": "banker+pair",
                "params": {"bets": {"banker": 10, "player_pair": 1}},
            },
            {
                "strategy": "flat",
                "name": "player+tie",
                "params": {"bets": {"player": 10, "tie": 1}},
            },
        ],
        sessions=2,
        table={"min": 1},
    )
    result = engine.run(cfg, ledger=True, force_python=force_python)
    # Banker 10 (a win pays 9.50 under the 5% commission) and a Player pair 1 (11 to 1).
    assert ledger_rows(result, "banker+pair") == [
        (1, 1, 1, "player", 0.0, 10.0, 0.0, -11.0, 989.0),  # Player 7-0: -10, -1
        (1, 1, 2, "banker", 0.0, 10.0, 0.0, 8.5, 997.5),  # Banker 9: +9.50, -1
        (1, 1, 3, "tie", 0.0, 10.0, 0.0, -1.0, 996.5),  # tie: Banker pushes, -1
        (1, 1, 4, "banker", 0.0, 10.0, 0.0, 8.5, 1005.0),  # Banker 6: +9.50, -1
        (1, 1, 5, "player", 0.0, 10.0, 0.0, 1.0, 1006.0),  # Player pair 4-4: -10, +11
        (1, 1, 6, "banker", 0.0, 10.0, 0.0, 8.5, 1014.5),
        (1, 1, 7, "player", 0.0, 10.0, 0.0, -11.0, 1003.5),
        (2, 1, 1, "banker", 0.0, 10.0, 0.0, 8.5, 1008.5),
        (2, 1, 2, "tie", 0.0, 10.0, 0.0, -1.0, 1007.5),
        (2, 1, 3, "player", 0.0, 10.0, 0.0, -11.0, 996.5),
    ]
    # Player 10 and Tie 1 (8 to 1): a tie pushes the Player bet and pays the Tie 8.
    nets = [9.0, -11.0, 8.0, -11.0, 9.0, -11.0, 9.0, -11.0, 8.0, 9.0]
    assert [r[7] for r in ledger_rows(result, "player+tie")] == nets
    sessions = result.sessions.filter(pl.col("seat") == "player+tie")
    assert sessions["net"].to_list() == [2.0, 6.0]
    assert sessions["final_bankroll"].to_list() == [1002.0, 1006.0]
    assert sessions["wagered_tie"].to_list() == [7.0, 3.0]


@PATHS
def test_no_commission_banker_six_pays_half(force_python: bool) -> None:
    cfg = recorded_config(
        GOLDEN_CARDS,
        [{"strategy": "flat", "params": {"bets": {"banker": 10}}}],
        sessions=1,
        rules="no-commission",
    )
    result = engine.run(cfg, ledger=True, force_python=force_python)
    # Banker wins pay 1 to 1, except hand 4, won with a 6: half.
    assert [r[7] for r in ledger_rows(result)] == [-10.0, 10.0, 0.0, 5.0, -10.0, 10.0, -10.0]


def _one_road(tmp_path: Path, road: str, seat: dict[str, Any], **kw: Any) -> engine.RunResult:
    shoes = write_shoes(tmp_path / "road.txt", [road])
    force_python = kw.pop("force_python", False)
    return engine.run(
        recorded_config(shoes, [seat], sessions=1, **kw), ledger=True, force_python=force_python
    )


@PATHS
def test_martingale_at_the_table_maximum_by_hand(tmp_path: Path, force_python: bool) -> None:
    params: dict[str, Any] = {"bet": "banker", "base": 10, "on_max": "reset"}
    seat = {"strategy": "martingale", "params": params}
    table = {"min": 10, "max": 40}
    reset = _one_road(tmp_path, "PPPPBP", seat, table=table, force_python=force_python)
    assert ledger_rows(reset) == [
        (1, 1, 1, "player", 0.0, 10.0, 0.0, -10.0, 990.0),
        (1, 1, 2, "player", 0.0, 20.0, 0.0, -20.0, 970.0),
        (1, 1, 3, "player", 0.0, 40.0, 0.0, -40.0, 930.0),
        (1, 1, 4, "player", 0.0, 10.0, 0.0, -10.0, 920.0),  # 80 > 40: restart at 10
        (1, 1, 5, "banker", 0.0, 20.0, 0.0, 19.0, 939.0),  # one loss since the restart
        (1, 1, 6, "player", 0.0, 10.0, 0.0, -10.0, 929.0),
    ]
    assert reset.sessions["max_hits"].to_list() == [1]

    params["on_max"] = "cap"
    cap = _one_road(tmp_path, "PPPPBP", seat, table=table, force_python=force_python)
    assert ledger_rows(cap) == [
        (1, 1, 1, "player", 0.0, 10.0, 0.0, -10.0, 990.0),
        (1, 1, 2, "player", 0.0, 20.0, 0.0, -20.0, 970.0),
        (1, 1, 3, "player", 0.0, 40.0, 0.0, -40.0, 930.0),
        (1, 1, 4, "player", 0.0, 40.0, 0.0, -40.0, 890.0),  # 80 capped at 40
        (1, 1, 5, "banker", 0.0, 40.0, 0.0, 38.0, 928.0),  # 160 capped at 40
        (1, 1, 6, "player", 0.0, 10.0, 0.0, -10.0, 918.0),  # a win: back to 10
    ]
    assert cap.sessions["max_hits"].to_list() == [2]


@PATHS
def test_a_stake_the_bankroll_refuses_is_not_counted_as_raised_or_capped(
    tmp_path: Path, force_python: bool
) -> None:
    """The stake that ends a session in ruin is never placed: `max_hits` and
    `raised_to_min` count the hands played (so never more than them), while
    `bankroll_stops` counts the refusal."""
    seat = {"strategy": "martingale", "params": {"bet": "banker", "base": 5, "on_max": "cap"}}
    capped = _one_road(
        tmp_path,
        "PPPPPP",
        seat,
        table={"min": 10, "max": 15},
        bankroll=62,
        force_python=force_python,
    )
    assert ledger_rows(capped) == [
        (1, 1, 1, "player", 0.0, 10.0, 0.0, -10.0, 52.0),  # 5 raised to 10
        (1, 1, 2, "player", 0.0, 10.0, 0.0, -10.0, 42.0),
        (1, 1, 3, "player", 0.0, 15.0, 0.0, -15.0, 27.0),  # 20 capped at 15
        (1, 1, 4, "player", 0.0, 15.0, 0.0, -15.0, 12.0),  # 40 capped at 15
    ]  # 80 capped at 15 > 12: ruin
    s = capped.sessions.row(0, named=True)
    assert (s["hands"], s["ended_by"], s["raised_to_min"], s["max_hits"], s["bankroll_stops"]) == (
        4,
        "ruin",
        1,
        2,
        1,
    )

    seat = {"strategy": "flat", "params": {"bets": {"banker": 5, "tie": 5}}}
    raised = _one_road(
        tmp_path, "PPP", seat, table={"min": 10, "max": 100}, bankroll=30, force_python=force_python
    )
    assert ledger_rows(raised) == [(1, 1, 1, "player", 0.0, 10.0, 10.0, -20.0, 10.0)]
    s = raised.sessions.row(0, named=True)  # then 20 (two raises) > 10: ruin
    assert (s["hands"], s["ended_by"], s["raised_to_min"], s["max_hits"], s["bankroll_stops"]) == (
        1,
        "ruin",
        2,
        0,
        1,
    )


@PATHS
def test_labouchere_line_by_hand(tmp_path: Path, force_python: bool) -> None:
    seat = {"strategy": "labouchere", "params": {"bet": "banker", "base": 10, "line": [1, 2, 3]}}
    result = _one_road(tmp_path, "PPBBBTP", seat, force_python=force_python)
    assert ledger_rows(result) == [
        (1, 1, 1, "player", 0.0, 40.0, 0.0, -40.0, 960.0),  # 1+3; lost: line 1 2 3 4
        (1, 1, 2, "player", 0.0, 50.0, 0.0, -50.0, 910.0),  # 1+4; lost: line 1 2 3 4 5
        (1, 1, 3, "banker", 0.0, 60.0, 0.0, 57.0, 967.0),  # 1+5; won: line 2 3 4
        (1, 1, 4, "banker", 0.0, 60.0, 0.0, 57.0, 1024.0),  # 2+4; won: line 3
        (1, 1, 5, "banker", 0.0, 30.0, 0.0, 28.5, 1052.5),  # 3; won: a new line 1 2 3
        (1, 1, 6, "tie", 0.0, 40.0, 0.0, 0.0, 1052.5),  # push: the line stands
        (1, 1, 7, "player", 0.0, 40.0, 0.0, -40.0, 1012.5),
    ]


@PATHS
def test_oscars_grind_keeps_the_stake_just_lost_by_hand(tmp_path: Path, force_python: bool) -> None:
    """After a loss the stake just lost, after a win one unit more than the stake
    just won, capped at what the goal needs: a stake cut to finish the series
    that loses is not raised again (hand 7 stakes 10, not 20)."""
    seat = {"strategy": "oscars-grind", "params": {"bet": "player", "base": 10, "goal": 1}}
    result = _one_road(tmp_path, "BBBPPBPBPP", seat, force_python=force_python)
    stakes = [row[4] for row in ledger_rows(result)]
    #          lost three; won 10; won 20 (series even); 30 cut to 10, lost; 10 wins ...
    assert stakes == [10, 10, 10, 10, 20, 10, 10, 10, 10, 10]
    assert [row[7] for row in ledger_rows(result)][-1] == 10.0  # the series' unit, won


@PATHS
@pytest.mark.parametrize("bet", ["player", "banker"])
def test_oscars_grind_ends_its_series_at_large_stakes(
    tmp_path: Path, force_python: bool, bet: str
) -> None:
    """Stakes of hundreds of thousands (a small-denomination currency) and
    series millions deep: the goal is reached exactly when the reference's
    fractions say, so the series restarts on time (kept in units, with its
    slack inside the sums, a series once missed its goal and staked on)."""
    import random

    rng = random.Random(11)
    roads = ["".join(rng.choice("PPPPBBBBBT") for _ in range(80)) for _ in range(12)]
    shoes = tmp_path / "roads.txt"
    shoes.write_text("".join(road + "\n" for road in roads), encoding="utf-8")  # outcomes
    seat = {
        "strategy": "oscars-grind",
        "params": {"bet": bet, "base": 100_000, "goal": 3, "on_max": "cap"},
    }
    table = {"min": 100_000, "max": 50_000_000}
    result = engine.run(
        recorded_config(shoes, [seat], sessions=1, bankroll=500_000_000, table=table, max_shoes=12),
        ledger=True,
        force_python=force_python,
    )
    rows, _ = play(
        OscarRef(bet, 100_000, goal=3),
        roads,
        bankroll=500_000_000,
        minimum=100_000,
        maximum=50_000_000,
        on_max="cap",
    )
    assert ledger_rows(result) == rows
    assert len(rows) == 12 * 80


@PATHS
@pytest.mark.parametrize(
    "on_push, stakes, nets",
    [
        # 10, 20 lost; 40 pushes and stands; 40 wins; back to 10
        ("stand", [10, 20, 40, 40, 10], [-10, -20, 0, 38, -10]),
        # 10, 20 lost; 40 pushes and resets the progression: 10 wins, 10
        ("reset", [10, 20, 40, 10, 10], [-10, -20, 0, 9.5, -10]),
    ],
)
def test_a_tie_pushes_and_the_progression_stands_or_resets(
    tmp_path: Path, force_python: bool, on_push: str, stakes: list[float], nets: list[float]
) -> None:
    seat = {"strategy": "martingale", "params": {"bet": "banker", "base": 10, "on_push": on_push}}
    rows = ledger_rows(_one_road(tmp_path, "PPTBP", seat, force_python=force_python))
    assert [r[5] for r in rows] == stakes
    assert [r[7] for r in rows] == nets
    assert rows[-1][8] == 1000 + sum(nets)


# --- golden ledgers from the reference models -------------------------------------------------

Golden = tuple[str, dict[str, Any], Callable[[], Reference], dict[str, Any]]
SIXTEEN = {"BBBBPBPPPBBBBPPB": "B", "BPP": "P"}
GOLDEN: dict[str, Golden] = {
    "flat-banker": ("flat", {"bets": {"banker": 10}}, lambda: FlatRef({"banker": 10}), {}),
    "flat-raised-to-minimum": (
        "flat",
        {"bets": {"player": 4, "tie": 2}},
        lambda: FlatRef({"player": 4, "tie": 2}),
        {},
    ),
    "martingale-max-reset": (
        "martingale",
        {"bet": "banker", "base": 10},
        lambda: MartingaleRef("banker", 10),
        {"maximum": 40},
    ),
    "martingale-max-cap": (
        "martingale",
        {"bet": "banker", "base": 10, "on_max": "cap"},
        lambda: MartingaleRef("banker", 10),
        {"maximum": 40, "on_max": "cap"},
    ),
    "martingale-x3-player-push-reset": (
        "martingale",
        {"bet": "player", "base": 10, "multiplier": 3, "on_push": "reset"},
        lambda: MartingaleRef("player", 10, multiplier=3, on_push="reset"),
        {"maximum": 500},
    ),
    "grand-martingale": (
        "grand-martingale",
        {"bet": "banker", "base": 10},
        lambda: GrandMartingaleRef("banker", 10),
        {"maximum": 200},
    ),
    "paroli": ("paroli", {"bet": "player", "base": 10}, lambda: ParoliRef("player", 10), {}),
    "paroli-target-2-x3": (
        "paroli",
        {"bet": "banker", "base": 10, "target": 2, "multiplier": 3},
        lambda: ParoliRef("banker", 10, target=2, multiplier=3),
        {},
    ),
    "fibonacci": (
        "fibonacci",
        {"bet": "banker", "base": 10},
        lambda: FibonacciRef("banker", 10),
        {},
    ),
    "fibonacci-back-1-push-reset": (
        "fibonacci",
        {"bet": "player", "base": 10, "back": 1, "on_push": "reset"},
        lambda: FibonacciRef("player", 10, back=1, on_push="reset"),
        {},
    ),
    "dalembert": (
        "dalembert",
        {"bet": "banker", "base": 10},
        lambda: DAlembertRef("banker", 10),
        {},
    ),
    "dalembert-step-2": (
        "dalembert",
        {"bet": "player", "base": 10, "step": 2},
        lambda: DAlembertRef("player", 10, step=2),
        {},
    ),
    "labouchere": (
        "labouchere",
        {"bet": "banker", "base": 10, "line": [1, 2, 3]},
        lambda: LabouchereRef("banker", 10, line=[1, 2, 3]),
        {},
    ),
    "labouchere-max-cap": (
        "labouchere",
        {"bet": "player", "base": 10, "line": [1, 2, 3], "on_max": "cap"},
        lambda: LabouchereRef("player", 10, line=[1, 2, 3]),
        {"maximum": 60, "on_max": "cap"},
    ),
    "1-3-2-6": ("1-3-2-6", {"bet": "player", "base": 10}, lambda: SequenceRef("player", 10), {}),
    "1-3-2-6-banker": (
        "1-3-2-6",
        {"bet": "banker", "base": 10},
        lambda: SequenceRef("banker", 10),
        {},
    ),
    "oscars-grind": (
        "oscars-grind",
        {"bet": "player", "base": 10},
        lambda: OscarRef("player", 10),
        {},
    ),
    "oscars-grind-banker-goal-2": (
        "oscars-grind",
        {"bet": "banker", "base": 10, "goal": 2},
        lambda: OscarRef("banker", 10, goal=2),
        {},
    ),
    # stakes placed other than asked: the series counts what was placed
    "oscars-grind-max-cap": (
        "oscars-grind",
        {"bet": "banker", "base": 10, "goal": 4, "on_max": "cap"},
        lambda: OscarRef("banker", 10, goal=4),
        {"maximum": 20, "on_max": "cap"},
    ),
    "oscars-grind-raised-to-minimum": (
        "oscars-grind",
        {"bet": "player", "base": 4, "goal": 3},
        lambda: OscarRef("player", 4, goal=3),
        {},
    ),
    # a push that restarts the progression, for every progression
    **{
        f"{name}-push-reset": (
            name,
            {"bet": "banker", "base": 10, "on_push": "reset"},
            (lambda ref=ref: ref("banker", 10, on_push="reset")),
            table,
        )
        for name, ref, table in (
            ("grand-martingale", GrandMartingaleRef, {"maximum": 200}),
            ("paroli", ParoliRef, {}),
            ("dalembert", DAlembertRef, {}),
            ("labouchere", LabouchereRef, {}),
            ("1-3-2-6", SequenceRef, {}),
            ("oscars-grind", OscarRef, {}),
        )
    },
    "follow-the-shoe": ("follow-the-shoe", {"base": 10}, lambda: FollowRef(10), {}),
    "follow-the-shoe-first-banker": (
        "follow-the-shoe",
        {"base": 10, "first": "banker"},
        lambda: FollowRef(10, "banker"),
        {},
    ),
    "chop": ("chop", {"base": 10}, lambda: ChopRef(10), {}),
    "chop-first-player": (
        "chop",
        {"base": 10, "first": "player"},
        lambda: ChopRef(10, "player"),
        {},
    ),
    "streak-follow-2": ("streak", {"base": 10, "length": 2}, lambda: StreakRef(10, length=2), {}),
    "streak-fade-3": (
        "streak",
        {"base": 10, "mode": "fade"},
        lambda: StreakRef(10, mode="fade"),
        {},
    ),
    "pattern-PP-B": (
        "pattern",
        {"base": 10, "patterns": {"PP": "B"}},
        lambda: PatternRef({"PP": "B"}),
        {},
    ),
    "pattern-longest-wins": (
        "pattern",
        {"base": 10, "patterns": {"PP": "B", "BPP": "P", "BB": "T"}},
        lambda: PatternRef({"PP": "B", "BPP": "P", "BB": "T"}),
        {},
    ),
    "pattern-with-ties": (
        "pattern",
        {"base": 10, "ignore_ties": False, "patterns": {"TP": "P", "T": "B"}},
        lambda: PatternRef({"TP": "P", "T": "B"}, ignore_ties=False),
        {},
    ),
    # sixteen letters, the longest a pattern may be: matches once, after 20 outcomes of
    # the first shoe
    "pattern-sixteen": (
        "pattern",
        {"base": 10, "patterns": SIXTEEN},
        lambda: PatternRef(SIXTEEN),
        {},
    ),
}


@pytest.fixture(scope="module")
def golden_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("golden")


@pytest.fixture(scope="module")
def golden_shoes(golden_dir: Path) -> Path:
    return write_shoes(golden_dir / "roads-as-cards.txt", ROADS)


@PATHS
@pytest.mark.parametrize("case", GOLDEN)
def test_golden_ledger(golden_shoes: Path, case: str, force_python: bool) -> None:
    strategy, params, reference, table = GOLDEN[case]
    table = dict(table)
    cfg = recorded_config(
        golden_shoes,
        [{"strategy": strategy, "params": params}],
        sessions=len(ROADS),
        table={"min": table.get("minimum", 10), "max": table.get("maximum", 1_000_000)},
    )
    result = engine.run(cfg, ledger=True, force_python=force_python)
    expected: list[tuple[Any, ...]] = []
    for j, road in enumerate(ROADS, start=1):
        rows, ended = play(reference(), [road], session=j, **table)
        assert ended == "limit"
        expected += rows
    assert ledger_rows(result) == expected


@PATHS
def test_a_session_of_two_shoes(golden_shoes: Path, force_python: bool) -> None:
    """A progression carries on into the next shoe of the session; a shoe
    reader starts reading afresh (its history is the shoe's)."""
    seats = [
        {"strategy": "martingale", "params": {"bet": "banker", "base": 10}},
        {"strategy": "follow-the-shoe", "params": {"base": 10}},
        {"strategy": "labouchere", "params": {"bet": "player", "base": 10, "line": [2, 1]}},
    ]
    cfg = recorded_config(
        golden_shoes, seats, sessions=1, max_shoes=2, bankroll=5000, table={"min": 10, "max": 300}
    )
    result = engine.run(cfg, ledger=True, force_python=force_python)
    refs = {
        "martingale": MartingaleRef("banker", 10),
        "follow-the-shoe": FollowRef(10),
        "labouchere": LabouchereRef("player", 10, line=[2, 1]),
    }
    for seat, ref in refs.items():
        rows, ended = play(ref, ROADS[:2], bankroll=5000, maximum=300)
        assert ended == "limit"
        assert ledger_rows(result, seat) == rows, seat
    follow = ledger_of(result).filter(pl.col("seat") == "follow-the-shoe")
    first_of_second = follow.filter((pl.col("shoe") == 2) & (pl.col("hand") == 1))
    assert first_of_second["stake_player"].item() == first_of_second["stake_banker"].item() == 0


def test_golden_user_strategy_from_the_readme(tmp_path: Path) -> None:
    path = tmp_path / "readme_strategy.py"
    path.write_text(README_STRATEGY, encoding="utf-8")
    shoes = write_shoes(tmp_path / "roads.txt", ROADS)
    cfg = recorded_config(
        shoes, [{"strategy": f"{path}:BankerAfterTwoPlayers"}], sessions=len(ROADS)
    )
    result = engine.run(cfg, ledger=True)
    expected = []
    for j, road in enumerate(ROADS, start=1):
        expected += play(BankerAfterTwoPlayersRef(), [road], session=j)[0]
    assert ledger_rows(result) == expected


KEEPER_STRATEGY = '''
import copy
import math
import pickle
from strategies.base import Result, Strategy
from backtest.core.rules import Bet


class Keeper(Strategy):
    """Keeps every other Result and reads the dicts of the others, checking
    each hand that the kept ones still say what they said, and that the
    dicts read are this hand's; every fifth Result is held for one hand
    only, and a dict read from it is kept beside it."""

    name = "keeper"

    def reset(self):
        self.kept, self.n, self.held = [], 0, None

    def stakes(self, view):
        self.n += 1
        self.asked = {"banker": 10.0} if self.n % 3 else {"player": 20.0, "tie": 5.0}
        return self.asked

    def update(self, view, result):
        for kept, said in self.kept[-40:]:
            assert (kept.winner, kept.net, kept.stakes, kept.nets, kept.units) == said, said
        assert result.stakes == {Bet(b): s for b, s in self.asked.items()}, (self.n, result.stakes)
        assert math.isclose(sum(result.nets.values()), result.net, abs_tol=1e-9)
        assert result.units[Bet.PLAYER] == (1.0 if result.winner.value == "player" else
                                            0.0 if result.winner.value == "tie" else -1.0)
        if self.n % 7 == 0:   # a copy, or a pickle, is a plain Result saying the same
            for twin in (copy.copy(result), copy.deepcopy(result),
                         pickle.loads(pickle.dumps(result))):
                assert type(twin) is Result and (twin.winner, twin.net, twin.stakes, twin.nets,
                                                 twin.units) == (result.winner, result.net,
                                                                 result.stakes, result.nets,
                                                                 result.units)
        if self.held is not None:
            held, said, units = self.held
            assert (held.winner, held.net, held.stakes, held.units) == said == \
                (said[0], said[1], said[2], units), said
        self.held = None
        if self.n % 5 == 0:
            units = result.units
            self.held = (result, (result.winner, result.net, dict(result.stakes),
                                  dict(units)), units)
        if self.n % 2:
            self.kept.append((result, (result.winner, result.net, dict(result.stakes),
                                       dict(result.nets), dict(result.units))))
'''


def test_results_kept_by_a_strategy_keep_their_values(tmp_path: Path) -> None:
    """A strategy that keeps some of its Results sees them unchanged hands
    later, and the dicts of each Result (worked out each time they are read)
    are its own hand's."""
    path = tmp_path / "keeper.py"
    path.write_text(KEEPER_STRATEGY, encoding="utf-8")
    shoes = write_shoes(tmp_path / "roads.txt", ROADS)
    cfg = recorded_config(
        shoes,
        [{"strategy": f"{path}:Keeper"}],
        sessions=len(ROADS),
        bankroll=10_000,
        table={"min": 1, "max": 1000},
    )
    result = engine.run(cfg)
    assert result.summary["hands"].item() == sum(len(road) for road in ROADS)


_SHOE_NUMBER = count()


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    case=st.sampled_from(sorted(GOLDEN)),
    road=st.text("PBT", min_size=1, max_size=30),
    bankroll=st.sampled_from([5, 25, 62.5, 150, 400]),
    minimum=st.sampled_from([5, 10]),
    maximum=st.sampled_from([40, 75, 200, 1_000_000]),
    on_max=st.sampled_from(["reset", "cap"]),
    on_bankroll=st.sampled_from(["stop", "all-in"]),
    stop_loss=st.sampled_from([None, 50, 120]),
    win_goal=st.sampled_from([None, 30, 100]),
    force_python=st.booleans(),
)
def test_any_road_at_any_table_matches_the_reference(
    golden_dir: Path,
    case: str,
    road: str,
    bankroll: float,
    minimum: float,
    maximum: float,
    on_max: str,
    on_bankroll: str,
    stop_loss: float | None,
    win_goal: float | None,
    force_python: bool,
) -> None:
    strategy, params, reference, _ = GOLDEN[case]
    shoes = write_shoes(golden_dir / f"road-{next(_SHOE_NUMBER)}.txt", [road])
    seat = {
        "strategy": strategy,
        "params": {**params, "on_max": on_max, "on_bankroll": on_bankroll},
    }
    cfg = recorded_config(
        shoes,
        [seat],
        sessions=1,
        bankroll=bankroll,
        table={"min": minimum, "max": maximum},
        stop_loss=stop_loss,
        win_goal=win_goal,
    )
    result = engine.run(cfg, ledger=True, force_python=force_python)
    rows, ended = play(
        reference(),
        [road],
        bankroll=bankroll,
        minimum=minimum,
        maximum=maximum,
        on_max=on_max,
        on_bankroll=on_bankroll,
        stop_loss=stop_loss,
        win_goal=win_goal,
    )
    assert ledger_rows(result) == rows
    assert result.sessions.select("hands", "ended_by").row(0) == (len(rows), ended)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    road=st.text("PBT", min_size=20, max_size=80),
    ignore_ties=st.booleans(),
    longest=st.sampled_from([16, TABLE_WIDTH]),
    data=st.data(),
)
def test_pattern_tables_match_the_reference(
    golden_dir: Path, road: str, ignore_ties: bool, longest: int, data: st.DataObject
) -> None:
    """Patterns of 1 to 16 outcomes cut from the road itself, so that long ones
    match too, and after more outcomes than the longest pattern; with patterns
    of at most TABLE_WIDTH outcomes, the strategy looks them up in its table."""
    seen = road.replace("T", "") if ignore_ties else road
    patterns: dict[str, str] = {}
    for k in range(data.draw(st.integers(1, 6)) if seen else 0):
        end = data.draw(st.integers(1, len(seen)))
        length = min(longest, end) if k == 0 else data.draw(st.integers(1, min(longest, end)))
        patterns[seen[end - length : end]] = data.draw(st.sampled_from("PBT"))
    patterns = patterns or {"B": "P"}
    shoes = golden_dir / f"road-{next(_SHOE_NUMBER)}.txt"
    shoes.write_text(road + "\n", encoding="utf-8")  # an outcome-level road: any length
    seat = {
        "strategy": "pattern",
        "params": {"base": 10, "patterns": patterns, "ignore_ties": ignore_ties},
    }
    result = engine.run(recorded_config(shoes, [seat], sessions=1, bankroll=10_000), ledger=True)
    rows, _ = play(PatternRef(patterns, ignore_ties=ignore_ties), [road], bankroll=10_000)
    assert ledger_rows(result) == rows


# --- the table's edges: bankroll, ruin, stop-loss, win goal --------------------------------------


@PATHS
def test_on_bankroll_stop_and_all_in(tmp_path: Path, force_python: bool) -> None:
    shoes = write_shoes(tmp_path / "roads.txt", ["PPPPBB", "PPPBPB"])
    seats = [
        {
            "strategy": "martingale",
            "name": name,
            "params": {"bet": "banker", "base": 10, "on_bankroll": name},
        }
        for name in ("stop", "all-in")
    ]
    result = engine.run(
        recorded_config(shoes, seats, sessions=2, bankroll=100),
        ledger=True,
        force_python=force_python,
    )
    assert ledger_rows(result, "stop") == [
        (1, 1, 1, "player", 0.0, 10.0, 0.0, -10.0, 90.0),
        (1, 1, 2, "player", 0.0, 20.0, 0.0, -20.0, 70.0),
        (1, 1, 3, "player", 0.0, 40.0, 0.0, -40.0, 30.0),
        # hand 4 would need 80 with 30 left: ruined, the hand is not played
        (2, 1, 1, "player", 0.0, 10.0, 0.0, -10.0, 90.0),
        (2, 1, 2, "player", 0.0, 20.0, 0.0, -20.0, 70.0),
        (2, 1, 3, "player", 0.0, 40.0, 0.0, -40.0, 30.0),
    ]
    assert ledger_rows(result, "all-in") == [
        (1, 1, 1, "player", 0.0, 10.0, 0.0, -10.0, 90.0),
        (1, 1, 2, "player", 0.0, 20.0, 0.0, -20.0, 70.0),
        (1, 1, 3, "player", 0.0, 40.0, 0.0, -40.0, 30.0),
        (1, 1, 4, "player", 0.0, 30.0, 0.0, -30.0, 0.0),  # all in with 30, lost: ruined
        (2, 1, 1, "player", 0.0, 10.0, 0.0, -10.0, 90.0),
        (2, 1, 2, "player", 0.0, 20.0, 0.0, -20.0, 70.0),
        (2, 1, 3, "player", 0.0, 40.0, 0.0, -40.0, 30.0),
        (2, 1, 4, "banker", 0.0, 30.0, 0.0, 28.5, 58.5),  # all in with 30, won
        (2, 1, 5, "player", 0.0, 10.0, 0.0, -10.0, 48.5),  # a win: back to 10
        (2, 1, 6, "banker", 0.0, 20.0, 0.0, 19.0, 67.5),
    ]
    s = result.sessions
    by_seat = {seat: s.filter(pl.col("seat") == seat) for seat in ("stop", "all-in")}
    assert by_seat["stop"]["ended_by"].to_list() == ["ruin", "ruin"]
    assert by_seat["stop"]["hands"].to_list() == [3, 3]
    assert by_seat["stop"]["final_bankroll"].to_list() == [30.0, 30.0]
    assert by_seat["stop"]["bankroll_stops"].to_list() == [1, 1]
    assert by_seat["all-in"]["ended_by"].to_list() == ["ruin", "limit"]
    assert by_seat["all-in"]["hands"].to_list() == [4, 6]
    assert by_seat["all-in"]["final_bankroll"].to_list() == [0.0, 67.5]
    assert by_seat["all-in"]["bankroll_stops"].to_list() == [1, 1]


@PATHS
def test_ruin_when_the_bankroll_falls_below_the_minimum(tmp_path: Path, force_python: bool) -> None:
    result = _one_road(
        tmp_path, "PPPB", {"strategy": "flat"}, bankroll=25, force_python=force_python
    )
    # 25 -> 15 -> 5: below the table minimum of 10 after hand 2
    assert [r[8] for r in ledger_rows(result)] == [15.0, 5.0]
    assert result.sessions.select("hands", "ended_by", "final_bankroll").row(0) == (2, "ruin", 5.0)


@PATHS
def test_stop_loss_and_win_goal_end_the_seat_early(tmp_path: Path, force_python: bool) -> None:
    shoes = write_shoes(tmp_path / "road.txt", ["PPPBBBBB"])
    seats = [
        {"strategy": "flat", "name": "banker", "params": {"bets": {"banker": 10}}},
        {"strategy": "flat", "name": "player", "params": {"bets": {"player": 10}}},
        {"strategy": "pattern", "name": "waiting", "params": {"patterns": {"BBBBBB": "B"}}},
    ]
    cfg = recorded_config(shoes, seats, sessions=1, bankroll=100, stop_loss=30, win_goal=20)
    result = engine.run(cfg, ledger=True, force_python=force_python)
    s = {r["seat"]: r for r in result.sessions.iter_rows(named=True)}
    # Banker loses 10, 10, 10: down 30, the stop-loss, after hand 3 of 8
    assert (s["banker"]["ended_by"], s["banker"]["hands"], s["banker"]["net"]) == (
        "stop-loss",
        3,
        -30.0,
    )
    # Player wins 10, 10: up 20, the win goal, after hand 2
    assert (s["player"]["ended_by"], s["player"]["hands"], s["player"]["net"]) == (
        "win-goal",
        2,
        20.0,
    )
    # the pattern never matches: it sits at the table for all 8 hands without a bet
    assert (s["waiting"]["ended_by"], s["waiting"]["hands"], s["waiting"]["bets"]) == (
        "limit",
        8,
        0,
    )
    assert [r[2] for r in ledger_rows(result, "banker")] == [1, 2, 3]
    assert [r[2] for r in ledger_rows(result, "player")] == [1, 2]
    assert result.summary["win_goal_rate"].to_list() == [0.0, 1.0, 0.0]


# --- a contract over every registered strategy ---------------------------------------------------

USER_STRATEGY = """
from dataclasses import dataclass

from strategies.base import Strategy
from strategies.params import param


class DoubleAfterLoss(Strategy):
    name = "double-after-loss"
    description = "Bet the last decisive winner; double the stake after a losing hand."

    @dataclass(frozen=True)
    class Params:
        base: float = param(10.0, "the first stake", min=0, exclusive_min=True)

    def reset(self):
        self.stake = self.params.base

    def stakes(self, view):
        side = "banker" if view.road().replace("T", "").endswith("B") else "player"
        return {side: self.stake}

    def update(self, view, result):
        self.stake = self.params.base if result.net >= 0 else 2 * self.stake
"""


def _readme_block(after: str) -> str:
    """The first ```python block after the text `after` in the README or a page
    of docs/: the tests run the pages' own code, not a copy that could drift."""
    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    start = text.index("```python\n", text.index(after)) + len("```python\n")
    return text[start : text.index("```", start)]


README_STRATEGY = _readme_block("Your own strategy is a small class")


@pytest.fixture(scope="module")
def user_strategy(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("user") / "double_after_loss.py"
    path.write_text(USER_STRATEGY, encoding="utf-8")
    return f"{path}:DoubleAfterLoss"


CONTRACT_TABLE: dict[str, Any] = {"min": 10, "max": 400, "limits": {"tie": {"min": 1, "max": 100}}}


def contract_config(strategy: str, seed: int) -> RunConfig:
    # the counter's default (only bets of positive EV) places no bet in four sessions:
    # let it take Player and Banker, whose edge is about -1.1%, so that it is settled
    seat = (
        {"strategy": strategy, "params": {"min_ev": -0.015}}
        if strategy == "counter"
        else {"strategy": strategy}
    )
    return parse_config(
        {
            "seed": seed,
            "sessions": 4 if strategy == "counter" else 40,
            "rules": "commission",
            "shoe": {"decks": 8},
            "session": {"bankroll": 500, "win_goal": 400},
            "table": CONTRACT_TABLE,
            "seats": [seat],
        },
        source="contract.yaml",
    )


def settled_again(config: RunConfig, led: pl.DataFrame) -> np.ndarray:
    """Each ledger row's net in ticks, worked out without the engine: its hand
    dealt again by the shoe generator (session j's m-th shoe is stream
    (j << SHOE_BITS) + m of the master seed), and its stakes settled by the
    rules core (`settlement.settle`, which also refuses bets the table does not take)."""
    from backtest.core.rules import Winner
    from backtest.core.settlement import settle
    from backtest.shoes.shoe import generate_shoes

    assert config.shoe is not None
    streams = ((led["session"].to_numpy() - 1) << plan.SHOE_BITS) + led["shoe"].to_numpy() - 1
    hands = generate_shoes(config.shoe, np.unique(streams), config.seed)
    row = {(int(s), int(h)): i for i, (s, h) in enumerate(zip(hands.shoe, hands.hand))}
    # what settlement reads of a hand (`rules.HandResult`), to settle each kind of hand once
    reads = np.column_stack(
        [
            hands.winner,
            hands.player_total,
            hands.banker_total,
            hands.player_pair,
            hands.banker_pair,
            hands.player_card_count,
            hands.banker_card_count,
        ]
    ).tolist()
    cents = (
        np.rint(np.column_stack([led[f"stake_{b.value}"].to_numpy() for b in Bet]) * 100)
        .astype(np.int64)
        .tolist()
    )
    ticks_per_unit = 100 * config.rules.money_denominator
    settled: dict[tuple[Any, ...], int] = {}
    nets = []
    for k, (stream, hand, winner) in enumerate(zip(streams, led["hand"], led["winner"])):
        i = row[int(stream), int(hand)]
        assert Winner.from_code(reads[i][0]).value == winner, k  # the very hand played
        key = (*reads[i], *cents[k])
        if key not in settled:
            stakes = {b: Fraction(c, 100) for b, c in zip(Bet, cents[k]) if c}
            net = sum(settle(stakes, hands.record(i), config.rules).values(), Fraction(0))
            assert (net * ticks_per_unit).denominator == 1, (k, net)  # whole ticks
            settled[key] = int(net * ticks_per_unit)
        nets.append(settled[key])
    return np.array(nets, dtype=np.int64)


@pytest.mark.parametrize("name", [*BUILTIN_NAMES, "user"])
def test_contract(name: str, user_strategy: str) -> None:
    strategy = user_strategy if name == "user" else name
    config = contract_config(strategy, seed=7)
    result = engine.run(config, ledger=True)
    led, sessions = ledger_of(result), result.sessions
    assert led.height == int(sessions["hands"].sum()) > 0

    stakes = np.column_stack([led[f"stake_{b.value}"].to_numpy() for b in Bet])
    cents = np.rint(stakes * 100).astype(np.int64)
    assert (stakes >= 0).all() and (stakes > 0).any(), "no bet placed: nothing is settled"
    assert np.abs(cents - stakes * 100).max() < 1e-6  # whole cents
    maximum = np.array([CONTRACT_TABLE["limits"].get(b.value, CONTRACT_TABLE)["max"] for b in Bet])
    minimum = np.array([CONTRACT_TABLE["limits"].get(b.value, CONTRACT_TABLE)["min"] for b in Bet])
    assert (stakes <= maximum).all()
    assert ((stakes == 0) | (stakes >= minimum)).all()

    assert TICK == 100 * config.rules.money_denominator
    net = np.rint(led["net"].to_numpy() * TICK).astype(np.int64)
    bank = np.rint(led["bankroll"].to_numpy() * TICK).astype(np.int64)
    assert np.abs(net - led["net"].to_numpy() * TICK).max() < 1e-6  # whole ticks
    # the net of every hand is the rules core's settlement of its stakes on that hand
    np.testing.assert_array_equal(net, settled_again(config, led))
    session = led["session"].to_numpy()
    first = np.r_[True, session[1:] != session[:-1]]
    before = np.where(first, 500 * TICK, np.r_[0, bank[:-1]])  # a fresh bankroll, or the last
    np.testing.assert_array_equal(bank, before + net)  # change == net
    assert (cents.sum(axis=1) * (TICK // 100) <= before).all(), "staked more than the bankroll"

    per = led.group_by("session", maintain_order=True).agg(
        pl.len().alias("rows"),
        pl.col("net").sum().alias("net"),
        pl.sum_horizontal(pl.col("^stake_.*$")).sum().alias("wagered"),
    )
    joined = sessions.join(per, on="session", how="left", suffix="_ledger").fill_null(0)
    assert (joined["hands"] == joined["rows"]).all()
    np.testing.assert_allclose(joined["net"], joined["net_ledger"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(joined["wagered"], joined["wagered_ledger"], rtol=0, atol=1e-6)
    final = np.rint(sessions["final_bankroll"].to_numpy() * TICK)
    np.testing.assert_array_equal(final, 500 * TICK + np.rint(sessions["net"].to_numpy() * TICK))
    last = led.group_by("session", maintain_order=True).agg(pl.col("bankroll").last())
    assert dict(last.rows()) == {
        s: b for s, b, h in sessions.select("session", "final_bankroll", "hands").rows() if h > 0
    }
    assert set(sessions["ended_by"]) <= {"limit", "ruin", "stop-loss", "win-goal"}
    wins = sessions.filter(pl.col("ended_by") == "win-goal")
    assert (wins["net"] >= 400).all()
    # the limits are counted on hands played: a maximum hit at most once a
    # hand, a raise at most once a bet placed
    assert (sessions["max_hits"] <= sessions["hands"]).all()
    placed = (
        led.select(
            (pl.sum_horizontal((pl.col("^stake_.*$") > 0).cast(pl.Int64))).alias("n"), "session"
        )
        .group_by("session")
        .agg(pl.col("n").sum())
    )
    raised = sessions.join(placed, on="session", how="left").fill_null(0)
    assert (raised["raised_to_min"] <= raised["n"]).all()

    again = engine.run(contract_config(strategy, seed=7), ledger=True)
    assert ledger_of(again).equals(led) and again.sessions.equals(sessions)
    assert again.summary.equals(result.summary)
    other = engine.run(contract_config(strategy, seed=8), ledger=True)
    assert not ledger_of(other).equals(led)


# --- both session loops give identical ledgers ------------------------------------------------


def scenario_config(scenario: str, seed: int) -> RunConfig:
    session, table, params = SCENARIOS[scenario]
    return parse_config(
        {
            "seed": seed,
            "sessions": 25,
            "shoe": {"decks": 8},
            "session": session,
            "table": table,
            "seats": [{"strategy": name, "params": dict(params)} for name in BUILTIN_NAMES],
        },
        source=f"{scenario}.yaml",
    )


def test_a_counter_of_the_pairs_alone_matches_the_python_path() -> None:
    """A counter that can bet only the pair bets, alone at its table, skips
    counting the deals in the compiled loop and keeps its pair EVs from two
    numbers as the cards come out (the Python path works out every EV from
    the counts): the same bets and the same expected net, to the bit. Beside
    a counter with a side bet, the table counts the deals for both."""
    pairs = {
        "strategy": "counter",
        "params": {"bets": ["player_pair", "banker_pair"], "min_ev": -0.1},
    }
    side = {
        "strategy": "counter",
        "params": {"bets": ["banker_pair"], "min_ev": -0.12, "side_bets": {"tie": 1}},
    }
    for seats in ([pairs], [pairs, side]):
        cfg = parse_config(
            {
                "seed": 5,
                "sessions": 40,
                "rules": "commission",
                "shoe": {"decks": 6},
                "session": {"bankroll": 10_000},
                "table": {"min": 1, "max": 1000},
                "seats": seats,
            }
        )
        compiled = engine.run(cfg, ledger=True)
        python = engine.run(cfg, ledger=True, force_python=True)
        assert ledger_of(compiled).equals(ledger_of(python))
        assert compiled.sessions.equals(python.sessions)
        assert compiled.summary.equals(python.summary)
        # bets on some hands, not all: the EVs decide
        assert (compiled.summary["bets"] > 100).all()
        assert (compiled.summary["bets"] < compiled.summary["hands"]).all()
        assert compiled.summary["expected_edge"].is_finite().all()


class _CountingUser(Strategy):
    """A user's counting class: Banker when its EV is above -1.1 %, Tie when positive."""

    name = "counting-user"
    description = "test strategy"
    uses_cards = True

    def stakes(self, view):  # type: ignore[no-untyped-def]
        evs = view.evs
        bets = {}
        if evs[Bet.BANKER] > -0.011:
            bets["banker"] = 10.0
        if evs[Bet.TIE] > 0.0:
            bets["tie"] = 5.0
        return bets


def _counting_table(seats: list[dict[str, Any]]) -> RunConfig:
    return parse_config(
        {
            "seed": 9,
            "sessions": 12,
            "rules": "commission",
            "shoe": {"decks": 6},
            "session": {"bankroll": 10_000},
            "table": {"min": 1, "max": 1000},
            "seats": seats,
        },
        source="counting.yaml",
    )


_COUNTING_SEATS: list[dict[str, Any]] = [
    {"strategy": "counter", "name": "all bets", "params": {"min_ev": -0.011}},
    {
        "strategy": "counter",
        "name": "pairs",
        "params": {"bets": ["player_pair", "banker_pair"], "min_ev": -0.12},
    },
    {
        "strategy": "counter",
        "name": "several",
        "params": {"bets": ["banker", "player_pair", "banker_pair"], "min_ev": -0.13},
    },
    {"strategy": "counting-user", "name": "user"},
    {"strategy": "martingale", "name": "no count"},
]


@pytest.mark.parametrize("force_python", [False, True], ids=["compiled", "python"])
def test_counting_seats_at_one_table_play_as_each_would_alone(
    monkeypatch: pytest.MonkeyPatch, force_python: bool
) -> None:
    """The exact EVs before each hand are worked out once for the table and
    read by every counting seat: a seat's ledger and sessions are the ones
    it has alone at the table, in either loop, whichever seat works them out
    (a pair-only counter alone needs no deals counted; beside the others it
    reads rows that count them)."""
    monkeypatch.setitem(registry.BUILTIN_NAMES, _CountingUser.name, _CountingUser)

    def run(seats: list[dict[str, Any]]) -> engine.RunResult:
        return engine.run(_counting_table(seats), ledger=True, workers=1, force_python=force_python)

    tables = [run(_COUNTING_SEATS), run(_COUNTING_SEATS[::-1])]
    for seat in _COUNTING_SEATS:
        alone = run([seat])
        for frame in ("ledger", "sessions"):
            # (its own numbers: its covariance with the baseline is there only beside one)
            mine = ["seat", "baseline_covariance"] if frame == "sessions" else ["seat"]
            want = getattr(alone, frame).drop(mine)
            for table in tables:
                got = getattr(table, frame).filter(pl.col("seat") == seat["name"]).drop(mine)
                assert got.equals(want), (seat["name"], frame)
    bets = tables[0].summary.select("seat", "bets").rows()
    assert all(n > 20 for _, n in bets), bets


def _shared_rows(monkeypatch: pytest.MonkeyPatch, poison: float | None) -> list[tuple[Any, ...]]:
    """Catch the table's shared EV rows, made for a lone counting seat too;
    with `poison`, hand the seats rows already written with that EV for
    every bet."""
    from backtest.loop import inputs

    made: list[tuple[Any, ...]] = []
    real = inputs.shared_evs

    def shared(n_hands: int, counting_seats: int, deals: bool) -> tuple[Any, ...]:
        rows, done, deals, kept = real(n_hands, max(2, counting_seats), deals)
        if poison is not None:
            rows[:] = poison
            done[:] = True
            kept[:] = np.nan  # nothing kept for the variance: it is counted
        made.append((rows, done, deals))
        return rows, done, deals, kept

    monkeypatch.setattr(inputs, "shared_evs", shared)
    return made


@pytest.mark.parametrize("force_python", [False, True], ids=["compiled", "python"])
def test_a_counting_seat_reads_the_table_s_rows_and_works_out_those_not_yet_written(
    monkeypatch: pytest.MonkeyPatch, force_python: bool
) -> None:
    """Rows already written are read, not worked out again: with every row
    saying each bet is worth +1 a unit, a Tie counter bets every hand. Rows
    not yet written are the exact EVs of the cards not yet seen, as an
    independent count of the shoe's cards and `ev_array` give them."""
    from backtest.core.cards import full_shoe_counts
    from backtest.odds import ev_array, payout_vector

    cfg = _counting_table([{"strategy": "counter", "params": {"bets": ["tie"]}}])
    _shared_rows(monkeypatch, 1.0)
    poisoned = engine.run(cfg, workers=1, force_python=force_python).summary
    assert poisoned["bets"][0] == poisoned["hands"][0] > 500
    assert poisoned["expected_edge"][0] == 1.0
    monkeypatch.undo()
    made = _shared_rows(monkeypatch, None)
    honest = engine.run(cfg, workers=1, force_python=force_python).summary
    assert honest["bets"][0] < honest["hands"][0] // 3
    ((rows, done, deals),) = made
    assert deals and done.all()
    hands, _, _ = plan.hands_for(cfg, 0, cfg.sessions)
    full = full_shoe_counts(6)
    counts = full.copy()
    pays = payout_vector(cfg.rules)
    for i in range(len(hands)):
        if hands.hand[i] == 1:
            counts = full.copy()
        assert np.array_equal(rows[i], ev_array(counts, pays), equal_nan=True), i
        for card in hands.cards[i]:
            if card:
                counts[card & 15] -= 1


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_compiled_and_python_ledgers_are_identical(scenario: str, seed: int) -> None:
    cfg = scenario_config(scenario, seed)
    compiled = engine.run(cfg, ledger=True)
    python = engine.run(cfg, ledger=True, force_python=True)
    differ = [
        seat
        for seat in BUILTIN_NAMES
        if not ledger_of(compiled)
        .filter(pl.col("seat") == seat)
        .equals(ledger_of(python).filter(pl.col("seat") == seat))
        or not compiled.sessions.filter(pl.col("seat") == seat).equals(
            python.sessions.filter(pl.col("seat") == seat)
        )
    ]
    assert differ == []
    assert ledger_of(compiled).equals(ledger_of(python))
    assert compiled.sessions.equals(python.sessions)

    # the scenario reaches the edges it is about
    s = compiled.sessions
    ended = set(s["ended_by"])
    if scenario == "max-reset-stop":
        assert s["max_hits"].sum() > 0 and {"ruin", "win-goal"} <= ended
    elif scenario == "cap-all-in-side-bet":
        assert s["max_hits"].sum() > 0 and s["bankroll_stops"].sum() > 0
        assert s["wagered_tie"].sum() > 0
    else:
        assert {"stop-loss", "win-goal"} <= ended and (s["hands"] == 120).any()
        assert 2 in set(ledger_of(compiled)["shoe"])


# --- a user's plain classes: the plain-Python loop's short and general paths ---------------------
#
# Each class below is a built-in written as a user would write it. The plain-Python loop
# takes a short path for one bet (or none) within the limits and the bankroll and the
# general rules for anything else; paired with their built-ins, run compiled, on the
# scenarios above, the ledgers and session frames must be the same.

MIRRORS = '''
from backtest.core.rules import Bet
from strategies.base import Strategy
from strategies.flat import FlatParams
from strategies.patterns import FollowParams
from strategies.progressions.martingale import MartingaleParams


def _sides(params):
    return {Bet(b) for b, s in params.side_bets.items() if s > 0}


class PlainFlat(Strategy):
    """`flat`, with whole stakes as ints, and no `update`."""
    name = "plain-flat"
    Params = FlatParams

    def possible_bets(self):
        return {Bet(b) for b, s in self.params.bets.items() if s > 0} | _sides(self.params)

    def stakes(self, view):
        return {b: int(s) if s == int(s) else s for b, s in self.params.bets.items()}


class PlainMartingale(Strategy):
    """`martingale`, reading the result's stakes and units."""
    name = "plain-martingale"
    Params = MartingaleParams

    def possible_bets(self):
        return {Bet(self.params.bet)} | _sides(self.params)

    def reset(self):
        self.level, self.factor = 0.0, 1.0

    def stakes(self, view):
        return {Bet(self.params.bet): self.params.base * self.factor}

    def update(self, view, result):
        bet = Bet(self.params.bet)
        if result.stakes.get(bet, 0.0) <= 0.0:
            return
        unit = result.units[bet]
        if unit > 0 or (unit == 0 and self.params.on_push == "reset"):
            self.reset()
        elif unit < 0 and self.level < 1000.0:
            self.level += 1.0
            self.factor *= self.params.multiplier


class PlainFollow(Strategy):
    """`follow-the-shoe` by `view.last_decisive`; None when it sits out."""
    name = "plain-follow"
    Params = FollowParams

    def possible_bets(self):
        return {Bet.PLAYER, Bet.BANKER} | _sides(self.params)

    def stakes(self, view):
        side = view.last_decisive
        if side is None and self.params.first != "skip":
            side = self.params.first
        return {side: self.params.base} if side else None
'''

MIRRORED = (  # (built-in, its plain class, parameters)
    ("flat", "PlainFlat", {}),
    ("flat", "PlainFlat", {"bets": {"player": 3}}),  # raised to the table minimum
    ("flat", "PlainFlat", {"bets": {"banker": 10, "tie": 2, "panda8": 0}}),
    ("martingale", "PlainMartingale", {}),
    ("martingale", "PlainMartingale", {"bet": "player", "base": 7.5, "multiplier": 3}),
    ("follow-the-shoe", "PlainFollow", {"first": "banker"}),
    ("follow-the-shoe", "PlainFollow", {"base": 25}),
)


@pytest.fixture(scope="module")
def mirrors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mirrors") / "plain_mirrors.py"
    path.write_text(MIRRORS, encoding="utf-8")
    return path


def same_seat_results(a: chunks.SeatResult, b: chunks.SeatResult) -> bool:
    """Every raw number of two seats' results (the statistics include counts the
    sessions frame does not show, such as stakes raised to the minimum); the
    covariance with the baseline where neither is the baseline."""
    assert a.ledger is not None and b.ledger is not None
    return (
        np.array_equal(a.stats, b.stats)
        and np.array_equal(a.wagered, b.wagered)
        and np.array_equal(a.expected, b.expected)
        and np.array_equal(a.variance, b.variance)
        and np.array_equal(a.largest, b.largest)
        and (not a.cross.any() or np.array_equal(a.cross, b.cross))
        and a.ledger.keys() == b.ledger.keys()
        and all(np.array_equal(a.ledger[k], b.ledger[k]) for k in a.ledger)
    )


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_plain_user_classes_match_their_built_ins(mirrors: Path, scenario: str, seed: int) -> None:
    session, table, common = SCENARIOS[scenario]
    seats = []
    for k, (builtin, plain, params) in enumerate(MIRRORED):
        seats += [
            {"strategy": builtin, "name": f"builtin-{k}", "params": {**common, **params}},
            {
                "strategy": f"{mirrors}:{plain}",
                "name": f"plain-{k}",
                "params": {**common, **params},
            },
        ]
    cfg = parse_config(
        {
            "seed": seed,
            "sessions": 25,
            "shoe": {"decks": 8},
            "session": session,
            "table": table,
            "seats": seats,
        },
        source=f"{scenario}.yaml",
    )
    seat_results, _ = chunks.run_chunk(cfg, engine.build_strategies(cfg), 0, 25, ledger=True)
    differ = [
        MIRRORED[k]
        for k in range(len(MIRRORED))
        if not same_seat_results(seat_results[2 * k], seat_results[2 * k + 1])
    ]
    assert differ == []
    # the first pair's built-in is the baseline: its mirror's covariance with it,
    # staking alike on every hand, is its variance
    assert np.array_equal(seat_results[1].cross, seat_results[0].variance)
    stats = np.stack([r.stats for r in seat_results])
    assert stats[..., S_BELOW_MIN].sum() > 0 and stats[..., S_BETS].sum() > 0
    if scenario != "stop-loss-win-goal-hands":
        assert stats[..., S_MAX_HITS].sum() > 0
    if scenario == "cap-all-in-side-bet":
        assert stats[..., S_BANKROLL_STOPS].sum() > 0


RECORDER = '''
from backtest.core.rules import Bet
from strategies.base import Strategy

PLAN = [{"banker": 5}, {"player": 10.0}, {Bet.TIE: 10}, None, {}, {"banker": 0},
        {"player": 100}, {"player": 10, "banker": 10}, {"banker": 20.004}, {"player": 15}]


class Recorder(Strategy):
    """Bets by a fixed plan and records what it reads of `View` and `Result`."""
    name = "recorder"
    views = []
    results = []

    def reset(self):
        self.k = 0

    def restart_progression(self):
        pass

    def stakes(self, view):
        self.seen = self.read(view)
        return PLAN[self.k % len(PLAN)]

    def update(self, view, result):
        self.k += 1
        # the view is as it was before the hand, in `update` too
        Recorder.views.append((self.seen, self.read(view)))
        Recorder.results.append((result.winner, result.net, dict(result.stakes),
                                 dict(result.nets), dict(result.units)))

    @staticmethod
    def read(view):
        return (view.bankroll, view.hand, view.shoe, view.session_hand, view.last_net,
                view.road(), view.history.tolist(), view.last_winner, view.last_decisive)
'''


def test_what_a_plain_class_reads_of_view_and_result(tmp_path: Path) -> None:
    path = tmp_path / "recorder.py"
    path.write_text(RECORDER, encoding="utf-8")
    shoes = write_shoes(tmp_path / "roads.txt", ROADS)
    cfg = recorded_config(
        shoes,
        [{"strategy": f"{path}:Recorder"}],
        sessions=3,
        bankroll=400,
        table={"min": 10, "max": 50},
    )
    cls = registry.get(f"{path}:Recorder")
    result = engine.run(cfg, ledger=True, workers=1)
    views, results = cls.views, cls.results  # type: ignore[attr-defined]
    rows = ledger_of(result).rows(named=True)
    assert len(views) == len(results) == len(rows) > 30
    last_net, session = 0.0, None
    for (view, view_in_update), res, row in zip(views, results, rows):
        assert view == view_in_update
        bankroll, hand, shoe, session_hand, view_last_net, road, history, last, decisive = view
        if row["session"] != session:
            last_net, session = 0.0, row["session"]
        shoe_road = ROADS[row["session"] - 1]  # sessions count from 1, one shoe each
        road_so_far = shoe_road[: row["hand"] - 1]
        assert road == road_so_far and history == ["PBT".index(w) for w in road_so_far]
        assert last == (WINNER_NAME[road[-1]] if road else None)
        decisive_road = road.replace("T", "")
        assert decisive == (WINNER_NAME[decisive_road[-1]] if decisive_road else None)
        assert (hand, shoe, session_hand) == (row["hand"], row["shoe"] - 1, row["hand"] - 1)
        assert bankroll == pytest.approx(row["bankroll"] - row["net"], abs=1e-9)
        assert view_last_net == last_net
        res_winner, net, stakes, nets, units = res
        winner = shoe_road[row["hand"] - 1]
        assert res_winner == WINNER_NAME[winner] == row["winner"] and net == row["net"]
        assert stakes == {b: row[f"stake_{b.value}"] for b in Bet if row[f"stake_{b.value}"] > 0}
        assert set(nets) == set(stakes) and math.isclose(sum(nets.values()), net, abs_tol=1e-9)
        for name in ("player", "banker", "tie"):
            bet = Bet(name)
            assert units[bet] == float(PAYS[name][winner])
            if bet in stakes:
                assert nets[bet] == pytest.approx(stakes[bet] * units[bet], abs=1e-12)
        last_net = net
    # the plan's edges: raised to the minimum, over the maximum, no bet three ways, two bets
    assert result.sessions["max_hits"].sum() > 0
    seen = [r[2] for r in results]
    assert {} in seen and {Bet.PLAYER: 50.0} in seen and {Bet.BANKER: 20.0} in seen
    assert {Bet.BANKER: 10.0} in seen  # 5 raised to the minimum
    assert {Bet.PLAYER: 10.0, Bet.BANKER: 10.0} in seen and {Bet.TIE: 10.0} in seen


@pytest.mark.parametrize(
    "stake, usual, error",
    [
        (
            "float('nan')",
            "10.0",
            r"bad.yaml: seats\[0\] \(bad-stake\): strategy bad-stake: the "
            r"stake on banker must be 0 or more, got nan, on hand 3 of shoe 1",
        ),
        ("-10", "10.0", "the stake on banker must be 0 or more, got -10, on hand 3 of shoe 1"),
        ("-0.001", "10.0", r"the stake on banker must be 0 or more, got -0.001, on hand 3"),
        ("'ten'", "10.0", "the stake on banker must be a number, got 'ten'"),
        ("{'a': 1}", "10.0", "the stake on banker must be a number, got {'a': 1}"),
        # equal to the stakes of the hands before, and hashed alike: not numbers all the same
        ("True", "1.0", "the stake on banker must be a number, got True"),
        ("__import__('numpy').True_", "1", "the stake on banker must be a number, got (np.)?True"),
        ("False", "0.0", "the stake on banker must be a number, got False"),
    ],
)
def test_a_plain_class_with_a_bad_stake_fails_on_that_hand(
    tmp_path: Path, stake: str, usual: str, error: str
) -> None:
    path = tmp_path / "bad_stake.py"
    path.write_text(
        "from strategies.base import Strategy\n\n"
        "class BadStake(Strategy):\n"
        "    name = 'bad-stake'\n\n"
        "    def stakes(self, view):\n"
        f"        return {{'banker': {stake} if view.hand == 3 else {usual}}}\n",
        encoding="utf-8",
    )
    cfg = parse_config(
        {
            "sessions": 2,
            "table": {"min": 1, "max": 1000},
            "seats": [{"strategy": f"{path}:BadStake"}],
        },
        source="bad.yaml",
    )
    with pytest.raises(StrategyError, match=error):
        engine.run(cfg, workers=1)


def test_a_stake_is_whole_cents_rounded_down_and_under_a_cent_is_no_bet(tmp_path: Path) -> None:
    path = tmp_path / "small_stakes.py"
    path.write_text(
        "from strategies.base import Strategy\n\n"
        "class SmallStakes(Strategy):\n"
        "    name = 'small-stakes'\n\n"
        "    def stakes(self, view):\n"
        "        return {'banker': (0.004, 0.019, 0.0099999, 2.999)[view.hand % 4]}\n",
        encoding="utf-8",
    )
    cfg = parse_config(
        {
            "sessions": 3,
            "table": {"min": 0.01, "max": 100},
            "seats": [{"strategy": f"{path}:SmallStakes"}],
        },
        source="small.yaml",
    )
    rows = ledger_of(engine.run(cfg, ledger=True, workers=1)).rows(named=True)
    placed = {0: 0.0, 1: 0.01, 2: 0.0, 3: 2.99}
    assert len(rows) > 100
    assert all(r["stake_banker"] == placed[r["hand"] % 4] for r in rows)
    assert all((r["net"] == 0.0) for r in rows if r["hand"] % 2 == 0)


# --- user strategies and the registry ----------------------------------------------------------

BAD_STRATEGIES = """
from strategies.base import Strategy


class NoStakes(Strategy):
    name = "no-stakes"


class UnknownBet(Strategy):
    name = "unknown-bet"

    def stakes(self, view):
        return {"bankr": 10}


def not_a_class():
    pass
"""


def test_user_strategy_as_module_and_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "golden_user_systems.py").write_text(README_STRATEGY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "golden_user_systems", raising=False)
    cls = registry.get("golden_user_systems:BankerAfterTwoPlayers")
    assert cls.name == "banker-after-two-players"
    shoes = write_shoes(tmp_path / "road.txt", [ROADS[0]])
    result = engine.run(
        recorded_config(
            shoes,
            [{"strategy": "golden_user_systems:BankerAfterTwoPlayers", "params": {"stake": 20}}],
            sessions=1,
        ),
        ledger=True,
    )
    banker = [r[5] for r in ledger_rows(result)]
    decisive = [ROADS[0][:k].replace("T", "") for k in range(len(ROADS[0]))]
    assert banker == [20.0 if d.endswith("PP") else 0.0 for d in decisive]
    assert sum(banker) > 0


def test_user_strategy_as_file_and_class(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "systems.py"
    path.parent.mkdir()
    path.write_text(README_STRATEGY, encoding="utf-8")
    assert registry.get(f"{path}:BankerAfterTwoPlayers").name == "banker-after-two-players"
    with pytest.raises(StrategyError, match="has no 'BankerAfterTwo'.*did you mean"):
        registry.get(f"{path}:BankerAfterTwo")
    with pytest.raises(StrategyError, match="does not exist"):
        registry.get(f"{tmp_path / 'missing.py'}:BankerAfterTwoPlayers")


def test_broken_user_strategies_fail_clearly(tmp_path: Path) -> None:
    path = tmp_path / "bad_systems.py"
    path.write_text(BAD_STRATEGIES, encoding="utf-8")
    with pytest.raises(StrategyError, match="does not define stakes"):
        registry.get(f"{path}:NoStakes")
    with pytest.raises(StrategyError, match="not a Strategy class"):
        registry.get(f"{path}:not_a_class")
    with pytest.raises(ConfigError, match=r"seats\[0\]\.strategy: .*does not define stakes"):
        parse_config({"seats": [{"strategy": f"{path}:NoStakes"}]}, source="bad.yaml")

    cfg = parse_config(
        {"sessions": 2, "seats": [{"strategy": f"{path}:UnknownBet"}]}, source="bad.yaml"
    )
    with pytest.raises(StrategyError, match=r"unknown bet 'bankr' \(bets are player, banker"):
        engine.run(cfg)


def test_registry_suggests_close_names() -> None:
    with pytest.raises(StrategyError) as info:
        registry.get("martingal")
    message = str(info.value)
    assert "did you mean 'martingale'" in message and "backtest strategies" in message
    assert registry.get("reverse-martingale") is BUILTIN_NAMES["paroli"]


# --- parameter errors name their key path ------------------------------------------------------


@pytest.mark.parametrize(
    "strategy, params, message",
    [
        (
            "martingale",
            {"multipler": 3},
            r"seats\[1\]\.params: unknown parameter 'multipler'; did you mean 'multiplier'\?",
        ),
        ("martingale", {"base": "ten"}, r"seats\[1\]\.params\.base: expected a number, got 'ten'"),
        ("martingale", {"multiplier": 1}, r"seats\[1\]\.params\.multiplier: must be more than 1"),
        ("paroli", {"target": 2.5}, r"seats\[1\]\.params\.target: expected a whole number"),
        (
            "martingale",
            {"on_max": "rest"},
            r"seats\[1\]\.params\.on_max: 'rest' is not allowed; .*did you mean 'reset'",
        ),
        ("labouchere", {"line": []}, r"seats\[1\]\.params\.line: must hold 1 to 64 numbers, got 0"),
        (
            "labouchere",
            {"line": [1, -2]},
            r"seats\[1\]\.params\.line\[1\]: numbers must be positive",
        ),
        (
            "pattern",
            {"patterns": {"PX": "B"}},
            r"seats\[1\]\.params\.patterns\.PX: a pattern is 1 to 16 letters P, B or T",
        ),
        (
            "pattern",
            {"patterns": {"PP": "X"}},
            r"seats\[1\]\.params\.patterns\.PP: the bet must be",
        ),
        (
            "flat",
            {"bets": {"bankr": 10}},
            r"seats\[1\]\.params\.bets: unknown bet 'bankr'; did you mean 'banker'\?",
        ),
        ("flat", {"bets": {"banker": 0}}, r"seats\[1\]\.params\.bets: give at least one bet"),
        ("streak", {"length": 0}, r"seats\[1\]\.params\.length: must be at least 1"),
    ],
)
def test_parameter_errors_name_the_key(strategy: str, params: dict[str, Any], message: str) -> None:
    data = {"seats": [{"strategy": "flat"}, {"strategy": strategy, "params": params}]}
    with pytest.raises(ConfigError, match=r"^run\.yaml: " + message):
        parse_config(data, source="run.yaml")


def test_strategies_that_return_their_stake_write_nothing_else() -> None:
    """`bet_slot`: the session loop reads such a strategy's stake from its
    decide's value, on the bet the slot names; `picks_one`: the decide
    returns (bet, stake). Neither writes `out`, and the Python path places
    what they return."""
    from strategies import compiled
    from strategies.base import View
    from strategies.slots import CTX_SIZE, N_BETS

    slotted = {cls.name for cls in compiled.BUILTINS if cls.bet_slot >= 0}
    pickers = {cls.name for cls in compiled.BUILTINS if cls.picks_one}
    assert slotted >= {"martingale", "labouchere", "oscars-grind", "1-3-2-6"}
    # (at least these: a new built-in is its module and its ready config alone)
    assert pickers >= {
        "follow-the-shoe",
        "chop",
        "streak",
        "pattern",
        "road-reader",
        "random",
        "counter",
    }
    assert not slotted & pickers
    winners = np.array([1, 1, 1, 2, 1, 0, 0, 0, 0], np.int8)  # BBBTBPPPP
    bets = list(Bet)
    for cls in compiled.BUILTINS:
        for bet in ("player", "banker"):
            params = (
                {"bet": bet}
                if cls.bet_slot >= 0
                else {"first": bet}
                if cls.name in ("follow-the-shoe", "chop")
                else {}
            )
            strat = cls.from_config(params, "params")
            for n in range(len(winners) + 1):
                out = np.zeros(N_BETS)
                value = cls.k_decide(
                    *_fresh_state(strat), np.zeros(CTX_SIZE), winners[:n], np.zeros(N_BETS), out
                )
                if cls.bet_slot < 0 and not cls.picks_one:
                    assert value is None, cls.name
                    continue
                assert not out.any(), cls.name
                if cls.bet_slot >= 0:
                    assert isinstance(value, float) and value >= 10.0, (cls.name, value)
                    assert strat.main_bets() == {Bet(bet)}
                    assert int(strat.encode()[cls.bet_slot]) == Bet(bet).code, cls.name
                    placed = {Bet(bet): value}
                else:
                    picked, stake = value
                    assert stake in (0.0, 10.0) and bets[picked] in strat.main_bets(), cls.name
                    placed = {bets[picked]: stake} if stake else {}
                # the Python path places the stake returned, on its bet
                strat.start_session(3)
                view = View(winners)
                view._i = n
                assert strat.stakes(view) == placed, (cls.name, n)


@pytest.mark.parametrize("builtin", ["follow-the-shoe", "martingale"])
def test_a_users_subclass_whose_decide_writes_out_still_bets(
    monkeypatch: pytest.MonkeyPatch, builtin: str
) -> None:
    """A user's subclass of a built-in runs its own functions; a `k_decide` of its own
    written the general way (stakes into `out`, nothing returned) places them,
    though the built-in it extends returns its stake."""

    def writes_out(p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
        out[0] = 25.0  # Player (a compiled function indexes by the bet's code)

    cls = type(
        "Mine",
        (BUILTIN_NAMES[builtin],),
        {
            "name": "mine",
            "k_decide": staticmethod(writes_out),
            "main_bets": lambda self: {Bet.PLAYER},
        },
    )
    monkeypatch.setitem(BUILTIN_NAMES, "mine", cls)
    cfg = parse_config(
        {
            "seed": 2,
            "sessions": 3,
            "shoe": {"decks": 8},
            "session": {"bankroll": 1000, "max_hands": 20},
            "table": {"min": 1, "max": 100},
            "seats": [{"strategy": "mine"}],
        }
    )
    led = ledger_of(engine.run(cfg, ledger=True))
    assert led["stake_player"].to_list() == [25.0] * 60
    assert set(led["stake_banker"]) == {0.0}


def _fresh_state(strat: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A built-in's parameters and the state a session starts with (seed 3,
    as `start_session(3)` gives)."""
    from strategies.slots import STATE_FLOATS, STATE_INTS

    p, s, si = strat.encode(), np.zeros(STATE_FLOATS), np.zeros(STATE_INTS, np.int64)
    cls = type(strat)
    if cls.k_init is None:
        cls.k_reset(p, s, si)
    else:
        cls.k_init(p, s, si, 3)
    return p, s, si


def _reads_context(cls: type) -> bool:
    """Whether a strategy's `k_decide` or `k_update` reads the context array,
    from their code: a function that names `ctx` reads it."""
    import dis

    return any(
        ins.argval == "ctx"
        for fn in (cls.k_decide, cls.k_update)
        for ins in dis.get_instructions(fn)
        if ins.opname.startswith("LOAD_")
    )


def test_the_loop_does_only_what_a_strategy_needs() -> None:
    from strategies import compiled
    from strategies.slots import CTX_BANKROLL

    class ReadsBankroll(compiled.BUILTINS[0]):  # type: ignore[misc,valid-type]
        @staticmethod
        def k_decide(p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
            out[1] = 0.01 * ctx[CTX_BANKROLL]

    class PassesItOn(compiled.BUILTINS[0]):  # type: ignore[misc,valid-type]
        @staticmethod
        def k_update(p, s, si, ctx, stakes, unit, net):  # type: ignore[no-untyped-def]
            ReadsBankroll.k_decide(p, s, si, ctx, None, None, stakes)

    assert _reads_context(ReadsBankroll) and _reads_context(PassesItOn)
    assert not _reads_context(compiled.BUILTINS[0])
    # every built-in says what its code reads
    for cls in compiled.BUILTINS:
        assert cls.reads_context == _reads_context(cls), cls.name
        assert compiled.facts(cls).reads_ctx == cls.reads_context
    # and prepares an update only for strategies that learn from one
    learners = {cls.name for cls in compiled.BUILTINS if compiled.learns(cls.kind)}
    assert {"martingale", "labouchere", "oscars-grind"} <= learners
    assert not {"flat", "follow-the-shoe", "counter"} & learners


class LabouchereKernels:
    """A Labouchere seat (banker, base 10) driven through its compiled
    kernels by hand: `s` and `si` are its state, to set up and to read."""

    def __init__(self) -> None:
        from strategies.slots import STATE_FLOATS

        strat = registry.get("labouchere").from_config({"bet": "banker", "base": 10}, "params")
        self.p = strat.encode()
        self.s, self.si, self.ctx = np.zeros(STATE_FLOATS), np.zeros(8, np.int64), np.zeros(8)

    def stake(self) -> float:
        from strategies.progressions.labouchere import decide

        # a progression returns its stake (on the one bet it plays) and writes nothing
        out = np.zeros(7)
        stake = decide(self.p, self.s, self.si, self.ctx, np.zeros(0, np.int8), np.zeros(7), out)
        assert not out.any()
        return float(stake)

    def settle(self, result: float) -> None:
        from strategies.progressions.labouchere import update

        stakes, unit = np.zeros(7), np.zeros(7)
        stakes[Bet.BANKER.code], unit[Bet.BANKER.code] = self.stake(), result
        update(self.p, self.s, self.si, self.ctx, stakes, unit, stakes[Bet.BANKER.code] * result)


def test_a_labouchere_line_that_reaches_the_end_of_its_state_moves_to_the_front() -> None:
    # a win crosses out the first number by moving the line's start; a loss
    # appends; a line that has drifted to the end of the state array is moved
    # back to the front, numbers unchanged (the line is kept in currency: the
    # numbers times the base stake, 10)
    from strategies.slots import STATE_FLOATS

    seat = LabouchereKernels()
    s, si, stake, settle = seat.s, seat.si, seat.stake, seat.settle
    line = [10.0 * k for k in range(1, 19)]
    start = STATE_FLOATS - len(line)  # the line fills the last slots
    si[0], si[1] = len(line), start
    s[start:] = line

    assert stake() == 10 * (1 + 18)
    settle(-1.0)  # a loss appends 19: no room, so it moves
    assert (si[0], si[1]) == (19, 0)
    assert list(s[:19]) == [*line, 190.0]
    assert stake() == 10 * (1 + 19)
    settle(0.95)  # a win crosses out 1 and 19
    assert (si[0], si[1]) == (17, 1)
    assert stake() == 10 * (2 + 18)


def test_a_labouchere_line_too_long_or_of_one_number() -> None:
    """A loss on a line of MAX_LINE numbers abandons it for a new line; a line
    of one number stakes it once, and a win on it starts a new line."""
    from strategies.progressions.progression import MAX_LINE

    seat = LabouchereKernels()
    s, si, stake, settle = seat.s, seat.si, seat.stake, seat.settle
    si[0], si[1] = MAX_LINE - 1, 0
    s[: MAX_LINE - 1] = 50.0  # 5 units of 10
    settle(-1.0)  # the line reaches MAX_LINE numbers
    assert (si[0], si[1], s[MAX_LINE - 1]) == (MAX_LINE, 0, 100.0)
    settle(-1.0)  # one more loss: a new line 1 2 3 4
    assert (si[0], si[1]) == (4, 0) and list(s[:4]) == [10, 20, 30, 40]
    assert stake() == 10 * (1 + 4)
    si[0], si[1], s[7] = 1, 7, 60.0  # a line of one number, 6
    assert stake() == 60
    settle(0.0)  # a push keeps it
    assert (si[0], si[1]) == (1, 7)
    settle(0.95)  # a win crosses it out: a new line
    assert (si[0], si[1]) == (4, 0) and stake() == 50


@pytest.mark.parametrize("pairs_alone", [True, False], ids=["commission", "no-commission"])
def test_the_counter_returns_its_one_bet_and_writes_several(pairs_alone: bool) -> None:
    """The counter returns (bet, stake) when one bet is favourable, (0, 0.0)
    when none is, and (SEVERAL, stake) with every stake written in `out`
    when more are; the Python path places what it returns or writes. Where
    a pair bet needs a main bet beside it, favourable pair bets alone are
    dropped, and what is left is returned or written by the same rules."""
    from strategies.base import View
    from strategies.counting import ExactCounter
    from strategies.slots import CTX_SIZE, N_BETS, SEVERAL

    strat = ExactCounter.from_config(
        {
            "base": 5,
            "min_ev": -0.05,
            "bets": ["banker", "tie", "player_pair", "banker_pair", "dragon7"],
        },
        "params",
    )
    rules = Rules.preset("commission" if pairs_alone else "no-commission")
    strat.at_table(rules)
    codes = {b: b.code for b in Bet}

    def evs_with(good: set[Bet]) -> np.ndarray:
        return np.array([0.01 if b in good else -0.1 for b in Bet])

    cases: list[tuple[set[Bet], dict[Bet, float]]] = [
        (set(), {}),
        ({Bet.BANKER}, {Bet.BANKER: 5.0}),
        ({Bet.PLAYER}, {}),  # not a bet it considers
        (
            {Bet.BANKER, Bet.TIE, Bet.PLAYER_PAIR},
            {Bet.BANKER: 5.0, Bet.TIE: 5.0, Bet.PLAYER_PAIR: 5.0},
        ),
        ({Bet.PLAYER_PAIR}, {Bet.PLAYER_PAIR: 5.0} if pairs_alone else {}),
        (
            {Bet.PLAYER_PAIR, Bet.BANKER_PAIR},
            {Bet.PLAYER_PAIR: 5.0, Bet.BANKER_PAIR: 5.0} if pairs_alone else {},
        ),
        (
            {Bet.PLAYER_PAIR, Bet.DRAGON_7},
            {Bet.PLAYER_PAIR: 5.0, Bet.DRAGON_7: 5.0} if pairs_alone else {Bet.DRAGON_7: 5.0},
        ),
        (
            {Bet.PLAYER_PAIR, Bet.BANKER_PAIR, Bet.DRAGON_7},
            {Bet.PLAYER_PAIR: 5.0, Bet.BANKER_PAIR: 5.0, Bet.DRAGON_7: 5.0}
            if pairs_alone
            else {Bet.DRAGON_7: 5.0},
        ),
    ]
    for good, want in cases:
        evs = evs_with(good)
        out = np.zeros(N_BETS)
        bet, stake = ExactCounter.k_decide(
            *_fresh_state(strat), np.zeros(CTX_SIZE), np.zeros(0, np.int8), evs, out
        )
        if len(want) > 1:
            assert (bet, stake) == (SEVERAL, 5.0), good
            assert {b: out[codes[b]] for b in Bet if out[codes[b]]} == want, good
        else:
            assert not out.any(), good
            assert (bet, stake) == ((codes[next(iter(want))], 5.0) if want else (0, 0.0)), good
        strat.start_session(3)
        view = View(np.zeros(1, np.int8), evs=evs)
        assert strat.stakes(view) == want, good


def test_the_counter_places_no_lone_pair_bet_where_the_table_takes_none() -> None:
    """At a no-commission table a pair bet needs a main bet beside it: a
    favourable pair bet with no favourable main bet is not placed (the run
    stopped on the first one), in both loops, and the ledgers agree."""
    cfg = parse_config(
        {
            "seed": 1,
            "sessions": 200,
            "rules": "no-commission",
            "shoe": {"decks": 8},
            "session": {"bankroll": 1000, "max_shoes": 1},
            "table": {"min": 10, "max": 1000, "limits": {"tie": {"min": 1, "max": 100}}},
            "seats": [{"strategy": "counter", "params": {"base": 10}}],
        }
    )
    ledgers = [
        engine.run(cfg, ledger=True, workers=1, force_python=force).ledger
        for force in (False, True)
    ]
    assert ledgers[0] is not None and ledgers[1] is not None
    assert ledgers[0].equals(ledgers[1])
    pairs = ledgers[0].filter((pl.col("stake_player_pair") > 0) | (pl.col("stake_banker_pair") > 0))
    assert pairs.height > 0  # favourable pair bets were placed, each beside a main bet
    assert pairs.filter(
        pl.col("stake_player") + pl.col("stake_banker") + pl.col("stake_tie") == 0
    ).is_empty()
    # at a commission table the same counter places pair bets alone
    alone = engine.run(
        dataclasses.replace(cfg, rules=Rules.preset("commission")), ledger=True, workers=1
    ).ledger
    assert (
        alone is not None
        and not alone.filter(
            (pl.col("stake_player_pair") > 0)
            & (pl.col("stake_player") + pl.col("stake_banker") + pl.col("stake_tie") == 0)
        ).is_empty()
    )


def test_the_readme_s_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/python.md's first block, as written (from the project's folder)."""
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    scope: dict[str, Any] = {}
    exec(compile(_readme_block("# From Python\n"), "docs/python.md", "exec"), scope)
    result = scope["result"]
    assert result.summary["seat"].to_list() == [
        "Flat Banker",
        "Martingale on Banker",
        "Follow the shoe",
    ]
    assert result.ledger.height == int(result.sessions["hands"].sum())
    evs = scope["evs"]
    assert evs[Bet.BANKER] == pytest.approx(
        odds.bet_evs(odds.composition(8, remove=[5] * 4), Rules.preset("commission"))[Bet.BANKER]
    )

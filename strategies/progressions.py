"""The classic betting progressions, each on one main bet.

Stakes are in currency units: `base` times the progression's current number
of units. Each progression's start, its move after a win and a loss, and its
end are spelled out in its class docstring. A win is any hand the bet
makes money on, whatever it paid (Banker at 0.95, a no-commission Banker 6
at 0.5), and a loss any it loses money on. A push (a tie under Player or
Banker, the EZ Banker's three-card 7) leaves every progression where it is,
or restarts it with the common parameter `on_push: reset`; what happens at
the table maximum and at the bankroll is the engine's, set by `on_max` and
`on_bankroll`.

A hand's outcome is a coin toss to the processor's branch predictor, and a
mispredicted branch costs more than an update's arithmetic, so the updates
choose without branches. They turn the outcome into numbers 0 and 1
(`1.0 if won else 0.0` compiles to a conversion, not a branch) and choose
by arithmetic that is exact: `a * c + b * (1.0 - c)` is `a` or `b` for
finite numbers (a zero may change its sign, which no comparison sees), and `restarted` gives a product of 1 or more (which
may be infinite) or 1. A conditional expression (`a if won else b`) is a
select only where the processor has masked moves (AVX-512) or the condition
is one comparison of two numbers; elsewhere LLVM writes it as a branch: on an
AMD EPYC the Martingale, Paroli and 1-3-2-6 loops ran at 40 M hands/s that
way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backtest.core.errors import StrategyError
from backtest.core.rules import Bet
from backtest.jit.lazy_jit import jit
from strategies._common import _HUGE, outcome, restarted
from strategies.base import P_ON_PUSH, P_OWN, STATE_FLOATS, Builtin
from strategies.params import CommonParams, Money, param

BET = P_OWN  # the bet's code
BASE = P_OWN + 1  # base stake
ARG = P_OWN + 2  # first argument of the progression

MAX_LINE = STATE_FLOATS - 8


@dataclass(frozen=True)
class ProgressionParams(CommonParams):
    bet: Bet = param("banker", "the bet the progression plays")
    base: Money = param(10.0, "the base stake (one unit), in currency", min=0, exclusive_min=True)


def check_units(values: list[float], where: str) -> None:
    """A list of 1 to 64 positive numbers of units (a line, a sequence)."""
    if not 1 <= len(values) <= 64:
        raise StrategyError(f"{where}: must hold 1 to 64 numbers, got {len(values)}")
    for i, v in enumerate(values):
        if v <= 0:
            raise StrategyError(f"{where}[{i}]: numbers must be positive, got {v!r}")


class Progression(Builtin):
    """A progression on one bet; subclasses add their arguments."""

    Params = ProgressionParams
    bet_slot = BET  # every decide returns its stake on the bet p[BET]

    def encode_own(self) -> list[float]:
        return [Bet(self.params.bet).code, self.params.base, *self.arguments()]

    def arguments(self) -> list[float]:
        return []

    def main_bets(self) -> set[Bet]:
        return {Bet(self.params.bet)}


# --- Martingale ------------------------------------------------------------------


def _level_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    s[0] = 0.0


# state of the multiplying progressions: s[0] the level, s[1] multiplier ** level
# (kept as a running product: a power per hand would cost more than the hand)


def _factor_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    s[0] = 0.0
    s[1] = 1.0


def _factor_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    """Martingale and Paroli: the base stake times the running product."""
    return p[BASE] * s[1]


def _martingale_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        level = s[0]
        up = 1.0 if loss & (level < 1000.0) else 0.0
        keep = 0.0 if win | push_reset else 1.0
        s[0] = (level + up) * keep
        s[1] = restarted(s[1] * (p[ARG] * up + (1.0 - up)), keep)


@dataclass(frozen=True)
class MartingaleParams(ProgressionParams):
    multiplier: float = param(2.0, "stake multiplier after each loss", min=1, exclusive_min=True)


class Martingale(Progression):
    """Start at one unit; multiply the stake by `multiplier` after each loss;
    back to one unit after a win."""

    name = "martingale"
    kind = 1
    description = "Double the stake after each loss, back to the base stake after a win."
    Params = MartingaleParams

    def arguments(self) -> list[float]:
        return [self.params.multiplier]

    k_reset = staticmethod(_factor_reset)
    k_decide = staticmethod(_factor_decide)
    k_update = staticmethod(_martingale_update)


# --- Grand Martingale --------------------------------------------------------------


def _units_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    s[0] = 1.0
    s[1] = 0.0


def _units_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    return p[BASE] * s[0]


def _grand_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        units = s[0]
        grown = 2.0 * units + 1.0
        grown = 1e300 if grown > 1e300 else grown
        units = grown if loss else units
        restart = win | push_reset
        units = 1.0 if restart else units
        s[0] = units


class GrandMartingale(Progression):
    """Start at one unit; after a loss stake twice the last stake plus one unit;
    back to one unit after a win."""

    name = "grand-martingale"
    kind = 2
    description = "After each loss double the stake and add one unit; reset after a win."

    k_reset = staticmethod(_units_reset)
    k_decide = staticmethod(_units_decide)
    k_update = staticmethod(_grand_update)


# --- Paroli (reverse Martingale) ----------------------------------------------------


def _paroli_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        level = s[0]
        up = 1.0 if win else 0.0
        # the target reached, as a number too: `win & (...)` compiles to a
        # branch on the win, to skip reading the target
        done = up * (1.0 if level + 1.0 >= p[ARG] else 0.0)
        keep = (0.0 if loss | push_reset else 1.0) * (1.0 - done)
        s[0] = (level + up) * keep
        s[1] = restarted(s[1] * (p[ARG + 1] * up + (1.0 - up)), keep)


@dataclass(frozen=True)
class ParoliParams(ProgressionParams):
    target: int = param(3, "consecutive wins after which the stake goes back to one unit", min=1)
    multiplier: float = param(2.0, "stake multiplier after each win", min=1, exclusive_min=True)


class Paroli(Progression):
    """Reverse Martingale: start at one unit; multiply the stake after each win
    until `target` wins in a row, then back to one unit; a loss resets."""

    name = "paroli"
    kind = 3
    description = (
        "Reverse Martingale: double after each win up to a target streak; reset on a loss."
    )
    Params = ParoliParams

    def arguments(self) -> list[float]:
        return [self.params.target, self.params.multiplier]

    k_reset = staticmethod(_factor_reset)
    k_decide = staticmethod(_factor_decide)
    k_update = staticmethod(_paroli_update)


# --- Fibonacci ----------------------------------------------------------------------

FIBONACCI_STEPS = 1400  # the furthest step along the sequence


def fibonacci_numbers() -> list[float]:
    """1, 1, 2, 3, 5 ... up to step FIBONACCI_STEPS, as floats (exact below 2**53)."""
    numbers = []
    a = b = 1.0
    for _ in range(FIBONACCI_STEPS + 1):
        numbers.append(a)
        a, b = b, a + b
    return numbers


def _fibonacci_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    # the numbers are in the parameter vector: a loop up to the step would end
    # at a different count each hand, a branch the processor cannot predict
    return p[BASE] * p[ARG + 1 + int(s[0])]


def _fibonacci_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        step = s[0]
        back = step - p[ARG]
        back = 0.0 if back < 0.0 else back
        on = step + 1.0
        on = FIBONACCI_STEPS if on > FIBONACCI_STEPS else on
        step = back if win else step
        step = on if loss else step
        step = 0.0 if push_reset else step
        s[0] = step


@dataclass(frozen=True)
class FibonacciParams(ProgressionParams):
    back: int = param(2, "steps back along the sequence after a win", min=1)


class Fibonacci(Progression):
    """Stakes follow 1, 1, 2, 3, 5, 8 ... units: one step on after a loss,
    `back` steps back after a win (never before the start)."""

    name = "fibonacci"
    kind = 4
    description = "Move one step up the Fibonacci sequence after a loss, two back after a win."
    Params = FibonacciParams

    def arguments(self) -> list[float]:
        return [self.params.back, *fibonacci_numbers()]

    k_reset = staticmethod(_level_reset)
    k_decide = staticmethod(_fibonacci_decide)
    k_update = staticmethod(_fibonacci_update)


# --- D'Alembert -----------------------------------------------------------------------


def _dalembert_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        units = s[0]
        down = units - p[ARG]
        down = 1.0 if down < 1.0 else down
        up = units + p[ARG]
        units = down if win else units
        units = up if loss else units
        units = 1.0 if push_reset else units
        s[0] = units


@dataclass(frozen=True)
class DAlembertParams(ProgressionParams):
    step: int = param(1, "units added after a loss and taken off after a win", min=1)


class DAlembert(Progression):
    """Start at one unit; one `step` more after a loss, one less after a win
    (never below one unit)."""

    name = "dalembert"
    kind = 5
    description = "Add a unit after a loss, take one off after a win."
    Params = DAlembertParams

    def arguments(self) -> list[float]:
        return [self.params.step]

    k_reset = staticmethod(_units_reset)
    k_decide = staticmethod(_units_decide)
    k_update = staticmethod(_dalembert_update)


# --- Labouchere ---------------------------------------------------------------------------
# state: the line in s from s[si[1]], in currency (each number times the
# base: a stake is two numbers added, and a loss appends the stake as it
# was placed, so neither a multiplication nor a division sits on the chain
# from one hand's result to the next stake); si[0] its length. A win crosses
# out the first number by moving the start, not the line. The update works
# out both outcomes and chooses with selects (see the module docstring); only
# a new line, once a series, branches.


@jit
def _new_line(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    n = int(p[ARG])
    si[0] = n
    si[1] = 0
    for i in range(n):
        s[i] = p[ARG + 1 + i] * p[BASE]


def _labouchere_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    _new_line(p, s, si)


def _labouchere_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    n = si[0]  # at least 1: the update starts a new line when one is crossed out
    first = si[1]
    last = s[first + n - 1]
    return s[first] + (last if n > 1 else 0.0)


def _labouchere_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    bet = int(p[BET])
    # `outcome`'s flags, written out: through the helper this loop measured
    # 3 per cent slower (four in-process comparisons)
    stake = stakes[bet]
    if stake <= 0.0:
        return
    r = unit[bet]
    n = si[0]
    first = si[1]
    if first + n >= STATE_FLOATS:  # no room after the line: move it to the front
        for i in range(n):
            s[i] = s[first + i]
        first = 0
    # what a loss appends, written whatever the outcome: past the line's end
    # it is not part of the line unless the length grows over it
    s[first + n] = stake
    win = r > 0.0
    loss = r < 0.0
    length = n - 2 if win else n
    length = n + 1 if loss else length
    si[0] = length
    si[1] = first + 1 if win else first
    if (length <= 0) | (loss & (n >= MAX_LINE)) | ((r == 0.0) & (p[P_ON_PUSH] == 1.0)):
        _new_line(p, s, si)


@dataclass(frozen=True)
class LabouchereParams(ProgressionParams):
    line: list[float] = param(
        [1.0, 2.0, 3.0, 4.0], "the starting line, in units; the stake is its first plus last number"
    )

    def validate(self, path: str) -> None:
        check_units(self.line, f"{path}.line")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate("params")


class Labouchere(Progression):
    """Cancellation: stake the first plus the last number of the line (units);
    a win crosses both out, a loss appends the amount lost. When the line is
    crossed out a new line starts: the series has won the line's sum, less
    what Banker wins paid short (0.95, or 0.5 on a no-commission 6), since any
    win crosses out its two numbers. A line that would grow past 512 numbers
    is abandoned for a new one."""

    name = "labouchere"
    kind = 6
    description = (
        "Cancellation system: bet first+last of a line, cross out on a win, append on a loss."
    )
    Params = LabouchereParams

    def arguments(self) -> list[float]:
        return [len(self.params.line), *self.params.line]

    k_reset = staticmethod(_labouchere_reset)
    k_decide = staticmethod(_labouchere_decide)
    k_update = staticmethod(_labouchere_update)


# --- 1-3-2-6 ---------------------------------------------------------------------------------


def _sequence_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    return p[BASE] * p[ARG + 1 + int(s[0])]


def _sequence_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    placed, win, loss, push_reset = outcome(p, int(p[BET]), stakes, unit)
    if placed:
        step = s[0]
        on = 1.0 if win else 0.0
        done = on * (1.0 if step + 1.0 >= p[ARG] else 0.0)  # as in `_paroli_update`
        keep = (0.0 if loss | push_reset else 1.0) * (1.0 - done)
        s[0] = (step + on) * keep


@dataclass(frozen=True)
class SequenceParams(ProgressionParams):
    sequence: list[float] = param([1.0, 3.0, 2.0, 6.0], "stakes in units, one step on per win")

    def validate(self, path: str) -> None:
        check_units(self.sequence, f"{path}.sequence")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate("params")


class OneThreeTwoSix(Progression):
    """Stake 1, 3, 2, 6 units on consecutive wins; a loss or a completed
    sequence starts again at the first step."""

    name = "1-3-2-6"
    kind = 7
    description = (
        "Positive progression 1-3-2-6 units over four wins; reset on a loss or at the end."
    )
    Params = SequenceParams

    def arguments(self) -> list[float]:
        return [len(self.params.sequence), *self.params.sequence]

    k_reset = staticmethod(_level_reset)
    k_decide = staticmethod(_sequence_decide)
    k_update = staticmethod(_sequence_update)


# --- Oscar's Grind ----------------------------------------------------------------------------
# state: s[0] the next stake before the goal's cap (currency: the last stake
# placed, one unit more after a win), s[1] what the series still needs to win
# (currency, less a slack of 1e-9 units: `_oscar_short`), s[2] the stake the
# next decide asks for, worked out by the update (and the reset) as soon as
# the hand before is settled.
#
# The series is a chain from one hand's stake to the next: each stake depends
# on what the last one won. The update walks that chain with one multiply and
# one subtraction (what is still needed, not the profit so far: the goal's
# test is then a comparison with a number known before the hand), a select,
# and the cap; the decide only reads the stake. Sums stay in currency, exact
# while the stakes are whole cents (sums in units would lose that at large
# stakes); the slack keeps a series that needs exactly a whole number of units
# from asking one unit more.

_OSCAR_SLACK = 1e-9  # in units


@jit
def _oscar_short(p: np.ndarray) -> float:
    """What a new series needs to win, less the slack: more than zero, so that
    its first cap is one unit at least (a goal below the slack ends a series
    on its first win)."""
    base = p[BASE]
    return max(p[ARG] * base - _OSCAR_SLACK * base, 1e-200)


@jit
def _oscar_ask(base: float, kept: float, short: float) -> float:
    """The next stake: `kept`, but never more than a win needs to finish the
    series, in whole units as if it paid even money; one unit at least."""
    cap = base * np.ceil(short * (1.0 / base))
    return min(cap, max(kept, base))


def _oscar_reset(p: np.ndarray, s: np.ndarray, si: np.ndarray) -> None:
    base = p[BASE]
    s[0] = base
    s[1] = _oscar_short(p)
    s[2] = _oscar_ask(base, base, s[1])


def _oscar_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> float:
    return s[2]


def _oscar_update(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    stakes: np.ndarray,
    unit: np.ndarray,
    net: float,
) -> None:
    bet = int(p[BET])
    placed, win, loss, push_reset = outcome(p, bet, stakes, unit)
    if placed:
        # the stake placed, read as the one asked for when the loop placed
        # exactly that, as on almost every hand: the same number, but the
        # processor predicts this branch, so the chain does not wait on the
        # loop's conversion of the stake to cents and back
        if stakes[bet] != s[2]:
            s[2] = stakes[bet]
        stake = s[2]
        kept = s[0]
        base = p[BASE]
        r = unit[bet]
        # a loss is -1, a push 0: one product for every outcome
        short = s[1] - stake * r
        # the series ends on a win that leaves nothing to win, or on a push
        # under `on_push: reset`: a limit to compare `short` with, known
        # before it (a select on one comparison of two numbers compiles
        # without a branch)
        limit = (0.0 if r > 0.0 else -_HUGE) + (1.0 if push_reset else 0.0) * 2.0 * _HUGE
        w = 1.0 if win else 0.0
        lo = 1.0 if loss else 0.0
        # after a win one unit more than the stake just won, after a loss the
        # stake just lost; a push leaves it where it is
        nxt = (stake + base * w) * (w + lo) + kept * (1.0 - w - lo)
        done = short <= limit
        short = _oscar_short(p) if done else short
        nxt = base if done else nxt
        s[0] = nxt
        s[1] = short
        s[2] = _oscar_ask(base, nxt, short)


@dataclass(frozen=True)
class OscarParams(ProgressionParams):
    goal: float = param(1.0, "the profit, in units, that ends a series", min=0, exclusive_min=True)


class OscarsGrind(Progression):
    """A series aims to win `goal` units: start at one unit; after a win stake
    one unit more than the stake just won, after a loss the stake just lost;
    never stake more than a win needs to reach the goal, in whole units as if
    it paid even money (a Banker win at 0.95 may leave a few cents to win on
    the next hand); when the goal is reached, start a new series."""

    name = "oscars-grind"
    kind = 8
    description = (
        "Raise a unit after each win, never more than needed to finish the series +1 unit."
    )
    Params = OscarParams

    def arguments(self) -> list[float]:
        return [self.params.goal]

    k_reset = staticmethod(_oscar_reset)
    k_decide = staticmethod(_oscar_decide)
    k_update = staticmethod(_oscar_update)


PROGRESSIONS = (
    Martingale,
    GrandMartingale,
    Paroli,
    Fibonacci,
    DAlembert,
    Labouchere,
    OneThreeTwoSix,
    OscarsGrind,
)

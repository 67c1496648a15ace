"""The progressions' updates, which choose without branches (see
`strategies.progressions.progression`), each checked here, compiled and in
Python, against a reference written with plain `if`s from the class
docstrings, on states at and around every edge: the first and last steps, a
target or goal reached, a push under both `on_push` settings, the
Martingale's level cap, and a factor grown to infinity."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from backtest.core.rules import Bet
from backtest.jit.lazy_jit import jit
from strategies import registry
from strategies.params import build_params
from strategies.progressions import martingale, one_three_two_six, oscars_grind, paroli
from strategies.slots import N_BETS

# unit results of the bet: a win at even money and at 0.95, a loss, a push
RESULTS = (1.0, 0.95, -1.0, 0.0)


def _p(name: str, **params: object) -> np.ndarray:
    cls = registry.get(name)
    return cls(build_params(cls.Params, params)).encode()


def _arrays(stake: float, r: float) -> tuple[np.ndarray, np.ndarray]:
    stakes = np.zeros(N_BETS)
    unit = np.zeros(N_BETS)
    stakes[Bet.BANKER.code] = stake
    unit[Bet.BANKER.code] = r
    return stakes, unit


def _both(kernel):  # type: ignore[no-untyped-def]
    return [kernel, jit(kernel)]


@pytest.fixture(autouse=True)
def _overflow_is_meant() -> object:
    """A factor that grows past the largest float is infinite on purpose."""
    with np.errstate(over="ignore"):
        yield


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_martingale_update_matches_the_rules(compiled: bool) -> None:
    update = _both(martingale.update)[compiled]
    for multiplier, on_push in itertools.product((2.0, 1.5, 2.7, 3.0), ("stand", "reset")):
        p = _p("martingale", multiplier=multiplier, on_push=on_push)
        for level, factor, r, stake in itertools.product(
            (0.0, 1.0, 7.0, 999.0, 1000.0),
            (1.0, 8.0, 1.5**7, 1e300, math.inf),
            RESULTS,
            (10.0, 0.0),
        ):
            s = np.zeros(8)
            s[:2] = level, factor
            stakes, unit = _arrays(stake, r)
            update(p, s, np.zeros(4, np.int64), np.zeros(8), stakes, unit, 0.0)
            want = (level, factor)
            if stake > 0:
                if r > 0 or (r == 0 and on_push == "reset"):
                    want = (0.0, 1.0)
                elif r < 0 and level < 1000:
                    want = (level + 1.0, factor * multiplier)
            assert s[0] == want[0] and s[1] == want[1], (
                multiplier,
                on_push,
                level,
                factor,
                r,
                stake,
                s[:2],
                want,
            )


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_paroli_update_matches_the_rules(compiled: bool) -> None:
    update = _both(paroli.update)[compiled]
    for target, multiplier, on_push in itertools.product(
        (1, 3, 5), (2.0, 2.7, 1e200), ("stand", "reset")
    ):
        p = _p("paroli", target=target, multiplier=multiplier, on_push=on_push)
        for level, r in itertools.product(range(target), RESULTS):
            factor = (
                math.prod([multiplier] * level)
                if level * math.log10(multiplier) < 308
                else math.inf
            )
            s = np.zeros(8)
            s[:2] = level, factor
            stakes, unit = _arrays(10.0, r)
            update(p, s, np.zeros(4, np.int64), np.zeros(8), stakes, unit, 0.0)
            want = (float(level), factor)
            if r > 0:
                want = (level + 1.0, factor * multiplier)
            if r < 0 or (r == 0 and on_push == "reset") or (r > 0 and level + 1 >= target):
                want = (0.0, 1.0)
            assert s[0] == want[0] and s[1] == want[1], (
                target,
                multiplier,
                on_push,
                level,
                r,
                s[:2],
                want,
            )


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_sequence_update_matches_the_rules(compiled: bool) -> None:
    update = _both(one_three_two_six.update)[compiled]
    for sequence, on_push in itertools.product(
        ([1.0, 3.0, 2.0, 6.0], [5.0], [1.0, 2.0]), ("stand", "reset")
    ):
        p = _p("1-3-2-6", sequence=sequence, on_push=on_push)
        for step, r in itertools.product(range(len(sequence)), RESULTS):
            s = np.zeros(8)
            s[0] = step
            stakes, unit = _arrays(10.0, r)
            update(p, s, np.zeros(4, np.int64), np.zeros(8), stakes, unit, 0.0)
            want = float(step + 1) if r > 0 else float(step)
            if r < 0 or (r == 0 and on_push == "reset") or (r > 0 and step + 1 >= len(sequence)):
                want = 0.0
            assert s[0] == want, (sequence, on_push, step, r, s[0], want)


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_oscar_update_matches_the_rules(compiled: bool) -> None:
    """The update keeps what the series still needs to win (less a slack of
    1e-9 units) and works out the next stake itself; checked against the
    series as the docstring tells it, kept as the profit so far."""
    update = _both(oscars_grind.update)[compiled]
    decide = _both(oscars_grind.decide)[compiled]
    reset = _both(oscars_grind.reset)[compiled]
    rng = np.random.default_rng(11)
    for base, goal, on_push in itertools.product(
        (1.0, 5.0, 0.25, 10.0), (1.0, 2.5), ("stand", "reset")
    ):
        p = _p("oscars-grind", base=base, goal=goal, on_push=on_push)
        slack = 1e-9 * base
        s = np.zeros(8)
        reset(p, s, np.zeros(4, np.int64))
        assert (s[0], s[2]) == (base, base)
        assert s[1] == pytest.approx(goal * base - slack, abs=1e-12)
        for _ in range(200):
            # whole units, or less than one unit (as a table maximum or an
            # all-in bankroll may cap the stake placed)
            stake = base * float(rng.choice([1, 2, 3, 4, 5, 0.4]))
            # profits in whole cents, some a win short of the goal, some at it
            profit = round(
                float(
                    rng.choice(
                        [
                            goal * base - stake,
                            goal * base - stake * 0.95,
                            -stake * int(rng.integers(0, 9)),
                            rng.integers(-5000, 5000) / 100,
                        ]
                    )
                ),
                2,
            )
            if profit >= goal * base:
                continue  # a series that has reached its goal has ended
            kept = base * int(rng.integers(1, 9))
            r = float(rng.choice(RESULTS))
            s = np.zeros(8)
            s[:3] = kept, goal * base - profit - slack, stake
            stakes, unit = _arrays(stake, r)
            update(p, s, np.zeros(4, np.int64), np.zeros(8), stakes, unit, 0.0)
            if r > 0:
                want = (stake + base, profit + stake * r)
            elif r < 0:
                want = (stake, profit - stake)
            else:
                want = (kept, profit)
            if (r > 0 and profit + stake * r >= goal * base - slack) or (
                r == 0 and on_push == "reset"
            ):
                want = (base, 0.0)
            needed = math.ceil((goal * base - want[1]) / base - 1e-9)
            ask = max(base, min(want[0], base * needed))
            where = (base, goal, on_push, stake, profit, kept, r, s[:3], want, ask)
            assert s[0] == want[0], where
            assert s[1] == pytest.approx(goal * base - want[1] - slack, abs=1e-9), where
            assert (
                decide(
                    p,
                    s,
                    np.zeros(4, np.int64),
                    np.zeros(8),
                    np.zeros(0, np.int8),
                    np.zeros(N_BETS),
                    np.zeros(N_BETS),
                )
                == ask
            ), where

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

The package, by family: `progression` (what they all share), `doubling`
(Martingale, Grand Martingale, Paroli), `sequences` (Fibonacci, 1-3-2-6),
`unit_steps` (D'Alembert, Oscar's Grind), `labouchere`.
"""

from __future__ import annotations

from strategies.progressions.doubling import GrandMartingale, Martingale, Paroli
from strategies.progressions.labouchere import Labouchere
from strategies.progressions.sequences import Fibonacci, OneThreeTwoSix
from strategies.progressions.unit_steps import DAlembert, OscarsGrind

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

__all__ = [
    "DAlembert",
    "Fibonacci",
    "GrandMartingale",
    "Labouchere",
    "Martingale",
    "OneThreeTwoSix",
    "OscarsGrind",
    "PROGRESSIONS",
    "Paroli",
]

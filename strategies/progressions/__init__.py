"""The classic betting progressions, each on one main bet, each in its own
module; `dalembert.py` is the model to copy for a new one.

Stakes are in currency units: `base` times the progression's current number
of units. Each progression's start, its move after a win and a loss, and its
end are spelled out in its class docstring. A win is any hand the bet
makes money on, whatever it paid (Banker at 0.95, a no-commission Banker 6
at 0.5), and a loss any it loses money on. A push (a tie under Player or
Banker, the EZ Banker's three-card 7) leaves every progression where it is,
or restarts it with the common parameter `on_push: reset`; what happens at
the table maximum and at the bankroll is the engine's, set by `on_max` and
`on_bankroll`. What they all share is in `progression`.
"""

from __future__ import annotations

from strategies.progressions.dalembert import DAlembert
from strategies.progressions.fibonacci import Fibonacci
from strategies.progressions.grand_martingale import GrandMartingale
from strategies.progressions.labouchere import Labouchere
from strategies.progressions.martingale import Martingale
from strategies.progressions.one_three_two_six import OneThreeTwoSix
from strategies.progressions.oscars_grind import OscarsGrind
from strategies.progressions.paroli import Paroli

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

"""What `analyze` found: each test's statistic and p-values, and the finding
as words, a text table or JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: family-wise level below which a test is said to deviate
ALPHA = 0.05


@dataclass(frozen=True)
class Statistic:
    """One test: its statistic, its p-value against the simulated fair records,
    the p-value adjusted for every test tried, and what it saw in words."""

    name: str
    statistic: float
    p_value: float
    adjusted_p: float
    detail: str = ""
    #: the statistic as a normal deviate (the common scale of the adjustment)
    z: float = 0.0


@dataclass(frozen=True)
class Analysis:
    source: str
    hands: int
    shoes: int
    decks: int
    rules: str
    simulations: int
    seed: int
    tests: tuple[Statistic, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def smallest(self) -> Statistic:
        """The test furthest from chance."""
        return min(self.tests, key=lambda t: (t.adjusted_p, -t.z))

    def deviations(self, alpha: float = ALPHA) -> list[Statistic]:
        """The tests whose adjusted p is at most `alpha`, the furthest from chance first."""
        return sorted(
            (t for t in self.tests if t.adjusted_p <= alpha), key=lambda t: (t.adjusted_p, -t.z)
        )

    def verdict(self, alpha: float = ALPHA) -> str:
        """The finding in words."""
        head = f"{counted(self.hands, 'hand')} in {counted(self.shoes, 'shoe')}"
        found = self.deviations(alpha)
        if not found:
            return (
                f"{head}: nothing beyond chance (smallest adjusted p "
                f"{_equals(p_text(self.smallest.adjusted_p, self.simulations))})"
            )
        said = "; ".join(
            f"{t.name}{': ' + t.detail if t.detail else ''} (adjusted p "
            f"{_equals(p_text(t.adjusted_p, self.simulations))})"
            for t in found[:3]
        )
        more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
        return f"{head}: beyond chance: {said}{more}"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "hands": self.hands,
            "shoes": self.shoes,
            "decks": self.decks,
            "rules": self.rules,
            "simulations": self.simulations,
            "seed": self.seed,
            "verdict": self.verdict(),
            "tests": [
                {
                    "name": t.name,
                    "statistic": round(t.statistic, 6),
                    "p_value": t.p_value,
                    "adjusted_p": t.adjusted_p,
                    "detail": t.detail,
                }
                for t in self.tests
            ],
            "notes": list(self.notes),
        }

    def table(self, width: int | None = None) -> str:
        """The tests as a text table (the patterns only where p < 0.05 or the
        smallest), the notes, then the verdict, fitted to `width` (default:
        the terminal's)."""
        from backtest.core import tables

        width = tables.terminal_width() if width is None else width
        shown = [t for t in self.tests if not t.name.startswith("after ")]
        patterns = [t for t in self.tests if t.name.startswith("after ")]
        low = [t for t in patterns if t.p_value < 0.05]
        if patterns:
            shown += low or [min(patterns, key=lambda t: t.p_value)]
        rows = [
            (
                t.name,
                f"{t.statistic:.2f}",
                p_text(t.p_value, self.simulations),
                p_text(t.adjusted_p, self.simulations),
                t.detail,
            )
            for t in shown
        ]
        head = (
            f"{self.source}: {counted(self.hands, 'hand')} in {counted(self.shoes, 'shoe')}, "
            f"{self.decks} decks, rules {self.rules}; each test against {self.simulations:,} "
            f"simulated fair records (seed {self.seed})"
        )
        parts = [
            tables.paragraphs([head], width),
            tables.render(
                ("test", "statistic", "p", "adjusted p", "what it saw"),
                rows,
                right=(False, True, True, True, False),
                width=width,
                wrap=(4,),
            ),
        ]
        if patterns:
            footnote = (
                f"({len(patterns)} patterns tested; shown: those with p < 0.05, the others "
                "have p >= 0.05)"
                if low
                else f"({len(patterns)} patterns tested, none with p < 0.05; shown: the "
                "one of smallest p)"
            )
            parts[-1] += "\n" + tables.paragraphs([footnote], width)
        if self.notes:
            parts.append(tables.paragraphs(list(self.notes), width))
        parts.append(tables.paragraphs([self.verdict()], width))
        return "\n\n".join(parts) + "\n"


def _equals(p: str) -> str:
    return p if p.startswith("<") else f"= {p}"


def counted(n: int, what: str) -> str:
    return f"{n:,} {what}{'s' if n != 1 else ''}"


def p_text(p: float, simulations: int) -> str:
    """A p-value as printed: `< 0.001` at the simulations' resolution."""
    floor = 1.0 / (simulations + 1)
    if p <= floor:
        return f"< {_round_up(floor)}"
    return f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


def _round_up(x: float) -> str:
    for digits in range(1, 8):
        text = f"{x:.{digits}f}"
        if float(text) >= x:
            return text
    return f"{x:.2g}"

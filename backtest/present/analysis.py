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

    def table(self) -> str:
        """The tests as a text table (the patterns only where p < 0.05 or the
        smallest), the notes, then the verdict."""
        shown = [t for t in self.tests if not t.name.startswith("after ")]
        patterns = [t for t in self.tests if t.name.startswith("after ")]
        low = []
        if patterns:
            low = [t for t in patterns if t.p_value < 0.05]
            shown += low or [min(patterns, key=lambda t: t.p_value)]
        rows = [("test", "statistic", "p", "adjusted p", "what it saw")]
        rows += [
            (
                t.name,
                f"{t.statistic:.2f}",
                p_text(t.p_value, self.simulations),
                p_text(t.adjusted_p, self.simulations),
                t.detail,
            )
            for t in shown
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [
            f"{self.source}: {counted(self.hands, 'hand')} in {counted(self.shoes, 'shoe')}, {self.decks} "
            f"decks, rules {self.rules}; each test against {self.simulations:,} simulated "
            f"fair records (seed {self.seed})",
            "",
        ]
        for r in rows:
            lines.append(
                "  ".join(
                    [
                        r[0].ljust(widths[0]),
                        *(c.rjust(w) for c, w in zip(r[1:4], widths[1:4])),
                        r[4],
                    ]
                ).rstrip()
            )
        if patterns:
            lines.append(
                f"({len(patterns)} patterns tested; shown: those with p < 0.05, the others "
                "have p >= 0.05)"
                if low
                else f"({len(patterns)} patterns tested, none with p < 0.05; shown: the "
                "one of smallest p)"
            )
        lines += ["", *self.notes, "" if self.notes else "", self.verdict()]
        return (
            "\n".join(line for i, line in enumerate(lines) if line or (i and lines[i - 1])).rstrip()
            + "\n"
        )


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

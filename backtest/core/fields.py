"""How a value of a config, a strategy's parameters or the rules is checked: declared once.

A `Check` declares what one field takes: its kind (a number, a whole
number, an amount of money, a payout, true or false, text, one of some
choices), its bounds, its default and whether it may be left empty.
`Check.read(value, where, error)` gives the value in its one form, or raises
`error` with one line, "WHERE: what is wrong, got VALUE", where WHERE is the
key path (`session.bankroll`, `seats[0].params.base`); `load_config` then
adds the YAML line of that key. `Section` reads a mapping of such fields
(`Section.read_all(DECLARED)`), refusing an unknown key with the close
matches (`did_you_mean`).

>>> Check("whole", minimum=1).read(3.0, "sessions", ValueError)
3
>>> Check("money", minimum=0, exclusive=True).read(0.001, "session.bankroll", ValueError)
Traceback (most recent call last):
...
ValueError: session.bankroll: must be at least 0.01: money is counted in whole cents, got 0.001
>>> Check("choice", choices=("reset", "cap")).read("rest", "on_max", ValueError)
Traceback (most recent call last):
...
ValueError: on_max: 'rest' is not allowed; expected 'reset' or 'cap'; did you mean 'reset'?

Everything here is plain Python (no pydantic, say): it is imported by every
command, `backtest strategies` included, and its messages are the
project's own (docs/DESIGN.md, "One declaration of a field's check").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from backtest.core.errors import shown

#: no amount of money in ticks (cents times the money denominator) reaches
#: this: it would not fit the 64-bit integers money is counted in
MONEY_LIMIT = 2**62
#: no amount of money reaches this, in currency (its cents reach MONEY_LIMIT)
MONEY_MAX = MONEY_LIMIT / 100

#: bounds on a payout (net per unit staked): money is counted in whole ticks of
#: 1/(100 D) of a currency unit, D the payouts' common denominator
MAX_PAYOUT = 1000
MAX_PAYOUT_DENOMINATOR = 1000

Kind = Literal["number", "whole", "money", "payout", "flag", "text", "choice"]

#: what a value of each kind is called in "expected ..." (a choice says its choices)
_EXPECTED = {
    "number": "a number",
    "whole": "a whole number",
    "money": "a number",
    "payout": "a number",
    "flag": "true or false",
    "text": "text",
}


class _Required:
    """A Check's `default` when the field has none: leaving it out is an error."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


def did_you_mean(name: object, choices: Iterable[object], n: int = 2) -> str:
    """ "; did you mean 'a' or 'b'?" for the choices close to `name`, or "".

    >>> did_you_mean("sesions", ["seed", "sessions", "session"])
    "; did you mean 'sessions' or 'session'?"
    """
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=n)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _bound(x: float) -> str:
    """A bound as a message writes it: 1,000,000,000 or 0.5."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class Check:
    """How one field is checked. `minimum` (more than it when `exclusive`)
    and `maximum` bound a number; `money`: an amount, 0 (unless `minimum` 0
    is exclusive) or at least a cent, and with `bounded` below MONEY_MAX;
    `limit` bounds a whole number's size (the compiled strategies read their
    parameters as floats, exact to 2**53); `optional`: None is taken (and is
    the value left out, unless `default` says another); `nonempty` and
    `one_line` hold text to one printable line; `choices` are a choice's."""

    kind: Kind
    default: Any = REQUIRED
    minimum: float | None = None
    exclusive: bool = False
    maximum: float | None = None
    optional: bool = False
    bounded: bool = False
    limit: int | None = None
    choices: tuple[Any, ...] = ()
    nonempty: bool = False
    one_line: bool = False
    #: said after "is required" when the field is left out
    required_hint: str = ""
    #: what the number counts, said with its bounds ("a table's betting boxes")
    about: str = ""

    @property
    def positive(self) -> bool:
        return self.minimum == 0 and self.exclusive

    def expected(self) -> str:
        """What the field takes, in words (`backtest strategies` lists it)."""
        if self.kind == "choice":
            return " or ".join(repr(c) for c in self.choices)
        if self.kind == "money":
            return "an amount"
        return _EXPECTED[self.kind]

    def read(self, value: Any, where: str, error: type[Exception]) -> Any:
        """`value` checked, in its one form (an int, a float, a Fraction, ...)."""

        def fail(problem: str) -> Exception:
            return error(f"{where}: {problem}")

        if value is REQUIRED or (value is None and not self.optional):
            raise fail(f"is required{self.required_hint}")
        if value is None:
            return None
        kind = self.kind
        if kind == "flag":
            if not isinstance(value, bool):
                raise fail(f"expected true or false, got {shown(value, 60)}")
            return value
        if kind == "text":
            return self._text(value, fail)
        if kind == "choice":
            if value not in self.choices:
                raise fail(
                    f"{shown(value, 60)} is not allowed; expected {self.expected()}"
                    f"{did_you_mean(value, self.choices, 1)}"
                )
            return value
        if kind == "payout":
            return self._payout(value, fail)
        number = self._number(value, fail)
        self._bounds(value, number, fail)
        if kind == "money":
            self._cents(value, number, fail)
        return number

    def _text(self, value: Any, fail: Any) -> str:
        if not isinstance(value, str):
            raise fail(f"expected text, got {shown(value, 60)}")
        if self.nonempty and not value:
            raise fail(f"must not be empty{self.required_hint}, got ''")
        if self.one_line and not value.isprintable():
            raise fail(f"must be one line of printable text, got {shown(value, 60)}")
        return value

    def _number(self, value: Any, fail: Any) -> int | float:
        whole = self.kind == "whole"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            from backtest.core.yamlfile import number_hint  # (which loads yaml: only on an error)

            hint = number_hint(value)
            raise fail(f"expected {_EXPECTED[self.kind]}, got {shown(value, 60)}{hint}")
        if isinstance(value, float) and not math.isfinite(value):
            raise fail(f"expected a finite number, got {shown(value, 60)}")
        if whole:
            if isinstance(value, float) and not value.is_integer():
                raise fail(f"expected a whole number, got {shown(value, 60)}")
            if self.limit is not None and abs(value) > self.limit:
                raise fail(
                    f"expected a whole number of at most {self.limit:,} in size, "
                    f"got {shown(value, 60)}"
                )
            return int(value)
        try:
            return float(value)
        except OverflowError:  # an integer beyond any float
            if self.bounded and value > 0:
                return math.inf  # refused as too large by `_cents`, in its words
            raise fail(f"expected a finite number, got {shown(value, 60)}") from None

    def _bounds(self, raw: Any, value: float, fail: Any) -> None:
        lo, hi = self.minimum, self.maximum
        about = f" ({self.about})" if self.about else ""
        if self.kind == "money" and value < 0 and not self.positive:
            raise fail(f"an amount cannot be negative, got {shown(raw, 60)}")
        if lo is not None and hi is not None and not self.exclusive and not lo <= value <= hi:
            raise fail(f"must be from {_bound(lo)} to {_bound(hi)}{about}, got {shown(raw, 60)}")
        if lo is not None:
            if self.exclusive and value <= lo and not (self.kind == "money" and value >= 0):
                raise fail(f"must be more than {_bound(lo)}{about}, got {shown(raw, 60)}")
            if not self.exclusive and value < lo:
                raise fail(f"must be at least {_bound(lo)}{about}, got {shown(raw, 60)}")
        if hi is not None and value > hi:
            raise fail(f"must be at most {_bound(hi)}{about}, got {shown(raw, 60)}")

    def _cents(self, raw: Any, value: float, fail: Any) -> None:
        zero_taken = not self.positive
        if value < 0.01 and (value > 0 or not zero_taken):
            raise fail(
                f"must be at least 0.01{' (or 0)' if zero_taken else ''}: money is "
                f"counted in whole cents, got {shown(raw, 60)}"
            )
        if self.bounded and value >= MONEY_MAX:
            # (the run's own check, with the rules and the table, may ask for less)
            raise fail(
                f"must be below {MONEY_MAX:.3g}: money is counted in whole "
                f"cents in 64-bit integers, got {shown(raw, 60)}"
            )

    def _payout(self, value: Any, fail: Any) -> Fraction:
        """A payout, net per unit staked: exact, positive, at most MAX_PAYOUT
        to 1, in whole thousandths (so the money denominator stays small)."""
        if isinstance(value, bool) or not isinstance(value, (int, float, str, Fraction)):
            raise fail(f"expected a number, got {shown(value, 60)}")
        try:
            # floats go through str so that 0.95 means 19/20, not its binary neighbour
            result = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
        except (ValueError, ZeroDivisionError, OverflowError):
            raise fail(f"expected a number, got {shown(value, 60)}") from None
        if result <= 0:
            raise fail(f"must be more than 0, got {shown(value, 60)}")
        if result > MAX_PAYOUT:
            raise fail(f"must be at most {MAX_PAYOUT} (to 1), got {shown(value, 60)}")
        if result.denominator > MAX_PAYOUT_DENOMINATOR:
            raise fail(
                "must be a whole number of thousandths of the stake "
                f"(such as 0.95 or 0.975), got {shown(value, 60)}"
            )
        return result


def payout(default: Fraction | None, offered: bool = False) -> Check:
    """A payout's check; None means the bet is not offered, unless it always is."""
    return Check("payout", default=default, optional=not offered)


class Section:
    """A mapping being read, remembering its key path for the messages;
    `error` is the kind of error a refusal raises, `source` the file (or
    "config") each message starts with."""

    def __init__(
        self, data: Any, path: str, source: str, error: type[Exception] = ValueError
    ) -> None:
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise error(
                f"{source}: {path or 'the config'}: expected a mapping, got {shown(data, 60)}"
            )
        self.data = dict(data)
        self.path = path
        self.source = source
        self.error = error

    def where(self, key: str | int) -> str:
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, message: str) -> Exception:
        return self.error(f"{self.source}: {self.where(key)}: {message}")

    def check_keys(self, allowed: Iterable[str]) -> None:
        """Refuse a key that is not `allowed`, with the close ones."""
        allowed = tuple(allowed)
        for key in self.data:
            if key not in allowed:
                raise self.fail(
                    str(key),
                    f"unknown key{did_you_mean(key, allowed)} (allowed: {', '.join(allowed)})",
                )

    def read(self, key: str, check: Check, default: Any = REQUIRED) -> Any:
        """The value under `key`, checked; `default` (else the check's own)
        when the mapping leaves it out."""
        value = self.data.get(key, check.default if default is REQUIRED else default)
        prefix = f"{self.source}: " if self.source else ""
        return check.read(value, f"{prefix}{self.where(key)}", self.error)

    def read_all(self, declared: Mapping[str, Check]) -> dict[str, Any]:
        """Every field `declared`, checked, after refusing any other key."""
        self.check_keys(declared)
        return {key: self.read(key, check) for key, check in declared.items()}

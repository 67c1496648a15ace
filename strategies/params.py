"""Parameter dataclasses: declared once, validated from YAML, listed by the CLI.

A strategy's parameters are a frozen dataclass, frozen all the way down:
validation turns every list in them into a tuple and every mapping into a
`FrozenDict`, whatever the field's annotation says (or leaves unsaid). An
amount of money is annotated `Money`: it is 0 or at least a cent. Each
field carries its help text and bounds in `metadata` (see `param`).
`build_params` turns a mapping from a config into the dataclass, with
errors that name the key path.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
import weakref
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field
from typing import Any, Literal, get_args, get_origin

from backtest.core.errors import StrategyError
from backtest.core.rules import Bet
from backtest.core.yamlfile import number_hint

MAIN_SIDES = ("player", "banker")

#: an amount of money in a strategy's parameters (a stake, say): a float that
#: is 0 or at least a cent, since stakes are whole cents and an amount under a
#: cent in a config is a typing slip
Money = typing.NewType("Money", float)


class FrozenDict(dict):  # type: ignore[type-arg]
    """A mapping parameter as its Params holds it: a dict that cannot be
    changed (a strategy that changed its own parameters would play another
    system, and every seat and session shares one Params). It compares, prints
    and serialises as the dict it is, hashes by its items, and pickles."""

    def _frozen(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "strategy parameters cannot be changed: build new Params instead (dataclasses.replace)"
        )

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _frozen  # type: ignore
    __ior__ = _frozen  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple[type, tuple[dict[Any, Any]]]:
        return FrozenDict, (dict(self),)

    def __repr__(self) -> str:
        return dict.__repr__(self)


def param(
    default: Any,
    help: str,
    *,
    min: float | None = None,
    max: float | None = None,
    exclusive_min: bool = False,
) -> Any:
    """A dataclass field with its help text and bounds."""
    meta = {"help": help, "min": min, "max": max, "exclusive_min": exclusive_min}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class CommonParams:
    """What every built-in strategy shares: its behaviour at the table's edges."""

    on_max: Literal["reset", "cap"] = param(
        "reset",
        "when a stake exceeds the table maximum: `reset` the progression to its "
        "first stake, or `cap` the stake at the maximum",
    )
    on_bankroll: Literal["stop", "all-in"] = param(
        "stop",
        "when the stakes exceed the bankroll: `stop` (the session is ruined) or "
        "`all-in` (bet what is left)",
    )
    on_push: Literal["stand", "reset"] = param(
        "stand",
        "what a push (a tie under Player/Banker) does to the progression: "
        "`stand` still, or `reset` it",
    )
    side_bets: dict[str, Money] = param(
        {}, "flat side bets placed beside every main bet, e.g. {tie: 1, player_pair: 1}"
    )

    def __post_init__(self) -> None:
        check_params(self)


_WHOLE_LIMIT = 2**53


def _digits(n: int) -> int:
    """About how many decimal digits a (possibly huge) integer has."""
    return int(n.bit_length() * 0.30103) + 1


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return " or ".join(repr(a) for a in get_args(tp))
    if origin in (list, tuple):
        return (
            f"a list of {_type_name(get_args(tp)[0]).removeprefix('a ')}s"
            if get_args(tp)
            else "a list"
        )
    if origin is dict:
        return "a mapping"
    if tp in (int, float):
        return "a number" if tp is float else "a whole number"
    if tp is str:
        return "a name"
    if tp is Money:
        return "an amount"
    return getattr(tp, "__name__", str(tp))


_HINTS: weakref.WeakKeyDictionary[type, dict[str, Any]] = weakref.WeakKeyDictionary()


def _hints(cls: type) -> dict[str, Any]:
    """The class's resolved annotations, worked out once a class (a sweep
    checks each cell's parameters, and resolving them is most of the cost)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _coerce(value: Any, tp: Any, path: str) -> Any:
    """Check `value` against the annotation `tp`; return it in canonical form."""
    origin = get_origin(tp)
    if origin is typing.Union or (
        origin is not None and str(origin) == "<class 'types.UnionType'>"
    ):
        args = get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], path)
    if origin is Literal:
        choices = get_args(tp)
        if value not in choices:
            close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise StrategyError(
                f"{path}: {value!r} is not allowed; expected "
                f"{' or '.join(repr(c) for c in choices)}{hint}"
            )
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise StrategyError(f"{path}: expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if not (isinstance(value, float) and value.is_integer()):
                raise StrategyError(f"{path}: expected a whole number, got {value!r}")
            value = int(value)
        # the compiled strategies read their parameters as floats: exact up to 2**53
        if abs(value) > _WHOLE_LIMIT:
            raise StrategyError(
                f"{path}: expected a whole number of at most {_WHOLE_LIMIT:,} "
                f"in size, got one of about {_digits(value)} digits"
            )
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise StrategyError(f"{path}: expected a number, got {value!r}{number_hint(value)}")
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float
            raise StrategyError(
                f"{path}: expected a finite number, got one of about {_digits(int(value))} digits"
            ) from None
        if number != number or number in (float("inf"), float("-inf")):
            raise StrategyError(f"{path}: expected a finite number, got {value!r}")
        return number
    if tp is str:
        if not isinstance(value, str):
            raise StrategyError(f"{path}: expected text, got {value!r}")
        return value
    if tp is Money:
        return _amount(value, path)
    if origin in (list, tuple) or tp in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise StrategyError(f"{path}: expected a list, got {value!r}")
        (inner,) = get_args(tp)[:1] or (Any,)
        # held as a tuple: Params are frozen all the way down
        return tuple(_coerce(v, inner, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict or tp is dict:
        if not isinstance(value, Mapping):
            raise StrategyError(f"{path}: expected a mapping, got {value!r}")
        kt, vt = get_args(tp) or (Any, Any)
        return FrozenDict(
            {_coerce(k, kt, f"{path}"): _coerce(v, vt, f"{path}.{k}") for k, v in value.items()}
        )
    # any other annotation (Any, a Sequence, a class of the strategy's own):
    # the value as it is, but frozen, so no session can change the next one's
    return _frozen(value)


def _amount(value: Any, path: str, zero: bool = True) -> float:
    """A `Money` value: a number, not negative, and 0 (if `zero`) or at least a cent."""
    amount = _coerce(value, float, path)
    if amount < 0:
        raise StrategyError(f"{path}: an amount cannot be negative, got {value!r}")
    if 0 < amount < 0.01 or (amount == 0 and not zero):
        raise StrategyError(
            f"{path}: must be at least 0.01{' (or 0)' if zero else ''}: stakes "
            f"are whole cents, got {value!r}"
        )
    return amount


def _frozen(value: Any) -> Any:
    """`value` with every list in it a tuple, every mapping a FrozenDict and
    every set a frozenset."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return FrozenDict({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (set, frozenset)):
        return frozenset(_frozen(v) for v in value)
    return value


def check_params(params: Any, path: str = "params") -> None:
    """Validate a Params instance in place: types, bounds, bet names."""
    hints = _hints(type(params))
    for f in dataclasses.fields(params):
        raw = getattr(params, f.name)
        where = f"{path}.{f.name}"
        if (
            hints[f.name] is Money
            and f.metadata.get("min") == 0
            and f.metadata.get("exclusive_min")
        ):
            _amount(raw, where, zero=False)  # says what is allowed: no "(or 0)"
        value = _coerce(raw, hints[f.name], where)
        lo, hi = f.metadata.get("min"), f.metadata.get("max")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if lo is not None and (value <= lo if f.metadata.get("exclusive_min") else value < lo):
                op = "more than" if f.metadata.get("exclusive_min") else "at least"
                raise StrategyError(f"{where}: must be {op} {lo}, got {value!r}")
            if hi is not None and value > hi:
                raise StrategyError(f"{where}: must be at most {hi}, got {value!r}")
        if f.name in ("side_bets", "bets") and isinstance(value, dict):
            value = _check_bet_mapping(value, where)
        object.__setattr__(params, f.name, value)


def _check_bet_mapping(value: dict[str, float], where: str) -> FrozenDict:
    names = [b.value for b in Bet]
    out = {}
    for k, v in value.items():
        if k not in names:
            close = difflib.get_close_matches(str(k), names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise StrategyError(f"{where}: unknown bet {k!r}{hint}; bets are {', '.join(names)}")
        out[k] = _coerce(v, Money, f"{where}.{k}")
    return FrozenDict(out)


def build_params(cls: type, data: Mapping[str, Any] | None, path: str = "params") -> Any:
    """The Params dataclass `cls` from a config mapping; unknown keys fail with suggestions."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise StrategyError(
            f"{path}: the strategy's Params must be a dataclass (a subclass of "
            f"strategies.params.CommonParams, say), got {cls!r}"
        )
    if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        # a strategy that could change its own parameters would play another system
        raise StrategyError(
            f"{path}: the strategy's Params, {cls.__name__}, must be a frozen "
            "dataclass: write @dataclass(frozen=True)"
        )
    if data is not None and not isinstance(data, Mapping):
        raise StrategyError(f"{path}: expected a mapping of parameters (name: value), got {data!r}")
    data = dict(data or {})
    names = [f.name for f in dataclasses.fields(cls)]
    for key in data:
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=2)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise StrategyError(
                f"{path}: unknown parameter {key!r}{hint} (parameters: {', '.join(names)})"
            )
    obj: Any = object.__new__(cls)
    for f in dataclasses.fields(cls):
        if f.name in data:
            v = data[f.name]
        elif f.default is not MISSING:
            v = f.default
        elif f.default_factory is not MISSING:
            v = f.default_factory()
        else:
            raise StrategyError(f"{path}: missing required parameter {f.name!r}")
        object.__setattr__(obj, f.name, v)
    check_params(obj, path)
    if hasattr(obj, "validate"):
        obj.validate(path)
    return obj


def describe_params(cls: type) -> list[tuple[str, str, Any, str]]:
    """(name, type, default, help) for each parameter, for `backtest strategies`."""
    hints = _hints(cls)
    rows = []
    for f in dataclasses.fields(cls):
        default = (
            f.default
            if f.default is not MISSING
            else (f.default_factory() if f.default_factory is not MISSING else None)
        )
        rows.append((f.name, _type_name(hints[f.name]), default, f.metadata.get("help", "")))
    return rows

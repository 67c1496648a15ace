"""Parameter dataclasses: declared once, validated from YAML, listed by the CLI.

A strategy's parameters are a frozen dataclass, frozen all the way down:
validation turns every list in them into a tuple and every mapping into a
`FrozenDict`, whatever the field's annotation says (or leaves unsaid). An
amount of money is annotated `Money`: it is 0 or at least a cent. Each
field carries its help text and bounds in `metadata` (see `param`); with
its annotation they make the field's `backtest.core.fields.Check`
(`check_for`), the same checks a config's sections and the rules use.
`build_params` turns a mapping from a config into the dataclass, with
errors that name the key path.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
import weakref
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field
from typing import Any, Literal, get_args, get_origin

from backtest.core.errors import StrategyError, shown
from backtest.core.fields import Check, did_you_mean
from backtest.core.rules import Bet

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


#: the compiled strategies read their parameters as floats: whole numbers are exact up to 2**53
_WHOLE_LIMIT = 2**53

#: the check of a parameter by its annotation, before its own bounds (see `check_for`)
_CHECKS: dict[Any, Check] = {
    bool: Check("flag"),
    int: Check("whole", limit=_WHOLE_LIMIT),
    float: Check("number"),
    str: Check("text"),
    Money: Check("money"),
}


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin in (list, tuple):
        return (
            f"a list of {_type_name(get_args(tp)[0]).removeprefix('a ')}s"
            if get_args(tp)
            else "a list"
        )
    if origin is dict:
        return "a mapping"
    check = _leaf_check(tp)
    if check is not None:
        return "a name" if tp is str else check.expected()
    return getattr(tp, "__name__", str(tp))


def _leaf_check(tp: Any) -> Check | None:
    """The check of a value annotated `tp`, when it is one value (not a list or mapping)."""
    if get_origin(tp) is Literal:
        return Check("choice", choices=get_args(tp))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):  # one of its values (`Bet`, say)
        return Check("choice", choices=tuple(m.value for m in tp))
    return _CHECKS.get(tp)


def check_for(tp: Any, meta: Mapping[str, Any]) -> Check | None:
    """The one check of a parameter annotated `tp` whose field says `meta`
    (`param`'s bounds), or None for a list, a mapping or any other type."""
    check = _leaf_check(_unwrap(tp)[0])
    if check is None or check.kind not in ("whole", "number", "money"):
        return check
    lo, hi = meta.get("min"), meta.get("max")
    return dataclasses.replace(
        check, minimum=lo, maximum=hi, exclusive=bool(meta.get("exclusive_min"))
    )


_HINTS: weakref.WeakKeyDictionary[type, dict[str, Any]] = weakref.WeakKeyDictionary()


def _hints(cls: type) -> dict[str, Any]:
    """The class's resolved annotations, worked out once a class (a sweep
    checks each cell's parameters, and resolving them is most of the cost)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _unwrap(tp: Any) -> tuple[Any, bool]:
    """`tp` without `| None`, and whether it took None."""
    origin = get_origin(tp)
    if origin is typing.Union or (
        origin is not None and str(origin) == "<class 'types.UnionType'>"
    ):
        args = get_args(tp)
        inner = [a for a in args if a is not type(None)]
        return inner[0], type(None) in args
    return tp, False


def _coerce(value: Any, tp: Any, path: str, check: Check | None = None) -> Any:
    """Check `value` against the annotation `tp` (and `check`, its field's
    own, when given); return it in canonical form."""
    tp, takes_none = _unwrap(tp)
    if value is None and takes_none:
        return None
    check = check or _leaf_check(tp)
    if check is not None:
        return check.read(value, path, StrategyError)
    origin = get_origin(tp)
    if origin in (list, tuple) or tp in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise StrategyError(f"{path}: expected a list, got {shown(value, 60)}")
        (inner,) = get_args(tp)[:1] or (Any,)
        # held as a tuple: Params are frozen all the way down
        return tuple(_coerce(v, inner, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict or tp is dict:
        if not isinstance(value, Mapping):
            raise StrategyError(f"{path}: expected a mapping, got {shown(value, 60)}")
        kt, vt = get_args(tp) or (Any, Any)
        return FrozenDict(
            {_coerce(k, kt, f"{path}"): _coerce(v, vt, f"{path}.{k}") for k, v in value.items()}
        )
    # any other annotation (Any, a Sequence, a class of the strategy's own):
    # the value as it is, but frozen, so no session can change the next one's
    return _frozen(value)


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
        where = f"{path}.{f.name}"
        value = _coerce(
            getattr(params, f.name), hints[f.name], where, check_for(hints[f.name], f.metadata)
        )
        if f.name in ("side_bets", "bets") and isinstance(value, dict):
            value = _check_bet_mapping(value, where)
        object.__setattr__(params, f.name, value)


def _check_bet_mapping(value: dict[str, float], where: str) -> FrozenDict:
    names = [b.value for b in Bet]
    out = {}
    for k, v in value.items():
        if k not in names:
            raise StrategyError(
                f"{where}: unknown bet {k!r}{did_you_mean(k, names, 1)} (bets: {', '.join(names)})"
            )
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
        raise StrategyError(
            f"{path}: expected a mapping of parameters (name: value), got {shown(data, 60)}"
        )
    data = dict(data or {})
    names = [f.name for f in dataclasses.fields(cls)]
    for key in data:
        if key not in names:
            raise StrategyError(
                f"{path}: unknown parameter {key!r}{did_you_mean(key, names)} "
                f"(parameters: {', '.join(names)})"
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

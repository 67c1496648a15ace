"""A run config's seats: each one's strategy and parameters, and its label.

`seats` checks the `seats:` list of a config (the strategy's name through
`strategies.registry`, its parameters through its `Params`, each label
unique); `build_strategies` makes fresh strategy objects from them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backtest.core.errors import (
    BacktestError,
    ConfigError,
    StrategyError,
    describe_raised,
    shown,
)
from backtest.core.fields import Check, Section

if TYPE_CHECKING:
    from backtest.run.config_spec import RunConfig


@dataclass(frozen=True)
class SeatSpec:
    label: str
    strategy: str
    params: Any
    #: the folder a `file.py:Class` strategy is looked for in after the current one
    base_dir: Path = Path(".")


#: a seat's keys; its `params` are its strategy's, checked by its `Params`
SEAT_KEYS = ("strategy", "name", "params")
STRATEGY = Check(
    "text", None, nonempty=True, required_hint=" (run `backtest strategies` to list them)"
)
LABEL = Check("text", None, optional=True, one_line=True)


def seats(data: Any, source: str, base_dir: Path) -> tuple[SeatSpec, ...]:
    """The `seats:` list of a config, checked."""
    if not isinstance(data, list) or not data:
        raise ConfigError(
            f"{source}: seats: give a list of one or more seats, each with a "
            f"`strategy` (run `backtest strategies` to list them), got {shown(data, 60)}"
        )
    from strategies import registry

    out = []
    # a seat's label names its rows in every frame, so labels are unique: a
    # name given twice is refused, and a seat without one is called by its
    # strategy, numbered when that is taken ("flat #3", or the next free number)
    # (compared as they read: Unicode NFC, spaces around them stripped)
    named: dict[str, int] = {}
    for i, item in enumerate(data):
        given = item.get("name") if isinstance(item, dict) else None
        if isinstance(given, str) and given:
            same = unicodedata.normalize("NFC", given).strip()
            if same in named:
                first = data[named[same]]["name"]
                said = repr(given) if first == given else ascii(given)
                alike = "" if first == given else f" as it reads ({ascii(first)})"
                raise ConfigError(
                    f"{source}: seats[{i}].name: {said} is already the name of "
                    f"seats[{named[same]}]{alike}; give each seat its own name"
                )
            named[same] = i
    labels = set(named)
    for i, item in enumerate(data):
        path = f"seats[{i}]"
        sec = Section(item, path, source, ConfigError)
        sec.check_keys(SEAT_KEYS)
        strategy = sec.read("strategy", STRATEGY)
        params = sec.data.get("params")
        try:
            cls = registry.get(strategy, base_dir)
            build(cls, params, f"{path}.params")
        except StrategyError as exc:
            message = str(exc)
            if not message.startswith(path):
                message = f"{path}.strategy: {message}"
            raise ConfigError(f"{source}: {message}") from None
        label = sec.read("name", LABEL)
        if not label:
            # a class of the user's (module:Class, file.py:Class): by its own name
            own = getattr(cls, "name", None)
            label = base = (
                own
                if ":" in strategy and isinstance(own, str) and own.isprintable() and own
                else strategy
            )
            number = i + 1
            while label in labels:
                label = f"{base} #{number}"
                number += 1
            labels.add(label)
        out.append(SeatSpec(label, strategy, dict(params or {}), base_dir))
    return tuple(out)


def build(cls: Any, params: Any, path: str) -> Any:
    """A strategy object from its class and config params; an error its own
    code raises (a user's `__init__` or `Params.validate`) is a StrategyError."""
    try:
        return cls.from_config(params, path)
    except BacktestError:
        raise
    except (Exception, SystemExit) as exc:  # a user's class: say what and where, in one line
        raise StrategyError(f"{path}: making the strategy {describe_raised(exc)}") from None


def build_strategies(config: RunConfig) -> list[Any]:
    """Fresh strategy objects for each seat of a RunConfig (validated again; cheap)."""
    from strategies import registry

    out = []
    for i, seat in enumerate(config.seats):
        try:
            strategy = build(
                registry.get(seat.strategy, seat.base_dir), seat.params, f"seats[{i}].params"
            )
        except BacktestError as exc:
            raise ConfigError(f"{config.source}: {exc}") from None
        try:
            strategy.at_table(config.rules)
        except BacktestError:
            raise
        except (Exception, SystemExit) as exc:  # a user's class: one line
            raise StrategyError(
                f"{config.source}: seats[{i}] ({seat.label}): at_table() {describe_raised(exc)}"
            ) from None
        out.append(strategy)
    return out

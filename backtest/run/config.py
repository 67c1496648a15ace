"""YAML run configs into typed, validated specs.

Every config is read with `yamlfile.load` (`yaml.safe_load`, after refusing a
key given twice) and checked whole before anything runs. An error names the
file and the key path (`seats[1].params.multiplier`), the bad value, and what
is allowed; unknown keys fail with suggestions.

A run config::

    seed: 1
    sessions: 1000
    rules: commission            # a preset, a rules YAML file, or a mapping
    shoe: {decks: 8, cut_card: 14, burn: true}
    # or recorded shoes instead of `shoe`:
    # shoes: {file: data/generated-8deck-seed1.txt, decks: 8, loop: false}
    session: {bankroll: 1000, win_goal: 200, stop_loss: null, max_shoes: 1}
    table: {min: 10, max: 1000, limits: {tie: {min: 1, max: 100}}}
    seats:
      - strategy: flat
        params: {bets: {banker: 10}}
      - strategy: martingale
        name: Martingale on Banker
        params: {bet: banker, base: 10}
"""

from __future__ import annotations

import copy
import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from backtest.core import yamlfile
from backtest.core.errors import (
    BacktestError,
    ConfigError,
    RulesError,
    ShoeFormatError,
    StrategyError,
    UsageError,
    describe_raised,
    shown,
    shown_count,
)
from backtest.core.rules import Bet, Rules, load_rules
from backtest.shoes.shoe import MAX_DECKS, ShoeSpec

#: no amount of money in ticks (cents times the money denominator) reaches
#: this: it would not fit the 64-bit integers money is counted in
MONEY_LIMIT = 2**62
#: no amount of money reaches this, in currency (its cents reach MONEY_LIMIT)
MONEY_MAX = MONEY_LIMIT / 100

#: the most sessions a run, or hands or shoes a session, may be given
MAX_SESSIONS = 10**9


def ticks(amount: float, den: int) -> int:
    """An amount of money in ticks: whole cents times the money denominator."""
    return round(amount * 100) * den


#: a session's bankroll, when its config gives none
DEFAULT_BANKROLL = 1000.0

TOP_KEYS = (
    "name",
    "description",
    "seed",
    "sessions",
    "rules",
    "shoe",
    "shoes",
    "session",
    "table",
    "seats",
    "baseline",
)


@dataclass(frozen=True)
class SessionRules:
    """When a session starts and stops (money in currency units)."""

    bankroll: float = DEFAULT_BANKROLL
    stop_loss: float | None = None
    win_goal: float | None = None
    max_hands: int | None = None
    max_shoes: int | None = 1


@dataclass(frozen=True)
class TableLimits:
    """Minimum and maximum stake per bet, in currency units."""

    minimum: Mapping[Bet, float] = field(default_factory=lambda: {b: 1.0 for b in Bet})
    maximum: Mapping[Bet, float] = field(default_factory=lambda: {b: 1_000_000.0 for b in Bet})


@dataclass(frozen=True)
class RecordedShoes:
    """Recorded shoes from a file; sessions take them in order."""

    path: Path
    decks: int = 8
    loop: bool = False
    burn: bool = False
    #: a CSV's or Parquet file's columns for ours, as (ours, theirs) pairs
    columns: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SeatSpec:
    label: str
    strategy: str
    params: Mapping[str, Any]
    #: the folder a `file.py:Class` strategy is looked for in after the current one
    base_dir: Path = Path(".")


@dataclass(frozen=True)
class RunConfig:
    """A validated run config. `raw` is the mapping it came from (with
    overrides applied), which is what worker processes rebuild it from."""

    name: str
    seed: int
    sessions: int | None
    rules: Rules
    shoe: ShoeSpec | None
    recorded: RecordedShoes | None
    session: SessionRules
    limits: TableLimits
    seats: tuple[SeatSpec, ...]
    raw: Mapping[str, Any]
    base_dir: Path
    source: str
    #: the seat the others are compared with, on the same sessions (the first by default)
    baseline: str | None = None


class _Section:
    """A mapping being read, remembering its path for error messages."""

    def __init__(self, data: Any, path: str, source: str) -> None:
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"{source}: {path or 'the config'}: expected a mapping, got {shown_short(data)}"
            )
        self.data = dict(data)
        self.path = path
        self.source = source

    def where(self, key: str | int) -> str:
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}: {self.where(key)}: {message}")

    def check_keys(self, allowed: tuple[str, ...]) -> None:
        for key in self.data:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=2)
                hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
                raise self.fail(str(key), f"unknown key{hint} (allowed: {', '.join(allowed)})")

    def number(
        self,
        key: str,
        default: float | None,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        positive: bool = False,
        whole: bool = False,
        optional: bool = False,
        money: bool = False,
    ) -> Any:
        """A number under `key`; `money`: an amount, at least one cent when positive."""
        value = self.data.get(key, default)
        if value is None:
            if optional:
                return None
            raise self.fail(key, "is required")
        kind = "a whole number" if whole else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(
                key, f"expected {kind}, got {shown_short(value)}{yamlfile.number_hint(value)}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(key, f"expected a finite number, got {shown_short(value)}")
        if whole and isinstance(value, float) and not value.is_integer():
            raise self.fail(key, f"expected {kind}, got {shown_short(value)}")
        if positive and value <= 0:
            raise self.fail(key, f"must be more than 0, got {shown_short(value)}")
        if minimum is not None and value < minimum:
            raise self.fail(key, f"must be at least {minimum:g}, got {shown_short(value)}")
        if maximum is not None and value > maximum:
            top = f"{int(maximum):,}" if float(maximum).is_integer() else f"{maximum:g}"
            raise self.fail(key, f"must be at most {top}, got {shown_short(value)}")
        if money and 0 < value < 0.01:
            raise self.fail(
                key,
                f"must be at least 0.01: money is counted in whole cents, got {shown_short(value)}",
            )
        if money and value >= MONEY_MAX:
            # (the run's own check, with the rules and the table, may ask for less)
            raise self.fail(
                key,
                f"must be below {MONEY_MAX:.3g}: money is counted in whole "
                f"cents in 64-bit integers, got {shown_short(value)}",
            )
        return int(value) if whole else float(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {shown_short(value)}")
        return value

    def text(self, key: str, default: str | None) -> str | None:
        value = self.data.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.fail(key, f"expected text, got {shown_short(value)}")
        return value


def shown_short(value: Any) -> str:
    """A value as a message quotes it, cut to 60 characters."""
    return shown(value, 60)


def read_yaml(path: Path) -> Any:
    """Parse a YAML file, with errors that name the file and the line."""
    # the file named on the command line: a usage error (exit 2)
    if path.is_dir():
        raise UsageError(f"config file {path} is a directory, not a file")
    if not path.is_file():
        raise UsageError(f"config file {path} does not exist")
    try:
        return yamlfile.load(yamlfile.read_text(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read as UTF-8 text: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}:{yamlfile.describe(exc)}") from None


def load_config(
    path: str | Path,
    overrides: Mapping[str, Any] | None = None,
    remove: Sequence[str] = (),
    merge: Sequence[str] = (),
) -> RunConfig:
    """Read and validate a run config file; `overrides` replace top-level keys
    (None values are ignored; for the keys in `merge`, an override mapping
    updates the file's mapping) and the keys in `remove` are dropped. With
    `shoe` dropped for a `shoes` file, the shoe's decks are the file's unless
    `shoes` says them, and the config's `sessions` goes too: the run plays
    the whole file unless told how many sessions."""
    path = Path(path)
    data = read_yaml(path)
    if data is None:
        raise ConfigError(
            f"{path}: the file is empty; a run config is a mapping of keys "
            f"({', '.join(TOP_KEYS)}): see configs/verdict.yaml"
        )
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{path}: a run config is a mapping of keys "
            f"({', '.join(TOP_KEYS)}), got {shown_short(data)}"
        )
    sweep_keys = [k for k in ("grid", "zip") if k in data]
    if sweep_keys:
        raise ConfigError(
            f"{path}: this is a sweep (it has `{sweep_keys[0]}`), not a run "
            f"config: run it with `backtest sweep {path} --out DIR`"
        )
    merged = {k: v for k, v in data.items() if k not in remove}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key in merge and isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            kept = dict(merged[key])
            if key == "shoes" and "decks" not in value and _declares_decks(value.get("file")):
                kept.pop("decks", None)  # they were the config's own file's
            value = {**kept, **value}
        merged[key] = value
    shoe, shoes = data.get("shoe"), merged.get("shoes")
    if "shoe" in remove and shoe is not None and shoes is not None:
        # generated shoes replaced by recorded ones (run --shoes): of the same
        # decks, and the whole file (the config's sessions were for generated
        # shoes, which never run out)
        if (
            isinstance(shoe, Mapping)
            and "decks" in shoe
            and isinstance(shoes, Mapping)
            and "decks" not in shoes
            and not _declares_decks(shoes.get("file"))
        ):
            merged["shoes"] = {**shoes, "decks": shoe["decks"]}
        merged.pop("sessions", None)
    try:
        return parse_config(merged, base_dir=path.parent, source=str(path))
    except ConfigError as exc:
        given = {k for k, v in (overrides or {}).items() if v is not None}
        raise with_line(exc, path, given) from None


def _declares_decks(file: Any) -> bool:
    """Whether a shoe file says how many decks its shoes were dealt from."""
    from backtest.shoes.recorded import declared_decks

    return isinstance(file, str) and declared_decks(file) is not None


_Error = TypeVar("_Error", bound=BacktestError)


def with_line(exc: _Error, path: Path, overridden: set[str]) -> _Error:
    """`exc` ("FILE: KEY PATH: what is wrong") with the line of the key it
    names, or of the nearest key above it that the file has; as it was for a
    key the file does not hold, or one an override replaced."""
    head = f"{path}: "
    text = str(exc)
    if not text.startswith(head):
        return exc
    rest = text[len(head) :]
    key = re.split(r"[: ]", rest, maxsplit=1)[0]
    if not key or re.split(r"[.\[]", key, maxsplit=1)[0] in overridden:
        return exc
    try:
        lines = yamlfile.key_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return exc
    while key and key not in lines:
        key = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", key) if re.search(r"[.\[]", key) else ""
    if not key:
        return exc
    return type(exc)(f"{path}: line {lines[key]}: {rest}")


def plain_copy(value: Any) -> Any:
    """A deep copy of what YAML reads (mappings, lists and scalars), quicker
    than `copy.deepcopy` for it; anything else is deep-copied as usual.

    >>> a = {"seats": [{"params": {"base": 10}}]}
    >>> b = plain_copy(a); b["seats"][0]["params"]["base"] = 20
    >>> a["seats"][0]["params"]["base"]
    10
    """
    kind = type(value)
    if kind is dict:
        return {k: plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [plain_copy(v) for v in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def _memo(memo: dict[Any, Any] | None, key: tuple[Any, ...], make: Any) -> Any:
    """`make()`, or what it gave for the same `key` before (with a `memo`:
    a sweep's cells share most of their config, which is checked once)."""
    if memo is None:
        return make()
    import json

    full = (*key[:-1], json.dumps(key[-1], sort_keys=True, default=repr))
    if full not in memo:
        memo[full] = make()
    return memo[full]


def parse_config(
    data: Mapping[str, Any],
    base_dir: Path = Path("."),
    source: str = "config",
    memo: dict[Any, Any] | None = None,
) -> RunConfig:
    """Validate a config mapping into a RunConfig (nothing is run). `memo`,
    a dict kept between calls, checks a section seen before (the same
    settings, folder and file) only once."""
    raw = plain_copy(dict(data))
    top = _Section(raw, "", source)
    top.check_keys(TOP_KEYS)
    seed = top.number("seed", 1, minimum=0, whole=True)
    sessions = top.number("sessions", None, minimum=1, whole=True, optional=True)
    if sessions is not None and sessions > MAX_SESSIONS:
        raise top.fail(
            "sessions",
            f"at most {MAX_SESSIONS:,}, got {shown_count(sessions)}; "
            "split a larger run into runs with other seeds",
        )
    name = top.text("name", None) or Path(source).stem
    top.text("description", None)  # free text, but text

    if "rules" in raw and raw["rules"] is None:
        raise top.fail(
            "rules",
            "is empty: give a preset (commission, no-commission, ez, ...), "
            "a rules file, or a mapping; leave the key out for commission",
        )
    try:
        rules = _memo(
            memo,
            ("rules", str(base_dir), raw.get("rules", "commission")),
            lambda: load_rules(_resolve_rules(raw.get("rules", "commission"), base_dir)),
        )
    except RulesError as exc:
        raise ConfigError(f"{source}: rules: {str(exc).removeprefix('rules: ')}") from None

    if "shoe" in raw and "shoes" in raw:
        raise top.fail(
            "shoes", "give either `shoe` (generated shoes) or `shoes` (a recorded file), not both"
        )
    shoe: ShoeSpec | None = None
    recorded: RecordedShoes | None = None
    if "shoes" in raw:
        sec = _Section(raw["shoes"], "shoes", source)
        sec.check_keys(("file", "decks", "loop", "burn", "columns"))
        file = sec.text("file", None)
        if not file:
            raise sec.fail("file", "is required: the recorded shoe file to play")
        fpath = Path(file) if Path(file).is_absolute() else base_dir / file
        if not fpath.is_file() and Path(file).is_file():
            fpath = Path(file)
        if not fpath.is_file():
            if fpath.is_dir() or Path(file).is_dir():
                raise sec.fail(
                    "file", f"{file} is a directory, not a shoe file (give one file of shoes)"
                )
            if fpath.exists():
                raise sec.fail(
                    "file",
                    f"{file} is not a regular file (a device or a pipe); give a file of shoes",
                )
            raise sec.fail("file", f"file {file} does not exist (looked in {fpath.parent})")
        decks = sec.number("decks", None, minimum=1, maximum=MAX_DECKS, whole=True, optional=True)
        from backtest.shoes.recorded import shoe_decks

        try:  # unless given, as many as the file says (else 8)
            decks = shoe_decks(fpath, decks, "shoes.decks")
        except ShoeFormatError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        columns = sec.data.get("columns") or {}
        if not isinstance(columns, Mapping):
            raise sec.fail(
                "columns",
                "expected a mapping of our columns to the file's, such "
                f"as {{winner: Result, shoe: Shoe}}, got {shown(columns)}",
            )
        from backtest.shoes.recorded import check_columns

        try:
            check_columns(columns, f"{source}: shoes.columns")
        except UsageError as exc:
            raise ConfigError(str(exc)) from None
        recorded = RecordedShoes(
            fpath,
            decks,
            sec.flag("loop", False),
            sec.flag("burn", False),
            tuple((str(k), str(v)) for k, v in columns.items()),
        )
    else:
        sec = _Section(raw.get("shoe"), "shoe", source)
        sec.check_keys(("decks", "cut_card", "extra_hands", "burn", "cut"))
        cut = sec.data.get("cut")
        if cut is not None and cut != "random":
            cut = sec.number("cut", None, minimum=0, whole=True)
        try:
            shoe = ShoeSpec(
                decks=sec.number("decks", 8, minimum=1, whole=True),
                cut_card=sec.number("cut_card", 14, minimum=0, whole=True),
                extra_hands=sec.number("extra_hands", 1, minimum=0, whole=True),
                burn=sec.flag("burn", True),
                cut=cut,
            )
        except RulesError as exc:
            raise ConfigError(f"{source}: {str(exc).replace('shoe: ', 'shoe.')}") from None

    sec = _Section(raw.get("session"), "session", source)
    sec.check_keys(("bankroll", "stop_loss", "win_goal", "max_hands", "max_shoes"))
    session = SessionRules(
        bankroll=sec.number("bankroll", DEFAULT_BANKROLL, positive=True, money=True),
        stop_loss=sec.number("stop_loss", None, positive=True, optional=True, money=True),
        win_goal=sec.number("win_goal", None, positive=True, optional=True, money=True),
        # (a session deals at most 2**20 shoes: larger numbers only mean "no end")
        max_hands=sec.number(
            "max_hands", None, minimum=1, maximum=MAX_SESSIONS, whole=True, optional=True
        ),
        max_shoes=sec.number(
            "max_shoes",
            1 if "max_hands" not in sec.data else None,
            minimum=1,
            maximum=MAX_SESSIONS,
            whole=True,
            optional=True,
        ),
    )
    if session.max_hands is None and session.max_shoes is None:
        raise sec.fail("max_shoes", "a session needs an end: give max_shoes or max_hands")

    # (the rules' object is the memo's own: one for each rules setting)
    limits = _memo(
        memo,
        ("table", source, id(rules), raw.get("table")),
        lambda: _limits(raw.get("table"), source, rules),
    )
    seats = _memo(
        memo,
        ("seats", source, str(base_dir), raw.get("seats")),
        lambda: _seats(raw.get("seats"), source, base_dir),
    )
    baseline = top.text("baseline", None)
    labels = [seat.label for seat in seats]
    if baseline is not None and baseline not in labels:
        close = difflib.get_close_matches(baseline, labels, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise top.fail(
            "baseline",
            f"no seat is called {baseline!r}{hint}; the seats are "
            f"{', '.join(repr(x) for x in labels)}",
        )
    return RunConfig(
        name=name,
        seed=seed,
        sessions=sessions,
        rules=rules,
        shoe=shoe,
        recorded=recorded,
        session=session,
        limits=limits,
        seats=seats,
        raw=raw,
        base_dir=base_dir,
        source=source,
        baseline=baseline,
    )


def _resolve_rules(spec: Any, base_dir: Path) -> Any:
    if isinstance(spec, str) and spec.lower().endswith((".yaml", ".yml")):
        p = Path(spec)
        if not p.is_absolute() and not p.is_file() and (base_dir / p).is_file():
            return str(base_dir / p)
    return spec


def _limits(data: Any, source: str, rules: Rules) -> TableLimits:
    sec = _Section(data, "table", source)
    sec.check_keys(("min", "max", "limits"))
    lo = sec.number("min", 1.0, positive=True, money=True)
    hi = sec.number("max", 1_000_000.0, positive=True, money=True)
    if hi < lo:
        raise sec.fail("max", f"the table maximum {hi:g} is below the minimum {lo:g}")
    minimum = {b: lo for b in Bet}
    maximum = {b: hi for b in Bet}
    per = _Section(sec.data.get("limits"), "table.limits", source)
    names = tuple(b.value for b in Bet)
    per.check_keys(names)
    for key, value in per.data.items():
        bet = Bet(key)
        one = _Section(value, f"table.limits.{key}", source)
        one.check_keys(("min", "max"))
        minimum[bet] = one.number("min", minimum[bet], positive=True, money=True)
        maximum[bet] = one.number("max", maximum[bet], positive=True, money=True)
        if maximum[bet] < minimum[bet]:
            raise one.fail(
                "max", f"the maximum {maximum[bet]:g} is below the minimum {minimum[bet]:g}"
            )
    return TableLimits(minimum, maximum)


def _seats(data: Any, source: str, base_dir: Path) -> tuple[SeatSpec, ...]:
    if not isinstance(data, list) or not data:
        raise ConfigError(
            f"{source}: seats: give a list of one or more seats, each with a "
            f"`strategy` (run `backtest strategies` to list them), got {shown_short(data)}"
        )
    from strategies import registry

    seats = []
    # a seat's label names its rows in every frame, so labels are unique: a
    # name given twice is refused, and a seat without one is called by its
    # strategy, numbered when that is taken ("flat #3", or the next free number)
    named: dict[str, int] = {}
    for i, item in enumerate(data):
        given = item.get("name") if isinstance(item, dict) else None
        if isinstance(given, str) and given:
            if given in named:
                raise ConfigError(
                    f"{source}: seats[{i}].name: {given!r} is already the name of "
                    f"seats[{named[given]}]; give each seat its own name"
                )
            named[given] = i
    labels = set(named)
    for i, item in enumerate(data):
        path = f"seats[{i}]"
        sec = _Section(item, path, source)
        sec.check_keys(("strategy", "name", "params"))
        name = sec.text("strategy", None)
        if not name:
            raise sec.fail("strategy", "is required (run `backtest strategies` to list them)")
        try:
            cls = registry.get(name, base_dir)
            _build(cls, sec.data.get("params"), f"{path}.params")
        except StrategyError as exc:
            message = str(exc)
            if not message.startswith(path):
                message = f"{path}.strategy: {message}"
            raise ConfigError(f"{source}: {message}") from None
        label = sec.text("name", None)
        if label and not label.isprintable():
            raise sec.fail("name", f"must be one line of printable text, got {shown_short(label)}")
        if not label:
            # a class of the user's (module:Class, file.py:Class): by its own name
            own = getattr(cls, "name", None)
            label = base = (
                own if ":" in name and isinstance(own, str) and own.isprintable() and own else name
            )
            number = i + 1
            while label in labels:
                label = f"{base} #{number}"
                number += 1
            labels.add(label)
        seats.append(SeatSpec(label, name, dict(sec.data.get("params") or {}), base_dir))
    return tuple(seats)


def _build(cls: Any, params: Any, path: str) -> Any:
    """A strategy object from its class and config params; an error its own
    code raises (a user's `__init__` or `Params.validate`) is a StrategyError."""
    try:
        return cls.from_config(params, path)
    except BacktestError:
        raise
    except (Exception, SystemExit) as exc:  # a user's class: say what and where, in one line
        raise StrategyError(f"{path}: making the strategy {describe_raised(exc)}") from None


def build_strategies(config: RunConfig) -> list[Any]:
    """Fresh strategy objects for each seat (validated again; cheap)."""
    from strategies import registry

    out = []
    for i, seat in enumerate(config.seats):
        try:
            strategy = _build(
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

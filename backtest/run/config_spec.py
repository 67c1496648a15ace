"""A run config's settings, checked into typed specs (nothing is read from disk
but the files the settings name, and nothing is run).

Each section's fields are declared once, as `backtest.core.fields.Check`s
(`SESSION`, `TABLE`, `SHOE`, ...): their kinds, bounds and defaults; an
error names the key path (`session.bankroll`), the bad value and what is
allowed, and an unknown key fails with the close ones.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backtest.core.errors import (
    ConfigError,
    RulesError,
    ShoeFormatError,
    UsageError,
    shown,
    shown_count,
)
from backtest.core.fields import Check, Section, did_you_mean
from backtest.core.rules import Bet, Rules, load_rules
from backtest.run.config_seats import SeatSpec, seats
from backtest.shoes.shoe import MAX_DECKS, ShoeSpec

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


def _money(default: float | None) -> Check:
    """An amount of a config's: more than 0, whole cents, its cents a 64-bit integer."""
    return Check(
        "money", default, minimum=0, exclusive=True, bounded=True, optional=default is None
    )


#: the top level's own fields (the sections are read below)
TOP = {
    "seed": Check("whole", 1, minimum=0),
    "sessions": Check("whole", None, minimum=1, optional=True),
    "name": Check("text", None, optional=True),
    "description": Check("text", None, optional=True),  # free text, but text
    "baseline": Check("text", None, optional=True),
}
#: `session:` (a session ends at max_shoes, 1 unless max_hands is given)
SESSION = {
    "bankroll": _money(DEFAULT_BANKROLL),
    "stop_loss": _money(None),
    "win_goal": _money(None),
    # (a session deals at most 2**20 shoes: larger numbers only mean "no end")
    "max_hands": Check("whole", None, minimum=1, maximum=MAX_SESSIONS, optional=True),
    "max_shoes": Check("whole", 1, minimum=1, maximum=MAX_SESSIONS, optional=True),
}
#: `table:`, and each bet's own `min` and `max` under `table.limits`
TABLE = {
    "min": _money(1.0),
    "max": _money(1_000_000.0),
}
TABLE_KEYS = (*TABLE, "limits")
#: `shoe:` (generated shoes; `cut` is also "random")
SHOE: dict[str, Check] = {f.name: f.metadata["check"] for f in dataclasses.fields(ShoeSpec)}
#: `shoes:` (a recorded file; `columns` maps ours to the file's)
SHOES = {
    "file": Check("text", None, nonempty=True, required_hint=": the recorded shoe file to play"),
    "decks": Check("whole", None, minimum=1, maximum=MAX_DECKS, optional=True),
    "loop": Check("flag", False),
    "burn": Check("flag", False),
}
SHOES_KEYS = (*SHOES, "columns")


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


def shown_short(value: Any) -> str:
    """A value as a message quotes it, cut to 60 characters."""
    return shown(value, 60)


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
    top = Section(raw, "", source, ConfigError)
    top.check_keys(TOP_KEYS)
    seed = top.read("seed", TOP["seed"])
    sessions = top.read("sessions", TOP["sessions"])
    if sessions is not None and sessions > MAX_SESSIONS:
        raise top.fail(
            "sessions",
            f"at most {MAX_SESSIONS:,}, got {shown_count(sessions)}; "
            "split a larger run into runs with other seeds",
        )
    name = top.read("name", TOP["name"]) or Path(source).stem
    top.read("description", TOP["description"])

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
        recorded = _recorded(raw["shoes"], source, base_dir)
    else:
        shoe = _shoe(raw.get("shoe"), source)

    sec = Section(raw.get("session"), "session", source, ConfigError)
    sec.check_keys(SESSION)
    session = SessionRules(
        **{
            key: sec.read(
                key,
                check,
                None if key == "max_shoes" and "max_hands" in sec.data else check.default,
            )
            for key, check in SESSION.items()
        }
    )
    if session.max_hands is None and session.max_shoes is None:
        raise sec.fail("max_shoes", "a session needs an end: give max_shoes or max_hands")

    # (the rules' object is the memo's own: one for each rules setting)
    limits = _memo(
        memo,
        ("table", source, id(rules), raw.get("table")),
        lambda: _limits(raw.get("table"), source),
    )
    seated = _memo(
        memo,
        ("seats", source, str(base_dir), raw.get("seats")),
        lambda: seats(raw.get("seats"), source, base_dir),
    )
    baseline = top.read("baseline", TOP["baseline"])
    labels = [seat.label for seat in seated]
    if baseline is not None and baseline not in labels:
        raise top.fail(
            "baseline",
            f"no seat is called {baseline!r}{did_you_mean(baseline, labels, 1)} (the "
            f"seats are {', '.join(repr(x) for x in labels)})",
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
        seats=seated,
        raw=raw,
        base_dir=base_dir,
        source=source,
        baseline=baseline,
    )


def _recorded(data: Any, source: str, base_dir: Path) -> RecordedShoes:
    """`shoes:`, a recorded file, checked (that it is a file, its decks, its columns)."""
    sec = Section(data, "shoes", source, ConfigError)
    sec.check_keys(SHOES_KEYS)
    file = sec.read("file", SHOES["file"])
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
    decks = sec.read("decks", SHOES["decks"])
    from backtest.shoes.recorded import check_columns, shoe_decks

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
    try:
        check_columns(columns, f"{source}: shoes.columns")
    except UsageError as exc:
        raise ConfigError(str(exc)) from None
    return RecordedShoes(
        fpath,
        decks,
        sec.read("loop", SHOES["loop"]),
        sec.read("burn", SHOES["burn"]),
        tuple((str(k), str(v)) for k, v in columns.items()),
    )


def _shoe(data: Any, source: str) -> ShoeSpec:
    """`shoe:`, generated shoes, checked."""
    sec = Section(data, "shoe", source, ConfigError)
    sec.check_keys(SHOE)
    given = {key: sec.read(key, check) for key, check in SHOE.items() if key != "cut"}
    cut = sec.data.get("cut")
    if cut != "random":
        cut = sec.read("cut", SHOE["cut"])
    try:
        return ShoeSpec(**given, cut=cut)
    except RulesError as exc:  # a bound that depends on the decks: "shoe.cut_card: ..."
        raise ConfigError(f"{source}: {exc}") from None


def _resolve_rules(spec: Any, base_dir: Path) -> Any:
    if isinstance(spec, str) and spec.lower().endswith((".yaml", ".yml")):
        p = Path(spec)
        if not p.is_absolute() and not p.is_file() and (base_dir / p).is_file():
            return str(base_dir / p)
    return spec


def _limits(data: Any, source: str) -> TableLimits:
    sec = Section(data, "table", source, ConfigError)
    sec.check_keys(TABLE_KEYS)
    lo, hi = (sec.read(key, check) for key, check in TABLE.items())
    if hi < lo:
        raise sec.fail("max", f"the table maximum {hi:g} is below the minimum {lo:g}")
    minimum = {b: lo for b in Bet}
    maximum = {b: hi for b in Bet}
    per = Section(sec.data.get("limits"), "table.limits", source, ConfigError)
    per.check_keys(b.value for b in Bet)
    for key, value in per.data.items():
        bet = Bet(key)
        one = Section(value, f"table.limits.{key}", source, ConfigError)
        one.check_keys(TABLE)
        minimum[bet] = one.read("min", TABLE["min"], minimum[bet])
        maximum[bet] = one.read("max", TABLE["max"], maximum[bet])
        if maximum[bet] < minimum[bet]:
            raise one.fail(
                "max", f"the maximum {maximum[bet]:g} is below the minimum {minimum[bet]:g}"
            )
    return TableLimits(minimum, maximum)

"""YAML run configs into typed, validated specs.

Every config is read with `yamlfile.load` (`yaml.safe_load`, after refusing a
key given twice) and checked whole before anything runs. An error names the
file, the line and the key path (`seats[1].params.multiplier`), the bad
value, and what is allowed; unknown keys fail with suggestions. This module
reads the file and applies the command line's overrides (`--set KEY=VALUE`
at a key path, as a sweep sets its varied keys); how each setting
is checked is `config_spec`'s (and the seats' `config_seats`'), whose names
it also gives.

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

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml

from backtest.core import yamlfile
from backtest.core.errors import BacktestError, ConfigError, UsageError
from backtest.core.fields import MONEY_LIMIT, MONEY_MAX
from backtest.run.config_seats import SeatSpec, build_strategies
from backtest.run.config_spec import (
    DEFAULT_BANKROLL,
    MAX_SESSIONS,
    TOP_KEYS,
    RecordedShoes,
    RunConfig,
    SessionRules,
    TableLimits,
    parse_config,
    plain_copy,
    shown_short,
    ticks,
)
from backtest.run.paths import copied_along, set_path

__all__ = [
    "DEFAULT_BANKROLL",
    "MAX_SESSIONS",
    "MONEY_LIMIT",
    "MONEY_MAX",
    "TOP_KEYS",
    "RecordedShoes",
    "RunConfig",
    "SeatSpec",
    "SessionRules",
    "TableLimits",
    "apply_settings",
    "blame_settings",
    "build_strategies",
    "load_config",
    "parse_config",
    "plain_copy",
    "read_yaml",
    "shown_short",
    "ticks",
    "with_line",
]


def read_yaml(path: Path) -> Any:
    """Parse a YAML file, with errors that name the file and the line."""
    # the file named on the command line: a usage error (exit 2)
    if path.is_dir():
        raise UsageError(f"config file {path} is a directory, not a file")
    if not path.is_file() and not _a_pipe(path):
        raise UsageError(f"config file {path} {_what_it_is(path)}")
    try:
        return yamlfile.load(yamlfile.read_text(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read as UTF-8 text: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}:{yamlfile.describe(exc)}") from None


def _a_pipe(path: Path) -> bool:
    """Whether `path` is a pipe a shell made (`<(printf ...)`, /dev/stdin
    piped), read as a file is (within its cap): a named pipe is not."""
    import os
    import stat

    try:
        fifo = stat.S_ISFIFO(path.stat().st_mode)
    except OSError:
        return False
    return fifo and "pipe:[" in os.path.realpath(path)


def _what_it_is(path: Path) -> str:
    """What `path`, no file nor directory, is, in words."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return "does not exist"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a file; give the config's file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file; give the config's file"
    return "is not a file; give the config's file"


_Error = TypeVar("_Error", bound=BacktestError)

#: `--set KEY=VALUE` as read: (key path, value)
Setting = tuple[str, Any]


def apply_settings(data: Mapping[str, Any], settings: Sequence[Setting]) -> dict[str, Any]:
    """`data` with each setting's value at its key path, as a sweep sets a
    cell's (`data` itself unchanged); a list index it does not have is a
    usage error naming --set.

    >>> apply_settings({"session": {"bankroll": 10}}, [("session.bankroll", 500)])
    {'session': {'bankroll': 500}}
    """
    raw = copied_along(data, [key for key, _ in settings])
    for key, value in settings:
        try:
            set_path(raw, key, value)
        except KeyError as exc:
            raise UsageError(f"--set {key}: {exc.args[0]}") from None
    return raw


def _along(key: str, other: str) -> bool:
    """Whether key path `key` is `other` or lies under it."""
    return key == other or key.startswith((f"{other}.", f"{other}["))


def blame_settings(exc: _Error, source: str, keys: Sequence[str]) -> _Error | UsageError:
    """`exc` ("SOURCE: KEY PATH: what is wrong") as a usage error of --set
    when its key path is one that --set gave (or lies on the way to one);
    else `exc` itself."""
    text = str(exc)
    if not text.startswith(f"{source}: "):
        return exc
    rest = text[len(source) + 2 :]
    named = re.split(r"[: ]", rest, maxsplit=1)[0]
    if any(_along(named, key) or _along(key, named) for key in keys):
        return UsageError(f"--set {rest}")
    return exc


def load_config(
    path: str | Path,
    overrides: Mapping[str, Any] | None = None,
    remove: Sequence[str] = (),
    merge: Sequence[str] = (),
    settings: Sequence[Setting] = (),
) -> RunConfig:
    """Read and validate a run config file; `overrides` replace top-level keys
    (None values are ignored; for the keys in `merge`, an override mapping
    updates the file's mapping) and the keys in `remove` are dropped. With
    `shoe` dropped for a `shoes` file, the shoe's decks are the file's unless
    `shoes` says them, and the config's `sessions` goes too: the run plays
    the whole file unless told how many sessions. Then each of `settings`
    (--set) sets its key path, checked as the file's own keys are; an error
    in one names --set."""
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
    merged = apply_settings(merged, settings)
    try:
        return parse_config(merged, base_dir=path.parent, source=str(path))
    except ConfigError as exc:
        keys = [key for key, _ in settings]
        blamed = blame_settings(exc, str(path), keys)
        if blamed is not exc:
            raise blamed from None
        given = {k for k, v in (overrides or {}).items() if v is not None}
        raise with_line(exc, path, given | set(keys)) from None


def _declares_decks(file: Any) -> bool:
    """Whether a shoe file says how many decks its shoes were dealt from."""
    from backtest.shoes.recorded import declared_decks

    return isinstance(file, str) and declared_decks(file) is not None


def with_line(exc: _Error, path: Path, overridden: set[str]) -> _Error:
    """`exc` ("FILE: KEY PATH: what is wrong") with the line of the key it
    names, or of the nearest key above it that the file has; as it was for a
    key the file does not hold, or one on a key path an override replaced."""
    head = f"{path}: "
    text = str(exc)
    if not text.startswith(head):
        return exc
    rest = text[len(head) :]
    key = re.split(r"[: ]", rest, maxsplit=1)[0]
    if not key or any(_along(key, given) for given in overridden):
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

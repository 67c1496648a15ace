"""A sweep file: its base config, the cells its grid and zips make, each
cell's key, label and seed, and the digests of the inputs that decide its
numbers. Every cell is validated before the first runs."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from backtest.core import yamlfile
from backtest.core.errors import BacktestError, ConfigError, shown_count
from backtest.run import engine
from backtest.run.config import (
    MAX_SESSIONS,
    RunConfig,
    parse_config,
    read_yaml,
    shown_short,
    with_line,
)

SWEEP_KEYS = (
    "name",
    "description",
    "base",
    "run",
    "grid",
    "zip",
    "sessions",
    "seed",
    "metric",
    "common_shoes",
)
#: the most cells one sweep has (each is checked before any runs)
MAX_CELLS = 100_000
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True)
class Cell:
    """One combination of the varied settings."""

    index: int
    values: tuple[tuple[str, Any], ...]
    config: RunConfig
    sessions: int
    per_session: int

    @property
    def key(self) -> str:
        return cell_key(self.values)

    @property
    def id(self) -> str:
        return hashlib.sha256(self.key.encode()).hexdigest()[:16]

    def label(self) -> str:
        return cell_label(self.values)


@dataclass(frozen=True)
class Sweep:
    name: str
    source: str
    base_dir: Path
    keys: tuple[str, ...]
    cells: tuple[Cell, ...]
    seed: int
    metric: str
    spec_hash: str
    #: digests of what the cells read beyond the sweep's text (`_rules_text`, `_file_digests`)
    inputs: Mapping[str, str]
    #: what the spec hash is made from, as JSON reads it back (run config, grid, zip,
    #: seed, sessions, common_shoes): kept in sweep.json to say what another sweep changed
    settings: Mapping[str, Any]


def cell_label(values: Sequence[tuple[str, Any]]) -> str:
    """A cell in words: its varied values, short (a seat by its name)."""
    return (
        ", ".join(
            f"{k}={short_value(value_label(v) if isinstance(v, (dict, list)) else v)}"
            for k, v in values
        )
        or "(base)"
    )


def cell_key(values: Sequence[tuple[str, Any]]) -> str:
    """A cell's identity: its varied values, whatever order the keys were written in."""
    return json.dumps(sorted([k, v] for k, v in values), sort_keys=True, default=str)


def value_label(value: Any) -> str:
    """A short name for a varied value that is a mapping or a list (a seat: its name)."""
    if isinstance(value, Mapping):
        for key in ("name", "strategy"):
            if isinstance(value.get(key), str):
                return value[key]
    return json.dumps(value, sort_keys=True, default=str)


def short_value(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, str) else v
    return text if len(text) <= 40 else text[:37] + "..."


def parse_path(path: str) -> list[str | int]:
    """`seats[1].params.base` -> ['seats', 1, 'params', 'base']."""
    parts: list[str | int] = []
    pos = 0
    text = path.strip()
    for m in _PATH_PART.finditer(text):
        if m.start() != pos and text[pos : m.start()] != ".":
            raise ValueError(path)
        parts.append(int(m.group(2)) if m.group(2) is not None else m.group(1))
        pos = m.end()
    if pos != len(text) or not parts or not isinstance(parts[0], str):
        raise ValueError(path)
    return parts


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set `value` at key path `path` in a run-config mapping.

    Mappings on the way are created when missing (the config's own check then
    says whether the key is one it knows); a list index must exist.
    """
    parts = parse_path(path)
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        where = _join(parts[: i + 1])
        if isinstance(part, int):
            if not isinstance(node, list) or not -len(node) <= part < len(node):
                size = len(node) if isinstance(node, list) else 0
                raise KeyError(f"{where} does not exist (the list has {size} item(s))")
            if node[part] is None:
                node[part] = {}
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise KeyError(f"{_join(parts[:i])} is not a mapping")
            if node.get(part) is None:
                if isinstance(nxt, int):
                    raise KeyError(f"{where} does not exist")
                node[part] = {}
            node = node[part]
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or not -len(node) <= last < len(node):
            raise KeyError(f"{path} does not exist")
        node[last] = copy.deepcopy(value)
    else:
        if not isinstance(node, dict):
            raise KeyError(f"{_join(parts[:-1])} is not a mapping")
        node[last] = copy.deepcopy(value)


def _copied_along(data: Mapping[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    """`data` with the mappings and lists on each key path copied (not those
    beside them), so that setting values at those paths leaves `data` as it was.

    >>> base = {"session": {"bankroll": 10}, "table": {"max": 5}}
    >>> raw = _copied_along(base, ["session.bankroll"])
    >>> raw["session"]["bankroll"] = 20
    >>> base["session"]["bankroll"], raw["table"] is base["table"]
    (10, True)
    """
    out = dict(data)
    for path in paths:
        node: Any = out
        for part in parse_path(path)[:-1]:
            try:
                child = node[part]
            except (KeyError, IndexError, TypeError):
                break
            if isinstance(child, dict):
                child = dict(child)
            elif isinstance(child, list):
                child = list(child)
            else:
                break
            node[part] = child
            node = child
    return out


def _join(parts: Sequence[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def top_key(path: str) -> str | int | None:
    """The run config's top-level key a key path sets (`seed` for `seed`)."""
    try:
        return parse_path(path)[0]
    except ValueError:
        return None


def _plain(value: Any) -> Any:
    """`value` as sweep.json holds it once written and read back (lists, text for
    what JSON has no type for), so that the two compare equal."""
    return json.loads(json.dumps(value, default=str))  # (the keys in their order)


def _cell_seed(master: int, key: str) -> int:
    words = np.frombuffer(hashlib.sha256(key.encode()).digest()[:16], dtype=np.uint32)
    state = np.random.SeedSequence([master, *map(int, words)]).generate_state(2, np.uint32)
    return int(state[0]) << 31 | int(state[1]) >> 1


#: cells checked between two calls of `load_sweep`'s progress callback
PROGRESS_CELLS = 1000


def load_sweep(
    path: str | Path,
    sessions: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Sweep:
    """Read and validate a sweep: every cell's config is checked before any runs.
    An error names the file, the key and its line. What the cells share is
    checked once; progress(cells checked, cells) is called every
    PROGRESS_CELLS cells of a sweep of more."""
    path = Path(path)
    try:
        return _load_sweep(path, sessions, progress)
    except ConfigError as exc:
        raise with_line(exc, path, set()) from None


def _load_sweep(
    path: Path, sessions: int | None, progress: Callable[[int, int], None] | None
) -> Sweep:
    data = read_yaml(path)
    source = str(path)
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{source}: a sweep is a mapping of keys ({', '.join(SWEEP_KEYS)}), "
            f"got {shown_short(data)}"
        )
    for key in data:
        if key not in SWEEP_KEYS:
            import difflib

            close = difflib.get_close_matches(str(key), SWEEP_KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{source}: {key}: unknown key{hint} (allowed: {', '.join(SWEEP_KEYS)})"
            )
    base_dir = path.parent
    if ("base" in data) == ("run" in data):
        raise ConfigError(
            f"{source}: give the run config either as `base: FILE.yaml` or inline "
            "as `run: {...}` (exactly one of them)"
        )
    if "base" in data:
        base_file = Path(str(data["base"]))
        if not base_file.is_absolute():
            base_file = base_dir / base_file
        if not base_file.is_file():
            raise ConfigError(
                f"{source}: base: file {data['base']} does not exist (looked for {base_file})"
            )
        base = read_yaml(base_file)
        run_dir, run_source = base_file.parent, str(base_file)
        if not isinstance(base, Mapping):
            raise ConfigError(f"{base_file}: a run config is a mapping, got {shown_short(base)}")
    else:
        base = data["run"]
        run_dir, run_source = base_dir, f"{source}: run"
        if not isinstance(base, Mapping):
            raise ConfigError(
                f"{source}: run: expected a run config mapping, got {shown_short(base)}"
            )
    base = dict(base)
    grid = _lists(data.get("grid"), "grid", source)
    zipped = _lists(data.get("zip"), "zip", source)
    if not grid and not zipped:
        raise ConfigError(
            f"{source}: nothing varies: give `grid:` and/or `zip:` with lists of "
            "values under key paths of the run config"
        )
    lengths = {k: len(v) for k, v in zipped.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ConfigError(f"{source}: zip: the lists must have the same length ({detail})")
    for key in list(grid) + list(zipped):
        try:
            parse_path(key)
        except ValueError:
            raise ConfigError(
                f"{source}: {'grid' if key in grid else 'zip'}.{key}: not a key "
                "path (write e.g. session.bankroll or seats[0].params.base)"
            ) from None
    both = [key for key in zipped if key in grid]
    if both:
        raise ConfigError(f"{source}: zip.{both[0]}: also in grid; vary a key in one of them")
    n_cells = math.prod(len(v) for v in grid.values()) * (
        len(next(iter(zipped.values()))) if zipped else 1
    )
    if n_cells > MAX_CELLS:
        raise ConfigError(
            f"{source}: the grid and zip make {n_cells:,} cells, more than "
            f"{MAX_CELLS:,}; split the sweep, or vary fewer values"
        )
    for key in list(grid) + list(zipped):
        if top_key(key) == "sessions":
            raise ConfigError(
                f"{source}: {'grid' if key in grid else 'zip'}.{key}: every "
                "cell runs the sweep's `sessions` (or --sessions); vary other "
                "keys, and run a sweep for each number of sessions"
            )
    seed = data.get("seed", base.get("seed", 1))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(
            f"{source}: seed: expected a whole number of at least 0, got {shown_short(seed)}"
        )
    n_sessions = sessions if sessions is not None else data.get("sessions", base.get("sessions"))
    if n_sessions is not None and (
        isinstance(n_sessions, bool) or not isinstance(n_sessions, int) or n_sessions < 1
    ):
        raise ConfigError(
            f"{source}: sessions: expected a whole number of at least 1, "
            f"got {shown_short(n_sessions)}"
        )
    if n_sessions is not None and n_sessions > MAX_SESSIONS:
        raise ConfigError(
            f"{source}: sessions: at most {MAX_SESSIONS:,}, got "
            f"{shown_count(n_sessions)}; split a larger sweep into sweeps with "
            "other seeds"
        )
    common = data.get("common_shoes", False)
    if not isinstance(common, bool):
        raise ConfigError(
            f"{source}: common_shoes: expected true or false, got {shown_short(common)}"
        )
    metric = data.get("metric", "edge")
    from backtest.run.metrics import metric_names

    names = metric_names()
    if metric not in names:
        import difflib

        close = difflib.get_close_matches(str(metric), names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"{source}: metric: unknown metric {metric!r}{hint} (metrics: {', '.join(names)})"
        )

    keys = tuple(grid) + tuple(zipped)
    seed_varied = any(top_key(k) == "seed" for k in keys)
    grid_items = [list(zip([k] * len(v), v)) for k, v in grid.items()]
    zip_rows = list(zip(*[[(k, x) for x in v] for k, v in zipped.items()])) if zipped else [()]
    memo: dict[Any, Any] = {}  # what the cells share is checked once
    _check_shared(
        path,
        base,
        "base" in data,
        run_dir,
        run_source,
        keys,
        memo,
        {"seed": seed, **({"sessions": n_sessions} if n_sessions is not None else {})},
    )
    cells = []
    first_of: dict[Any, int] = {}
    for index, (combo, zrow) in enumerate(
        itertools.product(itertools.product(*grid_items), zip_rows)
    ):
        values = tuple(combo) + tuple(zrow)
        raw = _copied_along(base, keys)  # set_path changes only what it passes through
        where = f"{source}: cell {index + 1} ({cell_label(values)})"
        twin = first_of.setdefault(_as_compared(dict(values)), index)
        if twin != index:
            varied = " or ".join(f"{'grid' if k in grid else 'zip'}.{k}" for k, _ in values)
            line = _varied_line(path, values[-1][0], index, grid, zipped)
            raise ConfigError(
                f"{source}: {line}{where.removeprefix(source + ': ')}: the same "
                f"values as cell {twin + 1}; a value given twice in {varied} would "
                "run (and count) one cell twice: give each value once"
            )
        for key, value in values:
            try:
                set_path(raw, key, value)
            except KeyError as exc:
                line = _varied_line(path, key, index, grid, zipped)
                raise ConfigError(
                    f"{source}: {line}{where.removeprefix(source + ': ')}: {key}: {exc.args[0]}"
                ) from None
        # a seed the cell varies is its seed (checked below as any run's); else
        # common shoes: the sweep's seed; own shoes: one derived from the cell's values
        if not seed_varied:
            raw["seed"] = seed if common else _cell_seed(seed, cell_key(values))
        if n_sessions is not None:
            raw["sessions"] = n_sessions
        try:
            config = parse_config(raw, run_dir, run_source, memo)
            count, per_session, _ = engine.prepare(config, memo=memo)
        except BacktestError as exc:
            message = str(exc)
            if message.startswith(run_source + ": "):
                message = message[len(run_source) + 2 :]
            line = _varied_line(path, message, index, grid, zipped)
            raise ConfigError(
                f"{source}: {line}{where.removeprefix(source + ': ')}: {message}"
            ) from None
        cells.append(Cell(index, values, config, count, per_session))
        if progress is not None and n_cells > PROGRESS_CELLS and (index + 1) % PROGRESS_CELLS == 0:
            progress(index + 1, n_cells)
    hashed: dict[str, Any] = {
        "base": base,
        "cells": [c.key for c in cells],
        "seed": seed,
        "sessions": [c.sessions for c in cells],
        "common_shoes": common,
    }
    if seed_varied and not common:
        # a varied seed was once replaced by a derived one: other numbers, another sweep
        hashed["seeds"] = "as given"
    spec = json.dumps(hashed, sort_keys=True, default=str)
    counts = sorted({c.sessions for c in cells})
    settings = _plain(
        {
            "run": base,
            "grid": grid,
            "zip": zipped,
            "seed": seed,
            "sessions": counts[0] if len(counts) == 1 else counts,
            "common_shoes": common,
        }
    )
    rules = sorted({_rules_text(c.config) for c in cells})
    seen: dict[str, str] = {}
    files: dict[str, str] = {}
    for cell in cells:
        files.update(_file_digests(cell.config, seen))
    return Sweep(
        name=str(data.get("name") or path.stem),
        source=source,
        base_dir=base_dir,
        keys=keys,
        cells=tuple(cells),
        seed=seed,
        metric=metric,
        spec_hash=hashlib.sha256(spec.encode()).hexdigest(),
        settings=settings,
        inputs={"rules": hashlib.sha256("\n".join(rules).encode()).hexdigest(), **files},
    )


def _check_shared(
    path: Path,
    base: Mapping[str, Any],
    from_file: bool,
    run_dir: Path,
    run_source: str,
    keys: Sequence[str],
    memo: dict[Any, Any],
    fixed: Mapping[str, Any],
) -> None:
    """The run config alone, once, before the cells: an error in a setting no
    cell varies (nor depends on: a table's limits on the rules) is the run
    config's, named by its own file and line (or the sweep's `run:`)."""
    try:
        parse_config({**base, **fixed}, run_dir, run_source, memo)
    except ConfigError as exc:
        message = str(exc)
        if not message.startswith(run_source + ": "):
            return
        rest = message[len(run_source) + 2 :]
        named = top_key(re.split(r"[: ]", rest, maxsplit=1)[0])
        varied = {top_key(k) for k in keys}
        if (
            named is None
            or named in varied
            or (named == "table" and "rules" in varied)
            or named in fixed
        ):
            return  # the cells say it, each with its values
        if from_file:
            raise with_line(exc, Path(run_source), set()) from None
        lines = _lines(path)
        key = re.split(r"[: ]", rest, maxsplit=1)[0]
        while key and f"run.{key}" not in lines:
            key = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", key) if re.search(r"[.\[]", key) else ""
        where = f"line {lines[f'run.{key}']}: " if key else ""
        raise ConfigError(f"{path}: {where}run.{rest}") from None


def _lines(path: Path) -> dict[str, int]:
    try:
        return yamlfile.key_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return {}


def _varied_line(
    path: Path,
    message: str,
    index: int,
    grid: Mapping[str, list[Any]],
    zipped: Mapping[str, list[Any]],
) -> str:
    """'line L: ' of the value in the sweep file that cell `index` takes for
    the varied key `message` is about (it starts with a key path); '' when it
    is about no varied key, or the file cannot be read again."""
    named = re.split(r"[: ]", message, maxsplit=1)[0]
    # the cell's position in each list: the grid's last key varies fastest, then the zip
    rows = len(next(iter(zipped.values()))) if zipped else 1
    flat, position = divmod(index, rows)
    positions = {key: position for key in zipped}
    for key in reversed(list(grid)):
        flat, positions[key] = divmod(flat, len(grid[key]))
    for key, at in positions.items():
        if (
            named == key
            or named.startswith((f"{key}.", f"{key}["))
            or key.startswith((f"{named}.", f"{named}["))
        ):
            section = "grid" if key in grid else "zip"
            try:
                lines = yamlfile.key_lines(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
                return ""
            line = lines.get(f"{section}.{key}[{at}]", lines.get(f"{section}.{key}"))
            return f"line {line}: " if line else ""
    return ""


def _digest(path: str | Path, seen: dict[str, str]) -> str:
    key = str(path)
    if key not in seen:
        try:
            with open(path, "rb") as fh:  # a block at a time: a shoe file may be large
                seen[key] = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError:
            seen[key] = "unreadable"
    return seen[key]


def _rules_text(config: RunConfig) -> str:
    """A cell's rules as read (a rules file's settings, not its description):
    what its numbers depend on beyond the sweep's text. `--resume` compares them."""
    rules = {k: v for k, v in config.rules.to_mapping().items() if k != "description"}
    return json.dumps(rules, sort_keys=True, default=str)


def _file_digests(config: RunConfig, seen: dict[str, str]) -> dict[str, str]:
    """The contents of the files a cell reads (recorded shoes, a strategy's own
    file), by resolved path, however the sweep or the current folder reached
    them. `--resume` compares them."""
    from strategies import registry

    files: list[str | Path] = [config.recorded.path] if config.recorded is not None else []
    for seat in config.seats:
        if ":" in seat.strategy:
            module = sys.modules.get(registry.get(seat.strategy, seat.base_dir).__module__)
            file = getattr(module, "__file__", None)
            files += [file] if file else []
    return {key: _digest(key, seen) for key in (str(Path(f).resolve()) for f in files)}


def _lists(data: Any, name: str, source: str) -> dict[str, list[Any]]:
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{source}: {name}: expected a mapping of key path to a list of values, "
            f"got {shown_short(data)}"
        )
    out = {}
    for key, values in data.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(
                f"{source}: {name}.{key}: expected a non-empty list of values, "
                f"got {shown_short(values)}"
            )
        seen: dict[Any, int] = {}
        for i, value in enumerate(values if name == "grid" else ()):  # a zip's may repeat
            first = seen.setdefault(_as_compared(value), i)
            if first != i:
                raise ConfigError(
                    f"{source}: {name}.{key}: {shown_short(value)} (item {i + 1}) "
                    f"is the same value as {shown_short(values[first])} (item "
                    f"{first + 1}); give each value once"
                )
        out[str(key)] = values
    return out


def _as_compared(value: Any) -> Any:
    """A hashable stand-in for a varied value under which values a run reads
    alike are equal: numbers by their value (500 and 500.0), while true stays
    apart from 1 and text from numbers.

    >>> _as_compared(500) == _as_compared(500.0), _as_compared(True) == _as_compared(1)
    (True, False)
    """
    if isinstance(value, bool) or value is None:
        return ("const", value)
    if isinstance(value, (int, float)):
        return ("number", value) if value == value else ("nan",)
    if isinstance(value, Mapping):
        return ("mapping", frozenset((str(k), _as_compared(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_as_compared(v) for v in value))
    return (type(value).__name__, str(value))

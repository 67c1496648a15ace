"""A sweep file read: its keys checked, its base config, the cells its grid and
zips make (each with its key path set, its seed, and its config validated
before the first runs), and the hash of everything that decides its numbers."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from backtest.core.errors import BacktestError, ConfigError, UsageError, shown_count
from backtest.core.fields import Check
from backtest.run import engine
from backtest.run.config import (
    MAX_SESSIONS,
    Setting,
    apply_settings,
    blame_settings,
    parse_config,
    read_yaml,
    shown_short,
    with_line,
)
from backtest.run.config_spec import TOP
from backtest.run.paths import copied_along, parse_path, set_path, top_key
from backtest.run.ready import by_name
from backtest.sweep.cells import Cell, Sweep, cell_key, cell_label, cell_seed
from backtest.sweep.digests import file_digests, rules_text
from backtest.sweep.lines import check_shared, varied_line

#: `common_shoes:` (the sweep's `seed` and `sessions` are checked as a run config's, `TOP`)
COMMON_SHOES = Check("flag", False)
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


def _plain(value: Any) -> Any:
    """`value` as sweep.json holds it once written and read back (lists, text for
    what JSON has no type for), so that the two compare equal."""
    return json.loads(json.dumps(value, default=str))  # (the keys in their order)


#: cells checked between two calls of `load_sweep`'s progress callback
PROGRESS_CELLS = 1000


def load_sweep(
    path: str | Path,
    sessions: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    set_keys: Sequence[Setting] = (),
) -> Sweep:
    """Read and validate a sweep: every cell's config is checked before any runs.
    An error names the file, the key and its line. What the cells share is
    checked once; progress(cells checked, cells) is called every
    PROGRESS_CELLS cells of a sweep of more. Each of `set_keys` (--set) sets
    its key path in the run config, a key the sweep does not vary; a `seed`
    or `sessions` set so is the sweep's."""
    path = Path(path)
    try:
        return _load_sweep(path, sessions, progress, set_keys)
    except ConfigError as exc:
        raise with_line(exc, path, set()) from None


def _load_sweep(
    path: Path,
    sessions: int | None,
    progress: Callable[[int, int], None] | None,
    set_keys: Sequence[Setting],
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
        if not base_file.exists() and (ready := by_name(str(data["base"]), "run")):
            base_file = ready.path  # a ready config by name
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
    grid = _lists(data.get("grid"), "grid", source)
    zipped = _lists(data.get("zip"), "zip", source)
    for key, _ in set_keys:
        # (a key the sweep varies under one --set gives is set after it, by each cell)
        varied = next(
            (k for k in [*grid, *zipped] if key == k or key.startswith((f"{k}.", f"{k}["))),
            None,
        )
        if varied is not None:
            option = "--rules" if key == "rules" else f"--set {key}"
            raise UsageError(
                f"{option}: the sweep varies {'grid' if varied in grid else 'zip'}.{varied}; "
                "set a key it does not vary"
            )
    base = apply_settings(base, set_keys)
    for key, value in set_keys:
        if key in ("seed", "sessions"):  # the sweep's, whatever the sweep file says
            data = {**data, key: value}
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
    # the run config's own checks of its `seed` and `sessions`, with the sweep's key
    seed = TOP["seed"].read(data.get("seed", base.get("seed", 1)), f"{source}: seed", ConfigError)
    n_sessions = TOP["sessions"].read(
        sessions if sessions is not None else data.get("sessions", base.get("sessions")),
        f"{source}: sessions",
        ConfigError,
    )
    if n_sessions is not None and n_sessions > MAX_SESSIONS:
        raise ConfigError(
            f"{source}: sessions: at most {MAX_SESSIONS:,}, got "
            f"{shown_count(n_sessions)}; split a larger sweep into sweeps with "
            "other seeds"
        )
    common = COMMON_SHOES.read(
        data.get("common_shoes", False), f"{source}: common_shoes", ConfigError
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
    fixed = {"seed": seed, **({"sessions": n_sessions} if n_sessions is not None else {})}
    _check_settings(set_keys, base, run_dir, run_source, keys, memo, fixed)
    check_shared(path, base, "base" in data, run_dir, run_source, keys, memo, fixed)
    cells = []
    first_of: dict[Any, int] = {}
    for index, (combo, zrow) in enumerate(
        itertools.product(itertools.product(*grid_items), zip_rows)
    ):
        values = tuple(combo) + tuple(zrow)
        raw = copied_along(base, keys)  # set_path changes only what it passes through
        where = f"{source}: cell {index + 1} ({cell_label(values)})"
        twin = first_of.setdefault(_as_compared(dict(values)), index)
        if twin != index:
            varied = " or ".join(f"{'grid' if k in grid else 'zip'}.{k}" for k, _ in values)
            line = varied_line(path, values[-1][0], index, grid, zipped)
            raise ConfigError(
                f"{source}: {line}{where.removeprefix(source + ': ')}: the same "
                f"values as cell {twin + 1}; a value given twice in {varied} would "
                "run (and count) one cell twice: give each value once"
            )
        for key, value in values:
            try:
                set_path(raw, key, value)
            except KeyError as exc:
                line = varied_line(path, key, index, grid, zipped)
                raise ConfigError(
                    f"{source}: {line}{where.removeprefix(source + ': ')}: {key}: {exc.args[0]}"
                ) from None
        # a seed the cell varies is its seed (checked below as any run's); else
        # common shoes: the sweep's seed; own shoes: one derived from the cell's values
        if not seed_varied:
            raw["seed"] = seed if common else cell_seed(seed, cell_key(values))
        if n_sessions is not None:
            raw["sessions"] = n_sessions
        try:
            config = parse_config(raw, run_dir, run_source, memo)
            count, per_session, _ = engine.prepare(config, memo=memo)
        except BacktestError as exc:
            message = str(exc)
            if message.startswith(run_source + ": "):
                message = message[len(run_source) + 2 :]
            line = varied_line(path, message, index, grid, zipped)
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
    rules = sorted({rules_text(c.config) for c in cells})
    seen: dict[str, str] = {}
    files: dict[str, str] = {}
    for cell in cells:
        files.update(file_digests(cell.config, seen))
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


def _check_settings(
    settings: Sequence[Setting],
    base: Mapping[str, Any],
    run_dir: Path,
    run_source: str,
    keys: Sequence[str],
    memo: dict[Any, Any],
    fixed: Mapping[str, Any],
) -> None:
    """The run config with --set's values, once: an error in a key --set gave
    names --set, unless the sweep varies that part of the config (then each
    cell says it, with its values)."""
    if not settings:
        return
    try:
        parse_config({**base, **fixed}, run_dir, run_source, memo)
    except ConfigError as exc:
        blamed = blame_settings(exc, run_source, [key for key, _ in settings])
        named = top_key(re.split(r"[: ]", str(blamed).removeprefix("--set "), maxsplit=1)[0])
        if blamed is not exc and named not in {top_key(k) for k in keys}:
            raise blamed from None


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

"""Sweeps: one run config over a grid of settings, on every core or a Dask cluster.

A sweep YAML names a base run config (`base: file.yaml`) or holds one inline
(`run: {...}`), and what varies::

    base: ../verdict.yaml
    sessions: 2000
    seed: 7
    metric: ruin_rate
    grid:                      # every combination
      session.bankroll: [500, 1000, 2000]
      table.max: [500, 1000]
    zip:                       # lists taken in step
      rules: [commission, no-commission, ez]
      shoe.decks: [8, 6, 1]

A key path is dotted, with list indices: `seats[0].params.base`. The cells
are the Cartesian product of the grid with the zipped lists; every cell is
validated before the first one runs, as `backtest run` validates a config.
Each cell's random streams derive from the master seed and the cell's own key
(its varied values), never from the order or the worker that runs it;
`common_shoes: true` deals every cell the same shoes instead, for paired
comparisons between cells. A cell that varies `seed` runs with that seed, as
`backtest run` would, either way (replications; cells of one seed share its
shoes). `sessions` is the sweep's, for every cell: it cannot vary.

Output in DIR: `cells/<id>.parquet` for each finished cell (written
atomically as it finishes), `summary.parquet` (every finished cell, one row
per cell and seat, a column per varied key, rebuilt atomically), and
`sweep.json` (its name, source file, seed, varied keys, metric, number of
cells, and a hash of everything that decides its numbers, which `--resume`
checks, with those settings, to say what another sweep changed). `--resume`
skips finished cells. Nothing is written before the executor is ready: a
scheduler that cannot be reached leaves DIR as it was.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import sys
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from backtest import cluster, engine, outputs, plan
from backtest.config import RunConfig, shown_short, parse_config, read_yaml, with_line
from backtest.errors import BacktestError, ConfigError, UsageError
from backtest.pool import check_workers, default_workers, process_pool

SWEEP_KEYS = ("name", "description", "base", "run", "grid", "zip", "sessions", "seed",
              "metric", "common_shoes")
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
    return ", ".join(f"{k}={_short(_label(v) if isinstance(v, (dict, list)) else v)}"
                     for k, v in values) or "(base)"


def cell_key(values: Sequence[tuple[str, Any]]) -> str:
    """A cell's identity: its varied values, whatever order the keys were written in."""
    return json.dumps(sorted([k, v] for k, v in values), sort_keys=True, default=str)


def _label(value: Any) -> str:
    """A short name for a varied value that is a mapping or a list (a seat: its name)."""
    if isinstance(value, Mapping):
        for key in ("name", "strategy"):
            if isinstance(value.get(key), str):
                return value[key]
    return json.dumps(value, sort_keys=True, default=str)


def _short(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, str) else v
    return text if len(text) <= 40 else text[:37] + "..."


def parse_path(path: str) -> list[str | int]:
    """`seats[1].params.base` -> ['seats', 1, 'params', 'base']."""
    parts: list[str | int] = []
    pos = 0
    text = path.strip()
    for m in _PATH_PART.finditer(text):
        if m.start() != pos and text[pos:m.start()] != ".":
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
        where = _join(parts[:i + 1])
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


def _join(parts: Sequence[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _top_key(path: str) -> str | int | None:
    """The run config's top-level key a key path sets (`seed` for `seed`)."""
    try:
        return parse_path(path)[0]
    except ValueError:
        return None


def _plain(value: Any) -> Any:
    """`value` as sweep.json holds it once written and read back (lists, text for
    what JSON has no type for), so that the two compare equal."""
    return json.loads(json.dumps(value, default=str))   # (the keys in their order)


def _cell_seed(master: int, key: str) -> int:
    words = np.frombuffer(hashlib.sha256(key.encode()).digest()[:16], dtype=np.uint32)
    state = np.random.SeedSequence([master, *map(int, words)]).generate_state(2, np.uint32)
    return int(state[0]) << 31 | int(state[1]) >> 1


def load_sweep(path: str | Path, sessions: int | None = None) -> Sweep:
    """Read and validate a sweep: every cell's config is checked before any runs.
    An error names the file, the key and its line."""
    path = Path(path)
    try:
        return _load_sweep(path, sessions)
    except ConfigError as exc:
        raise with_line(exc, path, set()) from None


def _load_sweep(path: Path, sessions: int | None) -> Sweep:
    data = read_yaml(path)
    source = str(path)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: a sweep is a mapping of keys ({', '.join(SWEEP_KEYS)}), "
                          f"got {shown_short(data)}")
    for key in data:
        if key not in SWEEP_KEYS:
            import difflib

            close = difflib.get_close_matches(str(key), SWEEP_KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{source}: {key}: unknown key{hint} (allowed: {', '.join(SWEEP_KEYS)})")
    base_dir = path.parent
    if ("base" in data) == ("run" in data):
        raise ConfigError(f"{source}: give the run config either as `base: FILE.yaml` or inline "
                          "as `run: {...}` (exactly one of them)")
    if "base" in data:
        base_file = Path(str(data["base"]))
        if not base_file.is_absolute():
            base_file = base_dir / base_file
        if not base_file.is_file():
            raise ConfigError(f"{source}: base: file {data['base']} does not exist "
                              f"(looked for {base_file})")
        base = read_yaml(base_file)
        run_dir, run_source = base_file.parent, str(base_file)
        if not isinstance(base, Mapping):
            raise ConfigError(f"{base_file}: a run config is a mapping, got {shown_short(base)}")
    else:
        base = data["run"]
        run_dir, run_source = base_dir, f"{source}: run"
        if not isinstance(base, Mapping):
            raise ConfigError(f"{source}: run: expected a run config mapping, got {shown_short(base)}")
    base = dict(base)
    grid = _lists(data.get("grid"), "grid", source)
    zipped = _lists(data.get("zip"), "zip", source)
    if not grid and not zipped:
        raise ConfigError(f"{source}: nothing varies: give `grid:` and/or `zip:` with lists of "
                          "values under key paths of the run config")
    lengths = {k: len(v) for k, v in zipped.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ConfigError(f"{source}: zip: the lists must have the same length ({detail})")
    for key in list(grid) + list(zipped):
        try:
            parse_path(key)
        except ValueError:
            raise ConfigError(f"{source}: {key!r} is not a key path (write e.g. "
                              "session.bankroll or seats[0].params.base)") from None
    both = set(grid) & set(zipped)
    if both:
        raise ConfigError(f"{source}: {', '.join(sorted(both))} is both in grid and zip")
    n_cells = math.prod(len(v) for v in grid.values()) * (len(next(iter(zipped.values())))
                                                           if zipped else 1)
    if n_cells > MAX_CELLS:
        raise ConfigError(f"{source}: the grid and zip make {n_cells:,} cells, more than "
                          f"{MAX_CELLS:,}; split the sweep, or vary fewer values")
    for key in list(grid) + list(zipped):
        if _top_key(key) == "sessions":
            raise ConfigError(f"{source}: {'grid' if key in grid else 'zip'}.{key}: every "
                              "cell runs the sweep's `sessions` (or --sessions); vary other "
                              "keys, and run a sweep for each number of sessions")
    seed = data.get("seed", base.get("seed", 1))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"{source}: seed: expected a whole number of at least 0, got {shown_short(seed)}")
    n_sessions = sessions if sessions is not None else data.get("sessions", base.get("sessions"))
    if n_sessions is not None and (isinstance(n_sessions, bool) or not isinstance(n_sessions, int)
                                   or n_sessions < 1):
        raise ConfigError(f"{source}: sessions: expected a whole number of at least 1, "
                          f"got {shown_short(n_sessions)}")
    common = data.get("common_shoes", False)
    if not isinstance(common, bool):
        raise ConfigError(f"{source}: common_shoes: expected true or false, got {shown_short(common)}")
    metric = data.get("metric", "edge")
    from backtest.metrics import metric_names

    names = metric_names()
    if metric not in names:
        import difflib

        close = difflib.get_close_matches(str(metric), names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{source}: metric: unknown metric {metric!r}{hint} "
                          f"(metrics: {', '.join(names)})")

    keys = tuple(grid) + tuple(zipped)
    seed_varied = any(_top_key(k) == "seed" for k in keys)
    grid_items = [list(zip([k] * len(v), v)) for k, v in grid.items()]
    zip_rows = list(zip(*[[(k, x) for x in v] for k, v in zipped.items()])) if zipped else [()]
    cells = []
    first_of: dict[str, int] = {}
    for index, (combo, zrow) in enumerate(itertools.product(itertools.product(*grid_items),
                                                            zip_rows)):
        values = tuple(combo) + tuple(zrow)
        raw = copy.deepcopy(base)
        where = f"{source}: cell {index + 1} ({cell_label(values)})"
        twin = first_of.setdefault(cell_key(values), index)
        if twin != index:
            varied = " or ".join(f"{'grid' if k in grid else 'zip'}.{k}" for k, _ in values)
            raise ConfigError(f"{where}: the same values as cell {twin + 1}; a value given twice "
                              f"in {varied} would run (and count) one cell twice: give each "
                              "value once")
        for key, value in values:
            try:
                set_path(raw, key, value)
            except KeyError as exc:
                raise ConfigError(f"{where}: {key}: {exc.args[0]}") from None
        # a seed the cell varies is its seed (checked below as any run's); else
        # common shoes: the sweep's seed; own shoes: one derived from the cell's values
        if not seed_varied:
            raw["seed"] = seed if common else _cell_seed(seed, cell_key(values))
        if n_sessions is not None:
            raw["sessions"] = n_sessions
        try:
            config = parse_config(raw, run_dir, run_source)
            count, per_session, _ = engine.prepare(config)
        except BacktestError as exc:
            message = str(exc)
            if message.startswith(run_source + ": "):
                message = message[len(run_source) + 2:]
            raise ConfigError(f"{where}: {message}") from None
        cells.append(Cell(index, values, config, count, per_session))
    hashed: dict[str, Any] = {"base": base, "cells": [c.key for c in cells], "seed": seed,
                              "sessions": [c.sessions for c in cells], "common_shoes": common}
    if seed_varied and not common:
        # a varied seed was once replaced by a derived one: other numbers, another sweep
        hashed["seeds"] = "as given"
    spec = json.dumps(hashed, sort_keys=True, default=str)
    counts = sorted({c.sessions for c in cells})
    settings = _plain({"run": base, "grid": grid, "zip": zipped, "seed": seed,
                       "sessions": counts[0] if len(counts) == 1 else counts,
                       "common_shoes": common})
    rules = sorted({_rules_text(c.config) for c in cells})
    seen: dict[str, str] = {}
    files: dict[str, str] = {}
    for cell in cells:
        files.update(_file_digests(cell.config, seen))
    return Sweep(name=str(data.get("name") or path.stem), source=source, base_dir=base_dir,
                 keys=keys, cells=tuple(cells), seed=seed, metric=metric,
                 spec_hash=hashlib.sha256(spec.encode()).hexdigest(), settings=settings,
                 inputs={"rules": hashlib.sha256("\n".join(rules).encode()).hexdigest(),
                         **files})


def _digest(path: str | Path, seen: dict[str, str]) -> str:
    key = str(path)
    if key not in seen:
        try:
            seen[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
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
        raise ConfigError(f"{source}: {name}: expected a mapping of key path to a list of values, "
                          f"got {shown_short(data)}")
    out = {}
    for key, values in data.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{source}: {name}.{key}: expected a non-empty list of values, "
                              f"got {shown_short(values)}")
        out[str(key)] = values
    return out


# --- running -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    cell: int
    lo: int
    hi: int


def _tasks(sweep: Sweep, todo: Sequence[int], workers: int) -> list[Task]:
    """Cells cut into chunks of sessions: large cells spread over the workers,
    and when there are few cells, each is cut finer so every worker has work."""
    tasks = []
    share = workers if len(todo) < 2 * workers else 1
    for i in todo:
        cell = sweep.cells[i]
        for lo, hi in plan.plan_chunks(cell.sessions, cell.per_session, share):
            tasks.append(Task(i, lo, hi))
    return tasks


def _cell_frame(sweep: Sweep, cell: Cell, parts: list[tuple[list[engine.SeatResult], int]]
                ) -> pl.DataFrame:
    _, summary, _ = engine.assemble(cell.config, parts)
    cols: dict[str, Any] = {"cell": cell.index + 1, "cell_id": cell.id}
    for key, value in cell.values:
        if isinstance(value, (int, float, str, bool)):
            cols[key] = _storable(value)
        else:
            cols[key] = _label(value)
            cols[f"{key}.json"] = json.dumps(value, sort_keys=True, default=str)
    lead = pl.DataFrame({k: [v] * summary.height for k, v in cols.items()})
    hands = sum(p[1] for p in parts)
    return pl.concat([lead, summary], how="horizontal").with_columns(
        pl.lit(hands).alias("table_hands"), pl.lit(_storable(cell.config.seed)).alias("seed"))


def _storable(value: Any) -> Any:
    """A whole number too large for a 64-bit column (a run config takes any seed)
    as its digits."""
    if isinstance(value, int) and not isinstance(value, bool) \
            and not -2 ** 63 <= value < 2 ** 63:
        return str(value)
    return value


def _read_cells(out: Path, sweep: Sweep) -> tuple[dict[int, pl.DataFrame], list[Path]]:
    """The finished cells in `out`, and the files that cannot be read (torn by
    a kill: not finished cells, and run again). Reads only."""
    done, torn = {}, []
    for cell in sweep.cells:
        f = out / "cells" / f"{cell.id}.parquet"
        if f.is_file():
            try:
                done[cell.index] = pl.read_parquet(f)
            except Exception:  # polars raises several kinds for a file that is not Parquet
                torn.append(f)
    return done, torn


def _write_summary(out: Path, sweep: Sweep, done: Mapping[int, pl.DataFrame]) -> pl.DataFrame:
    frames = [done[i] for i in sorted(done)]
    summary = pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
    outputs.write_parquet(summary, out / "summary.parquet")
    return summary


def _check_executor(executor: str, address: str | None) -> None:
    if executor not in ("local", "dask"):
        raise UsageError(f"--executor must be local or dask, got {executor!r}")
    if address is not None and executor != "dask":
        raise UsageError("--address goes with --executor dask")


def _check_out(out: Path, sweep: Sweep, resume: bool) -> dict[str, Any]:
    """What sweep.json is to hold, once `out` is known to take this sweep: a
    directory (or none yet) holding no other sweep, and no cells of this one
    unless resumed. Writes nothing there but check_out_dir's probe (a temporary
    file, gone at once): `out` is written after the executor is ready."""
    meta = {"kind": "sweep", "name": sweep.name, "source": sweep.source, "seed": sweep.seed,
            "keys": list(sweep.keys), "metric": sweep.metric, "cells": len(sweep.cells),
            "spec_hash": sweep.spec_hash, "inputs": dict(sweep.inputs),
            "settings": dict(sweep.settings)}
    if not out.exists():
        return meta
    outputs.check_out_dir(out, "sweep")   # (an existing directory is left as it is)
    meta_path = out / "sweep.json"
    if not meta_path.is_file():
        return meta
    try:
        old = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--out {out}: {meta_path.name} cannot be read ({exc}), so which "
                         "sweep its cells belong to is unknown; use another directory, or "
                         "delete it to start again") from None
    if not isinstance(old, dict) or old.get("spec_hash") != sweep.spec_hash:
        name = old.get("name", "?") if isinstance(old, dict) else "?"
        raise UsageError(f"--out {out} holds a different sweep ({name}): "
                         f"{_what_differs(old, sweep, meta_path)}; use another --out, or the "
                         f"settings in {meta_path} to resume that sweep, or delete {out} to "
                         "start again")
    was = old.get("inputs")
    finished = any((out / "cells").glob("*.parquet"))
    # compared only when there are cells run on them (a sweep.json written
    # before the inputs were recorded has none to compare)
    if isinstance(was, dict) and was != dict(sweep.inputs) and finished:
        changed = [("the rules" if k == "rules" else k)
                   for k in sorted(set(was) | set(sweep.inputs))
                   if was.get(k) != sweep.inputs.get(k)]
        raise UsageError(f"--out {out}: {', '.join(changed)} changed since this sweep's cells "
                         "were run, so new cells would not be comparable with them; use "
                         "another directory, or delete it to start again")
    if not resume and finished:
        raise UsageError(f"--out {out} already holds cells of this sweep: pass --resume to "
                         "finish it, or use another directory")
    return meta


#: the order in which settings are compared: the one most often changed first
_SETTINGS_ORDER = ("sessions", "seed", "common_shoes", "grid", "zip", "run")
_ABSENT = object()


def _what_differs(old: Any, sweep: Sweep, meta_path: Path) -> str:
    """The first setting in which the sweep in sweep.json differs from `sweep`,
    in words: `sessions: 3000 in DIR/sweep.json, 500 now`."""
    if not isinstance(old, dict):
        return f"{meta_path} is not a sweep's"
    settings = old.get("settings")
    if isinstance(settings, dict):
        found = _first_difference(settings, dict(sweep.settings), "", _SETTINGS_ORDER)
    else:   # written before the settings were kept: what it has
        found = _first_difference({k: old.get(k, _ABSENT) for k in ("seed", "keys", "cells")},
                                  {"seed": sweep.seed, "keys": list(sweep.keys),
                                   "cells": len(sweep.cells)}, "", ())
        found = (found[0].replace("keys", "varied keys", 1), *found[1:]) if found else None
    if found is None:
        return (f"what decides its numbers differs, though not in a setting {meta_path} "
                "records (it was written by another version)")
    path, was, now = found
    if path.startswith("run."):
        path = f"{path[4:]} of the run config"
    return f"{path}: {_said(was)} in {meta_path}, {_said(now)} now"


def _first_difference(old: Any, new: Any, path: str, order: Sequence[str]
                      ) -> tuple[str, Any, Any] | None:
    """(key path, old value, new value) of the first difference, or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        if path in ("grid", "zip") and list(old) != list(new):   # other keys, or in another order
            return f"the keys of {path}", list(old), list(new)
        keys = [k for k in order if k in old or k in new]
        keys += [k for k in (*new, *old) if k not in keys]
        for key in dict.fromkeys(keys):
            inner = f"{path}.{key}" if path else str(key)
            found = _first_difference(old.get(key, _ABSENT), new.get(key, _ABSENT), inner, ())
            if found is not None:
                return found
        return None
    if (isinstance(old, list) and isinstance(new, list) and len(old) == len(new)
            and any(isinstance(v, (dict, list)) for v in (*old, *new))):
        for i, (a, b) in enumerate(zip(old, new)):
            found = _first_difference(a, b, f"{path}[{i}]", ())
            if found is not None:
                return found
        return None
    # as JSON text: 300 and 300.0 (or true and 1) are other settings, as the hash says
    same = json.dumps(old, default=str) == json.dumps(new, default=str)
    return None if same else (path, old, new)


def _said(value: Any) -> str:
    return "absent" if value is _ABSENT else _short(json.dumps(value, default=str))


def _write_out(out: Path, meta: Mapping[str, Any], torn: Sequence[Path]) -> None:
    """The first writes into `out`: the directory, sweep.json, no stale or torn files."""
    outputs.check_out_dir(out, "sweep")
    (out / "cells").mkdir(exist_ok=True)
    for folder in (out, out / "cells"):
        outputs.remove_stale_temporaries(folder)
    for f in torn:
        f.unlink(missing_ok=True)
    outputs.write_json(dict(meta), out / "sweep.json")


def run_sweep(sweep: Sweep, out: Path, workers: int | None = None, executor: str = "local",
              address: str | None = None, resume: bool = False,
              progress: Callable[[int, int, int, int], None] | None = None) -> pl.DataFrame:
    """Run every cell not yet finished in `out`; return the summary of all cells.

    Everything is checked, and a Dask scheduler reached, before anything is
    written into `out`. progress(cells_done, cells_total, hands_done,
    hands_expected) after each task.
    """
    if workers is None:
        workers = default_workers()
    check_workers(workers, "--workers", UsageError)
    _check_executor(executor, address)
    meta = _check_out(out, sweep, resume)
    engine.forget_configs()   # rebuilt from the files as they are now
    done, torn = _read_cells(out, sweep) if resume else ({}, [])
    todo = [c.index for c in sweep.cells if c.index not in done]
    tasks = _tasks(sweep, todo, workers)
    expected_hands = sum(sweep.cells[i].sessions * sweep.cells[i].per_session for i in todo)
    pending = {i: len([t for t in tasks if t.cell == i]) for i in todo}
    parts: dict[int, dict[int, tuple[list[engine.SeatResult], int]]] = {i: {} for i in todo}
    hands_done = 0
    last_write = 0.0
    with ExitStack() as stack:
        client = (stack.enter_context(cluster.dask_client(workers, address))
                  if executor == "dask" and tasks else None)
        _write_out(out, meta, torn)
        if progress:
            progress(len(done), len(sweep.cells), 0, expected_hands)
        written, summary = -1, pl.DataFrame()
        results = _execute(sweep, tasks, workers, client)
        try:
            for task, result in results:
                parts[task.cell][task.lo] = result
                hands_done += result[1]
                pending[task.cell] -= 1
                if pending[task.cell] == 0:
                    cell = sweep.cells[task.cell]
                    ordered = [parts[task.cell][lo] for lo in sorted(parts[task.cell])]
                    frame = _cell_frame(sweep, cell, ordered)
                    outputs.write_parquet(frame, out / "cells" / f"{cell.id}.parquet")
                    done[task.cell] = frame
                    del parts[task.cell]
                    if time.monotonic() - last_write > 2.0:
                        summary = _write_summary(out, sweep, done)
                        written, last_write = len(done), time.monotonic()
                if progress:
                    progress(len(done), len(sweep.cells), hands_done, expected_hands)
        finally:
            # interrupted or failed: the workers stop now (closing the generator ends
            # its pool, and the stack the Dask cluster; left to the garbage collector,
            # they would run on), and the summary still holds every finished cell
            results.close()
            stack.close()
            if len(done) != written:
                summary = _write_summary(out, sweep, done)
    return summary


@contextmanager
def _naming_the_cell(sweep: Sweep, task: Task) -> Iterator[None]:
    """An error a cell's run raises (a strategy's, found only as it plays),
    named by the sweep file and the cell, as the checks before any cell are."""
    try:
        yield
    except BacktestError as exc:
        cell = sweep.cells[task.cell]
        message = str(exc).removeprefix(cell.config.source + ": ")
        raise type(exc)(f"{sweep.source}: cell {cell.index + 1} ({cell.label()}): "
                        f"{message}") from None


def _execute(sweep: Sweep, tasks: Sequence[Task], workers: int, client: Any = None
             ) -> Generator[tuple[Task, tuple[list[engine.SeatResult], int]], None, None]:
    """Each task's result as it finishes: on `client` (Dask) if given, else on
    `workers` local processes (in this one for a single worker)."""
    if not tasks:
        return
    payload = [(dict(sweep.cells[t.cell].config.raw), str(sweep.cells[t.cell].config.base_dir),
                sweep.cells[t.cell].config.source, t.lo, t.hi, False) for t in tasks]
    if client is not None:
        yield from _execute_dask(sweep, tasks, payload, client)
        return
    if workers == 1:
        for task, args in zip(tasks, payload):
            with _naming_the_cell(sweep, task):
                result = engine.run_task(*args)
            yield task, result
        return
    from concurrent.futures import FIRST_COMPLETED, wait

    kinds: set[tuple[str, ...]] = set()
    for task in tasks:
        config = sweep.cells[task.cell].config
        key = tuple(sorted(s.strategy for s in config.seats)) + (str(config.shoe),)
        if key not in kinds:
            kinds.add(key)
            with _naming_the_cell(sweep, task):
                engine.warm(config, engine.build_strategies(config))
    with process_pool(workers) as pool:
        futures = {pool.submit(engine.run_task, *args): task for task, args in zip(tasks, payload)}
        remaining = set(futures)
        while remaining:
            finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for fut in finished:
                with _naming_the_cell(sweep, futures[fut]):
                    result = fut.result()
                yield futures[fut], result


def _execute_dask(sweep: Sweep, tasks: Sequence[Task], payload: Sequence[tuple[Any, ...]],
                  client: Any) -> Iterator[tuple[Task, tuple[list[engine.SeatResult], int]]]:
    from dask.distributed import as_completed

    futures = {client.submit(engine.run_task, *args, pure=False): task
               for task, args in zip(tasks, payload)}
    for fut in as_completed(list(futures)):
        with _naming_the_cell(sweep, futures[fut]):
            result = fut.result()
        yield futures[fut], result


# --- reading the result -------------------------------------------------------------------

#: a change is stated when chance alone would give one as large less often than this
SIGNIFICANCE = 0.01
_RATES = ("ruin_rate", "win_goal_rate", "stop_loss_rate", "winning_sessions")


def trends(summary: pl.DataFrame, keys: Sequence[str], metric: str) -> list[str]:
    """What each varied key does to `metric`, seat by seat (seats are told apart
    by their place in the run config), as a few lines for a person.

    A seat's line gives the metric's mean at each of the key's values (over
    the cells of the other keys' values), and a direction only where the
    change is larger than the noise, at `SIGNIFICANCE`, from the cells'
    standard errors (the edge's, from its confidence interval; a rate's,
    binomial; a z score's, 1): for a key of numbers, "rises" or "falls" by
    the slope of a weighted least-squares line through the means against the
    values' order (one degree of freedom, so a steady change is found when
    each step is small), with no step back beyond the noise; else a
    chi-squared test of the means. The cells are taken as independent; cells
    on common shoes are not (they move together), so there the test errs on
    the side of silence. Seats whose metric does not change beyond the
    noise share one line; a seat the key does not touch (`seats[1].params.base`
    for seat 0) has none; a metric without a standard error (`median_net`)
    gets its means and no verdict. Keys that vary together (a zip, or values
    the grid does not cross) are read together: the change is theirs, not one
    key's. The sweep's `seed`, when varied, makes replications, not a trend.
    """
    if summary.is_empty() or metric not in summary.columns or "cell" not in summary.columns:
        return []
    varied = [k for k in keys if k in summary.columns and _top_key(k) != "seed"]
    ident = {k: f"{k}.json" if f"{k}.json" in summary.columns else k for k in varied}
    frame = summary.with_columns(pl.int_range(pl.len()).over("cell").alias("_seat"),
                                 _standard_error(summary, metric).alias("_se"))
    seats = int(frame["_seat"].max()) + 1  # type: ignore[arg-type]
    lines: list[str] = []
    for group in _read_together(frame.unique("cell", keep="first"), varied, ident):
        touched = {_seat_of(k, seats) for k in group}
        places = range(seats) if None in touched else sorted(t for t in touched
                                                                 if t is not None)
        quiet: list[str] = []
        for place in places:
            rows = frame.filter(pl.col("_seat") == place)
            seat = _seat_name(rows, place, every_seat=None in touched)
            means = _means(rows, group, ident, metric)
            if means.height < 2 or means["_mean"].is_null().all():
                continue
            verdict = _judge(means, metric, group)
            if verdict == _QUIET:
                quiet.append(seat)
                continue
            values = [" & ".join(_short(v) for v in row) for row in means.select(group).rows()]
            shown = ", ".join(f"{v}: {_fmt(metric, x)}"
                              for v, x in zip(values, means["_mean"].to_list()))
            lines.append(f"{metric} by {' and '.join(group)}{_for(seat)}: {shown}"
                         + (f" ({verdict})" if verdict else ""))
        if quiet:
            lines.append(f"{metric} by {' and '.join(group)}: {_QUIET}"
                         + _for(", ".join(s for s in quiet if s)))
    return lines


#: a seat's verdict where the means differ by no more than the noise
_QUIET = "no change beyond the noise"


def _seat_name(rows: pl.DataFrame, place: int, every_seat: bool) -> str:
    """A seat's label, or where a key replaces the seat (its label changes from
    cell to cell) its place (`seats[1]`); none when the key names the seat."""
    names = rows["seat"].cast(pl.String).unique().to_list()
    if len(names) == 1:
        return str(names[0])
    return f"seats[{place}]" if every_seat else ""


def _means(rows: pl.DataFrame, group: Sequence[str], ident: Mapping[str, str],
           metric: str) -> pl.DataFrame:
    """A seat's mean of `metric` at each value of the keys in `group` (over the
    cells of the other keys' values), with its standard error, from the cells
    where the metric has a value (a z is null for a cell without spread)."""
    known = pl.col(metric).is_not_null()
    return (rows.group_by([ident[k] for k in group], maintain_order=True)
            .agg(*[pl.col(k).first() for k in group if ident[k] != k],
                 pl.col(metric).mean().alias("_mean"),
                 (pl.col("_se").filter(known).pow(2).sum().sqrt() / known.sum()).alias("_se"),
                 pl.col("_se").filter(known).is_null().any().alias("_unknown")))


def _judge(means: pl.DataFrame, metric: str, group: Sequence[str]) -> str | None:
    """What the means do, in words (`_QUIET` within the noise), judged on the
    values that have a mean; None where the noise is not known."""
    judged = means.filter(pl.col("_mean").is_not_null())
    if judged["_unknown"].any() or judged.height < 2:
        return None
    return _verdict(judged["_mean"].to_list(), judged["_se"].to_list(), metric, group,
                    judged[group[0]].to_list() if len(group) == 1 else None)


def _for(seats: str) -> str:
    return f" for {seats}" if seats else ""


def _standard_error(summary: pl.DataFrame, metric: str) -> pl.Expr:
    """Each row's standard error of `metric` (null where the summary gives none)."""
    n = pl.col("sessions").cast(pl.Float64)
    if metric in ("edge", "edge_ci_low", "edge_ci_high") and "edge_ci_high" in summary.columns:
        from backtest.metrics import t95

        t = pl.Series(t95(summary["sessions"].cast(pl.Float64).to_numpy()))
        return (pl.col("edge_ci_high") - pl.col("edge_ci_low")) / 2 / pl.lit(t)
    if metric in _RATES:
        # Agresti and Coull's: not 0 when no session (or every one) was ruined
        p = (pl.col(metric) * n + 2) / (n + 4)
        return (p * (1 - p) / (n + 4)).sqrt()
    if metric == "z":
        return pl.when(pl.col("z").is_not_null()).then(pl.lit(1.0))
    return pl.lit(None, dtype=pl.Float64)


def _verdict(means: list[float], errors: list[float], metric: str, group: Sequence[str],
             values: list[Any] | None) -> str | None:
    """What the means do, in words: `_QUIET` when they differ by no more than
    the noise; None when the noise is not known."""
    if max(means) == min(means):
        return _QUIET
    if min(errors) <= 0:
        return None
    from backtest.special import chi2_sf, normal_cdf, normal_quantile

    w = [1 / e ** 2 for e in errors]
    centre = sum(wi * m for wi, m in zip(w, means)) / sum(w)
    q = sum(wi * (m - centre) ** 2 for wi, m in zip(w, means))
    differ = chi2_sf(len(means) - 1, q) < SIGNIFICANCE
    key = group[0]
    if len(group) == 1 and values is not None and \
            all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        # the weighted least-squares slope of the means against the values' ranks
        # (their order, not their spacing: 500, 1000, 2000 are three steps)
        order = sorted(range(len(values)), key=lambda i: values[i])
        m = [means[i] for i in order]
        e = [errors[i] for i in order]
        ws = [w[i] for i in order]
        x_bar = sum(wi * x for x, wi in enumerate(ws)) / sum(ws)
        sxx = sum(wi * (x - x_bar) ** 2 for x, wi in enumerate(ws))
        slope = sum(wi * (x - x_bar) * (mi - centre) for x, (wi, mi) in enumerate(zip(ws, m)))
        z = slope / math.sqrt(sxx)   # the slope (sxy / sxx) over its error (1 / sqrt(sxx))
        # and no step back between neighbours beyond the noise
        turn = -normal_quantile(SIGNIFICANCE / 2)
        steps = [(b - a) / math.hypot(se_a, se_b) for a, b, se_a, se_b in zip(m, m[1:], e, e[1:])]
        if 2 * normal_cdf(-abs(z)) < SIGNIFICANCE and \
                (min(steps) > -turn if z > 0 else max(steps) < turn):
            return f"{metric} rises with {key}" if z > 0 else f"{metric} falls as {key} rises"
        return f"{metric} changes with {key} beyond the noise, not steadily" if differ else _QUIET
    if not differ:
        return _QUIET
    if len(group) > 1:
        return (f"it changes beyond the noise, but {' and '.join(group)} vary together, "
                "so either may be the cause")
    return f"{metric} changes with {key} beyond the noise"


def _read_together(cells: pl.DataFrame, keys: Sequence[str], ident: Mapping[str, str]
                   ) -> list[list[str]]:
    """The keys in groups that vary together, each group in the keys' order: two
    keys are together when the cells do not hold every pair of their values (a
    zip), so a change cannot be told apart between them."""
    counts = {k: cells[ident[k]].n_unique() for k in keys}

    def together(a: str, b: str) -> bool:
        return cells.select(ident[a], ident[b]).unique().height < counts[a] * counts[b]

    groups: list[list[str]] = []
    for k in keys:
        joined = [g for g in groups if any(together(j, k) for j in g)]
        groups = [g for g in groups if g not in joined] + [[j for g in joined for j in g] + [k]]
    order = {k: i for i, k in enumerate(keys)}
    return sorted((sorted(g, key=order.__getitem__) for g in groups),
                  key=lambda g: order[g[0]])


def _seat_of(key: str, seats: int) -> int | None:
    """The one seat a key path sets (`seats[1].params.base`: 1), or None for all."""
    parts = parse_path(key)
    if parts[0] == "seats" and len(parts) > 1 and isinstance(parts[1], int):
        return parts[1] % seats if -seats <= parts[1] < seats else None
    return None


def _fmt(metric: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if metric in ("edge", "expected_edge", "edge_ci_low", "edge_ci_high", *_RATES):
        return f"{100 * value:.2f}%"
    return f"{value:,.4g}"


def render_table(summary: pl.DataFrame, keys: Sequence[str], metric: str) -> str:
    """The sweep's summary sorted by `metric`, as a fixed-width table."""
    if summary.is_empty():
        return "no finished cells"
    cols = ["cell", *[k for k in keys if k in summary.columns], "seat", "sessions", "hands",
            "edge", "expected_edge", "z", "ruin_rate", "win_goal_rate", "median_net"]
    if metric not in cols:
        cols.append(metric)
    frame = summary.sort(metric, descending=True, nulls_last=True).select(cols)
    rows = [[_cell_text(c, v) for c, v in zip(cols, r)] for r in frame.rows()]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    line = lambda cells: "  ".join(x.rjust(w) for x, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(cols), line(["-" * w for w in widths]), *map(line, rows)])


def _cell_text(col: str, v: Any) -> str:
    if isinstance(v, float):
        if col in ("z",):
            return f"{v:+.2f}"
        if col in ("hands", "sessions"):
            return f"{v:,.0f}"
        return _fmt(col, v) if col != "median_net" else f"{v:,.2f}"
    if isinstance(v, int) and col in ("hands", "sessions"):
        return f"{v:,}"
    return _short(v) if v is not None else "n/a"

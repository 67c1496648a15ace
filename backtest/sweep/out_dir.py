"""A sweep's `--out`: whether what is there is this sweep's (and what
differs if not), the finished cells read back, each cell's frame and the
summary written, and the sweep's settings kept for `--resume`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from backtest.core.errors import UsageError
from backtest.present import outputs
from backtest.run import chunks
from backtest.sweep.cells import Cell, Sweep, short_value, value_label


def cell_frames(
    finished: Sequence[tuple[Cell, Sequence[tuple[list[chunks.SeatResult], int]]]],
) -> list[pl.DataFrame]:
    """Each finished cell's frame (its chunks' results in session order): a
    row per seat of the run's summary, after a column per varied value, with
    the hands dealt and the seed. Made together: the cells' sessions in one
    sessions frame and their rows in one summary (making a frame costs about
    a millisecond, however few its rows)."""
    from backtest.run import metrics

    seats = []  # (seat, its sessions, the cell's tick)
    for cell, parts in finished:
        merged, _ = chunks.merge_parts(parts)
        tick = 100.0 * cell.config.rules.money_denominator
        seats += [(seat, r, tick) for seat, r in zip(cell.config.seats, merged)]
    sizes = [len(r.stats) for _, r, _ in seats]
    assert all(sizes), "a cell has at least one session"

    def joined(name: str) -> np.ndarray:
        return np.concatenate([getattr(r, name) for _, r, _ in seats])

    sessions = metrics.sessions_frame(
        "",  # (the summary takes each seat's names from its cell's config)
        "",
        joined("stats"),
        joined("wagered"),
        joined("expected"),
        np.repeat([tick for *_, tick in seats], sizes),
        variance=joined("variance"),
        largest=joined("largest"),
        cross=joined("cross"),
    )
    starts = np.cumsum([0, *sizes]).tolist()
    summary = metrics.summary(
        [
            (seat.label, seat.strategy, metrics.frame_blocks(sessions.slice(a, n)))
            for (seat, _, _), a, n in zip(seats, starts, sizes)
        ]
    )
    out, row = [], 0
    for cell, parts in finished:
        height = len(cell.config.seats)
        out.append(_cell_frame(cell, summary.slice(row, height), sum(p[1] for p in parts)))
        row += height
    return out


def _cell_frame(cell: Cell, summary: pl.DataFrame, hands: int) -> pl.DataFrame:
    """A cell's frame: its values' columns, its summary rows, its hands and seed."""
    cols: dict[str, Any] = {"cell": cell.index + 1, "cell_id": cell.id}
    for key, value in cell.values:
        if isinstance(value, (int, float, str, bool)):
            cols[key] = _storable(value)
        else:
            cols[key] = value_label(value)
            cols[f"{key}.json"] = json.dumps(value, sort_keys=True, default=str)
    lead = pl.DataFrame({k: [v] * summary.height for k, v in cols.items()})
    table_hands = _repeated("table_hands", hands, summary.height)
    seed = _repeated("seed", _storable(cell.config.seed), summary.height)
    if "seed" in cols:  # a varied seed: its column, in its place
        lead.replace_column(list(cols).index("seed"), seed)
        return pl.concat([lead, summary, pl.DataFrame([table_hands])], how="horizontal")
    return pl.concat([lead, summary, pl.DataFrame([table_hands, seed])], how="horizontal")


def _repeated(name: str, value: int | str, n: int) -> pl.Series:
    """`value` n times, typed as `pl.lit(value)` is (a whole number 32-bit
    where it fits), built without an expression (whose query costs more than
    a small cell's other work)."""
    if isinstance(value, str):
        return pl.Series(name, [value] * n, pl.String)
    return pl.Series(name, [value] * n, pl.Int32 if -(2**31) <= value < 2**31 else pl.Int64)


def _storable(value: Any) -> Any:
    """A whole number too large for a 64-bit column (a run config takes any seed)
    as its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return str(value)
    return value


#: the key of a cell file's key-value metadata that records what made it (`made_with`)
MADE_WITH = "backtest.cell"


def made_with(sweep: Sweep, cell: Cell) -> dict[str, str]:
    """What a cell's numbers were made with, recorded in its file's metadata
    (`MADE_WITH`, as JSON): the cell's settings (its varied values, sessions
    and seed, within the sweep's spec hash), the digests of what it read (the
    rules as read, recorded shoes, a strategy's own file) and of the code."""
    from backtest.sweep.digests import code_digest

    inputs = json.dumps(dict(sweep.inputs), sort_keys=True)
    record = {
        "cell": cell.key,
        "sessions": str(cell.sessions),
        "seed": str(cell.config.seed),
        "spec_hash": sweep.spec_hash,
        "inputs_sha256": hashlib.sha256(inputs.encode()).hexdigest(),
        "code_sha256": code_digest(),
    }
    return {MADE_WITH: json.dumps(record, sort_keys=True)}


#: what a difference in each of `made_with`'s entries is said as
_MADE_WITH_WORDS = {
    "cell": "other varied values",
    "spec_hash": "other settings of the sweep",
    "inputs_sha256": "other rules or files (recorded shoes, a strategy's own file)",
    "code_sha256": "another version of the code",
}


def _check_made_with(out: Path, sweep: Sweep, cell: Cell, f: Path) -> None:
    """Refuse a cell file not made with this cell's settings, inputs and code."""
    try:
        recorded = pl.read_parquet_metadata(f).get(MADE_WITH)
        was = json.loads(recorded) if recorded is not None else None
    except Exception:  # torn, or not Parquet: read (and said) as torn
        return
    now = json.loads(made_with(sweep, cell)[MADE_WITH])
    where = f"--out {out}: {f.relative_to(out)}"
    advice = "use another --out, or delete the cell's file to run it again"
    if not isinstance(was, dict):
        raise UsageError(
            f"{where} does not record what it was made with (an earlier version made "
            f"it), so it cannot be resumed from; {advice}"
        )
    for key in ("sessions", "seed"):
        if was.get(key) != now[key]:
            raise UsageError(
                f"{where} was made with {key} {was.get(key)}, and cell {cell.index + 1} "
                f"({cell.label()}) has {now[key]} now; {advice}"
            )
    for key, words in _MADE_WITH_WORDS.items():
        if was.get(key) != now[key]:
            raise UsageError(
                f"{where} was made with {words} than cell {cell.index + 1} "
                f"({cell.label()}) has now; {advice}"
            )


def read_cells(out: Path, sweep: Sweep) -> tuple[dict[int, pl.DataFrame], list[Path]]:
    """The finished cells in `out`, and the files that cannot be read (torn by
    a kill: not finished cells, and run again). Reads only. A usage error for
    a cell file made with other settings, inputs or code than its cell has
    now (`made_with`)."""
    done, torn = {}, []
    for cell in sweep.cells:
        f = out / "cells" / f"{cell.id}.parquet"
        if f.is_file():
            _check_made_with(out, sweep, cell, f)
            try:
                done[cell.index] = pl.read_parquet(f)
            except Exception:  # polars raises several kinds for a file that is not Parquet
                torn.append(f)
    return done, torn


def write_summary(out: Path, sweep: Sweep, done: Mapping[int, pl.DataFrame]) -> pl.DataFrame:
    frames = [done[i] for i in sorted(done)]
    summary = pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
    outputs.write_parquet(
        summary, out / "summary.parquet", outputs.provenance(sweep.seed, sweep.spec_hash)
    )
    return summary


def check_out(out: Path, sweep: Sweep, resume: bool) -> dict[str, Any]:
    """What sweep.json is to hold, once `out` is known to take this sweep: a
    directory (or none yet) holding no other sweep, and no cells of this one
    unless resumed. Writes nothing there but check_out_dir's probe (a temporary
    file, gone at once): `out` is written after the executor is ready."""
    meta = {
        "kind": "sweep",
        "name": sweep.name,
        "source": sweep.source,
        "seed": sweep.seed,
        "keys": list(sweep.keys),
        "metric": sweep.metric,
        "cells": len(sweep.cells),
        "spec_hash": sweep.spec_hash,
        "inputs": dict(sweep.inputs),
        "settings": dict(sweep.settings),
    }
    if not out.exists():
        return meta
    outputs.check_out_dir(out, "sweep")  # (an existing directory is left as it is)
    meta_path = out / "sweep.json"
    if not meta_path.is_file():
        if any((out / "cells").glob("*.parquet")):
            raise UsageError(
                f"--out {out} holds cells but no {meta_path.name}, so which sweep they "
                "belong to is unknown; use another directory, or delete it to start again"
            )
        return meta
    try:
        old = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"--out {out}: {meta_path.name} cannot be read ({exc}), so which "
            "sweep its cells belong to is unknown; use another directory, or "
            "delete it to start again"
        ) from None
    if not isinstance(old, dict) or old.get("spec_hash") != sweep.spec_hash:
        name = old.get("name", "?") if isinstance(old, dict) else "?"
        raise UsageError(
            f"--out {out} holds a different sweep ({name}): "
            f"{_what_differs(old, sweep, meta_path)}; use another --out, or the "
            f"settings in {meta_path} to resume that sweep, or delete {out} to "
            "start again"
        )
    was = old.get("inputs")
    finished = any((out / "cells").glob("*.parquet"))
    # compared only when there are cells run on them (a sweep.json written
    # before the inputs were recorded has none to compare)
    if isinstance(was, dict) and was != dict(sweep.inputs) and finished:
        changed = [
            ("the rules" if k == "rules" else k)
            for k in sorted(set(was) | set(sweep.inputs))
            if was.get(k) != sweep.inputs.get(k)
        ]
        raise UsageError(
            f"--out {out}: {', '.join(changed)} changed since this sweep's cells "
            "were run, so new cells would not be comparable with them; use "
            "another directory, or delete it to start again"
        )
    complete = all((out / "cells" / f"{cell.id}.parquet").is_file() for cell in sweep.cells)
    if not resume and finished and not complete:  # a finished sweep is printed again
        raise UsageError(
            f"--out {out} already holds cells of this sweep: pass --resume to "
            "finish it, or use another directory"
        )
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
    else:  # written before the settings were kept: what it has
        found = _first_difference(
            {k: old.get(k, _ABSENT) for k in ("seed", "keys", "cells")},
            {"seed": sweep.seed, "keys": list(sweep.keys), "cells": len(sweep.cells)},
            "",
            (),
        )
        found = (found[0].replace("keys", "varied keys", 1), *found[1:]) if found else None
    if found is None:
        return (
            f"what decides its numbers differs, though not in a setting {meta_path} "
            "records (it was written by another version)"
        )
    path, was, now = found
    if path.startswith("run."):
        path = f"{path[4:]} of the run config"
    return f"{path}: {_said(was)} in {meta_path}, {_said(now)} now"


def _first_difference(
    old: Any, new: Any, path: str, order: Sequence[str]
) -> tuple[str, Any, Any] | None:
    """(key path, old value, new value) of the first difference, or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        if path in ("grid", "zip") and list(old) != list(new):  # other keys, or in another order
            return f"the keys of {path}", list(old), list(new)
        keys = [k for k in order if k in old or k in new]
        keys += [k for k in (*new, *old) if k not in keys]
        for key in dict.fromkeys(keys):
            inner = f"{path}.{key}" if path else str(key)
            found = _first_difference(old.get(key, _ABSENT), new.get(key, _ABSENT), inner, ())
            if found is not None:
                return found
        return None
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and len(old) == len(new)
        and any(isinstance(v, (dict, list)) for v in (*old, *new))
    ):
        for i, (a, b) in enumerate(zip(old, new)):
            found = _first_difference(a, b, f"{path}[{i}]", ())
            if found is not None:
                return found
        return None
    # as JSON text: 300 and 300.0 (or true and 1) are other settings, as the hash says
    same = json.dumps(old, default=str) == json.dumps(new, default=str)
    return None if same else (path, old, new)


def _said(value: Any) -> str:
    return "absent" if value is _ABSENT else short_value(json.dumps(value, default=str))


def write_out(out: Path, meta: Mapping[str, Any], torn: Sequence[Path]) -> None:
    """The first writes into `out`: the directory, sweep.json, no stale or torn files."""
    outputs.check_out_dir(out, "sweep")
    (out / "cells").mkdir(exist_ok=True)
    for folder in (out, out / "cells"):
        outputs.remove_stale_temporaries(folder)
    outputs.remove_stale_run_folders(None)  # a killed run's spilled sessions
    for f in torn:
        f.unlink(missing_ok=True)
    outputs.write_json(dict(meta), out / "sweep.json")


def all_finished(sweep: Sweep, out: Path) -> bool:
    """Whether every cell of `sweep` has its file in `out` (it is printed
    again, nothing run)."""
    return all((out / "cells" / f"{c.id}.parquet").is_file() for c in sweep.cells)

"""A results directory read and checked: what `backtest run --out DIR` or
`backtest sweep --out DIR` wrote, as frames and metadata."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from backtest.core.errors import BacktestError, UsageError, shown

EXPECTED = (
    "expected the output of `backtest run --out DIR` (run.json, summary.parquet, "
    "sessions.parquet) or of `backtest sweep --out DIR` (sweep.json, summary.parquet)"
)

SUMMARY_COLUMNS = (
    "seat",
    "sessions",
    "hands",
    "wagered",
    "net",
    "edge",
    "edge_hands_ci_low",
    "edge_hands_ci_high",
    "expected_edge",
    "z_hands",
    "ruin_rate",
    "win_goal_rate",
    "winning_sessions",
    "median_net",
)
SESSION_COLUMNS = (
    "seat",
    "session",
    "hands",
    "wagered",
    "net",
    "expected_net",
    "final_bankroll",
    "ended_by",
)
PATH_COLUMNS = ("seat", "session", "hand", "bankroll")
#: what the report reads of comparisons.parquet (`comparisons.COLUMNS`)
COMPARISON_COLUMNS = (
    "seat_a",
    "seat_b",
    "sessions",
    "edge_a",
    "edge_b",
    "edge_diff",
    "edge_diff_ci_low",
    "edge_diff_ci_high",
    "edge_diff_p",
    "edge_diff_top_share",
    "mean_net_diff",
    "mean_net_diff_ci_low",
    "mean_net_diff_ci_high",
    "mean_net_diff_p",
    "winning_sessions_a",
    "winning_sessions_b",
    "winning_sessions_diff_p",
    "ruin_rate_a",
    "ruin_rate_b",
    "ruin_rate_diff_p",
)


class ReportError(BacktestError):
    """A results directory cannot be reported on (incomplete, or unreadable)."""


@dataclass(frozen=True)
class Results:
    """What a run or a sweep wrote to its directory."""

    directory: Path
    kind: str  # "run" or "sweep"
    meta: dict[str, Any]  # run.json or sweep.json
    summary: pl.DataFrame
    sessions: pl.DataFrame | None = None  # a run's sessions
    paths: pl.DataFrame | None = None  # a run's bankroll paths, when written
    #: a run's seats against its baseline (`comparisons.compare`), with two seats or more
    comparisons: pl.DataFrame | None = None

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.directory.name)

    @property
    def bankroll(self) -> float:
        """A run's starting bankroll."""
        return float(self.meta["bankroll"])

    @property
    def keys(self) -> tuple[str, ...]:
        """A sweep's varied key paths (each a column of its summary)."""
        return tuple(k for k in self.meta.get("keys", ()) if k in self.summary.columns)


def load_results(directory: str | Path) -> Results:
    """Read a run's or a sweep's output directory, checking it is complete."""
    directory = Path(directory)
    if not directory.exists():
        raise UsageError(f"{directory}: no such directory; {EXPECTED}")
    if not directory.is_dir():
        raise UsageError(f"{directory} is a file, not a directory; {EXPECTED}")
    run_json, sweep_json = directory / "run.json", directory / "sweep.json"
    if run_json.is_file() and sweep_json.is_file():
        raise ReportError(
            f"{directory} holds both run.json and sweep.json: write a run and a "
            "sweep to different directories"
        )
    if run_json.is_file():
        return _load_run(directory, _read_meta(run_json, "run"))
    if sweep_json.is_file():
        return _load_sweep(directory, _read_meta(sweep_json, "sweep"))
    found = (
        "summary.parquet but no run.json or sweep.json"
        if (directory / "summary.parquet").is_file()
        else "no run.json or sweep.json"
    )
    raise UsageError(f"{directory} holds {found}; {EXPECTED}")


def _read_meta(path: Path, kind: str) -> dict[str, Any]:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReportError(f"{path}: cannot be read as JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("kind") != kind:
        got = meta.get("kind") if isinstance(meta, dict) else None
        raise ReportError(f'{path}: expected "kind": "{kind}", got {got!r}')
    # what the report reads, if present, of the types the run or sweep wrote
    whole = "a whole number"
    for key, ok, what in (
        ("name", lambda v: isinstance(v, str), "text"),
        ("seed", _whole, whole),
        ("hands", _whole, whole),
        ("sessions", _whole, whole),
        ("cells", _whole, whole),
        (
            "keys",
            lambda v: isinstance(v, list) and all(isinstance(k, str) for k in v),
            "a list of key paths",
        ),
    ):
        if key in meta and not ok(meta[key]):
            raise ReportError(
                f"{path}: {key}: expected {what}, got {shown(meta[key])}; "
                "the file was not written by backtest, or was edited"
            )
    return meta


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _read_parquet(path: Path, columns: Sequence[str]) -> pl.DataFrame:
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # polars raises several kinds for a file that is not Parquet
        raise ReportError(f"{path}: cannot be read as Parquet: {exc}") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ReportError(f"{path}: lacks the column(s) {', '.join(missing)}")
    return frame


def _load_run(directory: Path, meta: dict[str, Any]) -> Results:
    if not isinstance(meta.get("bankroll"), (int, float)):
        raise ReportError(f'{directory / "run.json"}: lacks the starting bankroll ("bankroll")')
    summary_file = directory / "summary.parquet"
    if not summary_file.is_file():
        raise ReportError(
            f"{directory}: the run did not finish: summary.parquet (written last) "
            "is missing; run `backtest run CONFIG.yaml --out DIR` again"
        )
    sessions_file = directory / "sessions.parquet"
    if not sessions_file.is_file():
        raise ReportError(f"{directory}: sessions.parquet is missing; {EXPECTED}")
    summary = _read_parquet(summary_file, SUMMARY_COLUMNS)
    if summary.is_empty():
        raise ReportError(f"{summary_file}: has no seats")
    sessions = _read_parquet(sessions_file, SESSION_COLUMNS)
    paths_file = directory / "paths.parquet"
    paths = _read_parquet(paths_file, PATH_COLUMNS) if paths_file.is_file() else None
    paired_file = directory / "comparisons.parquet"
    paired = _read_parquet(paired_file, COMPARISON_COLUMNS) if paired_file.is_file() else None
    return Results(directory, "run", meta, summary, sessions, paths, paired)


def _load_sweep(directory: Path, meta: dict[str, Any]) -> Results:
    """The finished cells: cells/*.parquet (each written as its cell finished), else
    summary.parquet."""
    cells = sorted((directory / "cells").glob("*.parquet"))
    if cells:
        frames = [_read_parquet(f, ("cell", *SUMMARY_COLUMNS)) for f in cells]
        summary = pl.concat(frames, how="diagonal_relaxed").sort("cell", maintain_order=True)
    elif (directory / "summary.parquet").is_file():
        summary = _read_parquet(directory / "summary.parquet", ())
    else:
        summary = pl.DataFrame()
    if summary.is_empty():
        raise ReportError(
            f"{directory}: the sweep has no finished cells yet; finish it with "
            f"`backtest sweep SWEEP.yaml --out {directory} --resume`"
        )
    missing = [c for c in ("cell", *SUMMARY_COLUMNS) if c not in summary.columns]
    if missing:
        raise ReportError(
            f"{directory / 'summary.parquet'}: lacks the column(s) {', '.join(missing)}"
        )
    return Results(directory, "sweep", meta, summary)

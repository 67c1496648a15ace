"""The run config the big-file tests play a shoe file with: flat Banker and
a Martingale (and follow-the-shoe if asked) at a table of 1 to 100, over the
file's shoes, looped when `sessions` is given; and a run of a file read
whole beside one read of the cache."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from backtest.run.config import RunConfig, parse_config

SEATS = [
    {"strategy": "flat", "params": {"bets": {"banker": 5}}},
    {"strategy": "martingale", "params": {"base": 5}},
]
FOLLOW = {"strategy": "follow-the-shoe", "params": {"base": 5}}


def recorded_run(
    path: Path, sessions: int | None, *, follow: bool = False, **session: Any
) -> RunConfig:
    shoes: dict[str, Any] = {"file": path.name, "loop": sessions is not None, "decks": 1}
    data: dict[str, Any] = {
        "seed": 1,
        "shoes": shoes,
        "session": {"bankroll": 300, **session},
        "table": {"min": 1, "max": 100},
        "seats": [*SEATS, FOLLOW] if follow else list(SEATS),
    }
    if sessions is not None:
        data["sessions"] = sessions
    return parse_config(data, base_dir=path.parent, source="big.yaml")


def runs_alike(monkeypatch: Any, path: Path, make: Callable[[Path], RunConfig]) -> tuple[Any, Any]:
    """Run `make(path)` with the file read whole, and read as a big file is:
    as Parquet in the cache (`recorded.cache`), however few sessions. Their
    sessions, summaries and ledgers are the same; returns the two results."""
    from backtest.run import engine, recorded_plan
    from backtest.shoes.recorded import cache

    results = []
    for big in (False, True):
        for name in ("BIG_BYTES", "BIG_PARQUET_BYTES"):
            monkeypatch.setattr(cache, name, 0 if big else 1 << 40)
        monkeypatch.setattr(recorded_plan, "HELD_HANDS", 0 if big else 1 << 20)
        recorded_plan.READS.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (stakes off the table's limits)
            results.append(engine.run(make(path), ledger=True, workers=1))
        read, _ = recorded_plan.read_recorded(make(path), None)
        assert (read.columnar is not None) == big
    whole, cached = results
    assert whole.n_sessions == cached.n_sessions > 1
    assert whole.summary.equals(cached.summary)
    assert whole.ledger is not None and whole.ledger.equals(cached.ledger)
    return whole, cached

"""The run config the streamed- and indexed-read tests play a shoe file
with: flat Banker and a Martingale (and follow-the-shoe if asked) at a
table of 1 to 100, over the file's shoes, looped when `sessions` is given;
and a run, or `deal`, of a file read whole beside one read of the cache."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from backtest.run.config import RunConfig, parse_config

SEATS = [
    {"strategy": "flat", "params": {"bets": {"banker": 5}}},
    {"strategy": "martingale", "params": {"base": 5}},
]
FOLLOW = {"strategy": "follow-the-shoe", "params": {"base": 5}}


def recorded_run(
    path: Path,
    sessions: int | None,
    *,
    decks: int | None = 1,
    follow: bool = False,
    source: str = "streamed.yaml",
    **session: Any,
) -> RunConfig:
    shoes: dict[str, Any] = {"file": path.name, "loop": sessions is not None}
    if decks is not None:
        shoes["decks"] = decks
    data: dict[str, Any] = {
        "seed": 1,
        "shoes": shoes,
        "session": {"bankroll": 300, **session},
        "table": {"min": 1, "max": 100},
        "seats": [*SEATS, FOLLOW] if follow else list(SEATS),
    }
    if sessions is not None:
        data["sessions"] = sessions
    return parse_config(data, base_dir=path.parent, source=source)


def runs_alike(
    monkeypatch: Any,
    runs: Sequence[tuple[Path, int]],
    make: Callable[[Path], RunConfig],
    setting: str = "STREAMED_BYTES",
) -> tuple[Any, Any]:
    """Run `make(path)` for the two (path, limit) of `runs`, with
    `stream.<setting>` at that limit: the first file read whole, the second
    as Parquet in the cache (`recorded.cache`), however few sessions. Their
    sessions, summaries and ledgers are the same; returns the two results."""
    from backtest.run import engine, recorded_plan
    from backtest.shoes.recorded import stream

    results = []
    for k, (path, limit) in enumerate(runs):
        monkeypatch.setattr(stream, setting, limit)
        monkeypatch.setattr(recorded_plan, "HELD_HANDS", 0 if k else 1 << 20)
        recorded_plan.READS.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (stakes off the table's limits)
            results.append(engine.run(make(path), ledger=True, workers=1))
        read, _ = recorded_plan.read_recorded(make(path), None)
        assert (read.columnar is not None) == (k == 1)
    whole, indexed = results
    assert whole.n_sessions == indexed.n_sessions > 1
    assert whole.summary.equals(indexed.summary)
    assert whole.ledger is not None and whole.ledger.equals(indexed.ledger)
    return whole, indexed


def deals_alike(
    monkeypatch: Any, capsys: Any, path: Path, fmt: str, setting: str, limits: Sequence[int]
) -> None:
    """`deal` prints `path` in `fmt` alike with `stream.<setting>` at each of
    `limits` (the file read whole, and by its index), in blocks of a few shoes."""
    from cli_helpers import backtest_here

    from backtest.present import render
    from backtest.shoes.recorded import stream

    monkeypatch.setattr(render, "BLOCK_HANDS", 40)
    printed = []
    for limit in limits:
        monkeypatch.setattr(stream, setting, limit)
        code, out, err = backtest_here(
            monkeypatch, capsys, "deal", "--decks", "1", str(path), "-f", fmt
        )
        assert code == 0, err
        printed.append(out)
    assert all(out == printed[0] for out in printed)

"""A run's ledger streamed to files as its chunks finish (`run(spill=...)`,
as `backtest run --ledger --out DIR` runs), the same rows as one kept in
memory, which is for small runs only."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from backtest.core.errors import OutputError, UsageError
from backtest.run import engine
from backtest.run.config import load_config

REPO = Path(__file__).resolve().parents[2]


def test_a_spilled_ledger_is_a_lazy_frame_of_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = load_config(REPO / "configs" / "verdict.yaml")
    kept = engine.run(cfg, sessions=60, workers=1, ledger=True)
    monkeypatch.setattr(engine, "LEDGER_CHUNK_ROWS", 2000)  # several chunks, several files
    spilled = engine.run(cfg, sessions=60, workers=1, ledger=True, spill=tmp_path)
    assert isinstance(kept.ledger, pl.DataFrame) and isinstance(spilled.ledger, pl.LazyFrame)
    assert len(list(tmp_path.glob("ledger-0000-*.arrow"))) >= 3
    assert spilled.ledger.collect().equals(kept.ledger)
    assert spilled.summary.equals(kept.summary)


def test_a_ledger_in_memory_is_refused_past_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config(REPO / "configs" / "verdict.yaml")
    monkeypatch.setattr(engine, "MEMORY_LEDGER_ROWS", 1000)
    with pytest.raises(UsageError, match=r"a ledger kept in memory holds at most 1,000 rows"):
        engine.run(cfg, sessions=100, workers=1, ledger=True)


def test_a_full_disk_names_the_file_it_could_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(self: pl.DataFrame, path: Path, **kwargs: object) -> None:
        raise OSError("No space left on device (os error 28)")

    monkeypatch.setattr(pl.DataFrame, "write_ipc", full)
    cfg = load_config(REPO / "configs" / "verdict.yaml")
    with pytest.raises(OutputError) as raised:
        engine.run(cfg, sessions=20, workers=1, spill=tmp_path)
    assert str(raised.value).startswith(
        f"cannot write {tmp_path / 'sessions-0000-000000000000.arrow'}, where the run keeps "
        "its sessions while it runs: No space left on device (os error 28); free some space"
    )

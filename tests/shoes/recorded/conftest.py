"""The recorded-shoe tests' cache of converted files: a folder of each test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from backtest.shoes.recorded import cache


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "_cache_base", lambda: tmp_path / "shoe-cache")

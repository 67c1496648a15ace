"""Fixtures shared by the test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's top folder (where `configs/` lives)."""
    return REPO_ROOT

"""Fixtures shared by the test modules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# the tests of a package live in its folder (tests/odds/, tests/sweep/, ...): the
# shared helpers (`cli_helpers`) are imported from here
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's top folder (where `configs/` lives)."""
    return REPO_ROOT

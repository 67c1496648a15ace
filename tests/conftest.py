"""Fixtures shared by the test modules."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# the tests of a package live in its folder (tests/odds/, tests/sweep/, ...): the
# shared helpers (`cli_helpers`) are imported from here
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Ctrl-C answered as in a terminal: a test process started in the background
# has it ignored from its start, and so would every command a test starts (an
# ignored signal stays ignored across exec; a handled one is reset)
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's top folder (where `configs/` lives)."""
    return REPO_ROOT


#: the longest tests of each tier (a part of their node id), longest first: they
#: start first, so that the workers (`-n auto`) end together rather than one
#: waiting on the other's last long test. The first run's test compiles the
#: table on a fresh cache, in a process of its own.
LONGEST = (
    "test_first_run.py",
    "test_convergence.py",
    "test_on_fair_shoes_the_p_values_are_uniform",
    "test_run_cli.py",
    "test_the_summary_agrees_with_polars_and_not_with_the_blocks",
    "test_removing_cards_matches_the_oracle",
    "test_commands_that_need_the_first_shoes_stop_there",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the `LONGEST` tests first, in that order; the others as collected."""

    def rank(item: pytest.Item) -> int:
        return next((k for k, part in enumerate(LONGEST) if part in item.nodeid), len(LONGEST))

    items.sort(key=rank)

"""What a command loads: nothing compiled for what needs nothing compiled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from backtest.shoes.recorded import card_level

ROOT = Path(__file__).resolve().parents[1]
SHOE = str(ROOT / "data" / "generated-6deck-seed2.txt")


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["odds"],
        ["odds", "--decks", "1", "--remove", "5 5"],
        ["deal", SHOE],
        ["roads", SHOE],
        ["shoe", "--help"],
        ["shoe", "generate", "--count", "3", "--cut", "random"],
        ["strategies"],
        ["strategies", "martingale", "counter"],
    ],
    ids=lambda a: " ".join(a)[:20],
)
@pytest.mark.slow
def test_a_command_that_compiles_nothing_loads_no_numba(args: list[str]) -> None:
    code = (
        "import sys; from backtest.cli import main; sys.argv = ['backtest', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "assert 'numba' not in sys.modules, 'numba was loaded'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout


def test_short_and_long_card_sequences_are_dealt_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules deal a short sequence, the compiled kernel a long one: the
    same columns and cards used, whichever deals (a tail of 0 to 5 cards)."""
    rng = np.random.default_rng(11)
    for length in (0, 3, 4, 5, 6, 7, 97, 2_000):
        cards = rng.integers(1, 14, size=length, dtype=np.uint8) | (
            rng.integers(0, 4, size=length, dtype=np.uint8) << 4
        )
        monkeypatch.setattr(card_level, "PYTHON_DEAL_CARDS", 10**9)
        by_rules, used_rules = card_level.deal_cards(cards)
        monkeypatch.setattr(card_level, "PYTHON_DEAL_CARDS", 0)
        by_kernel, used_kernel = card_level.deal_cards(cards)
        assert used_rules == used_kernel, length
        assert by_rules.keys() == by_kernel.keys()
        for name in by_rules:
            assert np.array_equal(by_rules[name], by_kernel[name]), (length, name)


def test_a_lazily_compiled_function_is_inlined_and_called_alike() -> None:
    """A `lazy_jit` function, called from Python, from compiled code, and
    inlined into compiled code, gives what its Python form gives."""
    from numba import njit

    from backtest.jit.lazy_jit import kernel

    @kernel(inline=True, cache=False)
    def inlined(x: int) -> int:
        return 3 * x + 1

    @kernel(cache=False)
    def called(x: int) -> int:
        return inlined(x) * 2

    @njit
    def caller(x: int) -> int:
        return inlined(x) + called(x)

    assert inlined(4) == inlined.py_func(4) == 13
    assert called(4) == 26 and caller(4) == 39
    assert inlined.targetoptions == {"cache": False, "inline": "always"}

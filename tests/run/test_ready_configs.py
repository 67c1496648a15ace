"""The ready run configs in `configs/strategies/`: one for every built-in strategy.

Each file is read and validated by the project's own loader (`load_config`,
as `backtest run` reads it), plays the built-in it is named after, and runs a
few sessions through the engine without an error or a warning.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from backtest.run import engine, plan, seats
from backtest.run.config import RunConfig, load_config
from backtest.shoes.recorded import IncompleteHandWarning
from strategies import registry
from strategies.registry import BUILTIN_NAMES

REPO = Path(__file__).resolve().parents[2]
READY = sorted((REPO / "configs" / "strategies").glob("*.yaml"))
#: sessions of a smoke run (a counting seat works out exact odds before every hand)
SMOKE_SESSIONS = 3


def strategies_played(config: RunConfig) -> set[str]:
    """The built-in names a config's seats play (aliases resolved)."""
    return {registry.get(seat.strategy, config.base_dir).name for seat in config.seats}


def test_the_ready_configs_are_found() -> None:
    assert len(READY) >= len(BUILTIN_NAMES) > 0


@pytest.mark.parametrize("path", READY, ids=[p.stem for p in READY])
def test_a_ready_config_loads_and_plays_the_built_in_it_is_named_after(path: Path) -> None:
    config = load_config(path)
    assert path.stem in BUILTIN_NAMES, f"{path.name} is named after no built-in strategy"
    assert config.name == path.stem
    assert config.seats and strategies_played(config) == {path.stem}
    assert config.sessions is not None and config.sessions >= 1
    assert config.shoe is not None and config.recorded is None  # needs no data file


def test_every_built_in_strategy_has_one_ready_config() -> None:
    played: dict[str, list[str]] = {name: [] for name in BUILTIN_NAMES}
    for path in READY:
        for name in strategies_played(load_config(path)):
            played.setdefault(name, []).append(path.name)
    missing = sorted(name for name, files in played.items() if not files)
    assert not missing, f"no ready config in configs/strategies/ for {', '.join(missing)}"
    several = {name: files for name, files in played.items() if len(files) > 1}
    assert not several, f"built-ins with more than one ready config: {several}"


@pytest.mark.parametrize("path", READY, ids=[p.stem for p in READY])
def test_a_ready_config_runs_a_few_sessions_as_written(path: Path) -> None:
    config = load_config(path)
    with warnings.catch_warnings():
        # a stake under the table minimum (raised to it) would not run as written, nor
        # would shoes played again or left out (numba's own warnings, as it compiles
        # with a cold cache, are not the config's)
        for warning in (
            seats.BelowMinimumWarning,
            seats.OverMaximumWarning,
            plan.ReplayedShoesWarning,
            plan.UnplayedShoesWarning,
            IncompleteHandWarning,
        ):
            warnings.simplefilter("error", warning)
        result = engine.run(config, sessions=SMOKE_SESSIONS, workers=1)
    assert result.n_sessions == SMOKE_SESSIONS and result.hands > 0
    assert result.summary.height == len(config.seats)
    assert list(result.summary["seat"]) == [seat.label for seat in config.seats]
    assert (result.summary["sessions"] == SMOKE_SESSIONS).all()
    assert result.summary["wagered"].sum() > 0, "no seat placed a bet"


def test_a_description_runs_past_an_abbreviation_to_its_sentence_s_end(tmp_path: Path) -> None:
    from backtest.run.ready import _description

    path = tmp_path / "c.yaml"
    path.write_text("# Patterns mapped to a bet, e.g. PPB: P. More\n# words.\nseed: 1\n")
    assert _description(path) == "Patterns mapped to a bet, e.g. PPB: P."

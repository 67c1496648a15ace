"""The built-ins are found, not listed: a module of the strategies package
with a class that declares its kind is a built-in, at that kind."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import strategies
from backtest.core.rules import Bet
from strategies import compiled, registry
from strategies.base import Compiled
from strategies.slots import N_BETS


def _with_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, code: str) -> None:
    """`strategies.<name>` written in `tmp_path`, which the package looks in too."""
    (tmp_path / f"{name}.py").write_text(code, encoding="utf-8")
    monkeypatch.setattr(strategies, "__path__", [*strategies.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, f"strategies.{name}", raising=False)


def _extra(kind: int) -> str:
    return (
        "from strategies.flat import Flat\n\n\n"
        "class Extra(Flat):\n"
        "    name = 'extra'\n"
        f"    kind = {kind}\n"
    )


def test_the_built_ins_are_each_at_the_kind_they_declare() -> None:
    assert [cls.kind for cls in compiled.BUILTINS] == list(range(len(compiled.BUILTINS)))
    assert list(registry.BUILTIN_NAMES)[:3] == ["flat", "martingale", "grand-martingale"]
    # every named compiled class of their modules is one of them (none forgot its kind)
    for module in {sys.modules[cls.__module__] for cls in compiled.BUILTINS}:
        for cls in vars(module).values():
            if (
                inspect.isclass(cls)
                and issubclass(cls, Compiled)
                and cls.__module__ == module.__name__
                and "name" in vars(cls)
            ):
                assert cls in compiled.BUILTINS, cls


def test_a_new_module_with_the_next_kind_is_a_built_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    n = len(compiled.BUILTINS)
    _with_module(monkeypatch, tmp_path, "zz_extra_ok", _extra(n))
    found = compiled._discover()
    assert found[:n] == compiled.BUILTINS
    assert len(found) == n + 1 and found[n].name == "extra"


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        (3, "Paroli and Extra both declare kind = 3; give Extra kind = {n}"),
        (99, "none declares kind = {n}: renumber the last one to {n}"),
    ],
    ids=["taken", "gap"],
)
def test_a_kind_taken_or_past_a_gap_is_refused_with_the_one_to_give(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: int, says: str
) -> None:
    n = len(compiled.BUILTINS)
    _with_module(monkeypatch, tmp_path, f"zz_extra_{kind}", _extra(kind))
    with pytest.raises(TypeError, match=says.format(n=n)):
        compiled._discover()


def test_a_copy_of_the_model_progression_is_a_new_built_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`dalembert.py` is the file a new progression copies: a copy with its
    names changed and the next kind is a built-in, which plays as written."""
    from strategies.progressions import dalembert
    from strategies.slots import STATE_FLOATS, STATE_INTS

    n = len(compiled.BUILTINS)
    code = Path(dalembert.__file__).read_text(encoding="utf-8")
    for old, new in (
        ("class DAlembert(", "class Copied("),
        ('name = "dalembert"', 'name = "copied"'),
        ("kind = 5", f"kind = {n}"),
    ):
        assert old in code
        code = code.replace(old, new)
    _with_module(monkeypatch, tmp_path, "zz_copied", code)
    cls = compiled._discover()[n]
    assert cls.__name__ == "Copied" and cls.name == "copied"

    strat = cls.from_config({"bet": "player", "base": 10, "step": 2}, "params")
    p, s, si = strat.encode(), np.zeros(STATE_FLOATS), np.zeros(STATE_INTS, np.int64)
    stakes, unit = np.zeros(N_BETS), np.zeros(N_BETS)
    player = Bet.PLAYER.code

    def stake() -> float:
        return float(cls.k_decide(p, s, si, None, None, None, None))

    def settle(result: float) -> None:
        stakes[player], unit[player] = stake(), result
        cls.k_update(p, s, si, None, stakes, unit, stakes[player] * result)

    cls.k_reset(p, s, si)
    assert stake() == 10.0
    settle(-1.0)  # a loss: two units more
    assert stake() == 30.0
    settle(0.0)  # a push stays
    assert stake() == 30.0
    settle(1.0)  # a win: two units less
    assert stake() == 10.0
    settle(1.0)  # never below one unit
    assert stake() == 10.0

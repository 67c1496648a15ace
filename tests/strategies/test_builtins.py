"""The built-ins are found, not listed: a module of the strategies package
with a class that declares its kind is a built-in, at that kind."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

import strategies
from strategies import compiled, registry
from strategies.base import Compiled


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

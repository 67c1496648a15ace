"""The folders are the layers, and nothing imports upward.

`backtest/` reads as the data flow: the game (`core`), compiling and memory
(`jit`), shoes, the exact odds, the strategies, the loop over hands, a run,
sweeps, what a person reads (`present`), the table in a terminal (`play`)
and the command line. A module may import its own layer and the ones below
it, never one above: checked here on every import, those inside functions
included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: each package's layer, lowest first (`strategies` plugs into the loop, and
#: reads the game, the shoes' random streams and the odds)
LAYERS = {
    "backtest.core": 0,
    "backtest.jit": 1,
    "backtest.shoes": 2,
    "backtest.odds": 3,
    "strategies": 4,
    "backtest.loop": 5,
    "backtest.run": 6,
    "backtest.present": 7,
    "backtest.sweep": 8,
    "backtest.play": 9,
    "backtest.cli": 10,
    "backtest.__main__": 10,
    "backtest": 0,
}


def layer(module: str) -> int:
    """The layer of a dotted module name: its longest listed prefix."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in LAYERS:
            return LAYERS[".".join(parts[:n])]
    raise KeyError(module)


def modules() -> list[tuple[str, Path]]:
    found = []
    for top in ("backtest", "strategies"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            name = ".".join(rel.parts).removesuffix(".__init__")
            found.append((name, path))
    return found


def imported(name: str, path: Path) -> list[str]:
    """Every project module `path` imports, by name (`from backtest import x` is
    `backtest.x`)."""
    out = []
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1]
                    + ([base] if base else [])
                )
            out += [f"{base}.{a.name}" for a in node.names]
    return [m for m in out if m.split(".")[0] in ("backtest", "strategies")]


@pytest.mark.parametrize(("name", "path"), modules(), ids=[n for n, _ in modules()])
def test_nothing_imports_upward(name: str, path: Path) -> None:
    mine = layer(name)
    upward = [m for m in imported(name, path) if layer(m) > mine]
    assert not upward, f"{name} (layer {mine}) imports {upward}"


def test_every_package_has_a_layer() -> None:
    for name, _ in modules():
        layer(name)

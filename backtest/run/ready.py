"""The ready configs that ship with the package: run configs, sweeps, rules files.

They live in the checkout's `configs/` folder, which an installed package
holds as `backtest/configs/` (pyproject maps the one onto the other), so a
config can be named rather than found: `backtest run verdict`.

>>> by_name("verdict").kind
'run'
>>> by_name("german").kind
'rules'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from backtest.core.files import configs_folder

#: what each sub-folder of the configs holds (the top level: run configs)
KINDS = {"": "run", "strategies": "run", "sweeps": "sweep", "rules": "rules"}


@dataclass(frozen=True)
class Ready:
    """One ready config: its name, what it is, its file and its first comment."""

    name: str
    kind: str
    path: Path
    description: str


def folder() -> Path | None:
    """The folder of the ready configs: inside the installed package, else the
    checkout's `configs/` beside the package."""
    return configs_folder()


def _description(path: Path) -> str:
    """The first sentence of the comment a config opens with."""
    words = []
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                break
            words.append(line.lstrip("#").strip())
    except OSError:
        return ""
    text = " ".join(words)
    # the first ". " that ends a sentence: not an abbreviation's ("e.g. ", "i.e. ")
    end = next(
        (m.start() for m in re.finditer(r"\. ", text) if not text[: m.start()].endswith(_SHORT)),
        -1,
    )
    return text[: end + 1] if end >= 0 else text


#: abbreviations whose full stop does not end a sentence
_SHORT = ("e.g", "i.e", "etc", "vs", "cf")


def ready_configs() -> list[Ready]:
    """Every ready config, run configs first, then sweeps, then rules files."""
    root = folder()
    if root is None:
        return []
    found = []
    for sub, kind in KINDS.items():
        for path in sorted((root / sub).glob("*.yaml")):
            found.append(Ready(path.stem, kind, path, _description(path)))
    order = list(dict.fromkeys(KINDS.values()))
    return sorted(found, key=lambda r: order.index(r.kind))


def by_name(name: str, kind: str | None = None) -> Ready | None:
    """The ready config called `name` (of `kind`, if given); None if there is none."""
    for ready in ready_configs():
        if ready.name == name and (kind is None or ready.kind == kind):
            return ready
    return None


def resolve(path: Path, kind: str) -> Path:
    """`path` itself when it names a file (or looks like a path); else the
    ready config of that name and kind; else `path` unchanged (its loader says
    it does not exist)."""
    text = str(path)
    if path.exists() or "/" in text or "\\" in text or path.suffix:
        return path
    ready = by_name(text, kind)
    return ready.path if ready is not None else path


__all__ = ["KINDS", "Ready", "by_name", "folder", "ready_configs", "resolve"]

"""Key paths into a run config: `seats[1].params.base` read, set, and the
mappings along it copied."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(path: str) -> list[str | int]:
    """`seats[1].params.base` -> ['seats', 1, 'params', 'base']."""
    parts: list[str | int] = []
    pos = 0
    text = path.strip()
    for m in _PATH_PART.finditer(text):
        if m.start() != pos and text[pos : m.start()] != ".":
            raise ValueError(path)
        parts.append(int(m.group(2)) if m.group(2) is not None else m.group(1))
        pos = m.end()
    if pos != len(text) or not parts or not isinstance(parts[0], str):
        raise ValueError(path)
    return parts


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set `value` at key path `path` in a run-config mapping.

    Mappings on the way are created when missing (the config's own check then
    says whether the key is one it knows); a list index must exist.
    """
    parts = parse_path(path)
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        where = _join(parts[: i + 1])
        if isinstance(part, int):
            if not isinstance(node, list) or not -len(node) <= part < len(node):
                size = len(node) if isinstance(node, list) else 0
                raise KeyError(f"{where} does not exist (the list has {size} item(s))")
            if node[part] is None:
                node[part] = {}
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise KeyError(f"{_join(parts[:i])} is not a mapping")
            if node.get(part) is None:
                if isinstance(nxt, int):
                    raise KeyError(f"{where} does not exist")
                node[part] = {}
            node = node[part]
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or not -len(node) <= last < len(node):
            raise KeyError(f"{path} does not exist")
        node[last] = copy.deepcopy(value)
    else:
        if not isinstance(node, dict):
            raise KeyError(f"{_join(parts[:-1])} is not a mapping")
        node[last] = copy.deepcopy(value)


def copied_along(data: Mapping[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    """`data` with the mappings and lists on each key path copied (not those
    beside them), so that setting values at those paths leaves `data` as it was.

    >>> base = {"session": {"bankroll": 10}, "table": {"max": 5}}
    >>> raw = copied_along(base, ["session.bankroll"])
    >>> raw["session"]["bankroll"] = 20
    >>> base["session"]["bankroll"], raw["table"] is base["table"]
    (10, True)
    """
    out = dict(data)
    for path in paths:
        node: Any = out
        for part in parse_path(path)[:-1]:
            try:
                child = node[part]
            except (KeyError, IndexError, TypeError):
                break
            if isinstance(child, dict):
                child = dict(child)
            elif isinstance(child, list):
                child = list(child)
            else:
                break
            node[part] = child
            node = child
    return out


def _join(parts: Sequence[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def top_key(path: str) -> str | int | None:
    """The run config's top-level key a key path sets (`seed` for `seed`)."""
    try:
        return parse_path(path)[0]
    except ValueError:
        return None

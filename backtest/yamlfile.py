"""YAML as configs, sweeps and rules files are read: safe, strict, bounded.

`yaml.safe_load` lets a key written twice in a mapping silently take the
second value, and lets a few lines of anchors and aliases stand for millions
of values (a config's values are copied into `run.json`). `load` refuses both,
with the line and column, as errors `describe` words in one line.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError

#: the most values (mappings, lists and scalars, aliases counted each time
#: they are used) a file may hold
MAX_VALUES = 100_000


class DuplicateKey(ConstructorError):
    """A key given twice in one mapping."""


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":   # `<<: *defaults` merges, by design
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:   # an unhashable key: the base class says so
                break
            if first is not None:
                raise DuplicateKey(None, None, f"the key {key!r} is given twice (first on "
                                       f"line {first + 1}); remove one", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


class TooLarge(yaml.YAMLError):
    """A file that stands for more than MAX_VALUES values."""

    problem_mark = None

    def __init__(self) -> None:
        super().__init__()
        self.problem = (f"it holds more than {MAX_VALUES:,} values once its aliases are "
                        "expanded; a config is far smaller")


def load(text: str) -> Any:
    """Parse YAML text; raises yaml.YAMLError (see `describe`)."""
    data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader
    _check_size(data)
    return data


def _check_size(data: Any) -> None:
    stack = [data]
    count = 0
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise TooLarge()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def describe(exc: yaml.YAMLError) -> str:
    """' line L, column C: not valid YAML: what is wrong', in one line (the
    place when the error has one; 'not valid YAML' unless the YAML is valid
    and only refused here)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
    problem = " ".join((getattr(exc, "problem", None) or str(exc)).split())
    kind = "" if isinstance(exc, (DuplicateKey, TooLarge)) else " not valid YAML:"
    return f"{where}{kind} {problem}"


def number_hint(value: Any) -> str:
    """For text that is a number to Python but not to YAML 1.1 (`1.0e300`,
    `1e6`): how to write it so that it is read as one."""
    if not isinstance(value, str):
        return ""
    try:
        float(value)
    except ValueError:
        return ""
    mantissa, e, power = value.lower().partition("e")
    if not e:
        return ""
    fixed = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{'' if power[:1] in '+-' else '+'}{power}"
    return f" (YAML reads {value} as text; write {fixed})"

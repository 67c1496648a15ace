"""YAML as configs, sweeps and rules files are read: safe, strict, bounded.

`yaml.safe_load` lets a key written twice in a mapping silently take the
second value, and lets a few lines of anchors and aliases stand for millions
of values (a config's values are copied into `run.json`). `load` checks the
file's node tree for both first (composing builds no values), then reads it
with `yaml.safe_load`; `describe` words its errors in one line, with the line
and column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError

#: the most values (mappings, lists and scalars, aliases counted each time
#: they are used) a file may hold
MAX_VALUES = 100_000
#: the largest file read at all: a config is a few kB, and a sweep of
#: MAX_VALUES values about a megabyte
MAX_BYTES = 4 * 2**20


class DuplicateKey(ConstructorError):
    """A key given twice in one mapping."""


class TooLarge(yaml.YAMLError):
    """A file that stands for more than MAX_VALUES values."""

    problem_mark = None

    def __init__(self, aliases: bool = True) -> None:
        super().__init__()
        held = "once its aliases are expanded" if aliases else "(keys, lists and items)"
        self.problem = (
            f"it holds more than {MAX_VALUES:,} values {held}; a config or a sweep is far smaller"
        )


class TooBig(yaml.YAMLError):
    """A file of more than MAX_BYTES bytes (refused before it is parsed)."""

    problem_mark = None

    def __init__(self, size: int) -> None:
        super().__init__()
        self.problem = (
            f"the file is {size / 2**20:.1f} MB, more than the "
            f"{MAX_BYTES // 2**20} MB a config, sweep or rules file may be (a "
            f"sweep of {MAX_VALUES:,} values is about 1 MB)"
        )


def read_text(path: str | Path) -> str:
    """A YAML file's text (UTF-8), refused with TooBig past MAX_BYTES before
    any more of it is read; OSError and UnicodeDecodeError as reading raises them."""
    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            import os

            raise TooBig(max(len(data), os.fstat(fh.fileno()).st_size))
    return data.decode("utf-8")


class TooDeep(yaml.YAMLError):
    """A file whose values nest deeper than the parser can follow."""

    problem_mark = None

    def __init__(self) -> None:
        super().__init__()
        self.problem = "its values are nested too deeply to read; a config nests a few levels"


def load(text: str) -> Any:
    """Parse YAML text with `yaml.safe_load`, after checking its node tree (which
    builds no values); raises yaml.YAMLError (see `describe`)."""
    try:
        _count_values(text)
        _check(yaml.compose(text, Loader=yaml.SafeLoader))
        return yaml.safe_load(text)
    except RecursionError:  # the parser recurses once a level
        raise TooDeep() from None


def key_lines(text: str) -> dict[str, int]:
    """The line (1-based) of each key and list item of a YAML file that
    `load` reads, by its path as config errors name it: `seats[1].params.base`.
    Values merged in with `<<` have the lines of what they merge."""
    lines: dict[str, int] = {}
    if len(text) > MAX_BYTES:  # (characters: at least as many bytes)
        raise TooBig(len(text.encode()))
    _count_values(text)  # a file `load` refuses costs nothing more here
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    stack: list[tuple[yaml.Node, str]] = [] if root is None else [(root, "")]
    while stack and len(lines) < MAX_VALUES:
        node, path = stack.pop()
        if isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines.setdefault(f"{path}[{i}]", item.start_mark.line + 1)
                stack.append((item, f"{path}[{i}]"))
        elif isinstance(node, yaml.MappingNode):
            for key_node, value in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    merged = value.value if isinstance(value, yaml.SequenceNode) else [value]
                    stack.extend((m, path) for m in merged)
                    continue
                if isinstance(key_node, yaml.ScalarNode):
                    inner = f"{path}.{key_node.value}" if path else str(key_node.value)
                    lines.setdefault(inner, key_node.start_mark.line + 1)
                    stack.append((value, inner))
    return lines


def _count_values(text: str) -> None:
    """Refuse a file of more than MAX_VALUES values as soon as the parser has
    met that many (libyaml's, when installed: fast), before any tree is built.
    A file the parser refuses is left to `load`, whose messages are the pure
    parser's."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    values = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)
    count = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, values):
                count += 1
                if count > MAX_VALUES:
                    raise TooLarge(aliases=False)
    except TooLarge:
        raise
    except yaml.YAMLError:
        return


def _check(root: yaml.Node | None) -> None:
    """No key twice in a mapping, and at most MAX_VALUES values, an alias
    counted each time it is used (the walk stops there, so a bomb costs
    nothing)."""
    keys = yaml.SafeLoader("")  # builds the keys alone, as safe_load would
    checked: set[int] = set()
    stack = [] if root is None else [root]
    count = 0
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise TooLarge()
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(value for _, value in node.value)
            if id(node) not in checked:  # an aliased mapping once
                checked.add(id(node))
                _no_key_twice(node, keys)


def _no_key_twice(node: yaml.MappingNode, keys: yaml.SafeLoader) -> None:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` merges, by design
            continue
        key = keys.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: safe_load says so
            return
        if first is not None:
            raise DuplicateKey(
                None,
                None,
                f"the key {key!r} is given twice (first on line {first + 1}); remove one",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line


def describe(exc: yaml.YAMLError) -> str:
    """' line L, column C: not valid YAML: what is wrong', in one line (the
    place when the error has one; 'not valid YAML' unless the YAML is valid
    and only refused here)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
    problem = " ".join((getattr(exc, "problem", None) or str(exc)).split())
    kind = "" if isinstance(exc, (DuplicateKey, TooLarge, TooBig, TooDeep)) else " not valid YAML:"
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

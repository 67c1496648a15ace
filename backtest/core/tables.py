"""Tables and paragraphs that fit the terminal.

A table is drawn by rich, one line per row: a cell is never wrapped. When
its columns are wider than the terminal, they are stacked: the first (key)
columns, then as many of the others as fit; then the key columns again with
the next ones, below. Every number is shown, as it was. Paragraphs wrap at
word boundaries. The width is the terminal's (`COLUMNS` when set), 80 when
there is none.

>>> print(render(("seat", "net", "edge"), [("Flat", "-12.00", "-1.06%")], width=80))
seat     net    edge
----  ------  ------
Flat  -12.00  -1.06%
>>> print(render(("seat", "net", "edge"), [("Flat", "-12.00", "-1.06%")], width=14))
seat     net
----  ------
Flat  -12.00
<BLANKLINE>
seat    edge
----  ------
Flat  -1.06%
"""

from __future__ import annotations

import io
import shutil
import textwrap
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

#: a rule of dashes under the headers and nothing else (two spaces between columns)
_RULE = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)


def terminal_width() -> int:
    """The terminal's columns (`COLUMNS` when set; 80 when there is no terminal)."""
    return max(shutil.get_terminal_size((80, 24)).columns, 20)


def _draw(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[bool],
    width: int,
    wrap: Sequence[int],
) -> str:
    table = Table(
        box=_RULE,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        highlight=False,
        expand=False,
    )
    for i, (title, is_right) in enumerate(zip(headers, right)):
        table.add_column(
            title, justify="right" if is_right else "left", no_wrap=i not in wrap, overflow="fold"
        )
    for row in rows:
        table.add_row(*row)
    buf = io.StringIO()
    Console(
        file=buf,
        width=width,
        color_system=None,
        highlight=False,
        emoji=False,
        markup=False,
        legacy_windows=False,
        soft_wrap=False,
    ).print(table)
    lines = [line.rstrip() for line in buf.getvalue().splitlines()]
    if len(lines) > 1:  # the rule runs under the padding too: end each column's dashes with it
        lines[1] = _rule_under(lines[1])
    return "\n".join(lines)


def _rule_under(rule: str) -> str:
    """The rule without the dash under each column's padding (all but the last column's)."""
    runs = rule.rstrip().split(" ")
    return (
        " ".join([run[:-1] + " " if run else run for run in runs[:-1]] + runs[-1:]).rstrip()
        if runs
        else rule
    )


def _width(headers: Sequence[str], rows: Sequence[Sequence[str]], i: int) -> int:
    return max([len(headers[i]), *(len(row[i]) for row in rows)])


def _split(widths: Sequence[int], room: int) -> list[list[int]]:
    """Consecutive columns, as many in each part as fit in `room`."""
    parts: list[list[int]] = []
    used = room
    for i, w in enumerate(widths):
        if parts and used + w <= room:
            parts[-1].append(i)
            used += w
        else:
            parts.append([i])
            used = w
    return parts


def render(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    right: Sequence[bool] | None = None,
    key: int = 1,
    width: int | None = None,
    wrap: Sequence[int] = (),
) -> str:
    """`rows` of text under `headers`, fitted to `width` (default: the terminal's).

    `right`: which columns are right-aligned (default: all but the key columns).
    `key`: how many leading columns name a row, repeated in each stacked part.
    `wrap`: columns of prose, wrapped at word boundaries to fit rather than stacked.
    """
    width = terminal_width() if width is None else width
    right = [i >= key for i in range(len(headers))] if right is None else list(right)
    if wrap:
        return _draw(headers, rows, right, width, wrap)
    widths = [_width(headers, rows, i) for i in range(len(headers))]
    keys = list(range(min(key, len(headers))))
    used = sum(widths[i] + 2 for i in keys)
    rest = [widths[i] + 2 for i in range(len(keys), len(headers))]
    # as few parts as fit; then the narrowest parts that are still that few
    parts = _split(rest, width - used + 2)
    if len(parts) > 1:
        cap = max(rest)
        while len(_split(rest, cap)) > len(parts):
            cap += 1
        parts = _split(rest, cap)
    parts = [[len(keys) + i for i in part] for part in parts] or [[]]
    drawn = []
    for part in parts:
        cols = keys + part
        drawn.append(
            _draw(
                [headers[i] for i in cols],
                [[row[i] for i in cols] for row in rows],
                [right[i] for i in cols],
                max(width, 10**4),
                (),
            )
        )
    return "\n\n".join(drawn)


def paragraphs(texts: Sequence[str], width: int | None = None, gap: bool = False) -> str:
    """Each text wrapped at word boundaries to `width` (default: the terminal's);
    a blank line between them if `gap`."""
    width = terminal_width() if width is None else width
    wrapped = [
        textwrap.fill(text, width=width, break_long_words=False, break_on_hyphens=False)
        for text in texts
    ]
    return ("\n\n" if gap else "\n").join(wrapped)


__all__ = ["paragraphs", "render", "terminal_width"]

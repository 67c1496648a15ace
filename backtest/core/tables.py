"""Tables and paragraphs that fit the terminal.

A table is drawn by rich, one line per row. When its columns are wider
than the terminal, they are stacked: the first (key) columns, then as many
of the others as fit; then the key columns again with the next ones, below.
Every number is shown, as it was. Only text wider than the terminal wraps:
key columns (names) that would take more than half of it, a column wider
than the room beside them, and the columns of prose named as such.
Paragraphs wrap at word boundaries. Widths are display widths (rich's
`cell_len`: an East Asian wide character takes two columns). The width is
the terminal's (`COLUMNS` when set), 80 when there is none.

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
from collections.abc import Sequence

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

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
    _console(buf, width).print(table)
    lines = [line.rstrip() for line in buf.getvalue().splitlines()]
    if len(lines) > 1:  # the rule runs under the padding too: end each column's dashes with it
        lines[1] = _rule_under(lines[1])
    return "\n".join(lines)


def _console(file: io.StringIO, width: int) -> Console:
    return Console(
        file=file,
        width=width,
        color_system=None,
        highlight=False,
        emoji=False,
        markup=False,
        legacy_windows=False,
        soft_wrap=False,
    )


def _rule_under(rule: str) -> str:
    """The rule without the dash under each column's padding (all but the last column's)."""
    runs = rule.rstrip().split(" ")
    return (
        " ".join([run[:-1] + " " if run else run for run in runs[:-1]] + runs[-1:]).rstrip()
        if runs
        else rule
    )


def _width(headers: Sequence[str], rows: Sequence[Sequence[str]], i: int) -> int:
    return max([cell_len(headers[i]), *(cell_len(row[i]) for row in rows)])


#: the narrowest a column of prose is made, beside others, before it goes below them
PROSE_WIDTH = 20


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


def column_parts(widths: Sequence[int], key: int, room: int) -> list[list[int]]:
    """The columns after the first `key` (`widths`: theirs, each with the gap
    after it), in consecutive parts of `room` columns at most, as stacked
    tables show them: as few parts as fit; then the narrowest parts that are
    still that few. A column wider than `room` is a part alone."""
    parts = _split(widths, room)
    if len(parts) > 1:
        cap = max(widths)
        while len(_split(widths, cap)) > len(parts):
            cap += 1
        parts = _split(widths, cap)
    return [[key + i for i in part] for part in parts] or [[]]


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
    widths = [_width(headers, rows, i) for i in range(len(headers))]
    keys = list(range(min(key, len(headers))))
    used = sum(widths[i] + 2 for i in keys)
    if keys and used > width // 2 + 2 and len(headers) > len(keys):
        # names too wide to leave room beside them: they wrap, in half the width
        wrap = [*wrap, *keys]
        used = width // 2 + 2
    # a column of prose takes part of a line only where it has room to read
    rest = [
        min(widths[i], PROSE_WIDTH) + 2 if i in wrap else widths[i] + 2
        for i in range(len(keys), len(headers))
    ]
    parts = column_parts(rest, len(keys), width - used + 2)
    drawn = []
    for part in parts:
        cols = keys + part
        # a column wider than the room beside the names (alone in its part) wraps
        alone = len(part) == 1 and sum(widths[i] + 2 for i in cols) - 2 > width
        wraps = [j for j, i in enumerate(cols) if i in wrap or (alone and i in part)]
        drawn.append(
            _draw(
                [headers[i] for i in cols],
                [[row[i] for i in cols] for row in rows],
                [right[i] for i in cols],
                width,
                wraps,
            )
        )
    return "\n\n".join(drawn)


def paragraphs(texts: Sequence[str], width: int | None = None, gap: bool = False) -> str:
    """Each text wrapped at word boundaries to `width` (default: the terminal's);
    a blank line between them if `gap`."""
    width = terminal_width() if width is None else width
    wrapped = []
    for text in texts:
        buf = io.StringIO()
        _console(buf, width).print(Text(text, overflow="fold"))
        wrapped.append("\n".join(line.rstrip() for line in buf.getvalue().splitlines()))
    return ("\n\n" if gap else "\n").join(wrapped)


def fit_lines(text: str, width: int) -> str:
    """`text` with each line wider than `width` wrapped at word boundaries, its
    further lines indented two more than its own."""
    out = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip(" "))
        first = paragraphs([line.strip()], max(width - indent, 10)).split("\n")[0]
        rest = paragraphs([line.strip()[len(first) :].strip()], max(width - indent - 2, 10))
        out.append(" " * indent + first)
        out.extend(" " * (indent + 2) + part for part in rest.split("\n") if part)
    return "\n".join(out)


def fits(text: str, width: int) -> bool:
    """Whether every line of `text` is at most `width` columns wide (display width)."""
    return all(cell_len(line) <= width for line in text.splitlines())


__all__ = [
    "cell_len",
    "column_parts",
    "fit_lines",
    "fits",
    "paragraphs",
    "render",
    "terminal_width",
]

"""A shoe file's text: its lines, its comment-free lines, a CSV line's cells."""

from __future__ import annotations

import csv
import difflib
import os
import sys
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import BinaryIO

from backtest.core.errors import ShoeFormatError, UsageError, shown
from backtest.shoes.recorded.closing import close
from backtest.shoes.recorded.repeats import ShoeLabels

StrPath = str | os.PathLike[str]


class IncompleteHandWarning(UserWarning):
    """A card-level shoe ended in the middle of a hand; that hand was not dealt."""


def decks_words(n: int) -> str:
    return "1 deck" if n == 1 else f"{n} decks"


#: the path that means standard input
STDIN = "-"
_stdin: list[tuple[object, bytes]] = []


def stdin_bytes() -> bytes:
    """Standard input, read once (a file `-` is read more than once: its decks, its text)."""
    if not _stdin or _stdin[0][0] is not sys.stdin:
        _stdin[:] = [(sys.stdin, sys.stdin.buffer.read())]
    return _stdin[0][1]


def source_name(path: StrPath) -> str:
    """The name a file goes by in messages (`standard input` for `-`)."""
    source = os.fspath(path)
    return "standard input" if source == STDIN else source


def load_bytes(path: StrPath) -> tuple[str, bytes]:
    """The file's name (for messages) and its bytes; `-` is standard input; a
    missing file is a usage error."""
    source = source_name(path)
    if os.fspath(path) == STDIN:
        return source, stdin_bytes()
    return source, _read(path, source)


def load_text(path: StrPath, data: bytes | None = None) -> tuple[str, str]:
    """The file's name (for messages) and its text (of `data` if given)."""
    if data is None:
        source, data = load_bytes(path)
    else:
        source = source_name(path)
    text = _decoded(data, source)
    if not text.strip():
        raise ShoeFormatError(f"{source}: no shoes: the file is empty")
    return source, text


def _decoded(data: bytes, source: str) -> str:
    """The text of a file's bytes: UTF-8 (else an error naming the line), its
    byte-order mark dropped, and every line ending (CR LF, LF, a lone CR as
    old Mac files have) a line feed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ShoeFormatError(
            f"{source}, line {line}: not UTF-8 text ({exc.reason} at byte "
            f"{exc.start}); save the file as UTF-8"
        ) from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


#: the most of a file `load_head` reads to tell its format
HEAD_BYTES = 1 << 20


def _open(path: StrPath, source: str) -> BinaryIO:
    """The file, opened to read bytes; load_text's usage errors when it cannot be."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise UsageError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{source}: is a directory, not a shoe file") from None
    except OSError as exc:
        raise UsageError(f"{source}: cannot read the file: {exc.strerror}") from None


def _read(path: StrPath, source: str, size: int = -1) -> bytes:
    """The file's bytes (its first `size`, if given); load_text's usage errors
    when it cannot be read."""
    with _open(path, source) as fh:
        try:
            return fh.read(size)
        except OSError as exc:
            raise UsageError(f"{source}: cannot read the file: {exc.strerror}") from None


def load_head(path: StrPath, data: bytes | None = None) -> tuple[str, str, bool]:
    """(name, text, whole) as `load_text` gives them, of the file's first
    HEAD_BYTES cut after its last whole line (`whole`: that is all of it); the
    same errors, as far as the head shows them. `data`: the file's first
    HEAD_BYTES + 1 bytes (or all of it, if fewer), if they were read already."""
    source = os.fspath(path)
    if data is None:
        data = _read(path, source, HEAD_BYTES + 1)
    whole = len(data) <= HEAD_BYTES
    if not whole:
        data = data[: data.rfind(b"\n", 0, HEAD_BYTES) + 1]
    text = _decoded(data, source)
    if whole and not text.strip():
        raise ShoeFormatError(f"{source}: no shoes: the file is empty")
    return source, text, whole


def stream_lines(path: StrPath) -> Generator[tuple[int, str], None, None]:
    """(line number, line) as `numbered_lines` gives them for `load_text`'s
    text, read from the file a line at a time (a big file is never held
    whole), with load_text's errors; the file closes when the iterator does."""
    seen_text = False
    for number, line, _ in placed_lines(path):
        seen_text = seen_text or bool(line.strip())
        yield number, line
    if not seen_text:
        raise ShoeFormatError(f"{os.fspath(path)}: no shoes: the file is empty")


#: where a line was read: (first byte, end byte) of the stretch of the file
#: that holds it, and how many lines come before it in that stretch (a
#: stretch ends in a line feed, and holds more than one line only where
#: lines end in a lone CR, as old Mac files have)
Place = tuple[int, int, int]


def placed_lines(
    path: StrPath, start: int = 0, stop: int | None = None, first_line: int = 1
) -> Iterator[tuple[int, str, Place]]:
    """(line number, line, place) as `stream_lines` reads them, each line's
    place in the file beside it; from byte `start` (which starts a stretch),
    whose first line is `first_line`, to byte `stop` (None: the end)."""
    source = os.fspath(path)
    number = first_line - 1
    offset = start
    with _open(path, source) as fh:
        if start:
            fh.seek(start)
        for raw in fh:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ShoeFormatError(
                    f"{source}, line {number + 1}: not UTF-8 text ({exc.reason} "
                    f"at byte {offset + exc.start}); save the file as "
                    "UTF-8"
                ) from None
            end = offset + len(raw)
            if offset == 0:
                text = text.removeprefix("\ufeff")
            lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            if text.endswith(("\n", "\r")):
                lines.pop()  # the next line starts after the line end
            for k, line in enumerate(lines):
                number += 1
                yield number, line, (offset, end, k)
            offset = end
            if stop is not None and offset >= stop:
                return


def numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line of `load_text`'s text (its line ends are LF)."""
    return enumerate(text.split("\n"), start=1)


def csv_cells(line: str, source: str, number: int) -> list[str]:
    """The fields of one CSV line (a record is one line: a quote left open is an
    error; text after a closing quote, as in `"KS" ,`, is kept, as csv does)."""
    try:
        try:
            return next(csv.reader([line], strict=True))
        except csv.Error as exc:
            if "end of data" in str(exc):
                raise ShoeFormatError(
                    f"{source}, line {number}: a quoted field is not closed on its line"
                ) from None
            return next(csv.reader([line]))
    except csv.Error as exc:
        problem = (
            f"a field is longer than {csv.field_size_limit():,} characters"
            if "field limit" in str(exc)
            else f"not a CSV line ({exc})"
        )
        raise ShoeFormatError(f"{source}, line {number}: {problem}") from None


def content_lines(text: str | Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(line number, text before any `#` comment) for lines with something on
    them, of a text or of numbered lines (`stream_lines`)."""
    for number, line in numbered_lines(text) if isinstance(text, str) else text:
        content = line.split("#", 1)[0]
        if content.strip():
            yield number, content


_TOGETHER = (("player_card_count", "banker_card_count"), ("player_cards", "banker_cards"))

Row = tuple[int, dict[str, str]]


def csv_table(
    text: str,
    source: str,
    kind: str,
    allowed: Sequence[str],
    required: Sequence[str],
    mapping: Mapping[str, str] | None = None,
) -> list[Row]:
    """The rows (line number, cells by column) of a CSV after checking its header.
    Blank lines and lines starting with `#` are skipped. `mapping` names the
    file's column for each of ours (`{"winner": "Result"}`): then the file's
    other columns are left out."""
    return list(csv_rows(numbered_lines(text), source, kind, allowed, required, mapping))


def csv_rows(
    lines: Iterable[tuple[int, str]],
    source: str,
    kind: str,
    allowed: Sequence[str],
    required: Sequence[str],
    mapping: Mapping[str, str] | None = None,
) -> Iterator[Row]:
    """`csv_table`'s rows, one at a time, of numbered lines (`stream_lines`):
    a row is checked when it is reached, and a file that ends with no rows
    is refused at its end."""
    header: list[str] | None = None
    header_line = 0
    kept: list[str] = []
    any_rows = False
    for number, line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = csv_cells(line, source, number)
        if header is None:
            header, header_line = [c.strip().lower() for c in cells], number
            if mapping:
                header = map_columns(header, mapping, source, number)
                kept = [c for c in header if c in allowed]
            else:
                kept = header
            _check_columns(source, number, kept, kind, allowed, required)
            continue
        if len(cells) != len(header):
            raise ShoeFormatError(
                f"{source}, line {number}: {len(cells)} fields, but the header (line "
                f"{header_line}) has {len(header)}: {','.join(header)}"
            )
        row = dict(zip(header, (c.strip() for c in cells)))
        any_rows = True
        yield number, {c: row[c] for c in kept} if mapping else row
    if header is None:
        raise ShoeFormatError(f"{source}: no shoes: the file holds only comments and blank lines")
    if not any_rows:
        raise ShoeFormatError(
            f"{source}: no shoes: the file has a header (line {header_line}) but no rows"
        )


def map_columns(
    header: Sequence[str], mapping: Mapping[str, str], source: str, line: int
) -> list[str]:
    """The header with the file's columns renamed to ours by `mapping` (ours:
    theirs, any case); a column of theirs the header lacks is an error."""
    out = list(header)
    for ours, theirs in mapping.items():
        want = theirs.strip().lower()
        if want not in header:
            raise ShoeFormatError(
                f"{source}, line {line}: the column mapping takes {ours} from the column "
                f"{shown(theirs)}, which the header does not have (it has: "
                f"{shown(','.join(header), 120)})"
            )
        out[list(header).index(want)] = ours
    return out


def _check_columns(
    source: str,
    line: int,
    header: Sequence[str],
    kind: str,
    allowed: Sequence[str],
    required: Sequence[str],
) -> None:
    seen: set[str] = set()
    for i, column in enumerate(header, start=1):
        if column in seen:
            raise ShoeFormatError(
                f"{source}, line {line}, column {i}: the column {shown(column)} "
                "appears twice in the header"
            )
        if column not in allowed:
            near = difflib.get_close_matches(column, allowed, n=1)
            hint = f" (did you mean {shown(near[0])}?)" if near else ""
            raise ShoeFormatError(
                f"{source}, line {line}, column {i}: unknown column "
                f"{shown(column)}{hint}; {kind} has the columns "
                f"{', '.join(allowed)}"
            )
        seen.add(column)
    for column in required:
        if column not in seen:
            optional = [c for c in allowed if c not in required]
            more = f" (optional: {', '.join(optional)})" if optional else ""
            raise ShoeFormatError(
                f"{source}, line {line}: the header has no {column!r} column; "
                f"{kind} needs the columns {','.join(required)}{more}"
            )
    for a, b in _TOGETHER:
        if (a in seen) != (b in seen):
            has, lacks = (a, b) if a in seen else (b, a)
            raise ShoeFormatError(
                f"{source}, line {line}: the header has {shown(has)} but not "
                f"{shown(lacks)}; the two go together"
            )


def group_shoes(
    rows: Iterable[Row], source: str, again: Callable[[], Iterator[Row]] | None = None
) -> Iterator[tuple[str, list[Row]]]:
    """The rows of each shoe (by the `shoe` label), refusing a label that comes
    back; a shoe is given once its last row is read (rows may be read as
    they come: only one shoe's are held). With `again` (the same rows again
    from the first, as a big file is read), the labels seen are kept in a
    few bytes each (`repeats.ShoeLabels`: `seen.FirstLines`, then past a
    million shoes on disk), and the rows are read again only when a label's
    hash is that of one before."""
    seen: dict[str, int] | ShoeLabels = {} if again is None else ShoeLabels(partial(_starts, again))
    group: list[Row] = []
    label = ""
    for number, row in rows:
        this = row["shoe"]
        if not this:
            raise ShoeFormatError(f"{source}, line {number}, field shoe: the shoe label is empty")
        if group and this != label:
            yield label, group
            group = []
        if not group:
            started: int | None
            if isinstance(seen, dict):
                started = seen.setdefault(this, number)
                started = None if started == number else started
            else:
                assert again is not None
                started = seen.first(this, number, partial(_first_row, again, number))
            if started is not None:
                raise ShoeFormatError(
                    f"{source}, line {number}, field shoe: shoe {shown(this)} appears again after "
                    f"other shoes (it started on line {started}); the rows of a shoe "
                    "must be together"
                )
            label = this
        group.append((number, row))
    if group:
        yield label, group


def _starts(again: Callable[[], Iterator[Row]]) -> Iterator[tuple[int, str, int]]:
    """(line, label, 0) of each shoe's first row, the rows read again from
    the first (`repeats.ShoeLabels`), to the first bad row: the read stops
    there with its error, so nothing after it is asked about."""
    rows = again()
    label = None
    try:
        for number, row in rows:
            if row["shoe"] != label:
                label = row["shoe"]
                yield number, label, 0
    except ShoeFormatError:
        return
    finally:
        close(rows)


def _first_row(again: Callable[[], Iterator[Row]], before: int, label: str) -> int | None:
    """The line of the first of the rows before line `before` whose shoe is
    `label`, read again; None if there is none."""
    rows = again()
    try:
        for number, row in rows:
            if number >= before:
                break
            if row["shoe"] == label:
                return number
    finally:
        close(rows)
    return None

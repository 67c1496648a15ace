"""A shoe file's text: its lines, its comment-free lines, a CSV line's cells."""

from __future__ import annotations

import csv
import difflib
import io
import os
import select
import stat
import sys
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import BinaryIO

from backtest.core.errors import ShoeFormatError, UsageError, shown

StrPath = str | os.PathLike[str]


class IncompleteHandWarning(UserWarning):
    """A card-level shoe ended in the middle of a hand; that hand was not dealt."""


def decks_words(n: int) -> str:
    return "1 deck" if n == 1 else f"{n} decks"


#: the path that means standard input
STDIN = "-"

#: the most of standard input or a pipe that is read (it is held whole)
PIPED_BYTES = 32 << 20

#: the longest line read of standard input, a pipe or a big file's JSON
LINE_BYTES = 1 << 20

#: the longest line of a big JSON file read a line at a time (as long as the
#: largest JSON document read whole: `files.JSON_DOCUMENT_BYTES`)
JSON_LINE_BYTES = 16 << 20

#: seconds to wait for a program to write to a named pipe (a FIFO) that
#: no program has opened yet
FIFO_WAIT = 10.0

#: what standard input (by the stream it was read from) and pipes gave: their
#: bytes, or the error that refused them
_piped: dict[str, tuple[object, bytes | Exception]] = {}


def input_kind(path: StrPath) -> str:
    """How a shoe file is read: `file` (a regular file, read as often and as
    far as needed) or `pipe` (standard input or a pipe, read once, whole, up
    to PIPED_BYTES). A missing file, a folder or a device (such as
    /dev/zero) is a usage error."""
    source = source_name(path)
    if os.fspath(path) == STDIN:
        try:
            mode = os.fstat(sys.stdin.fileno()).st_mode
        except (AttributeError, OSError, ValueError):
            return "pipe"  # (a stream with no file under it)
        if stat.S_ISCHR(mode) and not sys.stdin.isatty():
            raise UsageError(
                "standard input is a device (such as /dev/zero), not a file or a pipe; "
                "give the shoe file's name, or send a file to it (- < FILE)"
            )
        return "pipe"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UsageError(f"{source}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{source}: cannot read the file: {exc.strerror}") from None
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        raise UsageError(f"{source}: is a directory, not a shoe file")
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "pipe"
    raise UsageError(
        f"{source}: is a device, not a file of shoes; give a regular file, a pipe, "
        "or - for standard input"
    )


def is_piped(path: StrPath) -> bool:
    """Whether `path` is standard input or a pipe (`input_kind`), read once."""
    return input_kind(path) == "pipe"


def stdin_bytes() -> bytes:
    """Standard input, read once (see `piped_bytes`)."""
    return piped_bytes(STDIN)


def piped_bytes(path: StrPath) -> bytes:
    """Standard input or a pipe, read once, up to PIPED_BYTES in lines of at
    most LINE_BYTES (a file `-` or `<(cat FILE)` is asked for more than
    once: its decks, its text); more is a usage error, a longer line a
    ShoeFormatError, so that /dev/zero or an endless writer is refused in
    bounded memory."""
    key = os.fspath(path)
    source = source_name(path)
    if key != STDIN:  # (a pipe by its path and inode: a path such as /dev/fd/63 is used again)
        key = f"{key}\0{os.stat(path).st_ino}"
    held = _piped.get(key)
    if held is None or key == STDIN and held[0] is not sys.stdin:
        got: bytes | Exception
        try:
            if key != STDIN:
                with _open_pipe(path, source) as fh:
                    got = _bounded(fh, source)
            elif getattr(sys.stdin, "buffer", None) is not None:
                got = _bounded(sys.stdin.buffer, source)
            else:  # (a text stream with no bytes under it)
                text = sys.stdin.read(PIPED_BYTES + 1)
                got = _bounded(io.BytesIO(text.encode("utf-8", "surrogateescape")), source)
        except (UsageError, ShoeFormatError) as exc:
            got = exc
        held = _piped[key] = (sys.stdin if key == STDIN else None, got)
    if isinstance(held[1], Exception):
        raise held[1]
    return held[1]


def _open_pipe(path: StrPath, source: str) -> BinaryIO:
    """A pipe opened to read once a program writes to it: opened without
    waiting, then waited on for FIFO_WAIT seconds at most (a named pipe no
    program writes to is a usage error, not a wait for ever)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UsageError(f"{source}: cannot read the file: {exc.strerror}") from None
    waiting = select.poll()
    waiting.register(fd, select.POLLIN | select.POLLHUP)
    if not waiting.poll(int(FIFO_WAIT * 1000)):
        os.close(fd)
        raise UsageError(
            f"{source}: a pipe that no program wrote to in {FIFO_WAIT:g} seconds; "
            "start the program that writes to it first, or give a file"
        )
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _bounded(fh: BinaryIO, source: str) -> bytes:
    """All of `fh`, read LINE_BYTES at a time within PIPED_BYTES, no line
    longer than LINE_BYTES (a chunk holds no whole line longer: only a line
    across chunks is counted)."""
    data = bytearray()
    run = 0  # (the bytes of the line the chunk so far ends in)
    try:
        while chunk := fh.read(LINE_BYTES):
            last = chunk.rfind(b"\n")
            first = chunk.find(b"\n")
            if run + (len(chunk) if last < 0 else first) > LINE_BYTES:
                raise too_long(source, data.count(b"\n") + 1, LINE_BYTES)
            run = run + len(chunk) if last < 0 else len(chunk) - last - 1
            data += chunk
            if len(data) > PIPED_BYTES:
                raise UsageError(
                    f"{source}: more than {PIPED_BYTES >> 20} MB, the most read of standard "
                    "input or a pipe (held whole); give the shoes as a file, which is "
                    "read a shoe at a time"
                )
    except OSError as exc:
        raise UsageError(f"{source}: cannot read the file: {exc.strerror}") from None
    return bytes(data)


def too_long(source: str, line: int, most: int, decks: int | None = None) -> ShoeFormatError:
    """The error for a line longer than `most` bytes (`decks`: of a file a
    shoe a line, whose shoes are dealt from so many decks)."""
    if decks is None:
        return ShoeFormatError(
            f"{source}, line {line}: more than {most:,} bytes on one line, the longest "
            "line read; a shoe file holds a shoe or a record a line"
        )
    return ShoeFormatError(
        f"{source}, line {line}: more than {most:,} bytes on one line, longer than any "
        f"shoe of {decks_words(decks)} can be written; the file holds a shoe a line"
    )


def shoe_line_bytes(decks: int) -> int:
    """The longest line of a file a shoe a line (card text, roads, a CSV's
    rows) of shoes of `decks` decks: 16 bytes a card (`10♦` and a separator
    take 6), and a kilobyte of comment."""
    return 16 * 52 * decks + 1024


def source_name(path: StrPath) -> str:
    """The name a file goes by in messages (`standard input` for `-`)."""
    source = os.fspath(path)
    return "standard input" if source == STDIN else source


def load_bytes(path: StrPath) -> tuple[str, bytes]:
    """The file's name (for messages) and its bytes; `-` is standard input; a
    missing file is a usage error."""
    source = source_name(path)
    if is_piped(path):
        return source, piped_bytes(path)
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
    """The file, opened to read bytes; load_text's usage errors when it cannot
    be (a device, such as /dev/zero, is refused unread: `input_kind`)."""
    input_kind(path)
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise UsageError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{source}: is a directory, not a shoe file") from None
    except OSError as exc:
        raise UsageError(f"{source}: cannot read the file: {exc.strerror}") from None


#: the most of a file that is read whole (a file a shoe a line, JSON Lines
#: and CSV are read a line at a time past HEAD_BYTES; a JSON document up to
#: `files.JSON_DOCUMENT_BYTES`; roads a result a line, whole)
WHOLE_BYTES = 64 << 20


def _read(path: StrPath, source: str, size: int = -1) -> bytes:
    """The file's bytes (its first `size`, if given: else at most
    WHOLE_BYTES); load_text's usage errors when it cannot be read."""
    with _open(path, source) as fh:
        try:
            data = fh.read(WHOLE_BYTES + 1 if size < 0 else size)
        except OSError as exc:
            raise UsageError(f"{source}: cannot read the file: {exc.strerror}") from None
    if size < 0 and len(data) > WHOLE_BYTES:
        raise ShoeFormatError(
            f"{source}: more than {WHOLE_BYTES >> 20} MB of a format read whole; write "
            "it a shoe a line (cards or a road), as JSON Lines or as a CSV, which are "
            "read a line at a time"
        )
    return data


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


def stream_lines(
    path: StrPath, decks: int | None = None, most: int = LINE_BYTES
) -> Generator[tuple[int, str], None, None]:
    """(line number, line) as `numbered_lines` gives them for `load_text`'s
    text, read from the file a line at a time (a big file is never held
    whole), with load_text's errors; the file closes when the iterator does.
    A line is at most `most` bytes, or (`decks` given: a file a shoe a
    line) `shoe_line_bytes(decks)`: a longer one is an error naming it, read
    no further."""
    source = os.fspath(path)
    if decks is not None:
        most = shoe_line_bytes(decks)
    number = 0
    offset = 0
    seen_text = False
    with _open(path, source) as fh:
        while raw := fh.readline(most + 1):
            if len(raw) > most:
                raise too_long(source, number + 1, most, decks)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ShoeFormatError(
                    f"{source}, line {number + 1}: not UTF-8 text ({exc.reason} "
                    f"at byte {offset + exc.start}); save the file as UTF-8"
                ) from None
            if offset == 0:
                text = text.removeprefix("\ufeff")
            offset += len(raw)
            # (a lone CR, as old Mac files have, ends a line too)
            lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            if text.endswith(("\n", "\r")):
                lines.pop()  # the next line starts after the line end
            for line in lines:
                number += 1
                seen_text = seen_text or bool(line.strip())
                yield number, line
    if not seen_text:
        raise ShoeFormatError(f"{source}: no shoes: the file is empty")


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


def csv_rows(
    lines: Iterable[tuple[int, str]],
    source: str,
    kind: str,
    allowed: Sequence[str],
    required: Sequence[str],
    mapping: Mapping[str, str] | None = None,
) -> Iterator[Row]:
    """The rows (line number, cells by column) of a CSV's numbered lines,
    checked as they come after its header. Blank lines and lines starting
    with `#` are skipped; a file that ends with no rows is refused at its
    end. `mapping` names the file's column for each of ours (`{"winner":
    "Result"}`): then the file's other columns are left out."""
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


def group_shoes(rows: Iterable[Row], source: str) -> Iterator[tuple[str, list[Row]]]:
    """The rows of each shoe (by the `shoe` label), refusing a label that comes
    back; a shoe is given once its last row is read (rows may be read as
    they come: only one shoe's are held, and each label with its first line)."""
    seen: dict[str, int] = {}
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
            started = seen.setdefault(this, number)
            if started != number:
                raise ShoeFormatError(
                    f"{source}, line {number}, field shoe: shoe {shown(this)} appears again after "
                    f"other shoes (it started on line {started}); the rows of a shoe "
                    "must be together"
                )
            label = this
        group.append((number, row))
    if group:
        yield label, group

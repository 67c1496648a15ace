"""A Parquet file read as the CSV its columns make: its numbered lines, the
header first, made a batch of rows at a time (`parquet_lines`), from any
row on; and an error's line told as the file's row (`in_rows`)."""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Iterator
from typing import Any

from backtest.core.errors import ShoeFormatError, shown
from backtest.shoes.recorded.sniff import PARQUET_MAGIC
from backtest.shoes.recorded.text import Place, StrPath

#: rows of a Parquet file read at a time (polars decodes a slice in memory:
#: 2**16 rows took about 40 MB more at the peak)
PARQUET_BATCH = 1 << 14


def is_parquet(path: StrPath) -> bool:
    """Whether the file at `path` opens as a Parquet file does."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
    except OSError:
        return False


def parquet_kind(path: StrPath, columns: dict[str, str] | None) -> str | None:
    """The CSV a Parquet file reads as: card-level (a `card` column and no
    `winner`) or outcome-level; None if polars cannot read its schema (its
    reader says why)."""
    import polars as pl

    try:
        names = pl.scan_parquet(os.fspath(path)).collect_schema().names()
    except Exception:  # polars raises its own errors, and OSError
        return None
    header = {c.strip().lower() for c in names}
    if columns:
        header = (header - {c.strip().lower() for c in columns.values()}) | set(columns)
    return "card-csv" if "card" in header and "winner" not in header else "outcome-csv"


def parquet_lines(
    source: str, file: StrPath | bytes, first_row: int = 0
) -> Generator[tuple[int, str], None, None]:
    """The numbered lines of the CSV a Parquet file's columns make (as text: a
    list a space-separated string; a null empty), its header first (line 1,
    row r line r + 2), made a batch of rows at a time; from row `first_row`
    on (then without the header)."""
    for number, line, _ in placed_parquet_lines(source, file, first_row):
        yield number, line


def placed_parquet_lines(
    source: str, file: StrPath | bytes, first_row: int = 0
) -> Generator[tuple[int, str, Place], None, None]:
    """`parquet_lines`, each line with its place as `text.placed_lines` gives
    it: (its row, the row after, 0), the header (0, 0, 0)."""
    import io

    import polars as pl

    def failed(exc: Exception) -> ShoeFormatError:
        return ShoeFormatError(
            f"{source}: not a Parquet file polars can read: {shown(str(exc), 120)[1:-1]}"
        )

    try:
        if isinstance(file, bytes):
            frame = pl.read_parquet(io.BytesIO(file))
            batches: Iterator[pl.DataFrame] = iter([frame])
            schema = frame.schema
        else:
            lazy = pl.scan_parquet(os.fspath(file))
            schema = lazy.collect_schema()
    except Exception as exc:  # polars raises its own errors, and OSError
        raise failed(exc) from None
    cast = []
    for name, dtype in schema.items():
        col = pl.col(name)
        if isinstance(dtype, pl.List):
            col = col.cast(pl.List(pl.String)).list.join(" ")
        cast.append(col.cast(pl.String).fill_null("").alias(name))
    if not isinstance(file, bytes):
        batches = _parquet_batches(lazy, failed, first_row)
    number = first_row + 1 if first_row else 0
    for k, batch in enumerate(batches):
        text = batch.select(cast).write_csv(include_header=k == 0 and not first_row)
        for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
            number += 1
            row = max(number - 2, 0)
            yield number, line, ((row, row + 1, 0) if number > 1 else (0, 0, 0))


def _parquet_batches(lazy: Any, failed: Any, first_row: int = 0) -> Iterator[Any]:
    """The rows of a scanned Parquet file from `first_row`, PARQUET_BATCH at a
    time (at least one batch, which may be empty)."""
    offset = first_row
    while True:
        try:
            batch = lazy.slice(offset, PARQUET_BATCH).collect()
        except Exception as exc:  # polars raises its own errors, and OSError
            raise failed(exc) from None
        if offset == first_row or batch.height:
            yield batch
        if batch.height < PARQUET_BATCH:
            return
        offset += PARQUET_BATCH


def in_rows(exc: ShoeFormatError, source: str) -> ShoeFormatError:
    """An error about a line of the CSV a Parquet file makes, about its row
    (line 1 is the header, line n row n - 1)."""
    message = re.sub(
        rf"^{re.escape(source)}, line (\d+)",
        lambda m: (
            f"{source}, " + ("the header" if m.group(1) == "1" else f"row {int(m.group(1)) - 1}")
        ),
        str(exc),
    )
    return ShoeFormatError(message)

"""A Parquet file read as the CSV its columns make: its numbered lines, the
header first, made a batch of rows at a time (`parquet_lines`); and an
error's line told as the file's row (`in_rows`)."""

from __future__ import annotations

import os
import re
from collections.abc import Generator

from backtest.core.errors import ShoeFormatError, shown
from backtest.shoes.recorded.sniff import PARQUET_MAGIC
from backtest.shoes.recorded.text import StrPath

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


def parquet_lines(source: str, file: StrPath | bytes) -> Generator[tuple[int, str], None, None]:
    """The numbered lines of the CSV a Parquet file's columns make (as text: a
    list a space-separated string; a null empty), its header first (line 1,
    row r line r + 1), made PARQUET_BATCH rows at a time (`file`: its path,
    or its bytes, read of standard input or a pipe)."""
    import io

    import polars as pl

    def failed(exc: Exception) -> ShoeFormatError:
        return ShoeFormatError(
            f"{source}: not a Parquet file polars can read: {shown(str(exc), 120)[1:-1]}"
        )

    try:
        if isinstance(file, bytes):
            lazy = pl.read_parquet(io.BytesIO(file)).lazy()
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
    number = 0
    offset = 0
    while True:
        try:
            batch = lazy.slice(offset, PARQUET_BATCH).collect()
        except Exception as exc:  # polars raises its own errors, and OSError
            raise failed(exc) from None
        text = batch.select(cast).write_csv(include_header=offset == 0)
        for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
            number += 1
            yield number, line
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

"""Closing an iterator of a file's lines or records that was not read to
its end: the file is then closed at once, not when the iterator is
collected."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def close(items: Iterator[Any]) -> None:
    """Close `items` if it can be closed (a generator reading a file); an
    iterator over a list has nothing to close."""
    closer = getattr(items, "close", None)
    if closer is not None:
        closer()

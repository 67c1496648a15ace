"""Which round records repeat an earlier one, in memory bounded for any
number of rounds; and, the same way, which shoe label of a CSV comes back
after other shoes (`ShoeLabels`).

A round recorded twice (the same game id and record) is read once, and a
game id recorded again with another result is an error naming its first
record (see `rounds.RoundShoes`). Every game id read must be remembered to
tell. `RepeatedRounds` remembers them in the `seen.SeenGames` table while it
takes at most TABLE_BYTES (at 16 MB, the ids of up to 786,432 rounds, and
half as much again for a moment while it doubles; its answers are exact).
Past that the table is let go, and the ids of the whole file are sorted out
on disk instead (`partitioned`), at the cost of reading every record once
more:

- the records are read again from the first to the last (`keys`: each
  one's place among the records, its game id and the digest of the record;
  to the last also when the read means to stop after its first shoes, as
  `run --sessions` does), and for each a 32-byte entry (a 128-bit hash of
  the game id, the record's digest, its place) is written to one of BUCKETS
  files in a temporary directory (Python's `tempfile`: TMPDIR, else /tmp),
  by bits of the id's hash, BATCH entries at a time;
- each file alone is sorted by id and place (a file larger than
  BUCKET_BYTES is parted again by more bits first): of an id's records, a
  later one with the first one's digest is a repeat, and a later one with
  another digest is a conflict; the first conflict in the file is kept;
- the directory is removed (also after an error, Ctrl-C or SIGTERM), and
  the read goes on with the places of the repeats (a sorted array, 8 bytes
  a repeat) and of the first conflict, answering by the place alone.

The answers are those of the table, which are those of a read that kept
every id exactly, assuming that two different game ids never have the same
128-bit hash (blake2b: about one chance in 2**128 for a pair of ids, less
than one in 10**20 for a file of a billion different ids). A
conflict is settled exactly still: its first record is looked for by its
very id (`earlier`), as the table does. Memory, past the table: a batch of
entries (8 MB), one bucket being sorted (at most BUCKET_BYTES, a few times
that while sorted, unless it holds the records of a single id), and the
places of the repeats. Disk: 32 bytes a round, for a moment.

A bad line stops the reading of the keys there: the read, which goes on
line by line, stops at that line with its error, so whatever comes after
it is never asked about.

>>> keys = [(0, '"a"', 5), (1, '"b"', 6), (2, '"a"', 5), (3, '"b"', 7)]
>>> known = partitioned(iter(keys))
>>> known.skip.tolist(), known.conflict
([2], 3)
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from array import array
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

import numpy as np

from backtest.shoes.recorded.closing import close
from backtest.shoes.recorded.seen import FirstLines, SeenGames

#: the most the table of game ids may take before the ids are sorted on disk
TABLE_BYTES = 16 << 20
#: files the entries are parted into (a power of two, at most 64)
BUCKETS = 64
#: entries written at a time
BATCH = 1 << 18
#: a bucket larger than this is parted again before it is sorted
BUCKET_BYTES = 8 << 20
#: an entry: the game id's hash (two 64-bit words), the record's digest, its place
ENTRY = np.dtype([("hi", "<u8"), ("lo", "<u8"), ("digest", "<u8"), ("ordinal", "<i8")])
#: times a bucket may be parted again (6 bits of the id's hash each)
_LEVELS = 10


def id_key(text: str) -> tuple[int, int]:
    """A 128-bit hash of a game id's JSON text, as two 64-bit words."""
    digest = hashlib.blake2b(text.encode(), digest_size=16, person=b"game id").digest()
    return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")


_T = TypeVar("_T", SeenGames, FirstLines)


class _TableThenDisk(Generic[_T]):
    """Ids asked about in the order of a file's records: in a table while it
    takes at most TABLE_BYTES, then sorted out on disk (`partitioned`) from
    `keys()`: (place, id text, digest) of every record from the first."""

    def __init__(self, keys: Callable[[], Iterator[tuple[int, str, int]]], table: _T) -> None:
        self._keys = keys
        self._table: _T | None = table
        self._known: Known | None = None

    @property
    def partitioned(self) -> bool:
        """Whether the ids were sorted out on disk (the table let go)."""
        return self._known is not None

    def _within(self) -> _T | None:
        """The table, while one more id keeps it within TABLE_BYTES; else
        None, the ids sorted out on disk (at the first such ask) in `_known`."""
        if self._known is None:
            assert self._table is not None
            if self._table.nbytes(one_more=True) <= TABLE_BYTES:
                return self._table
            self._table = None  # (let go before the ids are sorted out)
            self._known = partitioned(self._keys())
        return None


class RepeatedRounds(_TableThenDisk[SeenGames]):
    """Whether each round (with a game id) repeats an earlier one, asked in
    the order of the records. `keys()` gives (place, game id text, record
    digest) of every record with a game id from the first, places counted
    from 0 over all the records, as the rounds are asked about."""

    def __init__(self, keys: Callable[[], Iterator[tuple[int, str, int]]]) -> None:
        super().__init__(keys, SeenGames())

    def check(
        self,
        ordinal: int,
        text: str,
        digest: Callable[[], int],
        place: str,
        earlier: Callable[[str], str | None],
    ) -> bool | str:
        """As `SeenGames.check`, of the `ordinal`th record (its game id
        `text`, `digest()` its record's digest)."""
        table = self._within()
        if table is not None:
            return table.check(text, digest(), place, earlier)
        assert self._known is not None
        return self._known.check(ordinal, text, earlier)


class ShoeLabels(_TableThenDisk[FirstLines]):
    """The shoe labels of a CSV, asked in the order of its rows, each shoe's
    with the line it starts on: in the `seen.FirstLines` table while it
    takes at most TABLE_BYTES (a million shoes), then sorted out on disk as
    the game ids of rounds are, from `starts()`: (the line, the label, 0) of
    every shoe's first row from the first, the rows read again. A label is
    the same label only if its text is (as in the table, past the 128-bit
    hash the ids assume)."""

    def __init__(self, starts: Callable[[], Iterator[tuple[int, str, int]]]) -> None:
        super().__init__(starts, FirstLines())

    def first(self, label: str, line: int, earlier: Callable[[str], int | None]) -> int | None:
        """As `FirstLines.first`."""
        table = self._within()
        if table is not None:
            return table.first(label, line, earlier)
        assert self._known is not None
        # every shoe's digest is the same: a label that comes back is a repeat
        return earlier(label) if self._known.check(line, label, lambda _: None) is True else None


class Known:
    """The places of the records that repeat an earlier one (`skip`, sorted)
    and of the first with another result than its id's first (`conflict`,
    or None)."""

    def __init__(self, skip: np.ndarray, conflict: int | None) -> None:
        self.skip, self.conflict = skip, conflict
        self._at = 0

    def check(self, ordinal: int, text: str, earlier: Callable[[str], str | None]) -> bool | str:
        """As `SeenGames.check`, of the `ordinal`th record (asked in
        increasing order)."""
        if ordinal == self.conflict:
            first = earlier(text)
            if first is not None:
                return first
        skip, at = self.skip, self._at
        if at < skip.size and skip[at] < ordinal:
            at = self._at = int(np.searchsorted(skip, ordinal))
        return at < skip.size and int(skip[at]) == ordinal


def partitioned(keys: Iterator[tuple[int, str, int]]) -> Known:
    """The repeats and the first conflict of records (place, game id text,
    record digest), sorted out in files of a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="backtest-rounds-") as folder:
        buckets = [os.path.join(folder, f"{b}") for b in range(BUCKETS)]
        columns = [array("Q"), array("Q"), array("Q"), array("q")]
        try:
            for ordinal, text, digest in keys:
                hi, lo = id_key(text)
                columns[0].append(hi)
                columns[1].append(lo)
                columns[2].append(digest)
                columns[3].append(ordinal)
                if len(columns[3]) >= BATCH:
                    _write(_entries(columns), buckets, 0)
                    columns = [array("Q"), array("Q"), array("Q"), array("q")]
        finally:
            close(keys)
        _write(_entries(columns), buckets, 0)
        del columns
        skips: list[np.ndarray] = []
        conflict: int | None = None
        for path in buckets:
            for skip, first in _sorted_out(path, 1):
                skips.append(skip)
                if first is not None and (conflict is None or first < conflict):
                    conflict = first
    skip = np.sort(np.concatenate(skips)) if skips else np.zeros(0, np.int64)
    return Known(skip, conflict)


def _entries(columns: list[array[int]]) -> np.ndarray:
    out = np.empty(len(columns[3]), ENTRY)
    for name, column in zip(ENTRY.names or (), columns):
        out[name] = np.frombuffer(column, out.dtype[name]) if len(column) else 0
    return out


def _part(entries: np.ndarray, level: int) -> np.ndarray:
    """The bucket of each entry at `level` (6 bits of its id's hash)."""
    mixed = entries["hi"] ^ entries["lo"]
    shift = np.uint64(64 - 6 * (level + 1))
    return ((mixed >> shift) & np.uint64(BUCKETS - 1)).astype(np.intp)


def _write(entries: np.ndarray, buckets: list[str], level: int) -> None:
    """Add entries to the end of the bucket files they belong in at `level`."""
    if not entries.size:
        return
    part = _part(entries, level)
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(BUCKETS + 1))
    for b in range(BUCKETS):
        if bounds[b] < bounds[b + 1]:
            with open(buckets[b], "ab") as f:
                entries[order[bounds[b] : bounds[b + 1]]].tofile(f)


def _sorted_out(path: str, level: int) -> Iterator[tuple[np.ndarray, int | None]]:
    """(the places of the repeats, the first conflict's or None) of the
    entries of a bucket file, removed once read: parted again first when it
    is larger than BUCKET_BYTES (while more bits of the hash part it)."""
    if not os.path.exists(path):
        return
    size = os.path.getsize(path)
    if size > BUCKET_BYTES and level < _LEVELS:
        parts = [f"{path}.{b}" for b in range(BUCKETS)]
        step = max(1, BUCKET_BYTES // ENTRY.itemsize)
        for offset in range(0, size // ENTRY.itemsize, step):
            chunk = np.fromfile(path, ENTRY, count=step, offset=offset * ENTRY.itemsize)
            _write(chunk, parts, level)
        os.remove(path)
        if any(os.path.exists(p) and os.path.getsize(p) == size for p in parts):
            # (every entry went to one part: these bits do not part them)
            whole = next(p for p in parts if os.path.exists(p))
            yield from _sorted_out(whole, level + 1)
            return
        for p in parts:
            yield from _sorted_out(p, level + 1)
        return
    entries = np.fromfile(path, ENTRY)
    os.remove(path)
    yield _repeats(entries)


def _repeats(entries: np.ndarray) -> tuple[np.ndarray, int | None]:
    """The places of the entries whose id's first entry has the same digest
    (repeats), and the first place of one whose id's first has another
    (a conflict), or None."""
    order = np.lexsort((entries["ordinal"], entries["lo"], entries["hi"]))
    hi, lo = entries["hi"][order], entries["lo"][order]
    digest, ordinal = entries["digest"][order], entries["ordinal"][order]
    del entries, order
    n = ordinal.size
    first = np.ones(n, bool)
    first[1:] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])
    start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    same = digest == digest[start]
    skip = ordinal[~first & same]
    other = ordinal[~first & ~same]
    return skip, int(other.min()) if other.size else None

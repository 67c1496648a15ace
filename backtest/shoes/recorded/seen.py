"""The game ids of the rounds read so far (and a CSV's shoe labels), kept
in a few bytes each.

A live table may publish a round twice: the second record is read once if it
is the same as the first, and is an error if its result differs. To tell,
every game id read so far is remembered with a digest of its record. A set
of the ids themselves costs a couple of hundred bytes a round (a Python
string and a dict entry each), so a file of millions of rounds would need
gigabytes for it. Here each id is one slot of an open-addressing table of
two 64-bit words, a hash of the id and a digest of the record: 16 bytes a
slot, and the table is kept between 3/8 and 3/4 full (21 to 43 bytes a
round, 3 times that for a moment while it doubles).

Equal hashes of two different ids (a collision, about one in 2**64 a pair)
must not make a new round "recorded twice" or "a different result". A hash
already in the table with the same record digest is the same round (the
digest covers the id as well: two records of different ids with equal id
hashes and equal record digests is a one in 2**128 chance, as likely as two
different records with equal digests). A hash already there with another
digest is settled exactly: the records before are read again (`earlier`)
for the first with this very id. Found, the round was recorded before with
a different result (an error, which ends the read); not found, the id is new
and is kept exactly (as text) beside the table. That read again happens
once a file in practice, for its error.

>>> seen = SeenGames()
>>> never = lambda text: None
>>> seen.check('"g1"', 5, "line 1", never), seen.check('"g1"', 5, "line 2", never)
(False, True)
>>> seen.check('"g1"', 6, "line 3", lambda text: "line 1")
'line 1'
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Callable, Mapping
from typing import Any

#: 64 bits
_WORD = (1 << 64) - 1
#: slots of a new table (a power of two)
_FIRST_SLOTS = 1 << 10


def id_hash(text: str) -> int:
    """A 64-bit hash of a game id's JSON text; never 0 (an empty slot)."""
    return (hash(text) & _WORD) or 1


def record_digest(record: Mapping[str, Any]) -> int:
    """A 64-bit digest of a record, equal for equal records (as JSON writes
    them, keys sorted)."""
    text = json.dumps(record, sort_keys=True, default=str)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


class _Table:
    """64-bit keys (never 0) with a 64-bit value each, in open addressing
    (linear probing), between 3/8 and 3/4 full: 16 bytes a slot."""

    def __init__(self) -> None:
        self._keys = array("Q", [0]) * _FIRST_SLOTS
        self._values = array("Q", [0]) * _FIRST_SLOTS
        self._mask = _FIRST_SLOTS - 1
        self.count = 0

    def get(self, key: int) -> int | None:
        """The value of `key`, or None if it is not in the table."""
        keys, mask = self._keys, self._mask
        slot = key & mask
        while True:
            there = keys[slot]
            if there == key:
                return self._values[slot]
            if there == 0:
                return None
            slot = (slot + 1) & mask

    def put(self, key: int, value: int) -> None:
        """Add `key` (not in the table) with `value`."""
        keys, mask = self._keys, self._mask
        slot = key & mask
        while keys[slot]:
            slot = (slot + 1) & mask
        keys[slot] = key
        self._values[slot] = value
        self.count += 1
        if 4 * self.count > 3 * (mask + 1):
            self._grow()

    def nbytes(self, one_more: bool = False) -> int:
        """The bytes of the table (with `one_more`: once one more key is in
        it, which may double it)."""
        slots = self._mask + 1
        if one_more and 4 * (self.count + 1) > 3 * slots:
            slots *= 2
        return 16 * slots

    def _grow(self) -> None:
        """Twice the slots, every key placed again."""
        old_keys, old_values = self._keys, self._values
        size = 2 * (self._mask + 1)
        keys = array("Q", [0]) * size
        values = array("Q", [0]) * size
        mask = size - 1
        for key, value in zip(old_keys, old_values):
            if key:
                slot = key & mask
                while keys[slot]:
                    slot = (slot + 1) & mask
                keys[slot] = key
                values[slot] = value
        self._keys, self._values, self._mask = keys, values, mask


class SeenGames:
    """Game ids (their JSON text) with a digest of each one's first record."""

    def __init__(self) -> None:
        self._table = _Table()
        #: ids whose hash an earlier, different id has: id text -> (place, digest)
        self._exact: dict[str, tuple[str, int]] = {}

    def __len__(self) -> int:
        return self._table.count + len(self._exact)

    def nbytes(self, one_more: bool = False) -> int:
        """The bytes of the table (`_Table.nbytes`)."""
        return self._table.nbytes(one_more)

    def check(
        self, text: str, digest: int, place: str, earlier: Callable[[str], str | None]
    ) -> bool | str:
        """Whether the id `text` was read before: False (a new id, now
        remembered with `digest`; `place` is where its record is), True
        (read before with this digest: the same round), or the place of its
        first record, read before with another result. `earlier(text)`
        gives the place of the first record read before with exactly this
        id, or None; it is called only when the id's hash is in the table
        with another digest."""
        if self._exact:
            known = self._exact.get(text)
            if known is not None:
                return True if known[1] == digest else known[0]
        key = id_hash(text)
        before = self._table.get(key)
        if before is None:
            self._table.put(key, digest)
            return False
        if before == digest:
            return True
        first = earlier(text)
        if first is not None:
            return first
        self._exact[text] = (place, digest)
        return False


class FirstLines:
    """Shoe labels, each with the line its shoe starts on: 16 bytes a label
    (see `SeenGames`; here any label read again is found exactly)."""

    def __init__(self) -> None:
        self._table = _Table()
        #: labels whose hash an earlier, different label has: label -> line
        self._exact: dict[str, int] = {}

    def nbytes(self, one_more: bool = False) -> int:
        """The bytes of the table (`_Table.nbytes`)."""
        return self._table.nbytes(one_more)

    def first(self, label: str, line: int, earlier: Callable[[str], int | None]) -> int | None:
        """The line an earlier shoe of `label` started on, or None (a new
        label, now remembered as starting on `line`). `earlier(label)` gives
        the line of the first row read before with exactly this label, or
        None; it is called only when the label's hash is in the table."""
        if self._exact and label in self._exact:
            return self._exact[label]
        key = id_hash(label)
        if self._table.get(key) is None:
            self._table.put(key, line)
            return None
        before = earlier(label)
        if before is None:
            self._exact[label] = line
        return before

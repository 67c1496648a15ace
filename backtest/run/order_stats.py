"""Exact statistics over a seat's sessions read in blocks: sums rounded once,
whatever the blocks, and order statistics and quantiles found in passes, with
memory flat in the number of sessions."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction

import numpy as np
import polars as pl

#: a seat's sessions as blocks of a frame, reading only the columns named;
#: called once for each pass over them
Blocks = Callable[[Sequence[str]], Iterable[pl.DataFrame]]


class InMemory:
    """A frame in memory as one block."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame

    def __call__(self, columns: Sequence[str]) -> list[pl.DataFrame]:
        return [self.frame[list(columns)]]  # (eager: a select costs a query plan's run)


#: numbers an `ExactSum.add` sums one at a time in Python (fewer than numpy's
#: whole-array steps cost)
_FEW = 32


class ExactSum:
    """The sum of float64 numbers added in blocks, exact until it is read,
    then rounded once: the same number however the numbers are split into
    blocks or ordered. Each number is an integer mantissa times a power of two;
    the mantissas are summed by exponent (a bincount, no sort) in three parts
    of 18 bits or less, whose sums stay whole numbers below 2**53 for under
    2**35 numbers a block, and kept as one Python integer in units of
    2**-1126, below the least subnormal's least bit. Infinities and NaN are
    summed as floats beside it and win."""

    _OFFSET = 1126

    def __init__(self) -> None:
        self.total = 0
        self.special = 0.0

    def add(self, values: np.ndarray) -> None:
        x = np.asarray(values, dtype=np.float64)
        finite = np.isfinite(x)
        if not finite.all():
            self.special += float(np.sum(x[~finite]))
            x = x[finite]
        if x.size == 0:
            return
        if x.size <= _FEW:  # each number's mantissa, shifted into place, one at a time
            total = self.total
            for v in x.tolist():
                m1, e1 = math.frexp(v)
                total += int(m1 * 9007199254740992.0) << (e1 - 53 + self._OFFSET)
            self.total = total
            return
        m, e = np.frexp(x)
        mant = (m * 9007199254740992.0).astype(np.int64)  # times 2**53: exact
        exp = e.astype(np.int64)
        low = int(exp.min())
        at = exp - low  # x = mant * 2**(at + low - 53)
        # the mantissas by exponent, in three parts of at most 18 bits: each
        # part's sum is a whole number below 2**53 (for under 2**35 numbers),
        # which float weights add exactly
        parts = [(mant >> 36, 36), ((mant >> 18) & 0x3FFFF, 18), (mant & 0x3FFFF, 0)]
        total = self.total
        for part, shift in parts:
            sums = np.bincount(at, weights=part.astype(np.float64))
            for k in np.flatnonzero(sums).tolist():
                total += int(sums[k]) << (k + low - 53 + self._OFFSET + shift)
        self.total = total

    def value(self) -> float:
        if self.special != 0.0 or self.special != self.special:
            return self.special
        try:
            return float(Fraction(self.total, 1 << self._OFFSET))
        except OverflowError:  # finite numbers whose sum is not: as float sums go
            return math.inf if self.total > 0 else -math.inf


def _keys(values: np.ndarray) -> np.ndarray:
    """Unsigned 64-bit keys that sort as the numbers do (-0.0 read as 0.0)."""
    bits = (np.asarray(values, dtype=np.float64) + 0.0).view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))


def _number(key: int) -> float:
    """The float a key of `_keys` stands for."""
    bits = key & ((1 << 63) - 1) if key >> 63 else ~key & ((1 << 64) - 1)
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def order_statistics(blocks: Blocks, wanted: Mapping[str, Sequence[int]]) -> dict[str, list[float]]:
    """The values of the given ranks (0 the least) of each column, exactly,
    in four passes over the blocks whatever their number (every column in the
    same passes): each pass narrows every rank's key by 16 bits, from a
    histogram of the values that share its prefix so far. Memory: a block,
    and 65,536 counts a rank."""
    prefix = {c: [0] * len(r) for c, r in wanted.items()}
    left = {c: [int(x) for x in r] for c, r in wanted.items()}
    columns = list(wanted)
    for level in range(4):
        shift = np.uint64(48 - 16 * level)
        counts = {c: {p: np.zeros(1 << 16, np.int64) for p in set(prefix[c])} for c in columns}
        for block in blocks(columns):
            for c in columns:
                keys = _keys(block[c].to_numpy())
                if level == 0:
                    counts[c][0] += np.bincount((keys >> shift).astype(np.int64), minlength=1 << 16)
                    continue
                top = keys >> (shift + np.uint64(16))
                for p, hist in counts[c].items():
                    chosen = keys[top == np.uint64(p)]
                    hist += np.bincount(
                        ((chosen >> shift) & np.uint64(0xFFFF)).astype(np.int64), minlength=1 << 16
                    )
        for c in columns:
            for k, (p, r) in enumerate(zip(prefix[c], left[c])):
                cum = np.cumsum(counts[c][p])
                digit = int(np.searchsorted(cum, r, side="right"))
                left[c][k] = r - (int(cum[digit - 1]) if digit else 0)
                prefix[c][k] = (p << 16) | digit
    return {c: [_number(p) for p in prefix[c]] for c in columns}


def quantiles(blocks: Blocks, n: int, wanted: dict[str, Sequence[float]]) -> dict[str, list[float]]:
    """Quantiles of columns of `n` values each (column: its q's), interpolated
    linearly between the two values around (n - 1) q, as polars'
    `quantile(q, "linear")`. From the blocks' one frame at once when they
    hold it in memory."""
    where = {c: [(n - 1) * q for q in qs] for c, qs in wanted.items()}
    ranks = {
        c: sorted({r for f in fs for r in (int(f), int(math.ceil(f)))}) for c, fs in where.items()
    }
    if isinstance(blocks, InMemory):
        found = {
            c: np.partition(blocks.frame[c].to_numpy() + 0.0, r)[r].tolist()
            for c, r in ranks.items()
        }
    else:
        found = order_statistics(blocks, ranks)
    out: dict[str, list[float]] = {}
    for c, fs in where.items():
        value = dict(zip(ranks[c], found[c]))
        out[c] = []
        for f in fs:
            lo, hi = value[int(f)], value[int(math.ceil(f))]
            out[c].append(lo if lo == hi else (f - int(f)) * (hi - lo) + lo)
    return out

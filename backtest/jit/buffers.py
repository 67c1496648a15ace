"""Arrays that the chunks of a run reuse.

A chunk of 400,000 hands needs about 30 MB of arrays for its hands and
their unit results. Allocated afresh for every chunk, they cost a page
fault for every 4 kB the kernels first write, and zeroing them cost as
much again; kept from chunk to chunk, they cost neither. A `Buffers`
lives as long as a run (or a worker process's share of one) and hands out
views of its arrays: what a chunk reads from them is valid until the next
chunk asks for the same name.

>>> buffers = Buffers()
>>> a = buffers.empty("cards", (4, 6), np.uint8)
>>> b = buffers.empty("cards", (3, 6), np.uint8)
>>> a.shape, b.shape, np.shares_memory(a, b), b.flags.c_contiguous
((4, 6), (3, 6), True, True)
"""

from __future__ import annotations

import math

import numpy as np

#: room for this much more than asked, so that chunks of slightly varying
#: sizes share one array
_SLACK = 1.25


class Buffers:
    """Named flat arrays, grown as needed, handed out as C-contiguous views."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def empty(self, name: str, shape: tuple[int, ...], dtype: type | np.dtype) -> np.ndarray:
        """An uninitialised C-contiguous array of `shape` under `name`: the
        same memory as the last array asked under that name, if it fits."""
        size = math.prod(shape)
        flat = self._arrays.get(name)
        if flat is None or flat.dtype != np.dtype(dtype) or flat.size < size:
            flat = np.empty(max(1, int(size * _SLACK)), dtype)
            self._arrays[name] = flat
        return flat[:size].reshape(shape)

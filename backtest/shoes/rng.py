"""The random numbers of dealing and of the strategies that toss coins.

xoshiro256** with its state seeded per stream by splitmix64 from a 64-bit
key and the stream's index (a shoe, a seat's session), so shoe i of a run
is the same whichever chunk or worker deals it, on every machine. The
functions are compiled on first use (`lazy_jit`): this module does not load
numba.
"""

from __future__ import annotations

import numpy as np

from backtest.jit.lazy_jit import kernel

MASK32 = np.uint64(0xFFFFFFFF)


@kernel(inline=True)
def _rotl(x: np.uint64, k: int) -> np.uint64:
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@kernel()
def splitmix64(x: np.uint64) -> tuple[np.uint64, np.uint64]:
    """One splitmix64 step: (new state, output)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@kernel(nrt=False)
def seed_state(key: np.uint64, index: np.uint64, state: np.ndarray) -> None:
    """Fill the 4-word xoshiro state for stream `index` of `key`."""
    x = key ^ (index * np.uint64(0xD1342543DE82EF95))
    for i in range(4):
        x, out = splitmix64(x)
        state[i] = out
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        state[0] = np.uint64(1)


@kernel(inline=True)
def xoshiro(
    s0: np.uint64, s1: np.uint64, s2: np.uint64, s3: np.uint64
) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """xoshiro256** on a state held in four local words: (output, new state).

    A loop that keeps the state in locals keeps it in registers; through the
    state array every step would store and reload it (the compiler cannot tell
    that the arrays the loop writes are not the state)."""
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@kernel(inline=True)
def lemire(
    x: np.uint64, b: np.uint64, s0: np.uint64, s1: np.uint64, s2: np.uint64, s3: np.uint64
) -> tuple[np.int64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """Uniform integer in [0, b) from the 32 random bits `x` (b <= 2**32),
    unbiased (Lemire): in the rare case that `x` falls in the biased few, the
    high halves of fresh outputs of the state are drawn. (value, new state)."""
    m = x * b
    low = m & MASK32
    if low < b:
        threshold = (np.uint64(0x100000000) - b) % b
        while low < threshold:
            r, s0, s1, s2, s3 = xoshiro(s0, s1, s2, s3)
            m = (r >> np.uint64(32)) * b
            low = m & MASK32
    # np.int64 keeps the compiled result signed (int() would leave it uint64)
    return np.int64(m >> np.uint64(32)), s0, s1, s2, s3


@kernel(inline=True)
def bounded_words(
    bound: int, s0: np.uint64, s1: np.uint64, s2: np.uint64, s3: np.uint64
) -> tuple[np.int64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """`bounded` on a state held in four local words: (value, new state)."""
    r, s0, s1, s2, s3 = xoshiro(s0, s1, s2, s3)
    return lemire(r >> np.uint64(32), np.uint64(bound), s0, s1, s2, s3)


@kernel(inline=True)
def next_u64(s: np.ndarray) -> np.uint64:
    """xoshiro256**: the next 64 random bits (the state in `s`)."""
    result, s[0], s[1], s[2], s[3] = xoshiro(s[0], s[1], s[2], s[3])
    return result


@kernel(inline=True)
def bounded(s: np.ndarray, bound: int) -> int:
    """Uniform integer in [0, bound) for bound < 2**32, unbiased (Lemire)."""
    value, s[0], s[1], s[2], s[3] = bounded_words(bound, s[0], s[1], s[2], s[3])
    # numba hands a Python caller an int, which mypy cannot see
    return value  # type: ignore[return-value]


@kernel(inline=True)
def uniform(s: np.ndarray) -> float:
    """Uniform float in [0, 1) with 53 random bits."""
    return float(next_u64(s) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# --- many streams at once, in whole-array operations (for `interpreted` runs) ------------

_U = np.uint64


def seed_lanes(key: np.uint64, indices: np.ndarray) -> np.ndarray:
    """`seed_state` of many streams at once: (4, m), stream `indices[j]`'s
    state in column j."""
    x = np.uint64(key) ^ (indices.astype(np.uint64) * _U(0xD1342543DE82EF95))
    state = np.empty((4, x.shape[0]), np.uint64)
    for i in range(4):
        x = x + _U(0x9E3779B97F4A7C15)
        z = (x ^ (x >> _U(30))) * _U(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U(27))) * _U(0x94D049BB133111EB)
        state[i] = z ^ (z >> _U(31))
    state[0, ~state.any(axis=0)] = 1
    return state


def xoshiro_lanes(s: np.ndarray) -> np.ndarray:
    """`xoshiro` on many streams at once: `s` (4, m) their states, advanced
    in place; returns their outputs."""
    s0, s1, s2, s3 = s
    x = s1 * _U(5)
    result = ((x << _U(7)) | (x >> _U(57))) * _U(9)
    t = s1 << _U(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s[3] = (s3 << _U(45)) | (s3 >> _U(19))
    return result  # type: ignore[no-any-return]


def lemire_lanes(x: np.ndarray, b: int, s: np.ndarray) -> np.ndarray:
    """`lemire` on many streams: a uniform pick in [0, b) from each lane's
    32 random bits `x`; a lane in the biased few draws again from its own
    stream (`s`, (4, m), advanced in place for those lanes alone)."""
    m = x * _U(b)
    low = m & MASK32
    if (low < b).any():
        threshold = ((1 << 32) - b) % b
        again = np.flatnonzero(low < threshold)
        while again.size:
            sub = s[:, again]
            r = xoshiro_lanes(sub)
            s[:, again] = sub
            m[again] = (r >> _U(32)) * _U(b)
            again = again[(m[again] & MASK32) < threshold]
    return (m >> _U(32)).astype(np.int64)  # type: ignore[no-any-return]


def bounded_lanes(s: np.ndarray, bound: int) -> np.ndarray:
    """`bounded` on many streams at once (`s` (4, m), advanced in place)."""
    return lemire_lanes(xoshiro_lanes(s) >> _U(32), bound, s)

"""The statistics of a record of shoes, a value per row of a batch of records of
one shape: the record itself, or fair records of its shape dealt by the
engine's shoe generator."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from backtest.core.hands import Hands

#: the longest pattern of decisive outcomes looked at
PATTERN_LENGTH = 4
#: streaks are counted by length 1 .. STREAK_BINS - 1, and STREAK_BINS or more
STREAK_BINS = 8

_NAMES = "PBT"


@dataclass(frozen=True)
class Shape:
    """Which shoe each hand is of, and where each shoe starts (the same for the
    record and every simulated record)."""

    lengths: np.ndarray  # hands of each shoe
    shoe_of: np.ndarray  # (N,) the shoe of each hand, 0 ..
    first: np.ndarray  # (N,) the column of the first hand of its shoe

    @property
    def n(self) -> int:
        return int(self.shoe_of.shape[0])

    @property
    def shoes(self) -> int:
        return int(self.lengths.shape[0])


def shape_of(hands: Hands) -> Shape:
    _, index, lengths = np.unique(hands.shoe, return_index=True, return_counts=True)
    order = np.argsort(index)
    lengths = lengths[order]
    shoe_of = np.repeat(np.arange(lengths.shape[0]), lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return Shape(lengths, shoe_of, starts[shoe_of])


@dataclass(frozen=True)
class Batch:
    """Records of one shape, a row each: winners, and what else is known."""

    winner: np.ndarray  # (m, N) int8
    player_pair: np.ndarray | None  # (m, N) bool
    banker_pair: np.ndarray | None
    dragon: np.ndarray | None  # Banker wins with a three-card 7
    panda: np.ndarray | None  # Player wins with a three-card 8


def _batch(columns: dict[str, np.ndarray | None]) -> Batch:
    winner = columns["winner"]
    assert winner is not None
    return Batch(
        winner, columns["player_pair"], columns["banker_pair"], columns["dragon"], columns["panda"]
    )


def record_batch(hands: Hands, want: set[str]) -> Batch:
    return _batch(
        {k: v[None, ...] if v is not None else None for k, v in _columns(hands, want).items()}
    )


def _columns(hands: Hands, want: set[str]) -> dict[str, np.ndarray | None]:
    w = hands.winner.astype(np.int8)
    out: dict[str, np.ndarray | None] = {
        "winner": w,
        "player_pair": None,
        "banker_pair": None,
        "dragon": None,
        "panda": None,
    }
    if "pairs" in want:
        out["player_pair"], out["banker_pair"] = hands.player_pair, hands.banker_pair
    if "ez" in want:
        out["dragon"] = (w == 1) & (hands.banker_total == 7) & (hands.banker_card_count == 3)
        out["panda"] = (w == 0) & (hands.player_total == 8) & (hands.player_card_count == 3)
    return out


def _prev_decisive(w: np.ndarray, shape: Shape) -> np.ndarray:
    """(m, N): the column of the last Player or Banker win before each hand in
    its shoe, or -1."""
    n = w.shape[1]
    marks = np.where(w < 2, np.arange(n, dtype=np.int32), np.int32(-1))
    last = np.maximum.accumulate(marks, axis=1)
    prev = np.full_like(last, -1)
    prev[:, 1:] = last[:, :-1]
    prev[prev < shape.first] = -1
    return prev


def _gather(a: np.ndarray, at: np.ndarray) -> np.ndarray:
    """a[row, at[row, col]] where at >= 0, else -1."""
    m, n = a.shape
    base = (np.arange(m, dtype=at.dtype) * n)[:, None]
    got = a.ravel()[base + np.maximum(at, 0)]
    return np.where(at >= 0, got, -1).astype(a.dtype, copy=False)


def chi(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Sum over the last axis of (o - e)^2 / e, cells with e = 0 left out."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(expected > 0, (observed - expected) ** 2 / expected, 0.0)
    return terms.sum(axis=-1)


def _row_counts(keys: np.ndarray, rows: np.ndarray, size: int, m: int) -> np.ndarray:
    return np.bincount(rows * size + keys, minlength=m * size).reshape(m, size)


@dataclass
class Stats:
    """Each test's statistic for every row of a batch, and the counts the
    words about the record are made from."""

    values: dict[str, np.ndarray] = field(default_factory=dict)
    streaks: np.ndarray | None = None  # (m, STREAK_BINS) counts
    pattern_counts: dict[str, np.ndarray] = field(default_factory=dict)  # (m, 3)
    freq: np.ndarray | None = None  # (m, 3)


def batch_statistics(b: Batch, shape: Shape, exact: dict[str, float], decks: int) -> Stats:
    w = b.winner.astype(np.int32)
    m, n = w.shape
    rows = np.repeat(np.arange(m, dtype=np.int32), n).reshape(m, n)
    out = Stats()
    counts = _row_counts(w.ravel(), rows.ravel(), 3, m).astype(float)
    out.freq = counts / max(n, 1)
    probs = np.array([exact["player"], exact["banker"], exact["tie"]])
    out.values["outcome frequencies"] = chi(counts, n * probs[None, :])
    side = [
        (name, arr)
        for name, arr in (
            ("player_pair", b.player_pair),
            ("banker_pair", b.banker_pair),
            ("dragon_7", b.dragon),
            ("panda_8", b.panda),
        )
        if arr is not None
    ]
    if side:
        total = np.zeros(m)
        for name, arr in side:
            p = exact[name]
            x = arr.sum(axis=1)
            total += (x - n * p) ** 2 / (n * p * (1 - p))
        label = "pair frequencies" if all("pair" in s for s, _ in side) else "side-bet frequencies"
        out.values[label] = total

    prev = _prev_decisive(w, shape)
    decisive = w < 2
    # streaks: a decisive hand starts one unless the last decisive hand of its shoe
    # had the same winner
    before = _gather(w, prev)
    starts = decisive & (before != w)
    flat_start = starts.ravel()
    flat_dec = decisive.ravel()
    run_id = np.cumsum(flat_start) - 1
    if flat_start.any():
        lengths = np.bincount(run_id[flat_dec], minlength=int(flat_start.sum()))
        run_rows = rows.ravel()[flat_start]
        binned = np.minimum(lengths, STREAK_BINS) - 1
        out.streaks = _row_counts(binned, run_rows, STREAK_BINS, m).astype(float)
    else:
        out.streaks = np.zeros((m, STREAK_BINS))
    # runs test, summed over shoes
    s = shape.shoes
    key = rows * s + shape.shoe_of[None, :]
    n_p = np.bincount(key[w == 0], minlength=m * s).reshape(m, s).astype(float)
    n_b = np.bincount(key[w == 1], minlength=m * s).reshape(m, s).astype(float)
    runs = np.bincount(key[starts], minlength=m * s).reshape(m, s).astype(float)
    tot = n_p + n_b
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(tot > 0, 1 + 2 * n_p * n_b / tot, 0.0)
        var = np.where(tot > 1, 2 * n_p * n_b * (2 * n_p * n_b - tot) / (tot**2 * (tot - 1)), 0.0)
    sd = np.sqrt(var.sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, (runs.sum(axis=1) - mean.sum(axis=1)) / sd, 0.0)
    out.values["runs (Player/Banker)"] = np.abs(z)
    # after each pattern of the last k decisive outcomes
    at = prev
    code = np.zeros_like(w)
    for k in range(1, PATTERN_LENGTH + 1):
        if k > 1:
            at = _gather(prev, at)
        code = code + np.where(at >= 0, _gather(w, at), 0) * (1 << (k - 1))
        valid = at >= 0
        size = (1 << k) * 3
        table = _row_counts((code * 3 + w)[valid], rows[valid], size, m)
        table = table.reshape(m, 1 << k, 3).astype(float)
        seen = table.sum(axis=2)
        stat = chi(table, seen[:, :, None] * out.freq[:, None, :])
        for c in range(1 << k):
            name = "after " + "".join(_NAMES[(c >> j) & 1] for j in range(k - 1, -1, -1))
            out.values[name] = stat[:, c]
            out.pattern_counts[name] = table[:, c, :]
    return out


def composition_chi(dealt: np.ndarray, decks: int) -> np.ndarray:
    """(..., shoes, 13) rank counts: each shoe's chi-square against an equal
    share of its cards for each rank, corrected for drawing without
    replacement from the decks (times (N - 1) / (N - c) for c of N cards, so
    that its mean is 12 however much of the shoe was dealt), summed over the
    shoes."""
    per_shoe = dealt.sum(axis=-1, keepdims=True)
    full = 52 * decks
    each = chi(dealt, np.broadcast_to(per_shoe / 13, dealt.shape))
    return (each * (full - 1) / np.maximum(full - per_shoe[..., 0], 1)).sum(axis=-1)


def dealt_ranks(hands: Hands) -> np.ndarray:
    """(shoes, 13): the ranks seen in each shoe: dealt into hands, and burned
    where the record was read with the burn rule."""
    shoes = np.unique(hands.shoe, return_inverse=True)[1]
    ranks = (hands.cards & 0xF).astype(np.int64)
    key = np.broadcast_to(shoes[:, None], ranks.shape) * 14 + ranks
    counts = np.bincount(key[ranks > 0], minlength=(int(shoes.max()) + 1) * 14).reshape(-1, 14)
    for shoe, burned in enumerate(hands.burned[: counts.shape[0]]):
        counts[shoe] += np.bincount([c & 0xF for c in burned], minlength=14)
    return counts[:, 1:].astype(float)


def simulated_records(
    shape: Shape, decks: int, count: int, seed: int, first_record: int, want: set[str]
) -> Batch:
    """`count` fair records of the record's shape: shoe k of record r is the
    generated shoe r * shoes + k, dealt to the end and cut to the recorded
    shoe's hands. A recorded shoe longer than its generated counterpart runs
    on into a spare shoe (numbered apart from every record's)."""
    from backtest.shoes.shoe import ShoeSpec, generate_shoes

    spec = ShoeSpec(decks=decks, cut_card=0, burn=True)
    s = shape.shoes
    need = np.tile(shape.lengths, count)
    slots = np.arange(need.shape[0])
    slot_start = np.cumsum(need) - need  # where each slot's hands go
    index = np.empty(int(need.sum()), np.int64)
    filled = np.zeros_like(need)
    parts: list[dict[str, np.ndarray | None]] = []
    offset = 0
    level = 0
    todo = slots
    while todo.shape[0]:
        ids = (first_record * s + todo).astype(np.int64) + (level << 40)
        missing = need[todo] - filled[todo]
        gen = generate_shoes(spec, ids, seed, max_hands=int(missing.max()))
        have = np.bincount(np.searchsorted(ids, gen.shoe), minlength=ids.shape[0])
        begin = np.cumsum(have) - have
        take = np.minimum(have, missing)
        dest = np.repeat(slot_start[todo] + filled[todo], take)
        within = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take)
        index[dest + within] = offset + np.repeat(begin, take) + within
        parts.append(_columns(gen, want))
        offset += gen.winner.shape[0]
        filled[todo] += take
        todo = todo[filled[todo] < need[todo]]
        level += 1
    columns = {
        k: (np.concatenate([p[k] for p in parts]) if v is not None else None)  # type: ignore[misc]
        for k, v in parts[0].items()
    }
    n = shape.n
    return _batch(
        {k: (v[index].reshape(count, n) if v is not None else None) for k, v in columns.items()}
    )

"""The plan of a run over recorded shoes: the file's shoes read as far as
the sessions asked for need (`read_recorded`, the last files' reads kept in
`READS`), and which shoes each session plays (`recorded_plan`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from backtest.core.errors import ConfigError, UsageError
from backtest.core.hands import Hands
from backtest.run.config import RunConfig

if TYPE_CHECKING:
    from backtest.shoes.recorded.cache import Columnar


@dataclass(frozen=True, eq=False)
class RecordedPlan:
    """Which recorded shoes each session plays. Sessions take the file's shoes
    in order, each starting a new shoe: `max_shoes` of them, or (with only
    `max_hands`) as many as reach `max_hands` hands. `available` sessions
    fit in one pass; `left_over` shoes after them make no whole session.
    Played again (`loop`), the shoes run on in order from the first."""

    n_shoes: int
    hands: int
    available: int
    left_over: int
    session_words: str
    #: for a session starting at shoe s (0-based): how many shoes it takes,
    #: reading on from the first shoe after the last (loop): one number when
    #: every session takes as many, else a number a shoe ...
    takes: int | np.ndarray
    #: ... and (with a number a shoe) the first shoe of sessions 0, 1, ...
    #: until they repeat; with one number, session j starts at shoe
    #: j * takes modulo the shoes, and nothing is kept a shoe or a session
    starts: np.ndarray | None = None
    #: starts[cycle:] repeats for ever
    cycle: int = 0

    @property
    def most(self) -> int:
        """The most shoes a session takes."""
        if isinstance(self.takes, int):
            return self.takes
        return int(self.takes.max()) if len(self.takes) else 1

    def sessions(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """(first shoe, shoes) of sessions lo..hi-1 (0-based shoe indices)."""
        j = np.arange(lo, hi, dtype=np.int64)
        if self.starts is None:
            assert isinstance(self.takes, int)
            first = (j % self.n_shoes) * self.takes % self.n_shoes if self.n_shoes else j
            return [(k, self.takes) for k in first.tolist()]
        assert not isinstance(self.takes, int)
        period = len(self.starts) - self.cycle
        late = j >= len(self.starts)
        j[late] = self.cycle + (j[late] - self.cycle) % max(period, 1)
        first = self.starts[j]
        return list(zip(first.tolist(), self.takes[first].tolist(), strict=True))


def shoes_needed(config: RunConfig, sessions: int | None) -> Need:
    """How far into the recorded file `sessions` sessions play: a fixed
    number of its shoes, when a session takes `max_shoes`; the shoes that
    reach so many sessions of `max_hands` hands, with only that; None: all
    of the file (to play it whole)."""
    s = config.session
    if not sessions:
        return None
    if s.max_shoes is not None:
        return sessions * s.max_shoes
    if s.max_hands is not None:
        return (sessions, s.max_hands)
    return sessions


def recorded_plan(config: RunConfig, sessions: int | None = None) -> RecordedPlan:
    """The plan of `sessions` sessions (None: as many as the file makes) over
    the file's shoes read so far, which hold at least those they take
    (`shoes_needed`), or over all of the file if it has too few: the first
    sessions play the same shoes in the plan of the whole file and in that
    of any of its first shoes that hold them, so every chunk of a run, read
    as far as its own sessions, plays the shoes the run's plan gives it."""
    read, _ = read_recorded(config, shoes_needed(config, sessions))
    s = config.session
    key = (s.max_shoes, s.max_hands)
    plan = read.plans.get(key)  # (worked out once for the shoes read)
    if plan is None:
        plan = read.plans[key] = _recorded_plan(read.lengths, s.max_shoes, s.max_hands)
    return plan


def _recorded_plan(
    lengths: np.ndarray, max_shoes: int | None, max_hands: int | None
) -> RecordedPlan:
    """The plan over shoes of these hands (`lengths`, a shoe each)."""
    n = len(lengths)
    total = int(lengths.sum(dtype=np.int64))
    if max_shoes is not None or max_hands is None:
        # every session takes as many shoes (the config requires max_shoes or
        # max_hands; with neither, a session is one shoe): sessions start at
        # 0, m, 2m, ... modulo the shoes, and the first repeat is shoe 0
        m = max_shoes if max_shoes is not None else 1
        words = f"{m} shoe{'s' if m != 1 else ''}"
        available = n // m
        return RecordedPlan(n, total, available, n - available * m, words, m)
    words = f"{max_hands:,} hand{'s' if max_hands != 1 else ''}"
    # the shoes from s, in order and round again, that reach max_hands
    # hands: whole passes over the file, then at most one more pass
    rounds = (max_hands - 1) // total if total else 0
    rest = max_hands - rounds * total  # 1..total hands
    ends = np.concatenate([[0], np.cumsum(np.concatenate([lengths, lengths]), dtype=np.int64)])
    begin = np.arange(n, dtype=np.int64)
    last = np.searchsorted(ends, ends[begin] + rest, side="left")
    takes = rounds * n + (last - begin)
    del ends, begin, last
    available, at, starts, cycle = _walk(takes)
    return RecordedPlan(n, total, available, n - at, words, takes, starts, cycle)


def _walk(takes: np.ndarray) -> tuple[int, int, np.ndarray, int]:
    """For sessions taking `takes[s]` shoes from shoe s: how many fit in one
    pass and the shoe after them; the first shoes of sessions 0, 1, ...
    until one repeats (round the file again), and where the repeat begins."""
    n = len(takes)
    available = at = 0
    while n and at + int(takes[at]) <= n:
        at += int(takes[at])
        available += 1
        if at == n:
            break
    seen = np.full(n, -1, dtype=np.int64)  # the session that starts at each shoe
    starts = np.empty(n, dtype=np.int64)
    count = first = 0
    while n and seen[first] < 0:
        seen[first] = count
        starts[count] = first
        count += 1
        first = (first + int(takes[first])) % n
    return available, at, starts[:count].copy(), int(seen[first]) if n else 0


def shoes_per_session(config: RunConfig) -> int:
    """Shoes dealt for each generated session (enough for max_hands)."""
    s = config.session
    if s.max_shoes is not None:
        return s.max_shoes
    spec = config.shoe
    assert spec is not None
    worst_burn = 11 if spec.burn else 0
    per_shoe = max(1, (spec.n_cards - spec.cut_card - worst_burn - 6) // 6)
    return max(1, math.ceil((s.max_hands or 1) / per_shoe))


@dataclass(frozen=True, eq=False)
class Read:
    """Shoes read of a recorded file (all of them, or its first): the hands
    each deals, whether that is all of the file, and the way to their hands:
    `held`, the hands themselves (with where each shoe's rows start), or
    `columnar`, all of a big file's as Parquet in the cache, read as a
    chunk needs them."""

    lengths: np.ndarray
    whole: bool
    held: tuple[Hands, np.ndarray] | None = None
    columnar: Columnar | None = None
    #: the plans worked out over these shoes, by (max_shoes, max_hands)
    plans: dict[tuple[int | None, int | None], RecordedPlan] = field(default_factory=dict)

    def shoes(self, ks: np.ndarray) -> tuple[Hands, np.ndarray, np.ndarray]:
        """Hands that hold the shoes `ks` (in increasing order), with the row
        where each of them starts and ends there."""
        if self.held is not None:
            hands, starts = self.held
            return hands, starts[ks], starts[ks] + self.lengths[ks]
        assert self.columnar is not None
        ends = np.cumsum(self.lengths[ks], dtype=np.int64)
        return self.columnar.hands(ks), ends - self.lengths[ks], ends


#: how far to read a recorded file: its first N shoes (an int), the shoes
#: that N sessions of M hands take (a pair), or all of it (None)
Need = int | tuple[int, int] | None


#: the shoes first read of a file for sessions of M hands; then twice as
#: many until they are enough
FIRST_SHOES = 64


#: the shoes read of recorded files, by (path, decks, burn, time of change, column mapping)
READS: dict[tuple[str, int, bool, float, tuple[tuple[str, str], ...]], Read] = {}


def _enough(lengths: np.ndarray, need: Need) -> bool:
    """Whether shoes of these hands (the first of a file) are as many as `need` asks."""
    if need is None:
        return False
    if isinstance(need, int):
        return len(lengths) >= need
    return len(lengths) >= _until(need)[1](lengths)


def _until(need: tuple[int, int]) -> tuple[Callable[[int], bool], Callable[[np.ndarray], int]]:
    """For N sessions of M hands: a reader's `until` (told each shoe's hands,
    True once the shoes so far make N sessions: each takes shoes in order
    until it has M hands), and the shoes they take of shoes of these hands
    (more than there are if too few)."""
    sessions, max_hands = need
    state = [0, 0]  # sessions made, hands in the one being made

    def until(hands: int) -> bool:
        state[1] += hands
        if state[1] >= max_hands:
            state[0] += 1
            state[1] = 0
        return state[0] >= sessions

    def taken(lengths: np.ndarray) -> int:
        state[:] = [0, 0]
        for k, hands in enumerate(lengths.tolist()):
            if until(hands):
                return k + 1
        return len(lengths) + 1

    return until, taken


#: the most hands the first shoes of a big file read for a run may hold (at
#: 26 bytes a hand); a run that needs more reads it all as Parquet in the cache
HELD_HANDS = 1 << 20


def _many(need: Need, decks: int) -> bool:
    """Whether `need` may take more than HELD_HANDS hands (shoes of `decks` decks)."""
    from backtest.shoes.recorded.outcomes import HANDS_PER_DECK

    if need is None:
        return True
    if isinstance(need, int):
        return need * HANDS_PER_DECK * decks > HELD_HANDS
    return need[0] * need[1] > HELD_HANDS


def _first(count: int) -> Callable[[int], bool]:
    """An `until` that answers True at the `count`th shoe."""
    seen = [0]

    def until(_: int) -> bool:
        seen[0] += 1
        return seen[0] >= count

    return until


def _held(hands: Hands, whole: bool) -> Read:
    """The Read of hands held (`whole`: all of the file)."""
    ids = np.unique(hands.shoe)  # (in file order: the readers number them so)
    starts = np.searchsorted(hands.shoe, ids)
    lengths = np.searchsorted(hands.shoe, ids, side="right") - starts
    return Read(lengths, whole, held=(hands, starts))


def _read_recorded(
    path: str,
    decks: int,
    burn: bool,
    mtime: float,
    need: Need,
    columns: tuple[tuple[str, str], ...] = (),
) -> Read:
    """At least the shoes of the file `need` asks for, read once: a later call
    for no more shoes than were read reads nothing. All of a big file
    (`cache.big_kind`) is read as Parquet in the cache (`recorded.cache`),
    its hands read as they are needed; its first shoes, and any of another
    file, are read with their hands, no further than they need (see
    `read_shoes`)."""
    from backtest.shoes import recorded
    from backtest.shoes.recorded.cache import big_kind, columnar, first_hands

    key = (path, decks, burn, mtime, columns)
    held = READS.get(key)
    if held is not None and (held.whole or _enough(held.lengths, need)):
        return held
    mapping = dict(columns) or None
    kind = big_kind(path, None, mapping)
    if kind is not None and _many(need, decks):
        cached = columnar(path, decks, burn, kind, mapping)
        held = Read(cached.lengths, True, columnar=cached)
    elif kind is not None:  # (a big file's first shoes, read as far as they need)
        assert need is not None
        until = _first(need) if isinstance(need, int) else _until(need)[0]
        hands, whole = first_hands(path, decks, burn, kind, mapping, until)
        held = _held(hands, whole)
    else:
        # sessions of M hands: the first shoes, twice as many each time until they do
        shoes = need if isinstance(need, int) else None if need is None else FIRST_SHOES
        while True:
            hands = recorded.read_shoes(
                path, decks=decks, burn=burn, shoes=shoes, columns=dict(columns) or None
            )
            # fewer shoes than asked (or more: a format read whole) is all of them
            held = _held(hands, shoes is None or hands.n_shoes != shoes)
            if held.whole or _enough(held.lengths, need):
                break
            assert shoes is not None
            shoes *= 2
    while len(READS) >= 4:
        del READS[next(iter(READS))]
    READS[key] = held
    return held


def read_recorded(config: RunConfig, need: Need) -> tuple[Read, int]:
    """The shoes read of the config's file, and how many of them `need` asks
    for (all: the file's, if it has fewer)."""
    rec = config.recorded
    assert rec is not None
    try:
        held = _read_recorded(
            str(rec.path), rec.decks, rec.burn, rec.path.stat().st_mtime, need, rec.columns
        )
    except UsageError as exc:
        # what the config asked of the file (e.g. the burn rule for a road), not
        # a command-line usage error: the config's key, exit 1
        raise ConfigError(f"{config.source}: shoes: {exc}") from None
    n = len(held.lengths)
    if isinstance(need, int):
        n = min(n, need)
    elif need is not None:
        n = min(n, _until(need)[1](held.lengths))
    return held, n


def load_recorded(config: RunConfig, shoes: int | None = None) -> Hands:
    """The recorded shoes of the config: its file's first `shoes` (None: all)."""
    held, n = read_recorded(config, shoes)
    hands, starts, ends = held.shoes(np.arange(n))
    if len(ends) and (ends[-1] < len(hands) or starts[0] > 0):
        hands = hands.select(np.arange(int(starts[0]), int(ends[-1])))
    return hands

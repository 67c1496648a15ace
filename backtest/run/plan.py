"""The plan of a run: how many sessions, the shoes each plays (generated
or recorded), their hands, and the chunks the sessions are run in."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import TYPE_CHECKING

import numpy as np

from backtest.core.errors import ConfigError, UsageError, shown_count
from backtest.core.hands import Hands
from backtest.jit.buffers import Buffers
from backtest.run.config import MAX_SESSIONS, RunConfig
from backtest.shoes.shoe import generate_shoes

if TYPE_CHECKING:
    from backtest.shoes.recorded.stream import ShoeIndex

SHOE_BITS = 20
SHOE_MASK = (1 << SHOE_BITS) - 1
CHUNK_HANDS = 400_000


# --- planning -----------------------------------------------------------------------


class ReplayedShoesWarning(UserWarning):
    """Recorded shoes played again (`loop: true`): the sessions are not independent."""


def count_sessions(config: RunConfig, override: int | None = None) -> int:
    """How many sessions the run has (and a check that a generated session's
    shoes can be numbered). Of a recorded file, only the shoes the sessions
    play are read (`shoes_needed`)."""
    if override is not None:
        if override < 1:
            raise ConfigError(f"the number of sessions must be at least 1, got {override}")
        if override > MAX_SESSIONS:
            raise ConfigError(
                f"the number of sessions must be at most {MAX_SESSIONS:,}, "
                f"got {shown_count(override)}; split a larger run into runs with other seeds"
            )
        n = override
    else:
        n = config.sessions or 0
        if n > MAX_SESSIONS:
            raise ConfigError(
                f"{config.source}: sessions: at most {MAX_SESSIONS:,}, got {shown_count(n)}; "
                "split a larger run into runs with other seeds"
            )
    if config.recorded is None:
        per = shoes_per_session(config)
        if per > SHOE_MASK + 1:
            key = (
                "session.max_shoes" if config.session.max_shoes is not None else "session.max_hands"
            )
            raise ConfigError(
                f"{config.source}: {key}: a session can deal at most "
                f"{SHOE_MASK + 1:,} shoes, and these sessions could need {shown_count(per)}; "
                "ask for fewer hands or shoes, or deal bigger shoes"
            )
        return n or 1000
    plan = recorded_plan(config, n)
    path, shoes = config.recorded.path, plan.n_shoes
    most = int(plan.takes.max()) if len(plan.takes) else 1
    if most > SHOE_MASK + 1:
        raise ConfigError(
            f"{config.source}: session.max_hands: a session can play at most "
            f"{SHOE_MASK + 1:,} shoes, and {plan.session_words} from the "
            f"{_shoes(shoes)} of {path} take {most:,}; ask for "
            "fewer hands"
        )
    if plan.available == 0:
        raise ConfigError(
            f"{config.source}: shoes.file {path} has {_shoes(shoes)} "
            f"({plan.hands:,} hands), too few for one session of "
            f"{plan.session_words}"
        )
    if n == 0:
        if plan.left_over:
            last = "the last shoe" if plan.left_over == 1 else f"the last {plan.left_over} shoes"
            verb = "is" if plan.left_over == 1 else "are"
            warnings.warn(
                f"{config.source}: {last} of the {_shoes(shoes)} in "
                f"{path} {verb} not played: too few for another session of "
                f"{plan.session_words} (set sessions and shoes.loop: true to play "
                "every shoe, some again)",
                UnplayedShoesWarning,
                stacklevel=2,
            )
        return plan.available
    if n > plan.available and config.recorded.loop:
        warnings.warn(
            f"{config.source}: {n:,} sessions of {plan.session_words} need more "
            f"shoes than {path} has ({shoes}, {plan.available:,} session(s)), so "
            "its shoes are played again in order; sessions on the same shoes are "
            "not independent, so the confidence interval and z are narrower than "
            "the data can support",
            ReplayedShoesWarning,
            stacklevel=2,
        )
    if n > plan.available and not config.recorded.loop:
        # the number came from the config's `sessions`, or from the caller (--sessions:
        # a usage error)
        said = (
            f"{n:,} sessions of {plan.session_words} need more shoes than the "
            f"{_shoes(shoes)} of {path}, which make {plan.available:,}; ask for at most "
            f"{plan.available:,} sessions, or set shoes.loop: true in the config to play "
            "the shoes again"
        )
        if override is None:
            raise ConfigError(f"{config.source}: sessions: {said}")
        raise TooManySessions(said)
    return n


class TooManySessions(UsageError):
    """The sessions a caller asked for (`run(sessions=...)`; `--sessions` on
    the command line, which says so) need more recorded shoes than the file
    holds. `said`: what is wrong."""

    def __init__(self, said: str) -> None:
        super().__init__(f"the sessions asked for: {said}")
        self.said = said


def _shoes(n: int) -> str:
    return "1 shoe" if n == 1 else f"{n:,} shoes"


class UnplayedShoesWarning(UserWarning):
    """The last recorded shoes make no whole session and are not played."""


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
    #: reading on from the first shoe after the last (loop) ...
    takes: np.ndarray  # int64, a shoe each
    #: ... and the first shoe of sessions 0, 1, ... until they repeat
    starts: np.ndarray  # int64
    #: starts[cycle:] repeats for ever
    cycle: int

    def sessions(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """(first shoe, shoes) of sessions lo..hi-1 (0-based shoe indices)."""
        j = np.arange(lo, hi, dtype=np.int64)
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
    read, _ = _recorded(config, shoes_needed(config, sessions))
    s = config.session
    lengths = np.ascontiguousarray(read.lengths, dtype=np.int64)
    return _recorded_plan(lengths.tobytes(), s.max_shoes, s.max_hands)


@lru_cache(maxsize=8)
def _recorded_plan(
    lengths_bytes: bytes, max_shoes: int | None, max_hands: int | None
) -> RecordedPlan:
    """The plan over shoes of these hands (`lengths_bytes`: int64s, a shoe
    each, as the cache's key: 8 bytes a shoe)."""
    lengths = np.frombuffer(lengths_bytes, dtype=np.int64)
    n = len(lengths)
    total = int(lengths.sum())
    if max_shoes is not None:
        words = f"{max_shoes} shoe{'s' if max_shoes != 1 else ''}"
        takes = np.full(n, max_shoes, dtype=np.int64)
    elif max_hands is not None:
        words = f"{max_hands:,} hand{'s' if max_hands != 1 else ''}"
        # the shoes from s, in order and round again, that reach max_hands
        # hands: whole passes over the file, then at most one more pass
        rounds = (max_hands - 1) // total if total else 0
        rest = max_hands - rounds * total  # 1..total hands
        ends = np.concatenate([[0], np.cumsum(np.concatenate([lengths, lengths]))])
        begin = np.arange(n, dtype=np.int64)
        last = np.searchsorted(ends, ends[begin] + rest, side="left")
        takes = rounds * n + (last - begin)
    else:  # the config requires one of the two; a session is one shoe
        words, takes = "1 shoe", np.ones(n, dtype=np.int64)
    steps = takes.tolist()
    available = at = 0
    while n and at + steps[at] <= n:
        at += steps[at]
        available += 1
        if at == n:
            break
    starts: list[int] = []
    seen = np.full(n, -1, dtype=np.int64)  # the session that starts at each shoe
    first = 0
    while n and seen[first] < 0:
        seen[first] = len(starts)
        starts.append(first)
        first = (first + steps[first]) % n
    return RecordedPlan(
        n,
        total,
        available,
        n - at,
        words,
        takes,
        np.asarray(starts, dtype=np.int64),
        int(seen[first]) if n else 0,
    )


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


@dataclass(frozen=True)
class _Read:
    """Shoes read of a recorded file (all of them, or its first): the hands
    each deals, whether that is all of the file, and the way to their hands:
    `held`, the hands themselves (a file read whole, with where each shoe's
    rows start), or `index`, the shoes' places in a big card-level text file,
    which reads them again as a chunk needs them."""

    lengths: np.ndarray
    whole: bool
    held: tuple[Hands, np.ndarray] | None = None
    index: ShoeIndex | None = None

    def shoes(self, ks: np.ndarray) -> tuple[Hands, np.ndarray, np.ndarray]:
        """Hands that hold the shoes `ks` (in increasing order), with the row
        where each of them starts and ends there."""
        if self.held is not None:
            hands, starts = self.held
            return hands, starts[ks], starts[ks] + self.lengths[ks]
        from backtest.shoes.recorded.stream import read_indexed

        assert self.index is not None
        ends = np.cumsum(self.lengths[ks])
        return read_indexed(self.index, ks), ends - self.lengths[ks], ends


#: how far to read a recorded file: its first N shoes (an int), the shoes
#: that N sessions of M hands take (a pair), or all of it (None)
Need = int | tuple[int, int] | None

#: the shoes first read of a file (other than big card-level text, which is
#: indexed as far as it needs) for sessions of M hands; then twice as many
#: until they are enough
FIRST_SHOES = 64

#: the shoes read of recorded files, by (path, decks, burn, time of change, column mapping)
_RECORDED: dict[tuple[str, int, bool, float, tuple[tuple[str, str], ...]], _Read] = {}


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


def _read_recorded(
    path: str,
    decks: int,
    burn: bool,
    mtime: float,
    need: Need,
    columns: tuple[tuple[str, str], ...] = (),
) -> _Read:
    """At least the shoes of the file `need` asks for, read once: a later call
    for no more shoes than were read reads nothing. A big card-level text
    file is indexed (`recorded.stream`), its hands read as they are needed;
    any other is read with its hands (a big CSV no further than it needs:
    see `read_shoes`)."""
    from backtest.shoes import recorded
    from backtest.shoes.recorded.stream import first_shoes, index_shoes, streamable

    key = (path, decks, burn, mtime, columns)
    held = _RECORDED.get(key)
    if held is not None and (held.whole or _enough(held.lengths, need)):
        return held
    if not columns and streamable(path):
        until = None
        if isinstance(need, int):
            until = first_shoes(need)
        elif need is not None:
            until = _until(need)[0]
        index = index_shoes(path, decks, burn, until)
        held = _Read(index.hands, index.whole, index=index)
    else:
        # sessions of M hands: the first shoes, twice as many each time until they do
        shoes = need if isinstance(need, int) else None if need is None else FIRST_SHOES
        while True:
            hands = recorded.read_shoes(
                path, decks=decks, burn=burn, shoes=shoes, columns=dict(columns) or None
            )
            ids = np.unique(hands.shoe)  # (in file order: the readers number them so)
            starts = np.searchsorted(hands.shoe, ids)
            lengths = np.searchsorted(hands.shoe, ids, side="right") - starts
            # fewer shoes than asked (or more: a format read whole) is all of them
            held = _Read(lengths, shoes is None or len(ids) != shoes, held=(hands, starts))
            if held.whole or _enough(lengths, need):
                break
            assert shoes is not None
            shoes *= 2
    while len(_RECORDED) >= 4:
        del _RECORDED[next(iter(_RECORDED))]
    _RECORDED[key] = held
    return held


def _recorded(config: RunConfig, need: Need) -> tuple[_Read, int]:
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
    held, n = _recorded(config, shoes)
    hands, starts, ends = held.shoes(np.arange(n))
    if len(ends) and (ends[-1] < len(hands) or starts[0] > 0):
        hands = hands.select(np.arange(int(starts[0]), int(ends[-1])))
    return hands


def hands_for(
    config: RunConfig, lo: int, hi: int, buffers: Buffers | None = None
) -> tuple[Hands, np.ndarray, np.ndarray]:
    """The hands of sessions lo..hi-1, their session boundaries, and each
    hand's shoe number within its session; generated hands are written in
    `buffers` if given (valid until the next chunk's)."""
    if config.recorded is None:
        per = shoes_per_session(config)
        ids = (np.arange(lo, hi, dtype=np.int64)[:, None] << SHOE_BITS) + np.arange(per)[None, :]
        assert config.shoe is not None
        hands = generate_shoes(config.shoe, ids.reshape(-1), config.seed, buffers=buffers)
        # session j's shoes are numbered from j << SHOE_BITS, in order
        bounds = np.searchsorted(hands.shoe, np.arange(lo, hi + 1, dtype=np.int64) << SHOE_BITS)
        numbers = (np.empty if buffers is None else partial(buffers.empty, "shoe_no"))(
            (len(hands),), np.int32
        )
        np.bitwise_and(hands.shoe, SHOE_MASK, out=numbers, casting="unsafe")
        return hands, bounds.astype(np.int64), numbers
    plan = recorded_plan(config, hi)
    read, _ = _recorded(config, shoes_needed(config, hi))
    played = [(first + np.arange(per)) % plan.n_shoes for first, per in plan.sessions(lo, hi)]
    # the chunk's shoes, each read once (a big file's, from the file now)
    shoes = np.unique(np.concatenate(played)) if played else np.zeros(0, np.int64)
    source, starts, ends = read.shoes(shoes)
    rows, shoe_no, session_bounds = [], [], [0]
    for ks in played:
        at = np.searchsorted(shoes, ks)
        for m, k in enumerate(at.tolist()):
            rows.append(np.arange(starts[k], ends[k]))
            shoe_no.append(np.full(ends[k] - starts[k], m, np.int32))
        session_bounds.append(session_bounds[-1] + sum(len(r) for r in rows[len(rows) - len(ks) :]))
    index = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    return source.take(index), np.asarray(session_bounds, np.int64), np.concatenate(shoe_no)


def plan_chunks(n_sessions: int, per_session: int, workers: int) -> list[tuple[int, int]]:
    """Sessions 0..n-1 cut into chunks of about CHUNK_HANDS hands (smaller when
    several workers share them). The numbers do not depend on the cut."""
    step = max(1, CHUNK_HANDS // max(1, per_session))
    if workers > 1:
        step = max(1, min(step, math.ceil(n_sessions / (4 * workers))))
    return [(lo, min(n_sessions, lo + step)) for lo in range(0, n_sessions, step)]


def hands_bound(config: RunConfig, sessions: int | None = None) -> int:
    """An upper bound on the hands of one session (of the first `sessions`,
    which play the file's first shoes; None: any)."""
    s = config.session
    if config.shoe is not None:
        most = shoes_per_session(config) * config.shoe.max_hands
    else:
        read, n = _recorded(config, shoes_needed(config, sessions))
        longest = int(read.lengths[:n].max()) if n else 1
        if s.max_shoes is None:  # a session reads on until it reaches max_hands
            assert s.max_hands is not None
            return s.max_hands
        most = s.max_shoes * longest
    return most if s.max_hands is None else min(most, s.max_hands)

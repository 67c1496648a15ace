"""The plan of a run: how many sessions, the shoes each plays (generated
or recorded), their hands, and the chunks the sessions are run in."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from backtest.core.errors import ConfigError, UsageError, shown_count
from backtest.core.hands import Hands
from backtest.jit.buffers import Buffers
from backtest.run.config import MAX_SESSIONS, RunConfig
from backtest.shoes.shoe import generate_shoes

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
    plan = recorded_plan(config, shoes_needed(config, n))
    path, shoes = config.recorded.path, plan.n_shoes
    if max(plan.takes, default=1) > SHOE_MASK + 1:
        raise ConfigError(
            f"{config.source}: session.max_hands: a session can play at most "
            f"{SHOE_MASK + 1:,} shoes, and {plan.session_words} from the "
            f"{_shoes(shoes)} of {path} take {max(plan.takes):,}; ask for "
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


@dataclass(frozen=True)
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
    takes: tuple[int, ...]
    #: ... and the first shoe of sessions 0, 1, ... until they repeat
    starts: tuple[int, ...]
    #: starts[cycle:] repeats for ever
    cycle: int

    def sessions(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """(first shoe, shoes) of sessions lo..hi-1 (0-based shoe indices)."""
        out = []
        period = len(self.starts) - self.cycle
        for j in range(lo, hi):
            k = j if j < len(self.starts) else self.cycle + (j - self.cycle) % period
            first = self.starts[k]
            out.append((first, self.takes[first]))
        return out


def shoes_needed(config: RunConfig, sessions: int | None) -> int | None:
    """The recorded shoes `sessions` sessions play, when a session takes a
    fixed number of them (`max_shoes`); None: all of the file (to play it
    whole, or to count the shoes sessions of `max_hands` hands take)."""
    max_shoes = config.session.max_shoes
    return sessions * max_shoes if sessions and max_shoes is not None else None


def recorded_plan(config: RunConfig, shoes: int | None = None) -> RecordedPlan:
    """The plan of sessions over the file's first `shoes` shoes (None: all):
    sessions that take `max_shoes` shoes each play the same shoes in the plan
    of the whole file and in that of any of its first shoes that hold them."""
    _, starts, ends = _recorded(config, shoes)
    s = config.session
    return _recorded_plan(tuple((ends - starts).tolist()), s.max_shoes, s.max_hands)


@lru_cache(maxsize=8)
def _recorded_plan(
    lengths: tuple[int, ...], max_shoes: int | None, max_hands: int | None
) -> RecordedPlan:
    n = len(lengths)
    total = sum(lengths)
    if max_shoes is not None:
        words = f"{max_shoes} shoe{'s' if max_shoes != 1 else ''}"
        takes = [max_shoes] * n
    elif max_hands is not None:
        words = f"{max_hands:,} hand{'s' if max_hands != 1 else ''}"
        # the shoes from s, in order and round again, that reach max_hands hands
        rounds = (max_hands - 1) // total if total else 0  # whole passes over the file
        takes = []
        for first in range(n):
            got, k = rounds * total, rounds * n
            while got < max_hands:
                got += lengths[(first + k) % n]
                k += 1
            takes.append(k)
    else:  # the config requires one of the two; a session is one shoe
        words, takes = "1 shoe", [1] * n
    available = at = 0
    while n and at + takes[at] <= n:
        at += takes[at]
        available += 1
        if at == n:
            break
    starts: list[int] = []
    seen: dict[int, int] = {}
    first = 0
    while n and first not in seen:
        seen[first] = len(starts)
        starts.append(first)
        first = (first + takes[first]) % n
    return RecordedPlan(
        n, total, available, n - at, words, tuple(takes), tuple(starts), seen.get(first, 0)
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
    """Shoes read of a recorded file: the hands, where each shoe's rows start
    and end, and whether that is all of the file."""

    hands: Hands
    starts: np.ndarray
    ends: np.ndarray
    whole: bool


#: the shoes read of recorded files, by (path, decks, burn, time of change, column mapping)
_RECORDED: dict[tuple[str, int, bool, float, tuple[tuple[str, str], ...]], _Read] = {}


def _read_recorded(
    path: str,
    decks: int,
    burn: bool,
    mtime: float,
    shoes: int | None,
    columns: tuple[tuple[str, str], ...] = (),
) -> _Read:
    """At least the first `shoes` shoes of the file (None: all), read once: a
    later call for no more shoes than were read reads nothing."""
    from backtest.shoes import recorded

    key = (path, decks, burn, mtime, columns)
    held = _RECORDED.get(key)
    if held is None or not (held.whole or (shoes is not None and len(held.starts) >= shoes)):
        hands = recorded.read_shoes(
            path, decks=decks, burn=burn, shoes=shoes, columns=dict(columns) or None
        )
        ids = np.unique(hands.shoe)  # (in file order: the readers number them so)
        starts = np.searchsorted(hands.shoe, ids)
        ends = np.searchsorted(hands.shoe, ids, side="right")
        # fewer shoes than asked (or more: a format read whole) is all of them
        held = _Read(hands, starts, ends, shoes is None or len(ids) != shoes)
        while len(_RECORDED) >= 4:
            del _RECORDED[next(iter(_RECORDED))]
        _RECORDED[key] = held
    return held


def _recorded(config: RunConfig, shoes: int | None) -> tuple[Hands, np.ndarray, np.ndarray]:
    """The hands read of the config's file, with the start and end rows of
    its first `shoes` shoes (None: all); the hands may hold more shoes."""
    rec = config.recorded
    assert rec is not None
    try:
        held = _read_recorded(
            str(rec.path), rec.decks, rec.burn, rec.path.stat().st_mtime, shoes, rec.columns
        )
    except UsageError as exc:
        # what the config asked of the file (e.g. the burn rule for a road), not
        # a command-line usage error: the config's key, exit 1
        raise ConfigError(f"{config.source}: shoes: {exc}") from None
    return held.hands, held.starts[:shoes], held.ends[:shoes]


def load_recorded(config: RunConfig, shoes: int | None = None) -> Hands:
    """The recorded shoes of the config: its file's first `shoes` (None: all)."""
    hands, starts, ends = _recorded(config, shoes)
    if shoes is not None and len(ends) and ends[-1] < len(hands):
        hands = hands.select(np.arange(int(ends[-1])))
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
    needed = shoes_needed(config, hi)
    source, starts, ends = _recorded(config, needed)
    rows, shoe_no, session_bounds = [], [], [0]
    for first, per in recorded_plan(config, needed).sessions(lo, hi):
        for m in range(per):
            k = (first + m) % len(starts)
            rows.append(np.arange(starts[k], ends[k]))
            shoe_no.append(np.full(ends[k] - starts[k], m, np.int32))
        session_bounds.append(session_bounds[-1] + sum(len(r) for r in rows[len(rows) - per :]))
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
        hands, starts, ends = _recorded(config, shoes_needed(config, sessions))
        longest = int(hands.hand[: int(ends[-1])].max()) if len(starts) else 1
        if s.max_shoes is None:  # a session reads on until it reaches max_hands
            assert s.max_hands is not None
            return s.max_hands
        most = s.max_shoes * longest
    return most if s.max_hands is None else min(most, s.max_hands)

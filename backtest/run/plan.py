"""The plan of a run: how many sessions, the shoes each plays (generated
or recorded), their hands, and the chunks the sessions are run in."""

from __future__ import annotations

import math
import warnings
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from backtest.core.errors import ConfigError, UsageError, shown_count
from backtest.core.hands import Hands
from backtest.jit.buffers import Buffers
from backtest.run.config import MAX_SESSIONS, RunConfig
from backtest.run.recorded_plan import (
    read_recorded,
    recorded_plan,
    shoes_needed,
    shoes_per_session,
)
from backtest.shoes.shoe import generate_shoes

if TYPE_CHECKING:
    pass

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
    most = plan.most
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
    read, _ = read_recorded(config, shoes_needed(config, hi))
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
        read, n = read_recorded(config, shoes_needed(config, sessions))
        longest = int(read.lengths[:n].max()) if n else 1
        if s.max_shoes is None:  # a session reads on until it reaches max_hands
            assert s.max_hands is not None
            return s.max_hands
        most = s.max_shoes * longest
    return most if s.max_hands is None else min(most, s.max_hands)

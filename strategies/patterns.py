"""Systems that read the shoe: follow the last winner, chop, streaks, and a
table of patterns. Each bets a flat `base` stake on Player or Banker (a
pattern table may also bet Tie); ties are skipped when reading the shoe (as
the big road does) unless a pattern table says otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from backtest.core.errors import StrategyError
from backtest.core.rules import Bet
from backtest.jit.lazy_jit import jit
from strategies._common import last_decisive, stateless_reset, stateless_update
from strategies.base import Builtin
from strategies.params import CommonParams, Money, param
from strategies.slots import P_OWN

BASE = P_OWN
ARG = P_OWN + 1
FIRST = {"skip": -1, "player": 0, "banker": 1}
MAX_PATTERNS = 64
MAX_PATTERN_LENGTH = 16
PATTERN_SLOT = 3
_CODE_MASK = (1 << (2 * MAX_PATTERN_LENGTH)) - 1
TABLE_WIDTH = 6  # 4**6 entries: 32 KiB


@dataclass(frozen=True)
class ShoeReaderParams(CommonParams):
    base: Money = param(10.0, "the stake, in currency", min=0, exclusive_min=True)


class ShoeReader(Builtin):
    Params = ShoeReaderParams
    picks_one = True  # every decide returns (bet, stake)

    def main_bets(self) -> set[Bet]:
        return {Bet.PLAYER, Bet.BANKER}

    k_reset = staticmethod(stateless_reset)
    k_update = staticmethod(stateless_update)


# --- follow the shoe, and chop --------------------------------------------------------


def _follow_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    side = last_decisive(hist)
    if side < 0:
        side = int(p[ARG])
    return (side, p[BASE]) if side >= 0 else (0, 0.0)


def _chop_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    side = last_decisive(hist)
    # one return, as follow-the-shoe's: a return for each case ran 6 % slower
    side = 1 - side if side >= 0 else int(p[ARG])
    return (side, p[BASE]) if side >= 0 else (0, 0.0)


@dataclass(frozen=True)
class FollowParams(ShoeReaderParams):
    first: Literal["skip", "player", "banker"] = param(
        "skip", "what to bet before the shoe has a decisive result"
    )


class FollowTheShoe(ShoeReader):
    """Bet on the side that won the last decisive hand of the shoe."""

    name = "follow-the-shoe"
    kind = 9
    description = "Bet on the last winner (ties skipped): 'follow the shoe'."
    Params = FollowParams

    def encode_own(self) -> list[float]:
        return [self.params.base, FIRST[self.params.first]]

    k_decide = staticmethod(_follow_decide)


class Chop(ShoeReader):
    """Bet against the side that won the last decisive hand of the shoe."""

    name = "chop"
    kind = 10
    description = "Bet against the last winner (ties skipped): expect the shoe to chop."
    Params = FollowParams

    def encode_own(self) -> list[float]:
        return [self.params.base, FIRST[self.params.first]]

    k_decide = staticmethod(_chop_decide)


# --- streaks ------------------------------------------------------------------------------

# state: si[0] the hands of the shoe read so far, si[1] the last decisive
# side (-1 none), si[2] the length of its run. Each hand reads only the new
# hands (a new shoe, whose history is shorter, starts again), and bets or not
# without a branch on the run: that choice is a coin toss to the processor.


@jit
def _clear_streak(si: np.ndarray) -> None:
    si[0] = 0
    si[1] = -1
    si[2] = 0


def _streak_init(p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    _clear_streak(si)


def _streak_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    n = hist.shape[0]
    if n < si[0] or n == 0:
        _clear_streak(si)
    side = si[1]
    run = si[2]
    for i in range(si[0], n):
        w = np.int64(hist[i])
        decisive = w != 2
        longer = run + 1
        longer = longer if w == side else 1
        run = longer if decisive else run
        side = w if decisive else side
    si[0] = n
    si[1] = side
    si[2] = run
    bet = side if p[ARG + 1] == 0.0 else 1 - side
    go = (side >= 0) & (run >= p[ARG])
    bet = bet if go else 0
    stake = p[BASE] if go else 0.0
    return bet, stake


@dataclass(frozen=True)
class StreakParams(ShoeReaderParams):
    length: int = param(3, "how many wins in a row of one side start the bet", min=1)
    mode: Literal["follow", "fade"] = param(
        "follow", "`follow` bets the streak goes on, `fade` bets it ends"
    )


class Streak(ShoeReader):
    """After `length` decisive wins in a row by one side, bet that side
    (`follow`) or the other (`fade`), for as long as the streak lasts."""

    name = "streak"
    kind = 11
    description = "After N wins in a row by one side, follow the streak or fade it."
    Params = StreakParams

    def encode_own(self) -> list[float]:
        return [self.params.base, self.params.length, 0.0 if self.params.mode == "follow" else 1.0]

    # a session starts the reading; the table maximum's restart leaves it (a flat
    # stake has no progression to restart, and reading the shoe again is slow)
    k_init = staticmethod(_streak_init)
    k_reset = staticmethod(stateless_reset)
    k_decide = staticmethod(_streak_decide)


# --- a table of patterns --------------------------------------------------------------------
# p[ARG] ignore ties (1/0), p[ARG+1] number of patterns, then per pattern a slot of
# PATTERN_SLOT numbers: its length, the bet (0 P, 1 B, 2 T) and its code (below);
# then the width of the lookup table (0 for none) and the table.
#
# The outcomes read so far are kept as a code, two bits an outcome, the newest
# in the lowest bits (si[1]; si[2] how many, at most MAX_PATTERN_LENGTH; si[0]
# the hands of the shoe read, as the streak keeps them). A pattern of length L
# matches when at least L outcomes have been read and the code's low 2 L bits
# are the pattern's code: one comparison, however long the pattern.
#
# When no pattern is longer than TABLE_WIDTH outcomes, the answer for every
# code of the longest pattern's length W is worked out once, in a table of 4**W
# entries (the bet + 1 of the longest match, 0 for none): once W outcomes have
# been read, a hand looks its bet up, whatever the number of patterns. Before
# that (the first hands of a shoe) it compares the patterns one by one.


def pattern_code(outcomes: list[int]) -> int:
    """The code of outcomes (0 P, 1 B, 2 T) listed oldest first."""
    code = 0
    for w in outcomes:
        code = (code << 2) | w
    return code


@jit
def _clear_pattern(si: np.ndarray) -> None:
    si[0] = 0
    si[1] = 0
    si[2] = 0


def _pattern_init(p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    _clear_pattern(si)
    # the lookup table's place and width, as integers: read on every hand
    at = ARG + 2 + int(p[ARG + 1]) * PATTERN_SLOT
    si[3] = int(p[at])
    si[4] = at + 1
    si[5] = (np.int64(1) << (2 * si[3])) - 1


def _pattern_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    n = hist.shape[0]
    if n < si[0] or n == 0:
        _clear_pattern(si)
    skip_ties = p[ARG] == 1.0
    code = si[1]
    seen = si[2]
    for i in range(si[0], n):
        w = np.int64(hist[i])
        read = not (skip_ties and w == 2)
        longer = ((code << 2) | w) & _CODE_MASK
        code = longer if read else code
        more = min(seen + 1, MAX_PATTERN_LENGTH)
        seen = more if read else seen
    si[0] = n
    si[1] = code
    si[2] = seen
    width = si[3]
    if width > 0 and seen >= width:
        found = p[si[4] + (code & si[5])]
        return max(int(found) - 1, 0), (p[BASE] if found > 0.0 else 0.0)
    best_len = np.int64(0)
    best_bet = np.int64(0)
    for k in range(int(p[ARG + 1])):
        base = ARG + 2 + k * PATTERN_SLOT
        length = np.int64(p[base])
        mask = (np.int64(1) << (2 * length)) - 1
        hit = (length > best_len) & (seen >= length) & ((code & mask) == np.int64(p[base + 2]))
        best_len = length if hit else best_len
        best_bet = np.int64(p[base + 1]) if hit else best_bet
    stake = p[BASE] if best_len > 0 else 0.0
    return int(best_bet), stake


def _lookup_table(listed: list[tuple[int, int, int]], width: int) -> list[float]:
    """For each code of `width` outcomes, the bet + 1 of the longest of the
    patterns `listed` ((length, bet, code), in order) it ends with (the first
    listed, of equal lengths), or 0."""
    table = np.zeros(4**width)
    # the codes that end with a pattern of length L are its code plus any
    # multiple of 4**L; written shortest first, and of equal lengths the
    # first listed last, the one that matches stays
    for length, _, bet, pattern in sorted(
        (length, -k, bet, pattern) for k, (length, bet, pattern) in enumerate(listed)
    ):
        table[pattern :: 4**length] = bet + 1.0
    return table.tolist()


@dataclass(frozen=True)
class PatternParams(ShoeReaderParams):
    patterns: dict[str, str] = param(
        {"PPP": "B", "BBB": "P"},
        "recent outcomes (oldest first, letters P B T) mapped to the bet to place (P, B or T); "
        "the longest matching pattern wins",
    )
    ignore_ties: bool = param(True, "read the shoe without its ties, as the big road does")

    def validate(self, path: str) -> None:
        if not 1 <= len(self.patterns) <= MAX_PATTERNS:
            raise StrategyError(f"{path}.patterns: give 1 to {MAX_PATTERNS} patterns")
        seen: dict[str, object] = {}
        for pattern, bet in self.patterns.items():
            where = f"{path}.patterns.{pattern}"
            text = str(pattern).upper()
            if not 1 <= len(text) <= MAX_PATTERN_LENGTH or set(text) - set("PBT"):
                raise StrategyError(
                    f"{where}: a pattern is 1 to {MAX_PATTERN_LENGTH} letters "
                    f"P, B or T, got {pattern!r}"
                )
            if text in seen:  # `ppb` and `PPB` are one pattern: which bet would it place?
                raise StrategyError(
                    f"{where}: the pattern {text} is given twice (as "
                    f"{seen[text]!r} and {pattern!r}); keep one"
                )
            seen[text] = pattern
            if self.ignore_ties and "T" in text:
                raise StrategyError(
                    f"{where}: a pattern with T never matches when ignore_ties "
                    "is true; set ignore_ties: false"
                )
            if str(bet).upper() not in ("P", "B", "T"):
                raise StrategyError(f"{where}: the bet must be P, B or T, got {bet!r}")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate("params")


class PatternTable(ShoeReader):
    """A table of patterns of recent outcomes, each mapped to a bet: before each
    hand the longest pattern that matches the end of the shoe so far places
    its bet; no match sits the hand out."""

    name = "pattern"
    kind = 12
    description = "User-given patterns of recent outcomes mapped to a bet, e.g. PPB: P."
    Params = PatternParams

    def encode_own(self) -> list[float]:
        code = {"P": 0, "B": 1, "T": 2}
        # (length, bet, code) of each pattern, as listed
        listed = [
            (
                len(str(pattern)),
                code[str(bet).upper()],
                pattern_code([code[c] for c in str(pattern).upper()]),
            )
            for pattern, bet in self.params.patterns.items()
        ]
        own = [self.params.base, 1.0 if self.params.ignore_ties else 0.0, len(listed)]
        for slot in listed:
            own += slot
        width = max(length for length, _, _ in listed)
        if width > TABLE_WIDTH:
            return own + [0.0]
        return own + [float(width), *_lookup_table(listed, width)]

    def main_bets(self) -> set[Bet]:
        names = {"P": Bet.PLAYER, "B": Bet.BANKER, "T": Bet.TIE}
        return {names[str(b).upper()] for b in self.params.patterns.values()}

    k_init = staticmethod(_pattern_init)  # as the streak's
    k_reset = staticmethod(stateless_reset)
    k_decide = staticmethod(_pattern_decide)


READERS = (FollowTheShoe, Chop, Streak, PatternTable)

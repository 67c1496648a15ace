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

# the parameter vector of each, after the common head
BASE = P_OWN  # the stake, in currency

# the state of the streak and the pattern table, in si
READ = 0  # the hands of the shoe read so far

TIE = 2  # a tie in the shoe's history (0 Player, 1 Banker)

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
    """A system that reads the shoe so far and bets a flat stake on a side."""

    Params = ShoeReaderParams
    picks_one = True  # every decide returns (bet, stake)

    def main_bets(self) -> set[Bet]:
        return {Bet.PLAYER, Bet.BANKER}

    k_reset = staticmethod(stateless_reset)
    k_update = staticmethod(stateless_update)


# --- follow the shoe, and chop --------------------------------------------------------

# the parameter vector, after the stake
FIRST_BET = P_OWN + 1  # the side to bet before the shoe has a decisive result (-1: none)


def _follow_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    """Bet the side that won the last decisive hand of the shoe (before the
    first, the side `first` names, or none)."""
    side = last_decisive(hist)
    if side < 0:
        side = int(p[FIRST_BET])
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
    """Bet against the side that won the last decisive hand of the shoe
    (before the first, the side `first` names, or none)."""
    side = last_decisive(hist)
    # one return, as follow-the-shoe's: a return for each case ran 6 % slower
    side = 1 - side if side >= 0 else int(p[FIRST_BET])
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

# the parameter vector, after the stake
LENGTH = P_OWN + 1  # the wins in a row that start the bet
FADE = P_OWN + 2  # 1 to bet against the streak, 0 to follow it

# the state, in si, after READ; each hand reads only the hands new since the
# last (a new shoe, whose history is shorter, starts again)
SIDE = 1  # the side that won the last decisive hand (-1: none yet)
RUN = 2  # its wins in a row


@jit  # (the decide calls it too)
def _streak_init(p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    """Start reading the shoe afresh."""
    si[READ] = 0
    si[SIDE] = -1
    si[RUN] = 0


def _streak_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    """Count the last decisive side's wins in a row; from `length` of them on,
    bet that side (or the other, to fade it)."""
    n = hist.shape[0]
    if n < si[READ] or n == 0:  # a new shoe
        _streak_init(p, s, si, 0)
    side = si[SIDE]
    run = si[RUN]
    for i in range(si[READ], n):
        winner = np.int64(hist[i])
        if winner == TIE:
            continue
        if winner == side:
            run += 1
        else:
            side = winner
            run = 1
    si[READ] = n
    si[SIDE] = side
    si[RUN] = run
    if side < 0 or run < p[LENGTH]:
        return 0, 0.0
    if p[FADE] == 1.0:
        return 1 - side, p[BASE]
    return side, p[BASE]


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

# the parameter vector, after the stake
SKIP_TIES = P_OWN + 1  # 1 to read the shoe without its ties
N_PATTERNS = P_OWN + 2  # the number of patterns
PATTERNS = P_OWN + 3  # then, for each pattern, PATTERN_SLOT numbers:
AT_LENGTH, AT_BET, AT_CODE = 0, 1, 2  # its length, its bet (0 P, 1 B, 2 T) and its code
# and after them, the lookup table's width (0 for none), then the table

# the state, in si, after READ
CODE = 1  # the outcomes read so far, two bits each, the newest lowest
SEEN = 2  # how many outcomes the code holds (at most MAX_PATTERN_LENGTH)
WIDTH = 3  # the lookup table's width, W outcomes (0: no table)
TABLE = 4  # where the table starts in p
WIDTH_MASK = 5  # the low 2 W bits of a code

# A pattern of length L matches when at least L outcomes have been read and
# the code's low 2 L bits are the pattern's code: one comparison, however
# long the pattern.
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


@jit  # (the decide calls it too)
def _clear_pattern(si: np.ndarray) -> None:
    """Start reading the shoe afresh."""
    si[READ] = 0
    si[CODE] = 0
    si[SEEN] = 0


def _pattern_init(p: np.ndarray, s: np.ndarray, si: np.ndarray, seed: int) -> None:
    """Start reading the shoe afresh; find the lookup table (read every hand)."""
    _clear_pattern(si)
    at = PATTERNS + int(p[N_PATTERNS]) * PATTERN_SLOT
    si[WIDTH] = int(p[at])
    si[TABLE] = at + 1
    si[WIDTH_MASK] = (np.int64(1) << (2 * si[WIDTH])) - 1


def _pattern_decide(
    p: np.ndarray,
    s: np.ndarray,
    si: np.ndarray,
    ctx: np.ndarray,
    hist: np.ndarray,
    evs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, float]:
    """Read the new hands of the shoe; bet what the longest pattern that
    matches its end says, or sit out if none does."""
    n = hist.shape[0]
    if n < si[READ] or n == 0:  # a new shoe
        _clear_pattern(si)
    skip_ties = p[SKIP_TIES] == 1.0
    code = si[CODE]
    seen = si[SEEN]
    for i in range(si[READ], n):
        winner = np.int64(hist[i])
        if skip_ties and winner == TIE:
            continue
        code = ((code << 2) | winner) & _CODE_MASK
        seen = min(seen + 1, MAX_PATTERN_LENGTH)
    si[READ] = n
    si[CODE] = code
    si[SEEN] = seen
    width = si[WIDTH]
    if width > 0 and seen >= width:
        found = p[si[TABLE] + (code & si[WIDTH_MASK])]
        if found == 0.0:
            return 0, 0.0
        return int(found) - 1, p[BASE]
    longest = np.int64(0)
    bet = np.int64(0)
    for k in range(int(p[N_PATTERNS])):
        at = PATTERNS + k * PATTERN_SLOT
        length = np.int64(p[at + AT_LENGTH])
        mask = (np.int64(1) << (2 * length)) - 1
        if length > longest and seen >= length and (code & mask) == np.int64(p[at + AT_CODE]):
            longest = length
            bet = np.int64(p[at + AT_BET])
    if longest == 0:
        return 0, 0.0
    return int(bet), p[BASE]


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

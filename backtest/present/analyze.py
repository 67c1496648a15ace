"""Is a record of shoes consistent with fairly shuffled shoes?

`analyze(hands, decks)` runs a family of tests on a recorded shoe file and
calibrates every one of them by simulation: the engine's own shoe generator
deals `simulations` fair records of the same shape (the same decks, the same
number of shoes, each simulated shoe cut to the hands of its recorded
counterpart), and each statistic of the record is ranked among theirs. So a
p-value assumes only that the shoes were shuffled fairly and dealt by the
rules: the removal of cards within a shoe, the small samples after a rare
pattern and the discreteness of the counts are all in the null. Because many
tests are tried (thirty patterns among them), each p-value is also adjusted
for the whole family by the min-p method: the adjusted p of a test is the
share of simulated fair records whose smallest p-value is at most the
test's own (Westfall and Young's single-step min-p).

The tests (a larger statistic is further from chance):

* outcome frequencies: Player, Banker and Tie counts against the exact
  probabilities of a full shoe of the decks (chi-square form);
* side-bet frequencies: Player and Banker pairs (when the record has them
  and the rules offer the bets), and with the EZ rules' Dragon 7 and Panda 8
  when the record has the card counts;
* streak lengths: the number of streaks of Player or Banker wins (ties
  skipped, within a shoe) of each length 1 to 7 and 8 or more, against the
  simulated mean (chi-square form);
* runs: the Wald-Wolfowitz runs test on each shoe's Player/Banker sequence,
  summed over shoes (|z|);
* after a pattern: for each pattern of the last 1 to 4 decisive outcomes of
  the shoe (BBB, PBP, ...), the Player/Banker/Tie counts of the hand after
  it against the record's own frequencies (chi-square form);
* card composition (card-level records): each shoe's dealt cards by rank
  against an equal share of the ranks (chi-square form, summed over shoes);
  its null is exact without the generator: the cards of a fair shoe's first
  c are a random c of its decks, drawn here without replacement for each
  shoe's c (multivariate hypergeometric). A shoe holding more cards than its
  decks is refused when the file is read.

>>> from backtest.shoes.shoe import ShoeSpec, generate_hands
>>> fair = generate_hands(ShoeSpec(decks=8), 2, seed=3)
>>> result = analyze(fair, decks=8, simulations=99, seed=1)
>>> result.hands == len(fair), result.shoes, len(result.tests) > 30
(True, 2, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from backtest.core.cards import RANK_SYMBOLS
from backtest.core.errors import UsageError
from backtest.core.hands import Hands
from backtest.core.rules import Bet, Rules

#: the simulations a record is calibrated against, by default
SIMULATIONS = 1000
#: family-wise level below which a test is said to deviate
ALPHA = 0.05
#: the longest pattern of decisive outcomes looked at
PATTERN_LENGTH = 4
#: streaks are counted by length 1 .. STREAK_BINS - 1, and STREAK_BINS or more
STREAK_BINS = 8
#: simulated hands held in memory at once
_BATCH_HANDS = 2_000_000

_NAMES = "PBT"


@dataclass(frozen=True)
class Statistic:
    """One test: its statistic, its p-value against the simulated fair records,
    the p-value adjusted for every test tried, and what it saw in words."""

    name: str
    statistic: float
    p_value: float
    adjusted_p: float
    detail: str = ""
    #: the statistic as a normal deviate (the common scale of the adjustment)
    z: float = 0.0


@dataclass(frozen=True)
class Analysis:
    source: str
    hands: int
    shoes: int
    decks: int
    rules: str
    simulations: int
    seed: int
    tests: tuple[Statistic, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def smallest(self) -> Statistic:
        """The test furthest from chance."""
        return min(self.tests, key=lambda t: (t.adjusted_p, -t.z))

    def deviations(self, alpha: float = ALPHA) -> list[Statistic]:
        """The tests whose adjusted p is at most `alpha`, the furthest from chance first."""
        return sorted(
            (t for t in self.tests if t.adjusted_p <= alpha), key=lambda t: (t.adjusted_p, -t.z)
        )

    def verdict(self, alpha: float = ALPHA) -> str:
        """The finding in words."""
        head = f"{_count(self.hands, 'hand')} in {_count(self.shoes, 'shoe')}"
        found = self.deviations(alpha)
        if not found:
            return (
                f"{head}: nothing beyond chance (smallest adjusted p "
                f"{_equals(p_text(self.smallest.adjusted_p, self.simulations))})"
            )
        said = "; ".join(
            f"{t.name}{': ' + t.detail if t.detail else ''} (adjusted p "
            f"{_equals(p_text(t.adjusted_p, self.simulations))})"
            for t in found[:3]
        )
        more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
        return f"{head}: beyond chance: {said}{more}"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "hands": self.hands,
            "shoes": self.shoes,
            "decks": self.decks,
            "rules": self.rules,
            "simulations": self.simulations,
            "seed": self.seed,
            "verdict": self.verdict(),
            "tests": [
                {
                    "name": t.name,
                    "statistic": round(t.statistic, 6),
                    "p_value": t.p_value,
                    "adjusted_p": t.adjusted_p,
                    "detail": t.detail,
                }
                for t in self.tests
            ],
            "notes": list(self.notes),
        }

    def table(self) -> str:
        """The tests as a text table (the patterns only where p < 0.05 or the
        smallest), the notes, then the verdict."""
        shown = [t for t in self.tests if not t.name.startswith("after ")]
        patterns = [t for t in self.tests if t.name.startswith("after ")]
        if patterns:
            low = [t for t in patterns if t.p_value < 0.05]
            shown += low or [min(patterns, key=lambda t: t.p_value)]
        rows = [("test", "statistic", "p", "adjusted p", "what it saw")]
        rows += [
            (
                t.name,
                f"{t.statistic:.2f}",
                p_text(t.p_value, self.simulations),
                p_text(t.adjusted_p, self.simulations),
                t.detail,
            )
            for t in shown
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [
            f"{self.source}: {_count(self.hands, 'hand')} in {_count(self.shoes, 'shoe')}, {self.decks} "
            f"decks, rules {self.rules}; each test against {self.simulations:,} simulated "
            f"fair records (seed {self.seed})",
            "",
        ]
        for r in rows:
            lines.append(
                "  ".join(
                    [
                        r[0].ljust(widths[0]),
                        *(c.rjust(w) for c, w in zip(r[1:4], widths[1:4])),
                        r[4],
                    ]
                ).rstrip()
            )
        if patterns:
            lines.append(
                f"({len(patterns)} patterns tested; those not shown have p >= 0.05)"
                if len(shown)
                else ""
            )
        lines += ["", *self.notes, "" if self.notes else "", self.verdict()]
        return (
            "\n".join(line for i, line in enumerate(lines) if line or (i and lines[i - 1])).rstrip()
            + "\n"
        )


def _equals(p: str) -> str:
    return p if p.startswith("<") else f"= {p}"


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'s' if n != 1 else ''}"


def p_text(p: float, simulations: int) -> str:
    """A p-value as printed: `< 0.001` at the simulations' resolution."""
    floor = 1.0 / (simulations + 1)
    if p <= floor:
        return f"< {_round_up(floor)}"
    return f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


def _round_up(x: float) -> str:
    for digits in range(1, 8):
        text = f"{x:.{digits}f}"
        if float(text) >= x:
            return text
    return f"{x:.2g}"


# --- the record's shape ----------------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
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


def _shape(hands: Hands) -> _Shape:
    _, index, lengths = np.unique(hands.shoe, return_index=True, return_counts=True)
    order = np.argsort(index)
    lengths = lengths[order]
    shoe_of = np.repeat(np.arange(lengths.shape[0]), lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return _Shape(lengths, shoe_of, starts[shoe_of])


@dataclass(frozen=True)
class _Batch:
    """Records of one shape, a row each: winners, and what else is known."""

    winner: np.ndarray  # (m, N) int8
    player_pair: np.ndarray | None  # (m, N) bool
    banker_pair: np.ndarray | None
    dragon: np.ndarray | None  # Banker wins with a three-card 7
    panda: np.ndarray | None  # Player wins with a three-card 8


def _batch(columns: dict[str, np.ndarray | None]) -> _Batch:
    winner = columns["winner"]
    assert winner is not None
    return _Batch(
        winner, columns["player_pair"], columns["banker_pair"], columns["dragon"], columns["panda"]
    )


def _record_batch(hands: Hands, want: set[str]) -> _Batch:
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


# --- the statistics, a value per row ---------------------------------------------------


def _prev_decisive(w: np.ndarray, shape: _Shape) -> np.ndarray:
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


def _chi(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Sum over the last axis of (o - e)^2 / e, cells with e = 0 left out."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(expected > 0, (observed - expected) ** 2 / expected, 0.0)
    return terms.sum(axis=-1)


def _row_counts(keys: np.ndarray, rows: np.ndarray, size: int, m: int) -> np.ndarray:
    return np.bincount(rows * size + keys, minlength=m * size).reshape(m, size)


@dataclass
class _Stats:
    """Each test's statistic for every row of a batch, and the counts the
    words about the record are made from."""

    values: dict[str, np.ndarray] = field(default_factory=dict)
    streaks: np.ndarray | None = None  # (m, STREAK_BINS) counts
    pattern_counts: dict[str, np.ndarray] = field(default_factory=dict)  # (m, 3)
    freq: np.ndarray | None = None  # (m, 3)


def _statistics(b: _Batch, shape: _Shape, exact: dict[str, float], decks: int) -> _Stats:
    w = b.winner.astype(np.int32)
    m, n = w.shape
    rows = np.repeat(np.arange(m, dtype=np.int32), n).reshape(m, n)
    out = _Stats()
    counts = _row_counts(w.ravel(), rows.ravel(), 3, m).astype(float)
    out.freq = counts / max(n, 1)
    probs = np.array([exact["player"], exact["banker"], exact["tie"]])
    out.values["outcome frequencies"] = _chi(counts, n * probs[None, :])
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
        stat = _chi(table, seen[:, :, None] * out.freq[:, None, :])
        for c in range(1 << k):
            name = "after " + "".join(_NAMES[(c >> j) & 1] for j in range(k - 1, -1, -1))
            out.values[name] = stat[:, c]
            out.pattern_counts[name] = table[:, c, :]
    return out


def _composition_chi(dealt: np.ndarray, decks: int) -> np.ndarray:
    """(..., shoes, 13) rank counts: each shoe's chi-square against an equal
    share of its cards for each rank, corrected for drawing without
    replacement from the decks (times (N - 1) / (N - c) for c of N cards, so
    that its mean is 12 however much of the shoe was dealt), summed over the
    shoes."""
    per_shoe = dealt.sum(axis=-1, keepdims=True)
    full = 52 * decks
    chi = _chi(dealt, np.broadcast_to(per_shoe / 13, dealt.shape))
    return (chi * (full - 1) / np.maximum(full - per_shoe[..., 0], 1)).sum(axis=-1)


def _dealt_ranks(hands: Hands) -> np.ndarray:
    """(shoes, 13): the ranks seen in each shoe: dealt into hands, and burned
    where the record was read with the burn rule."""
    shoes = np.unique(hands.shoe, return_inverse=True)[1]
    ranks = (hands.cards & 0xF).astype(np.int64)
    key = np.broadcast_to(shoes[:, None], ranks.shape) * 14 + ranks
    counts = np.bincount(key[ranks > 0], minlength=(int(shoes.max()) + 1) * 14).reshape(-1, 14)
    for shoe, burned in enumerate(hands.burned[: counts.shape[0]]):
        counts[shoe] += np.bincount([c & 0xF for c in burned], minlength=14)
    return counts[:, 1:].astype(float)


# --- simulated fair records ------------------------------------------------------------


def _simulated(
    shape: _Shape, decks: int, count: int, seed: int, first_record: int, want: set[str]
) -> _Batch:
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


# --- the p-values ----------------------------------------------------------------------


def _degrees(name: str, shoes: int) -> int:
    """The degrees of freedom a test's chi-square form has, roughly."""
    if name == "streak lengths":
        return STREAK_BINS - 1
    if name == "side-bet frequencies":
        return 4
    if name == "card composition":
        return 12 * shoes
    return 2


def _z_scores(names: list[str], pool: np.ndarray, shoes: int) -> np.ndarray:
    """Every statistic on one scale, an upper-tail normal deviate: a chi-square
    form by the Wilson-Hilferty cube root, |z| of the runs test by its
    two-sided tail. Only the order matters (the family's adjustment compares
    tests on it); the simulated null calibrates it."""
    out = np.empty_like(pool)
    normal = NormalDist()
    for j, name in enumerate(names):
        x = pool[:, j]
        if name.startswith("runs"):
            tail = [max(math.erfc(v / math.sqrt(2.0)), 1e-300) for v in x]
            out[:, j] = [-normal.inv_cdf(min(t, 1 - 1e-16)) for t in tail]
        else:
            k = _degrees(name, shoes)
            c = 2.0 / (9.0 * k)
            out[:, j] = (np.cbrt(np.maximum(x, 0.0) / k) - (1 - c)) / math.sqrt(c)
    return out


def _upper_share(null: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each value, the share of `null` (sorted, the values among it) at
    least as large (to a relative tolerance, so that equal statistics
    computed apart tie)."""
    tol = 1e-9 * np.maximum(1.0, np.abs(values))
    return (null.shape[0] - np.searchsorted(null, values - tol, side="left")) / null.shape[0]


def analyze(
    hands: Hands,
    decks: int = 8,
    rules: Rules | None = None,
    simulations: int = SIMULATIONS,
    seed: int = 1,
) -> Analysis:
    """Statistic a record of shoes for what fair shuffles would not give."""
    from backtest.odds import Event, composition, outcome_table

    if not 1 <= simulations <= 1_000_000:
        raise UsageError(f"--simulations must be from 1 to 1,000,000, got {simulations:,}")
    if len(hands) == 0:
        raise UsageError(f"{hands.source}: no hands to analyze")
    rules = rules if rules is not None else Rules.preset("commission")
    table = outcome_table(composition(decks))
    exact = {
        str(e): float(table.probability(e))
        for e in (Event.PLAYER, Event.BANKER, Event.TIE, Event.PLAYER_PAIR, Event.BANKER_PAIR)
    }
    exact["dragon_7"] = float(table.probability(Event.BANKER_THREE_CARD_SEVEN))
    exact["panda_8"] = float(table.probability(Event.PLAYER_THREE_CARD_EIGHT))
    offered = set(rules.offered_bets())
    want: set[str] = set()
    if {"player_pair", "banker_pair"} <= hands.known and {
        Bet.PLAYER_PAIR,
        Bet.BANKER_PAIR,
    } <= offered:
        want.add("pairs")
    if {"card_counts", "player_total", "banker_total"} <= hands.known and {
        Bet.DRAGON_7,
        Bet.PANDA_8,
    } <= offered:
        want.add("ez")
    shape = _shape(hands)
    order = np.argsort(hands.shoe, kind="stable")  # shoes in their order in the file
    record = _statistics(_record_batch(hands.take(order), want), shape, exact, decks)

    per_batch = max(1, _BATCH_HANDS // max(shape.n, 1))
    nulls: list[_Stats] = []
    done = 0
    while done < simulations:
        count = min(per_batch, simulations - done)
        batch = _simulated(shape, decks, count, seed, done, want)
        nulls.append(_statistics(batch, shape, exact, decks))
        done += count
    names = list(record.values)
    null = np.column_stack([np.concatenate([s.values[k] for s in nulls]) for k in names])
    streak_null = np.concatenate([s.streaks for s in nulls if s.streaks is not None])
    streak_mean = streak_null.mean(axis=0)
    assert record.streaks is not None
    observed = [record.values[k][0] for k in names]
    names.append("streak lengths")
    null = np.column_stack([null, _chi(streak_null, streak_mean[None, :])])
    observed.append(float(_chi(record.streaks, streak_mean[None, :])[0]))
    if "cards" in hands.known:
        # the cards of a fair shoe's first c are a random c of its decks: for each
        # shoe, draws of as many cards as it dealt, without replacement
        dealt = _dealt_ranks(hands)
        rng = np.random.default_rng([seed, 13])
        pack = np.full(13, 4 * decks)
        drawn = np.stack(
            [
                rng.multivariate_hypergeometric(pack, int(c), size=simulations)
                for c in dealt.sum(axis=1)
            ],
            axis=1,
        )
        names.append("card composition")
        null = np.column_stack([null, _composition_chi(drawn.astype(float), decks)])
        observed.append(float(_composition_chi(dealt, decks)))
    # the record is one more member of the pool of fair records: under the null
    # all m + 1 are exchangeable, so a p-value is the record's rank among them;
    # the adjusted p is the share of the pool whose most extreme test (on a
    # common scale, `_z_scores`) is at least as extreme as the record's test
    pool = np.vstack([np.array(observed)[None, :], null])
    ordered = np.sort(pool, axis=0)
    p_obs = np.array([_upper_share(ordered[:, j], pool[:1, j])[0] for j in range(len(names))])
    z = _z_scores(names, pool, shape.shoes)
    most = np.sort(z.max(axis=1))
    adjusted = (
        most.shape[0] - np.searchsorted(most, z[0] * (1 - 1e-12) - 1e-12, side="left")
    ) / pool.shape[0]

    tests = []
    for j, name in enumerate(names):
        tests.append(
            Statistic(
                name,
                float(observed[j]),
                float(p_obs[j]),
                float(adjusted[j]),
                _detail(name, record, streak_mean, hands, exact),
                float(z[0, j]),
            )
        )
    front = [t for t in tests if not t.name.startswith("after ")]
    back = [t for t in tests if t.name.startswith("after ")]
    return Analysis(
        source=hands.source,
        hands=len(hands),
        shoes=shape.shoes,
        decks=decks,
        rules=rules.name,
        simulations=simulations,
        seed=seed,
        tests=tuple(front + back),
        notes=tuple(_notes(hands, shape, decks)),
    )


def _detail(
    name: str, st: _Stats, streak_mean: np.ndarray, hands: Hands, exact: dict[str, float]
) -> str:
    """What a test saw in the record, in words."""
    assert st.freq is not None
    n = len(hands)
    if name == "outcome frequencies":
        f = st.freq[0]
        return (
            f"player {f[0]:.1%}, banker {f[1]:.1%}, tie {f[2]:.1%} (fair: "
            f"{exact['player']:.1%}, {exact['banker']:.1%}, {exact['tie']:.1%})"
        )
    if name in ("pair frequencies", "side-bet frequencies"):
        parts = [
            f"player pairs {hands.player_pair.sum() / n:.1%}, banker pairs "
            f"{hands.banker_pair.sum() / n:.1%} (fair: {exact['player_pair']:.1%} each)"
        ]
        if name == "side-bet frequencies":
            dragon = (
                (hands.winner == 1) & (hands.banker_total == 7) & (hands.banker_card_count == 3)
            ).sum()
            panda = (
                (hands.winner == 0) & (hands.player_total == 8) & (hands.player_card_count == 3)
            ).sum()
            parts.append(
                f"Dragon 7 {dragon / n:.2%} (fair {exact['dragon_7']:.2%}), "
                f"Panda 8 {panda / n:.2%} (fair {exact['panda_8']:.2%})"
            )
        return "; ".join(parts)
    if name == "streak lengths":
        assert st.streaks is not None
        got = st.streaks[0]
        k = int(np.argmax(np.abs(got - streak_mean) / np.sqrt(np.maximum(streak_mean, 1e-9))))
        length = f"{k + 1}" if k + 1 < STREAK_BINS else f"{STREAK_BINS} or more"
        return (
            f"{int(got.sum())} streaks; most off: length {length}, {int(got[k])} against "
            f"{streak_mean[k]:.1f} in fair shoes"
        )
    if name.startswith("runs"):
        runs, expected = _runs(hands)
        return f"{runs} runs of one winner, {expected:.1f} expected"
    if name.startswith("after "):
        counts = st.pattern_counts[name][0]
        seen = counts.sum()
        if not seen:
            return "never seen"
        f = st.freq[0]
        dev = (counts - seen * f) / np.sqrt(np.maximum(seen * f, 1e-9))
        k = int(np.argmax(np.abs(dev)))
        word = ("player", "banker", "tie")[k]
        return (
            f"{word} {counts[k] / seen:.0%} of {_count(int(seen), 'time')} (against "
            f"{f[k]:.1%} in all)"
        )
    if name == "card composition":
        dealt = _dealt_ranks(hands)
        expected = dealt.sum(axis=1, keepdims=True) / 13
        dev = (dealt - expected) / np.sqrt(np.maximum(expected, 1e-9))
        shoe, rank = np.unravel_index(int(np.argmax(np.abs(dev))), dev.shape)
        return (
            f"most off: {RANK_SYMBOLS[rank]}s in shoe {shoe + 1}, {int(dealt[shoe, rank])} "
            f"dealt against {expected[shoe, 0]:.1f} for an equal share"
        )
    return ""


def _runs(hands: Hands) -> tuple[int, float]:
    """The record's runs of one winner (ties skipped, within each shoe), and
    the number expected for its counts of Player and Banker wins."""
    runs, expected = 0, 0.0
    for shoe in np.unique(hands.shoe):
        w = hands.winner[hands.shoe == shoe]
        w = w[w < 2]
        if w.shape[0] == 0:
            continue
        n_p, n_b = float((w == 0).sum()), float((w == 1).sum())
        runs += 1 + int((w[1:] != w[:-1]).sum())
        expected += 1 + 2 * n_p * n_b / (n_p + n_b)
    return runs, expected


def _notes(hands: Hands, shape: _Shape, decks: int) -> list[str]:
    notes = []
    from backtest.shoes.shoe import ShoeSpec

    longest = ShoeSpec(decks=decks).max_hands
    long_shoes = int((shape.lengths > (52 * decks) / 4.5).sum())
    if long_shoes:
        notes.append(
            f"note: {_count(long_shoes, 'shoe')} hold more hands than "
            f"{'1 deck' if decks == 1 else f'{decks} decks'} usually "
            f"deal (at most {longest}); their simulated counterparts run on into a "
            "fresh shoe. Is --decks right, or are several shoes read as one?"
        )
    if "cards" in hands.known:
        full = 52 * decks
        dealt = np.array(
            [int((hands.cards[hands.shoe == s] > 0).sum()) for s in np.unique(hands.shoe)]
        )
        if hands.burned:
            notes.append(
                f"burn: {sum(len(b) for b in hands.burned)} cards burned in all, "
                "counted among each shoe's cards seen"
            )
        spread = (
            f"{dealt.min()}" if dealt.min() == dealt.max() else f"{dealt.min()} to {dealt.max()}"
        )
        notes.append(
            f"cards: a shoe of {full}; {spread} dealt into hands a shoe, the rest not "
            "in the record (burned, behind the cut card, or not dealt yet); no shoe "
            "holds more of a card than its decks (that is refused when the file is "
            "read)"
        )
    if not {"player_pair", "banker_pair"} <= hands.known:
        notes.append("the record has no pairs: their frequencies are not tested")
    return notes

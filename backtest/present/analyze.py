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

Here the tests are run and their p-values found; the result and its words
are in `analysis`, the statistics of a record and the simulated fair records
in `record_stats`.

>>> from backtest.shoes.shoe import ShoeSpec, generate_hands
>>> fair = generate_hands(ShoeSpec(decks=8), 2, seed=3)
>>> result = analyze(fair, decks=8, simulations=99, seed=1)
>>> result.hands == len(fair), result.shoes, len(result.tests) > 30
(True, 2, True)
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from backtest.core.cards import RANK_SYMBOLS
from backtest.core.errors import UsageError
from backtest.core.hands import Hands
from backtest.core.rules import Bet, Rules
from backtest.present.analysis import Analysis, Statistic, counted
from backtest.present.record_stats import (
    STREAK_BINS,
    Shape,
    Stats,
    batch_statistics,
    chi,
    composition_chi,
    dealt_ranks,
    record_batch,
    shape_of,
    simulated_records,
)

#: the simulations a record is calibrated against, by default
SIMULATIONS = 1000
#: simulated hands held in memory at once
_BATCH_HANDS = 2_000_000


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
    shape = shape_of(hands)
    order = np.argsort(hands.shoe, kind="stable")  # shoes in their order in the file
    record = batch_statistics(record_batch(hands.take(order), want), shape, exact, decks)

    per_batch = max(1, _BATCH_HANDS // max(shape.n, 1))
    nulls: list[Stats] = []
    done = 0
    while done < simulations:
        count = min(per_batch, simulations - done)
        batch = simulated_records(shape, decks, count, seed, done, want)
        nulls.append(batch_statistics(batch, shape, exact, decks))
        done += count
    names = list(record.values)
    null = np.column_stack([np.concatenate([s.values[k] for s in nulls]) for k in names])
    streak_null = np.concatenate([s.streaks for s in nulls if s.streaks is not None])
    streak_mean = streak_null.mean(axis=0)
    assert record.streaks is not None
    observed = [record.values[k][0] for k in names]
    names.append("streak lengths")
    null = np.column_stack([null, chi(streak_null, streak_mean[None, :])])
    observed.append(float(chi(record.streaks, streak_mean[None, :])[0]))
    if "cards" in hands.known:
        # the cards of a fair shoe's first c are a random c of its decks: for each
        # shoe, draws of as many cards as it dealt, without replacement
        dealt = dealt_ranks(hands)
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
        null = np.column_stack([null, composition_chi(drawn.astype(float), decks)])
        observed.append(float(composition_chi(dealt, decks)))
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
    name: str, st: Stats, streak_mean: np.ndarray, hands: Hands, exact: dict[str, float]
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
            f"{word} {counts[k] / seen:.0%} of {counted(int(seen), 'time')} (against "
            f"{f[k]:.1%} in all)"
        )
    if name == "card composition":
        dealt = dealt_ranks(hands)
        expected = dealt.sum(axis=1, keepdims=True) / 13
        dev = (dealt - expected) / np.sqrt(np.maximum(expected, 1e-9))
        shoe, rank = np.unravel_index(int(np.argmax(np.abs(dev))), dev.shape)
        return (
            f"most off: {RANK_SYMBOLS[rank]}s in shoe "
            f"{hands.shoe_name(int(np.unique(hands.shoe)[shoe]))}, {int(dealt[shoe, rank])} "
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


def _notes(hands: Hands, shape: Shape, decks: int) -> list[str]:
    notes = []
    from backtest.shoes.shoe import ShoeSpec

    longest = ShoeSpec(decks=decks).max_hands
    long_shoes = int((shape.lengths > (52 * decks) / 4.5).sum())
    if long_shoes:
        notes.append(
            f"note: {counted(long_shoes, 'shoe')} hold more hands than "
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

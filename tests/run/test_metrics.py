"""The summary reads a seat's sessions in blocks and keeps its memory flat:
exact sums, and medians and percentiles found as exact order statistics in
passes over the blocks. Checked here against an oracle written the other
way, as polars expressions over the whole frame at once, and for giving the
same numbers to the bit however the sessions are cut into blocks."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backtest.loop.table_rules import ENDED_BY
from backtest.run import intervals, metrics, order_stats

FLOAT_SUMS = ("wagered", "net", "ruined_net", "mean_net", "mean_max_drawdown")


def oracle(frame: pl.DataFrame) -> dict[str, object]:
    """The summary row of one seat, as polars works it out from the whole frame."""
    n = pl.len()
    edge = pl.col("net").sum() / pl.col("wagered").sum()
    resid = pl.col("net") - edge * pl.col("wagered")
    se = (resid.pow(2).sum() * n / (n - 1)).sqrt() / pl.col("wagered").sum()
    row = frame.select(
        n.alias("sessions"),
        pl.col("hands").cast(pl.Int64).sum().alias("hands"),
        pl.col("bets").cast(pl.Int64).sum().alias("bets"),
        pl.col("wagered").sum().alias("wagered"),
        pl.col("net").sum().alias("net"),
        edge.alias("edge"),
        pl.when((n > 1) & (se > 1e-10)).then(se).alias("se"),
        (pl.col("expected_net").sum() / pl.col("wagered").sum()).alias("expected_edge"),
        pl.col("expected_net").sum().alias("expected_net"),
        pl.col("net_variance").sum().alias("net_variance"),
        (pl.col("ended_by") == "ruin").cast(pl.Float64).mean().alias("ruin_rate"),
        pl.col("net").filter(pl.col("ended_by") == "ruin").sum().alias("ruined_net"),
        pl.col("hands")
        .filter(pl.col("ended_by") == "ruin")
        .cast(pl.Float64)
        .median()
        .alias("median_ruin_hand"),
        (pl.col("ended_by") == "win-goal").cast(pl.Float64).mean().alias("win_goal_rate"),
        (pl.col("ended_by") == "stop-loss").cast(pl.Float64).mean().alias("stop_loss_rate"),
        (pl.col("net") > 0).cast(pl.Float64).mean().alias("winning_sessions"),
        pl.col("net").mean().alias("mean_net"),
        pl.col("net").median().alias("median_net"),
        pl.col("max_drawdown").mean().alias("mean_max_drawdown"),
        pl.col("longest_losing_streak").cast(pl.Int64).max().alias("longest_losing_streak"),
        pl.col("largest_stake").max().alias("largest_stake"),
        pl.col("max_hits").cast(pl.Int64).sum().alias("max_hits"),
        pl.col("bankroll_stops").cast(pl.Int64).sum().alias("bankroll_stops"),
        pl.col("raised_to_min").cast(pl.Int64).sum().alias("raised_to_min"),
        *[
            pl.col("final_bankroll").quantile(q / 100, "linear").alias(f"final_bankroll_p{q}")
            for q in metrics.PERCENTILES
        ],
    ).row(0, named=True)
    return row


def sessions(rng: np.random.Generator, n: int) -> pl.DataFrame:
    """A seat's sessions frame as the engine writes it, with money in cents
    and halves of a cent (a 0.95 payout), many equal values (a bankroll
    ruined to 0, a limit reached at the same amount), and -0.0."""
    net = rng.choice(
        [rng.integers(-200_000, 200_000, n) / 200.0, np.full(n, -1000.0), np.zeros(n)],
        p=[0.6, 0.2, 0.2],
    )
    net = np.where(rng.random(n) < 0.05, -0.0, net)
    final = 1000.0 + net
    return pl.DataFrame(
        {
            "hands": rng.integers(1, 90, n).astype(np.int32),
            "bets": rng.integers(0, 90, n).astype(np.int32),
            "wagered": rng.integers(0, 400_000, n) / 100.0,
            "net": net,
            "expected_net": rng.normal(-10, 30, n),
            "net_variance": np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0, 1e5, n)),
            "largest_hand_variance": rng.uniform(0, 1e3, n),
            "final_bankroll": final,
            "max_drawdown": rng.integers(0, 100_000, n) / 100.0,
            "longest_losing_streak": rng.integers(0, 30, n).astype(np.int32),
            "largest_stake": rng.integers(1, 100_000, n) / 100.0,
            "max_hits": rng.integers(0, 3, n).astype(np.int32),
            "bankroll_stops": rng.integers(0, 2, n).astype(np.int32),
            "raised_to_min": rng.integers(0, 4, n).astype(np.int32),
            "ended_by": pl.Series(rng.choice(ENDED_BY, n).tolist(), dtype=metrics.ENDED),
        }
    )


def in_blocks(frame: pl.DataFrame, cuts: list[int]) -> order_stats.Blocks:
    """The frame cut at `cuts` into blocks (some of them empty)."""
    edges = [0, *sorted(cuts), frame.height]
    return lambda columns: [frame.select(columns).slice(a, b - a) for a, b in zip(edges, edges[1:])]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n=st.integers(1, 400), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_the_summary_agrees_with_polars_and_not_with_the_blocks(
    n: int, seed: int, data: st.DataObject
) -> None:
    frame = sessions(np.random.default_rng(seed), n)
    want = oracle(frame)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=6))
    got = metrics.seat_summary(in_blocks(frame, cuts))
    whole = metrics.seat_summary(metrics.frame_blocks(frame))
    keep, block = metrics.KEEP_SESSIONS, metrics.BLOCK_SESSIONS
    try:  # past the sessions the first pass keeps: the later passes read a scratch file
        metrics.KEEP_SESSIONS = data.draw(st.integers(0, n - 1)) if n > 1 else 0
        metrics.BLOCK_SESSIONS = data.draw(st.integers(1, n))
        streamed = metrics.seat_summary(in_blocks(frame, cuts))
    finally:
        metrics.KEEP_SESSIONS, metrics.BLOCK_SESSIONS = keep, block
    assert got is not None and whole is not None and streamed is not None
    # every number the same to the bit, however the sessions are cut or read
    for other in (whole, streamed):
        assert all(
            got[k] == other[k] or (got[k] != got[k] and other[k] != other[k]) for k in got
        ), (got, other)
    for key, value in want.items():
        if key in ("se", "expected_net", "net_variance"):
            continue
        if key in FLOAT_SUMS or key in ("edge", "expected_edge"):
            # exact sums rounded once, where polars adds as it goes
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-9), key
        else:
            assert got[key] == value, (key, got[key], value)
    # the interval and z follow from the standard error
    se = want["se"]
    if se is None:
        assert got["edge_ci_low"] is None and got["z"] is None
    else:
        half = float(intervals.t95(np.array([n]))[0]) * se
        assert got["edge_ci_high"] - got["edge"] == pytest.approx(half, rel=1e-9)
        assert got["z"] == pytest.approx((want["edge"] - want["expected_edge"]) / se, rel=1e-9)
    # hand by hand: the net against its expectation, over the square root of its variance
    spread = math.sqrt(want["net_variance"])
    if spread == 0:
        assert got["z_hands"] is None and got["edge_hands_ci_low"] is None
    else:
        assert got["z_hands"] == pytest.approx(
            (want["net"] - want["expected_net"]) / spread, rel=1e-9, abs=1e-12
        )
        assert got["edge_hands_ci_high"] - got["edge"] == pytest.approx(
            intervals.Z95 * spread / want["wagered"], rel=1e-9
        )
        # the largest one hand's share of the variance sum
        assert got["top_hand_share"] == pytest.approx(
            frame["largest_hand_variance"].max() / want["net_variance"], rel=1e-9
        )


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    values=st.lists(
        st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=60
    ),
    data=st.data(),
)
def test_exact_sums_are_the_rounded_sum_in_any_blocks(
    values: list[float], data: st.DataObject
) -> None:
    arr = np.array(values)
    order = data.draw(st.permutations(range(len(values))))
    cut = data.draw(st.integers(0, len(values)))
    total = order_stats.ExactSum()
    shuffled = arr[list(order)]
    total.add(shuffled[:cut])
    total.add(shuffled[cut:])
    exact = sum((Fraction(v) for v in values), Fraction(0))
    try:
        want = float(exact)
    except OverflowError:  # rounds beyond the largest float
        want = math.inf if exact > 0 else -math.inf
    assert total.value() == want
    assert math.isinf(want) or total.value() == math.fsum(values)


def test_order_statistics_are_exact_among_many_equal_values() -> None:
    rng = np.random.default_rng(5)
    values = np.concatenate(
        [
            np.zeros(5000),
            np.full(3000, -0.0),
            rng.normal(0, 1e-300, 50),
            rng.normal(0, 1e300, 50),
            np.full(2000, 1000.0),
            rng.integers(-(10**6), 10**6, 4000) / 200.0,
        ]
    )
    rng.shuffle(values)
    frame = pl.DataFrame({"x": values})
    ranks = [0, 1, 4999, 5000, 8049, 8050, 13_000, len(values) - 1]
    got = order_stats.order_statistics(in_blocks(frame, [10, 7000, 7001]), {"x": ranks})["x"]
    want = np.sort(values)[ranks] + 0.0
    assert [float(v) for v in want] == got
    assert not any(math.copysign(1.0, v) < 0 for v in got if v == 0.0)  # no -0.0


def test_no_sessions_give_no_row() -> None:
    empty = sessions(np.random.default_rng(0), 1).clear()
    frame = metrics.summary([("a", "flat", metrics.frame_blocks(empty))])
    assert frame.height == 0 and frame.columns == ["seat", "strategy", *metrics.metric_names()]


@pytest.mark.parametrize("block", [1, 150, 1 << 17])
def test_spilled_files_are_read_a_group_at_a_time(
    tmp_path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run spills a chunk's sessions a file; the summary reads as many files
    at once as a block allows, and its numbers do not depend on it."""
    frame = sessions(np.random.default_rng(9), 500)
    files = []
    for k, (a, b) in enumerate([(0, 100), (100, 101), (101, 340), (340, 500)]):
        path = tmp_path / f"s{k}.arrow"
        frame.slice(a, b - a).write_ipc(path, compression="lz4")
        files.append((path, b - a))
    monkeypatch.setattr(metrics, "BLOCK_SESSIONS", block)
    monkeypatch.setattr(metrics, "KEEP_SESSIONS", 0 if block == 1 else metrics.KEEP_SESSIONS)
    read = metrics.file_blocks(files)
    heights = [part.height for part in read(["net"])]
    assert sum(heights) == 500
    assert len(heights) == {1: 4, 150: 3, 1 << 17: 1}[block]
    assert metrics.seat_summary(read) == metrics.seat_summary(metrics.frame_blocks(frame))

"""The engine as a library: frames and their columns, the summary recomputed
from the sessions, the same numbers on any number of workers, recorded shoes
(card and outcome level) and the errors raised before any hand is dealt."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import scipy.stats

from backtest.core.errors import ConfigError, MissingDataError, StrategyError, UsageError
from backtest.core.rules import Bet
from backtest.run import engine, metrics, plan, pool
from backtest.run import seats as seat_checks
from backtest.run.config import RunConfig, parse_config
from strategies import registry
from strategies._common import stateless_reset as _stateless_reset
from strategies._common import stateless_update as _stateless_update
from strategies.base import Builtin, Strategy
from strategies.params import CommonParams

DATA = Path(__file__).resolve().parents[1] / "data"
REPO_DATA = Path(__file__).resolve().parents[2] / "data"
GOLDEN_CARDS = DATA / "golden-cards.txt"
ROADS = ("BPPBT", "PPBTB", "TBBPP")

# counts are 32-bit and names categorical: the frame is kept for every session
SESSIONS_SCHEMA = {
    "seat": pl.Categorical,
    "strategy": pl.Categorical,
    "session": pl.Int64,
    "hands": pl.Int32,
    "bets": pl.Int32,
    "wagered": pl.Float64,
    "net": pl.Float64,
    "expected_net": pl.Float64,
    "net_variance": pl.Float64,
    "largest_hand_variance": pl.Float64,
    "baseline_covariance": pl.Float64,
    "final_bankroll": pl.Float64,
    "peak_bankroll": pl.Float64,
    "max_drawdown": pl.Float64,
    "longest_losing_streak": pl.Int32,
    "largest_stake": pl.Float64,
    "max_hits": pl.Int32,
    "bankroll_stops": pl.Int32,
    "raised_to_min": pl.Int32,
    "wins": pl.Int32,
    "losses": pl.Int32,
    "pushes": pl.Int32,
    "ended_by": pl.Enum(["limit", "ruin", "stop-loss", "win-goal"]),
    **{f"wagered_{b.value}": pl.Float64 for b in Bet},
}
SUMMARY_COLUMNS = (
    "seat",
    "strategy",
    "sessions",
    "hands",
    "wagered",
    "net",
    "edge",
    "edge_ci_low",
    "edge_ci_high",
    "expected_edge",
    "z",
    "ruin_rate",
    "win_goal_rate",
    "winning_sessions",
    "mean_net",
    "median_net",
    "final_bankroll_p5",
    "final_bankroll_p25",
    "final_bankroll_p50",
    "final_bankroll_p75",
    "final_bankroll_p95",
)


def generated(
    seats: list[dict[str, Any]],
    *,
    sessions: int = 60,
    seed: int = 5,
    rules: str = "commission",
    **session: Any,
) -> RunConfig:
    return parse_config(
        {
            "seed": seed,
            "sessions": sessions,
            "rules": rules,
            "shoe": {"decks": 8, "cut_card": 14, "burn": True},
            "session": {"bankroll": 300, "win_goal": 100, **session},
            "table": {"min": 10, "max": 200, "limits": {"tie": {"min": 1, "max": 50}}},
            "seats": seats,
        },
        source="engine.yaml",
    )


def recorded(
    path: Path,
    seats: list[dict[str, Any]],
    *,
    sessions: int | None = None,
    rules: str = "commission",
    loop: bool = False,
    max_shoes: int | None = 1,
    max_hands: int | None = None,
) -> RunConfig:
    ends = {"max_shoes": max_shoes} if max_shoes is not None else {}
    data: dict[str, Any] = {
        "seed": 1,
        "rules": rules,
        "shoes": {"file": path.name, "decks": 8, "loop": loop},
        "session": {"bankroll": 1000, **ends, "max_hands": max_hands},
        "table": {"min": 1},
        "seats": seats,
    }
    if sessions is not None:
        data["sessions"] = sessions
    return parse_config(data, base_dir=path.parent, source="recorded.yaml")


def ledger_of(result: engine.RunResult) -> pl.DataFrame:
    assert result.ledger is not None, "run with ledger=True"
    return result.ledger


@pytest.fixture(scope="module")
def mixed_run() -> engine.RunResult:
    """Three seats, enough sessions for every way a session ends."""
    cfg = generated(
        [
            {
                "strategy": "flat",
                "name": "Flat Banker",
                "params": {"bets": {"banker": 10, "tie": 1}},
            },
            {
                "strategy": "martingale",
                "name": "Martingale",
                "params": {"bet": "player", "base": 10},
            },
            {"strategy": "follow-the-shoe"},
        ],
        sessions=300,
        stop_loss=250,
    )
    return engine.run(cfg, workers=1)


@pytest.fixture()
def road_file(tmp_path: Path) -> Path:
    path = tmp_path / "roads.txt"
    path.write_text("".join(r + "\n" for r in ROADS), encoding="utf-8")
    return path


# --- the frames ----------------------------------------------------------------------------


def test_the_frames_a_run_writes_join_on_seat(tmp_path: Path) -> None:
    """summary, sessions, ledger and paths share the seat's type, in memory and
    as Parquet, so a reader can join any two of them."""
    from backtest.present import outputs

    cfg = generated([{"strategy": "flat"}, {"strategy": "martingale"}], sessions=3)
    result = engine.run(cfg, workers=1, ledger=True)
    outputs.write_run(tmp_path, result, engine.bankroll_paths(result))
    frames = {
        name: pl.read_parquet(tmp_path / f"{name}.parquet")
        for name in ("summary", "sessions", "ledger", "paths")
    }
    for name, frame in [
        *frames.items(),
        ("summary in memory", result.summary),
        ("ledger in memory", result.ledger),
    ]:
        assert frame.schema["seat"] == pl.Categorical, name
    assert frames["ledger"].schema["winner"] == pl.Enum(["player", "banker", "tie"])
    joined = frames["ledger"].join(frames["sessions"], on=["seat", "session"])
    assert joined.height == frames["ledger"].height > 0
    assert frames["sessions"].join(frames["summary"], on=["seat", "strategy"]).height == 6
    assert frames["paths"].join(frames["summary"], on="seat").height == frames["paths"].height


def test_sessions_frame_columns_and_types(mixed_run: engine.RunResult) -> None:
    s = mixed_run.sessions
    assert dict(s.schema) == SESSIONS_SCHEMA
    assert s.height == 3 * 300
    assert s["seat"].unique(maintain_order=True).to_list() == [
        "Flat Banker",
        "Martingale",
        "follow-the-shoe",
    ]
    assert s["strategy"].unique(maintain_order=True).to_list() == [
        "flat",
        "martingale",
        "follow-the-shoe",
    ]
    for seat in s.partition_by("seat"):
        assert seat["session"].to_list() == list(range(1, 301))
    assert set(s["ended_by"]) <= {"limit", "ruin", "stop-loss", "win-goal"}
    # every hand a seat sat is a win, a loss, a push or a hand without a bet
    assert (s["wins"] + s["losses"] + s["pushes"] == s["bets"]).all()
    assert (s["bets"] <= s["hands"]).all()
    bets = sum(s[f"wagered_{b.value}"] for b in Bet)
    np.testing.assert_allclose(bets, s["wagered"], atol=1e-9)
    np.testing.assert_allclose(s["final_bankroll"], 300 + s["net"], atol=1e-9)
    assert (s["peak_bankroll"] >= s["final_bankroll"]).all() and (s["peak_bankroll"] >= 300).all()
    assert mixed_run.ledger is None
    assert mixed_run.hands > 300 * 60


def test_summary_columns(mixed_run: engine.RunResult) -> None:
    summary = mixed_run.summary
    assert set(SUMMARY_COLUMNS) <= set(summary.columns)
    assert summary["seat"].to_list() == ["Flat Banker", "Martingale", "follow-the-shoe"]
    assert summary["strategy"].to_list() == ["flat", "martingale", "follow-the-shoe"]
    for name in SUMMARY_COLUMNS[2:]:
        assert summary[name].dtype.is_numeric(), name
    assert summary["hands"].dtype == pl.Int64
    assert summary["sessions"].to_list() == [300, 300, 300]


def test_summary_recomputed_from_the_sessions(mixed_run: engine.RunResult) -> None:
    ended = set(mixed_run.sessions["ended_by"])
    assert {"ruin", "win-goal", "stop-loss", "limit"} <= ended, ended
    for row in mixed_run.summary.iter_rows(named=True):
        s = mixed_run.sessions.filter(pl.col("seat") == row["seat"])
        net, wagered = s["net"].to_numpy(), s["wagered"].to_numpy()
        n = len(s)
        edge = net.sum() / wagered.sum()
        resid = net - edge * wagered
        se = np.sqrt((resid**2).sum() * n / (n - 1)) / wagered.sum()
        t95 = scipy.stats.t.ppf(0.975, n - 1)
        expected = s["expected_net"].sum() / wagered.sum()
        final = s["final_bankroll"].to_numpy()
        ended_by = s["ended_by"].to_numpy()
        want = {
            "sessions": n,
            "hands": s["hands"].sum(),
            "wagered": wagered.sum(),
            "net": net.sum(),
            "edge": edge,
            "edge_ci_low": edge - t95 * se,
            "edge_ci_high": edge + t95 * se,
            "expected_edge": expected,
            "z": (edge - expected) / se,
            "ruin_rate": np.mean(ended_by == "ruin"),
            "ruined_net": net[ended_by == "ruin"].sum(),
            "win_goal_rate": np.mean(ended_by == "win-goal"),
            "stop_loss_rate": np.mean(ended_by == "stop-loss"),
            "winning_sessions": np.mean(net > 0),
            "mean_net": net.mean(),
            "median_net": np.median(net),
            "largest_stake": s["largest_stake"].max(),
            "max_hits": s["max_hits"].sum(),
            "bankroll_stops": s["bankroll_stops"].sum(),
            "raised_to_min": s["raised_to_min"].sum(),
            **{f"final_bankroll_p{q}": np.percentile(final, q) for q in (5, 25, 50, 75, 95)},
        }
        for key, value in want.items():
            assert row[key] == pytest.approx(value, rel=1e-9, abs=1e-9), (row["seat"], key)
    by_seat = {r["seat"]: r for r in mixed_run.summary.iter_rows(named=True)}
    # the Martingale is ruined in some sessions; flat Banker 10 with 300 never is
    assert by_seat["Martingale"]["ruin_rate"] > 0
    assert by_seat["Flat Banker"]["ruin_rate"] == 0


def test_the_same_numbers_on_any_number_of_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = generated(
        [
            {"strategy": "flat"},
            {"strategy": "random"},
            {"strategy": "martingale", "params": {"on_bankroll": "all-in"}},
            {"strategy": "follow-the-shoe"},
        ],
        sessions=90,
        seed=21,
    )
    whole = engine.run(cfg, workers=1, ledger=True)

    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(plan, "CHUNK_HANDS", 2000)  # about 25 sessions a chunk
    chunked = engine.run(cfg, workers=1, ledger=True, progress=lambda *a: calls.append(a))
    assert len(calls) >= 3 and calls[-1][0] == 90
    calls.clear()
    spread = engine.run(cfg, workers=2, ledger=True, progress=lambda *a: calls.append(a))
    assert len(calls) >= 4 and calls[-1][0] == 90

    for other in (chunked, spread):
        assert other.sessions.equals(whole.sessions)
        assert other.summary.equals(whole.summary)
        assert ledger_of(other).equals(ledger_of(whole))
        assert other.hands == whole.hands


def test_spilled_sessions_are_the_same_frames(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With `spill`, each block of chunks' sessions goes to disk as it
    finishes; the frames and the summary are the ones kept in memory, on one
    worker or two."""
    cfg = generated(
        [
            {"strategy": "flat"},
            {"strategy": "martingale"},
            {"strategy": "follow-the-shoe", "name": "Follow"},
        ],
        sessions=90,
        seed=5,
    )
    whole = engine.run(cfg, workers=1)
    monkeypatch.setattr(plan, "CHUNK_HANDS", 2000)
    monkeypatch.setattr(engine, "FRAME_SESSIONS", 40)
    monkeypatch.setattr(metrics, "BLOCK_SESSIONS", 40)  # the files read in several blocks
    for workers in (1, 2):
        folder = tmp_path / f"w{workers}"
        folder.mkdir()
        spilled = engine.run(cfg, workers=workers, spill=folder)
        assert isinstance(spilled.sessions, pl.LazyFrame)
        assert len(list(folder.glob("*.arrow"))) >= 3 * 2  # three seats, blocks of chunks
        assert spilled.sessions.collect().equals(whole.sessions)
        assert spilled.summary.equals(whole.summary)
        assert spilled.summary["seat"].to_list() == ["flat", "martingale", "Follow"]
        # the comparisons, read a block of each seat at a time, to the last bit
        assert spilled.comparisons.equals(whole.comparisons)


def test_a_spilled_summary_is_the_same_to_the_last_bit_run_after_run(tmp_path: Path) -> None:
    """Read back from a seat's file as threads deliver it, the sums of squares
    behind the interval and z once changed in the last bit from run to run."""
    cfg = parse_config(
        {
            "seed": 42,
            "sessions": 800,
            "shoe": {"decks": 8, "cut": "random"},
            "session": {"bankroll": 1000, "win_goal": 300, "max_hands": 120},
            "table": {"min": 10, "max": 1000},
            "seats": [
                {"strategy": "flat", "params": {"bets": {"banker": 10}}},
                {"strategy": "martingale"},
                {"strategy": "random"},
            ],
        }
    )
    expected = engine.run(cfg, workers=1).summary
    for k in range(6):
        folder = tmp_path / str(k)
        folder.mkdir()
        assert engine.run(cfg, workers=1, spill=folder).summary.equals(expected), k


class _Planned(Exception):
    pass


@pytest.mark.parametrize(("seat", "workers"), [("martingale", 1), ("counter", 2)])
def test_a_counting_table_uses_every_core_at_fewer_hands(
    monkeypatch: pytest.MonkeyPatch, seat: str, workers: int
) -> None:
    """By default a run uses every core from PARALLEL_HANDS hands, and a
    table with a counting seat from COUNTING_WEIGHT times fewer: its exact
    EVs cost that much more a hand than the other seats' play."""
    planned: list[int] = []

    def plan(n: int, per_session: int, workers: int) -> list[tuple[int, int]]:
        planned.append(workers)
        raise _Planned

    cfg = generated([{"strategy": seat}], sessions=40)
    n, per_session, _ = engine.prepare(cfg)
    monkeypatch.setattr(engine, "default_workers", lambda: 2)
    monkeypatch.setattr(engine, "plan_chunks", plan)
    # between the two thresholds
    monkeypatch.setattr(engine, "PARALLEL_HANDS", n * per_session * engine.COUNTING_WEIGHT // 2)
    with pytest.raises(_Planned):
        engine.run(cfg)
    assert planned == [workers]


def test_bad_run_arguments() -> None:
    cfg = generated([{"strategy": "flat"}], sessions=2)
    with pytest.raises(ConfigError, match="at least 1, got 0"):
        engine.run(cfg, sessions=0)
    with pytest.raises(ConfigError, match="workers must be at least 1"):
        engine.run(cfg, workers=0)
    assert engine.run(cfg, sessions=3).summary["sessions"].to_list() == [3]


def _with_table_max(maximum: float, **session: Any) -> RunConfig:
    return parse_config(
        {
            "seed": 1,
            "sessions": 2,
            "rules": "commission",
            "shoe": {"decks": 8},
            "session": {"bankroll": 1000, **session},
            "table": {"min": 1, "max": maximum},
            "seats": [{"strategy": "flat"}],
        },
        source="money.yaml",
    )


def test_money_too_large_to_count_is_refused_with_a_limit_that_fits() -> None:
    # money is counted in int64 ticks of 1/(100 * 20) under a 5% commission: a
    # table maximum whose worst case could overflow them is refused before any
    # work, and the message's advice is right at the edge
    with pytest.raises(ConfigError) as info:
        engine.run(_with_table_max(1e14))
    message = str(info.value)
    assert message.startswith("money.yaml: table.max (or table.limits): ")
    hands = plan.hands_bound(_with_table_max(1e14))
    assert f"sessions of up to {hands:,} hands" in message
    advised = float(re.search(r"below ([0-9.e+]+),", message).group(1))  # type: ignore[union-attr]
    seat_checks.check_money(_with_table_max(advised))
    with pytest.raises(ConfigError):
        seat_checks.check_money(_with_table_max(advised * 1.02))
    # shorter sessions leave room for a larger maximum
    seat_checks.check_money(_with_table_max(advised * 2, max_hands=hands // 4, max_shoes=None))

    # (amounts of 4.61e16 and more the config refuses by themselves: see test_run_cli)
    with pytest.raises(ConfigError, match=r"session.bankroll: a bankroll of 1e\+16 is too much "):
        engine.run(_with_table_max(1000, bankroll=1e16))
    with pytest.raises(ConfigError, match=r"session.win_goal: a bankroll of 1000 and a win goal"):
        engine.run(_with_table_max(1000, win_goal=3e15))


def test_a_session_s_hands_are_bounded_by_its_shoes(road_file: Path) -> None:
    # generated: every shoe at its longest; recorded: the longest shoe of the file
    spec_max = _with_table_max(1000).shoe.max_hands  # type: ignore[union-attr]
    assert plan.hands_bound(_with_table_max(1000)) == spec_max
    assert plan.hands_bound(_with_table_max(1000, max_shoes=3)) == 3 * spec_max
    assert plan.hands_bound(_with_table_max(1000, max_hands=40, max_shoes=None)) == 40
    flat = [{"strategy": "flat"}]
    longest = max(len(r) for r in ROADS)
    assert plan.hands_bound(recorded(road_file, flat, max_shoes=2)) == 2 * longest


# --- recorded shoes --------------------------------------------------------------------------


def _winners(result: engine.RunResult) -> dict[int, str]:
    letters = {"player": "P", "banker": "B", "tie": "T"}
    out: dict[int, str] = {}
    for session, winner in ledger_of(result).select("session", "winner").rows():
        out[session] = out.get(session, "") + letters[winner]
    return out


def test_recorded_sessions_take_the_shoes_in_order(road_file: Path) -> None:
    flat = [{"strategy": "flat", "params": {"bets": {"player": 10}}}]
    every = engine.run(recorded(road_file, flat), ledger=True)  # no count: every shoe
    assert _winners(every) == {1: ROADS[0], 2: ROADS[1], 3: ROADS[2]}
    two = engine.run(recorded(road_file, flat, sessions=2), ledger=True)
    assert _winners(two) == {1: ROADS[0], 2: ROADS[1]}

    with pytest.warns(
        plan.ReplayedShoesWarning,
        match=r"recorded.yaml: 5 sessions of 1 shoe need more shoes than "
        r".*roads.txt has \(3, 3 session\(s\)\), so its shoes are played "
        r"again in order; sessions on the same shoes are not independent",
    ):
        looped = engine.run(recorded(road_file, flat, sessions=5, loop=True), ledger=True)
    assert _winners(looped) == {1: ROADS[0], 2: ROADS[1], 3: ROADS[2], 4: ROADS[0], 5: ROADS[1]}
    with pytest.warns(
        plan.ReplayedShoesWarning,
        match=r"2 sessions of 2 shoes need more "
        r"shoes than .* \(3, 1 session\(s\)\)",
    ):
        pairs = engine.run(
            recorded(road_file, flat, sessions=2, loop=True, max_shoes=2), ledger=True
        )
    assert _winners(pairs) == {1: ROADS[0] + ROADS[1], 2: ROADS[2] + ROADS[0]}
    assert ledger_of(pairs).filter(pl.col("session") == 1)["shoe"].to_list() == [1] * 5 + [2] * 5


def test_too_many_recorded_sessions_name_the_fix(road_file: Path) -> None:
    flat = [{"strategy": "flat"}]
    with pytest.raises(ConfigError) as info:
        engine.run(recorded(road_file, flat, sessions=4))
    message = str(info.value)
    assert "shoes.loop: true" in message and "at most 3 sessions" in message
    assert "roads.txt" in message
    with pytest.raises(
        ConfigError,
        match=r"roads.txt has 3 shoes \(15 hands\), too few "
        "for one session of 4 shoes",
    ):
        engine.run(recorded(road_file, flat, max_shoes=4))
    with pytest.raises(ConfigError, match="too few for one session of 16 hands"):
        engine.run(recorded(road_file, flat, max_shoes=None, max_hands=16))


def test_recorded_sessions_of_max_hands_read_on_into_the_next_shoes(road_file: Path) -> None:
    """As a generated session does: a session of 7 hands takes two 5-hand shoes
    and ends after hand 2 of the second; the next session starts a new shoe.
    The last shoe makes no whole session: it is not played, and the run says so."""
    flat = [{"strategy": "flat", "params": {"bets": {"player": 10}}}]
    with pytest.warns(
        plan.UnplayedShoesWarning,
        match=r"recorded.yaml: the last shoe of the 3 shoes in .*roads.txt is not "
        r"played: too few for another session of 7 hands",
    ):
        result = engine.run(recorded(road_file, flat, max_shoes=None, max_hands=7), ledger=True)
    assert _winners(result) == {1: ROADS[0] + ROADS[1][:2]}
    assert result.hands == 7 and result.sessions["hands"].to_list() == [7]  # not 10 dealt
    with pytest.warns(plan.ReplayedShoesWarning):
        looped = engine.run(
            recorded(road_file, flat, sessions=3, loop=True, max_shoes=None, max_hands=7),
            ledger=True,
        )
    # on from the third shoe, and round again from the first
    assert _winners(looped) == {
        1: ROADS[0] + ROADS[1][:2],
        2: ROADS[2] + ROADS[0][:2],
        3: ROADS[1] + ROADS[2][:2],
    }
    assert looped.hands == 21


def test_recorded_shoes_left_over_by_max_shoes_are_said(road_file: Path) -> None:
    flat = [{"strategy": "flat", "params": {"bets": {"player": 10}}}]
    with pytest.warns(
        plan.UnplayedShoesWarning,
        match=r"the last shoe of the 3 shoes .* too few "
        r"for another session of 2 shoes",
    ):
        result = engine.run(recorded(road_file, flat, max_shoes=2), ledger=True)
    assert _winners(result) == {1: ROADS[0] + ROADS[1]}


def test_outcome_level_roads_settle_the_main_bets(road_file: Path) -> None:
    seats = [
        {"strategy": "flat", "name": name, "params": {"bets": {name: 10}}}
        for name in ("player", "banker", "tie")
    ]
    result = engine.run(recorded(road_file, seats), ledger=True)
    nets = {
        seat: [r[0] for r in ledger_of(result).filter(pl.col("seat") == seat).select("net").rows()][
            :5
        ]
        for seat in ("player", "banker", "tie")
    }
    # BPPBT: Player loses, wins, wins, loses, pushes; Banker 0.95 to 1; Tie 8 to 1
    assert nets == {
        "player": [-10.0, 10.0, 10.0, -10.0, 0.0],
        "banker": [9.5, -10.0, -10.0, 9.5, 0.0],
        "tie": [-10.0, -10.0, -10.0, -10.0, 80.0],
    }
    net = dict(result.summary.select("seat", "net").rows())
    # over the three shoes: Player even; Banker -1 a shoe; one tie a shoe: +80 - 4 * 10
    assert net == {"player": 0.0, "banker": -3.0, "tie": 120.0}


@pytest.mark.parametrize(
    "rules, bets, column",
    [
        ("commission", {"player_pair": 1, "banker": 10}, "player pair"),
        ("commission", {"banker_pair": 1}, "banker pair"),
        ("no-commission", {"banker": 10}, "banker total"),  # a winning 6 pays half
        (
            "ez",
            {"banker": 10},
            "needs the banker total and the number of cards (two or three) of each side, which",
        ),  # a three-card 7 pushes
        ("ez", {"dragon7": 1}, "number of cards (two or three)"),
    ],
)
def test_outcome_level_roads_refuse_bets_they_cannot_settle(
    road_file: Path, rules: str, bets: dict[str, float], column: str
) -> None:
    cfg = recorded(road_file, [{"strategy": "flat", "params": {"bets": bets}}], rules=rules)
    with pytest.raises(MissingDataError) as info:
        engine.run(cfg)
    message = str(info.value)
    assert column in message and "seats[0]" in message and "roads.txt" in message


def test_card_level_shoes_settle_every_bet() -> None:
    cfg = recorded(
        GOLDEN_CARDS,
        [{"strategy": "flat", "params": {"bets": {"banker": 10, "player_pair": 1}}}],
        rules="no-commission",
    )
    result = engine.run(cfg, ledger=True)
    # shoe 1: hands won P, B 9, T, B 6 (pays half), P with a Player pair 4-4, B 7, P
    assert ledger_of(result)["net"].to_list()[:7] == [-11.0, 9.0, -1.0, 4.0, 1.0, 9.0, -11.0]


# --- errors before any hand ---------------------------------------------------------------------

WATCHER = """
from strategies.base import Strategy

CALLS = []


class Watcher(Strategy):
    name = "watcher"

    def stakes(self, view):
        CALLS.append(view.hand)
        return {"player": 10}
"""


def test_a_bet_the_table_does_not_offer_fails_before_any_hand(tmp_path: Path) -> None:
    path = tmp_path / "watcher.py"
    path.write_text(WATCHER, encoding="utf-8")
    spec = f"{path}:Watcher"
    calls = sys.modules[registry.get(spec).__module__].CALLS
    cfg = generated(
        [{"strategy": spec}, {"strategy": "flat", "params": {"bets": {"banker": 10, "dragon7": 1}}}]
    )
    progress: list[tuple[int, ...]] = []
    with pytest.raises(StrategyError) as info:
        engine.run(cfg, progress=lambda *a: progress.append(a))
    message = str(info.value)
    assert "seats[1]" in message and "does not offer the dragon7 bet" in message
    assert "player, banker, tie" in message
    assert calls == [] and progress == []
    # a side bet counts too: no pairs at the Bulgarian table
    side = generated(
        [{"strategy": "martingale", "params": {"side_bets": {"player_pair": 1}}}], rules="bulgarian"
    )
    with pytest.raises(StrategyError, match=r"seats\[0\].*does not offer the player_pair bet"):
        engine.run(side)


def _german(bets: dict[str, float]) -> RunConfig:
    return parse_config(
        {
            "seed": 1,
            "sessions": 3,
            "rules": "german",
            "shoe": {"decks": 8},
            "seats": [{"strategy": "flat", "params": {"bets": bets}}],
        },
        source="german.yaml",
    )


def test_german_rules_take_player_or_banker_with_tie() -> None:
    result = engine.run(_german({"player": 10, "tie": 1}))
    assert result.summary["wagered"].item() > 0
    # a flat seat's bets never change: the combination is refused before any hand
    with pytest.raises(StrategyError) as info:
        engine.run(_german({"player": 10, "banker": 10}))
    message = str(info.value)
    assert message.startswith("german.yaml: seats[0] (flat): ")
    assert "german table does not take Player and Banker on one hand" in message


class _CountsSessions(Strategy):
    """A test strategy that knows which of its sessions it is playing."""

    description = "test strategy"

    def start_session(self, seed: int) -> None:
        self.sessions = getattr(self, "sessions", 0) + 1


class _BothSidesLater(_CountsSessions):
    """Bets Banker, then both sides on the third hand of the second session."""

    name = "both-sides-later"

    def stakes(self, view):  # type: ignore[no-untyped-def]
        if self.sessions == 2 and view.session_hand == 2:
            return {"player": 10, "banker": 10}
        return {"banker": 10}


def test_a_refused_combination_names_session_shoe_and_hand_as_the_frames_number_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import strategies.registry as registry

    monkeypatch.setitem(registry.BUILTIN_NAMES, "both-sides-later", _BothSidesLater)
    cfg = parse_config(
        {
            "seed": 1,
            "sessions": 3,
            "rules": "german",
            "shoe": {"decks": 8},
            "seats": [{"strategy": "both-sides-later"}],
        },
        source="german.yaml",
    )
    with pytest.raises(StrategyError) as info:
        engine.run(cfg, workers=1)
    message = str(info.value)
    assert message.startswith("german.yaml: seats[0] (both-sides-later) placed a combination")
    assert message.endswith(
        "on hand 3 of shoe 1 in session 2 (the german table does not take "
        "Player and Banker together)"
    )


class _PairAlone(Strategy):
    name = "pair-alone"
    description = "test strategy"

    def stakes(self, view):  # type: ignore[no-untyped-def]
        return {"player_pair": 5}


class _DragonAtCommission(Strategy):
    name = "dragon"
    description = "test strategy"

    def stakes(self, view):  # type: ignore[no-untyped-def]
        return {"dragon7": 5}


@pytest.mark.parametrize(
    ("cls", "rules", "why"),
    [
        (
            _PairAlone,
            "no-commission",
            "(at the no-commission table a pair bet needs a Player, Banker or Tie bet beside it)",
        ),
        (_DragonAtCommission, "commission", "(this table or shoe does not settle dragon7, panda8)"),
    ],
    ids=["pair-alone", "dragon"],
)
def test_a_refused_placement_says_which_rule_refused_it(
    monkeypatch: pytest.MonkeyPatch, cls: type[Strategy], rules: str, why: str
) -> None:
    monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    cfg = parse_config(
        {
            "seed": 1,
            "sessions": 1,
            "rules": rules,
            "shoe": {"decks": 8},
            "seats": [{"strategy": cls.name}],
        },
        source="table.yaml",
    )
    with pytest.raises(StrategyError) as info:
        engine.run(cfg, workers=1)
    assert str(info.value).endswith(f"on hand 1 of shoe 1 in session 1 {why}")


# --- a strategy's own errors, and stakes no number of cents can hold ---------------------------


class _Raises(_CountsSessions):
    """Bets Banker; its stakes() divides by zero on the fourth hand of the second session."""

    name = "raises"

    def stakes(self, view):  # type: ignore[no-untyped-def]
        if self.sessions == 2 and view.session_hand == 3:
            return {"banker": 1 / 0}
        return {"banker": 10}


class _Asks(Strategy):
    """Asks for one given stake on Banker every hand."""

    name = "asks"
    description = "test strategy"
    stake: object = 10.0

    def stakes(self, view):  # type: ignore[no-untyped-def]
        return {"banker": self.stake}


def _user_seat(monkeypatch: pytest.MonkeyPatch, cls: type[Strategy], **session: Any) -> RunConfig:
    monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    return parse_config(
        {
            "seed": 1,
            "sessions": 3,
            "shoe": {"decks": 8},
            "session": {"bankroll": 1000, **session},
            "table": {"min": 1, "max": 100},
            "seats": [{"strategy": cls.name}],
        },
        source="user.yaml",
    )


def test_an_error_in_a_strategy_s_code_names_the_seat_the_hand_and_the_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(StrategyError) as info:
        engine.run(_user_seat(monkeypatch, _Raises), workers=1)
    message = str(info.value)
    assert message.startswith(
        "user.yaml: seats[0] (raises): raised ZeroDivisionError: division by zero ("
    )
    assert f"{__file__}, line " in message and "in stakes)" in message
    assert message.endswith("on hand 4 of shoe 1 in session 2")


@pytest.mark.parametrize(
    "stake", ["10", True, b"10", np.True_], ids=["text", "bool", "bytes", "numpy-bool"]
)
def test_a_stake_that_is_not_a_number_is_refused_with_the_seat(
    monkeypatch: pytest.MonkeyPatch, stake: object
) -> None:
    monkeypatch.setattr(_Asks, "stake", stake)
    with pytest.raises(StrategyError) as info:
        engine.run(_user_seat(monkeypatch, _Asks), workers=1)
    assert str(info.value) == (
        f"user.yaml: seats[0] (asks): strategy asks: the stake on banker "
        f"must be a number, got {stake!r}, on hand 1 of shoe 1 in session 1"
    )


@pytest.mark.parametrize("stake", [1e307, float("inf"), 10**400], ids=["1e307", "inf", "10**400"])
@pytest.mark.parametrize("on_max", ["reset", "cap"])
def test_a_stake_beyond_any_cents_is_played_as_the_compiled_loop_plays_it(
    monkeypatch: pytest.MonkeyPatch, stake: object, on_max: str
) -> None:
    """As 2**52 cents, over the table maximum: a user's class asking for it,
    and the flat built-in asking for 1e307 in both loops, play the same hands."""
    monkeypatch.setattr(_Asks, "stake", stake)
    monkeypatch.setitem(registry.BUILTIN_NAMES, _Asks.name, _Asks)
    cfg = generated(
        [
            {"strategy": "flat", "params": {"bets": {"banker": 1e307}, "on_max": on_max}},
            {"strategy": "asks", "params": {"on_max": on_max}},
        ],
        sessions=3,
        bankroll=1000,
        win_goal=None,
    )
    compiled = ledger_of(engine.run(cfg, ledger=True, workers=1))
    python = ledger_of(engine.run(cfg, ledger=True, workers=1, force_python=True))
    assert compiled.equals(python)
    flat, user = (compiled.filter(pl.col("seat") == seat).drop("seat") for seat in ("flat", "asks"))
    assert flat.equals(user)
    assert set(flat["stake_banker"]) == {200.0}  # the table maximum


def test_a_side_bet_beyond_any_cents_is_held_to_the_table_maximum_in_both_loops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loops' own guard, behind the check that refuses such a config."""
    cfg = generated(
        [
            {
                "strategy": "martingale",
                "params": {
                    "bet": "banker",
                    "base": 10,
                    "on_max": "cap",
                    "side_bets": {"tie": 1.0e17},
                },
            }
        ],
        sessions=5,
        bankroll=1000,
        win_goal=None,
    )
    with pytest.raises(ConfigError, match="over the table maximum for tie"):
        engine.run(cfg, workers=1)
    monkeypatch.setattr(engine, "check_seats", lambda *args: None)
    compiled = ledger_of(engine.run(cfg, ledger=True, workers=1))
    python = ledger_of(engine.run(cfg, ledger=True, workers=1, force_python=True))
    assert compiled.equals(python)
    assert set(compiled["stake_tie"]) == {50.0}  # the tie's own maximum
    assert compiled["stake_banker"].min() >= 10.0


def test_a_seat_ruined_before_its_first_hand_has_an_empty_ledger_beside_the_others() -> None:
    cfg = generated(
        [
            {"strategy": "flat", "params": {"bets": {"banker": 200}}},  # over 150
            {"strategy": "flat", "name": "small", "params": {"bets": {"banker": 10}}},
        ],
        sessions=2,
        bankroll=150,
    )
    for force_python in (False, True):
        ledger = ledger_of(engine.run(cfg, ledger=True, workers=1, force_python=force_python))
        assert set(ledger["seat"]) == {"small"} and ledger.height > 0


def test_a_bankroll_below_the_table_minimum_is_ruin_before_the_first_hand() -> None:
    """Alike for a seat that would bet on the first hand and one that would
    wait (a streak): no hand played, every session ruined, in both loops."""
    cfg = generated(
        [{"strategy": "flat", "params": {"bets": {"banker": 10}}}, {"strategy": "streak"}],
        sessions=4,
        bankroll=5,
    )
    for force_python in (False, True):
        sessions = engine.run(cfg, workers=1, force_python=force_python).sessions
        assert sessions["hands"].to_list() == [0] * 8
        assert set(sessions["ended_by"]) == {"ruin"}


def test_a_side_bet_over_its_table_maximum_is_refused_before_any_hand() -> None:
    """Over its maximum, every hand counted as over the table maximum and the
    progression beside it restarted: a Martingale that never doubled."""
    seats = [{"strategy": "martingale", "params": {"side_bets": {"tie": 60}}}]
    with pytest.raises(
        ConfigError,
        match=r"engine.yaml: seats\[0\] \(martingale\): "
        r"params.side_bets.tie: 60 is over the table maximum "
        r"for tie \(50\); give at most 50",
    ):
        engine.run(generated(seats, sessions=2), workers=1)
    seats[0]["params"]["side_bets"] = {"tie": 50}
    assert engine.run(generated(seats, sessions=2), workers=1).summary["max_hits"][0] == 0


def test_stakes_under_the_table_minimum_are_said_and_counted() -> None:
    """A Martingale from 5 at a table of minimum 10 bets 10, 10, 20, ...: a
    warning before the run, and the raised stakes in the frames and verdict."""
    from backtest.present import verdict

    seats = [
        {"strategy": "martingale", "params": {"base": 5}},
        {"strategy": "flat", "params": {"bets": {"banker": 20, "tie": 0.5}}},
        {"strategy": "chop"},
        {"strategy": "paroli", "params": {"side_bets": {"tie": 0.5}}},
    ]
    with pytest.warns(seat_checks.BelowMinimumWarning) as said:
        result = engine.run(generated(seats, sessions=20), workers=1)
    assert [str(w.message) for w in said if w.category is seat_checks.BelowMinimumWarning] == [
        "engine.yaml: seats[0] (martingale): stakes under the table minimum are raised to it, "
        "so the system does not run as written: 5 on banker (minimum 10)",
        "engine.yaml: seats[1] (flat): stakes under the table minimum are raised to it, so the "
        "system does not run as written: 0.5 on tie (minimum 1)",
        "engine.yaml: seats[3] (paroli): stakes under the table minimum are raised to it, so "
        "the system does not run as written: side bet 0.5 on tie (minimum 1)",
    ]
    raised = dict(result.summary.select("seat", "raised_to_min").rows())
    assert raised["martingale"] > 0 and raised["flat"] > 0 and raised["chop"] == 0
    assert raised["paroli"] > 0
    # a flat seat's side bet is part of its stake on that bet: said once, and not when the
    # sum reaches the minimum
    seats = [
        {
            "strategy": "flat",
            "params": {"bets": {"banker": 20, "tie": 0.5}, "side_bets": {"tie": 0.5}},
        },
        {
            "strategy": "flat",
            "params": {"bets": {"banker": 20, "tie": 0.5}, "side_bets": {"tie": 0.2}},
        },
    ]
    with pytest.warns(seat_checks.BelowMinimumWarning) as paired_said:
        paired = engine.run(generated(seats, sessions=3), workers=1)
    assert [
        str(w.message) for w in paired_said if w.category is seat_checks.BelowMinimumWarning
    ] == [
        "engine.yaml: seats[1] (flat #2): stakes under the table minimum are raised to it, so "
        "the system does not run as written: 0.7 on tie (minimum 1)"
    ]
    assert paired.summary["raised_to_min"].to_list()[0] == 0
    assert result.sessions["raised_to_min"].sum() == sum(raised.values())
    text = verdict.verdict(result.summary, 300.0)
    assert f"{raised['martingale']:,} stakes were under the table minimum and raised" in text


def test_stakes_over_the_table_maximum_are_said() -> None:
    """A base or flat stake over the maximum is played at the maximum on every
    hand (a maximum hit each time): a warning before the run."""
    seats = [
        {"strategy": "martingale", "params": {"base": 500}},
        {"strategy": "flat", "params": {"bets": {"banker": 20, "tie": 80}}},
        {"strategy": "chop", "params": {"base": 200}},
    ]
    with pytest.warns(seat_checks.OverMaximumWarning) as said:
        result = engine.run(generated(seats, sessions=5, bankroll=100_000), workers=1)
    assert [str(w.message) for w in said if w.category is seat_checks.OverMaximumWarning] == [
        "engine.yaml: seats[0] (martingale): stakes over the table maximum are played at the "
        "maximum on every hand, so the system does not run as written: 500 on banker "
        "(maximum 200)",
        "engine.yaml: seats[1] (flat): stakes over the table maximum are played at the maximum "
        "on every hand, so the system does not run as written: 80 on tie (maximum 50)",
    ]
    hits = dict(result.summary.select("seat", "max_hits").rows())
    hands = dict(result.summary.select("seat", "hands").rows())
    assert hits["martingale"] == hands["martingale"] and hits["chop"] == 0


def test_seat_labels_are_unique() -> None:
    """An unnamed seat is numbered past any label taken, and a name given twice
    is refused: the frames tell the seats apart by their labels."""
    seats = [
        {"strategy": "flat"},
        {"strategy": "flat", "name": "flat #3"},
        {"strategy": "flat"},
        {"strategy": "flat"},
    ]
    cfg = generated(seats, sessions=3)
    assert [s.label for s in cfg.seats] == ["flat", "flat #3", "flat #4", "flat #5"]
    summary = engine.run(cfg, workers=1).summary
    assert summary["seat"].to_list() == ["flat", "flat #3", "flat #4", "flat #5"]
    assert summary["sessions"].to_list() == [3] * 4
    with pytest.raises(
        ConfigError,
        match=r"engine.yaml: seats\[2\].name: 'A' is already the "
        r"name of seats\[0\]; give each seat its own name",
    ):
        generated(
            [
                {"strategy": "flat", "name": "A"},
                {"strategy": "chop"},
                {"strategy": "martingale", "name": "A"},
            ]
        )


def test_a_stop_loss_beyond_the_bankroll_never_stops_a_session() -> None:
    seats = [{"strategy": "martingale", "params": {"bet": "player", "base": 10}}]
    none = engine.run(generated(seats, sessions=40), workers=1)
    # (as large as the config takes: more than any bankroll could lose, in any ticks)
    huge = engine.run(generated(seats, sessions=40, stop_loss=4.6e16), workers=1)
    assert huge.sessions.equals(none.sessions)


@pytest.mark.parametrize(
    "params", [{"target": 10**400}, {"target": 2**53 + 1}], ids=["10**400", "2**53+1"]
)
def test_a_whole_number_parameter_beyond_2_53_is_refused(params: dict[str, Any]) -> None:
    with pytest.raises(
        ConfigError,
        match=r"seats\[0\]\.params\.target: expected a whole number "
        r"of at most 9,007,199,254,740,992 in size",
    ):
        generated([{"strategy": "paroli", "params": params}])
    with pytest.raises(
        ConfigError,
        match=r"seats\[0\]\.params\.base: expected a finite number, "
        r"got a number of 401 digits",
    ):
        generated([{"strategy": "paroli", "params": {"base": 10**400}}])


def test_one_session_has_no_interval_and_no_z() -> None:
    """A single session has no spread to measure: null, never a rounding leftover
    times n / (n - 1) = infinity."""
    seats = [
        {"strategy": "flat", "params": {"bets": {"banker": 10}}},
        {"strategy": "martingale", "params": {"bet": "player", "base": 10}},
    ]
    for sessions in (1, 2):  # seed 3: one session's residual is not exactly 0
        summary = engine.run(generated(seats, sessions=sessions, seed=3), workers=1).summary
        for column in ("edge_ci_low", "edge_ci_high", "z"):
            assert summary[column].null_count() == (2 if sessions == 1 else 0), column
        assert summary["edge"].null_count() == 0


def test_sessions_that_all_end_alike_have_no_interval_and_no_z(tmp_path: Path) -> None:
    """One recorded shoe played again: every session is the same, the spread is
    rounding, and z would be 10**16 (or infinity when the residuals are 0)."""
    path = tmp_path / "one.txt"
    path.write_text("BPPBTBBPPBPB\n", encoding="utf-8")
    seats = [
        {"strategy": "flat", "params": {"bets": {"banker": 10}}},
        {"strategy": "martingale", "params": {"bet": "player", "base": 10}},
    ]
    with pytest.warns(UserWarning):
        summary = engine.run(recorded(path, seats, sessions=5, loop=True), workers=1).summary
    for column in ("edge_ci_low", "edge_ci_high", "z"):
        assert summary[column].null_count() == 2, column
    assert summary["edge"].null_count() == 0


def test_the_interval_takes_student_s_t_for_few_sessions() -> None:
    """Two sessions: the 95% quantile of t with one degree of freedom, 12.71,
    not the normal 1.96 (whose interval held the exact edge about 70 per cent
    of the time)."""
    seats = [{"strategy": "flat", "params": {"bets": {"banker": 10}}}]
    row = engine.run(generated(seats, sessions=2, seed=3), workers=1).summary.row(0, named=True)
    half = (row["edge_ci_high"] - row["edge_ci_low"]) / 2
    se = abs(row["edge"] - row["expected_edge"]) / abs(row["z"])
    assert half / se == pytest.approx(12.706204736174698, rel=1e-9)


class _SaysFive(_Asks):
    name = "says-five"

    def possible_bets(self):  # type: ignore[no-untyped-def]
        return 5


class _SaysNames(_Asks):
    name = "says-names"

    def possible_bets(self):  # type: ignore[no-untyped-def]
        return {"banker"}


class _BadParamsClass(_Asks):
    name = "bad-params"
    Params = 5  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (
            _SaysFive,
            "user.yaml: seats[0] (says-five): possible_bets() must return a set of "
            "backtest.core.rules.Bet members, got 5",
        ),
        (
            _SaysNames,
            "user.yaml: seats[0] (says-names): possible_bets() must return a set of "
            "backtest.core.rules.Bet members, got {'banker'}",
        ),
    ],
    ids=["int", "names"],
)
def test_a_wrong_possible_bets_is_refused_before_any_hand(
    monkeypatch: pytest.MonkeyPatch, cls: type[Strategy], message: str
) -> None:
    with pytest.raises(StrategyError) as info:
        engine.run(_user_seat(monkeypatch, cls), workers=1)
    assert str(info.value) == message


def test_a_params_that_is_not_a_dataclass_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        ConfigError,
        match=r"seats\[0\]\.params: the strategy's Params must be a "
        r"dataclass",
    ):
        _user_seat(monkeypatch, _BadParamsClass)


def _banker_ten(p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
    out[1] = 10.0


def _player_25(p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
    out[0] = 25.0


class _UsersBuiltin(Builtin):
    """A user's class written as a built-in (four kernel functions), with no kind."""

    name = "users-builtin"
    description = "test strategy"
    k_reset = staticmethod(_stateless_reset)
    k_decide = staticmethod(_banker_ten)
    k_update = staticmethod(_stateless_update)

    def main_bets(self) -> set[Bet]:
        return {Bet.BANKER}


class _UsersKindZero(_UsersBuiltin):
    """The same, claiming flat's kind."""

    name = "users-kind-zero"
    kind = 0
    k_decide = staticmethod(_player_25)

    def main_bets(self) -> set[Bet]:
        return {Bet.PLAYER}


class _MyMartingale(registry.BUILTIN_NAMES["martingale"]):  # type: ignore[misc, valid-type]
    """A user's subclass of a built-in: runs its kernels, as the built-in does."""

    name = "my-martingale"


@pytest.mark.parametrize(
    "cls", [_UsersBuiltin, _UsersKindZero, _MyMartingale], ids=lambda c: c.name
)
def test_a_user_s_builtin_class_runs_its_own_kernels(
    monkeypatch: pytest.MonkeyPatch, cls: type[Strategy]
) -> None:
    """Not the compiled loop of whichever built-in its kind names."""
    monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    cfg = generated([{"strategy": cls.name}], sessions=20)
    ran = ledger_of(engine.run(cfg, ledger=True, workers=1))
    assert ran.equals(ledger_of(engine.run(cfg, ledger=True, workers=1, force_python=True)))
    if cls is _MyMartingale:
        builtin = generated([{"strategy": "martingale", "name": cls.name}], sessions=20)
        assert ran.equals(ledger_of(engine.run(builtin, ledger=True, workers=1)))
    else:
        staked = ran.filter(pl.col("net") != 0)
        side = "banker" if cls is _UsersBuiltin else "player"
        assert set(staked[f"stake_{side}"]) == {10.0 if side == "banker" else 25.0}


class _Scribbles(Strategy):
    """A counting strategy that writes to the counts it is shown."""

    name = "scribbles"
    description = "test strategy"
    uses_cards = True

    def stakes(self, view):  # type: ignore[no-untyped-def]
        view.counts[1:10] -= 1
        return {"banker": 10}


def test_the_counts_a_strategy_sees_are_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        StrategyError,
        match=r"seats\[0\] \(scribbles\): raised ValueError: "
        r"output array is read-only",
    ):
        engine.run(_user_seat(monkeypatch, _Scribbles), workers=1)


def _scribbling_decide(p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
    evs[1] = 1.0  # Banker "favourable" for every seat at the table
    return 1, 10.0


def test_the_evs_a_counting_built_in_sees_in_python_are_read_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The EVs before a hand are the table's, shared by its counting seats:
    a user's subclass of the counter that writes into them is stopped in
    Python, and in the compiled loop writes into a copy of its own, so what
    the other seats read (and what its own expected net is priced at) is
    unchanged."""
    from strategies.counting import ExactCounter

    cls = type(
        "Scribbler",
        (ExactCounter,),
        {"name": "scribbler", "k_decide": staticmethod(_scribbling_decide)},
    )
    with pytest.raises(
        StrategyError,
        match=r"seats\[0\] \(scribbler\): raised ValueError: "
        r"assignment destination is read-only",
    ):
        engine.run(_user_seat(monkeypatch, cls), workers=1, force_python=True)
    cfg = _user_seat(monkeypatch, cls)
    counter = {"strategy": "counter", "params": {"bets": ["banker"], "min_ev": -0.02}}
    both = parse_config(
        {**cfg.raw, "seats": [{"strategy": "scribbler"}, counter]}, source="user.yaml"
    )
    alone = parse_config({**cfg.raw, "seats": [counter]}, source="user.yaml")
    ran = engine.run(both, workers=1).sessions
    # (its own numbers: its covariance with the baseline is there only beside one)
    other = ran.filter(pl.col("seat") == "counter").drop("seat", "baseline_covariance")
    assert other.equals(engine.run(alone, workers=1).sessions.drop("seat", "baseline_covariance"))
    mine = ran.filter(pl.col("seat") == "scribbler")
    # every hand staked on Banker, priced at the Banker's true EV (about -1.06%), not 1.0
    assert (mine["bets"] == mine["hands"]).all()
    assert -0.02 < mine["expected_net"].sum() / mine["wagered"].sum() < 0


@dataclasses.dataclass(frozen=True)
class _RangeParams(CommonParams):
    lo: float = 1.0
    hi: float = 2.0
    on_max: str = "reset"  # a user's own field, typed loosely

    def validate(self, path: str) -> None:
        if self.lo > self.hi:
            raise ValueError("lo above hi")


class _Ranged(_Asks):
    name = "ranged"
    Params = _RangeParams


class _NoSuper(_Asks):
    name = "no-super"

    def __init__(self, params: Any = None) -> None:
        self.stake = 10.0


class _Exits(_Asks):
    name = "exits"

    def stakes(self, view):  # type: ignore[no-untyped-def]
        raise SystemExit(0)


class _OneArgument(_Asks):
    name = "one-argument"

    def stakes(self):  # type: ignore[no-untyped-def, override]
        return {"banker": 10}


@pytest.mark.parametrize(
    ("cls", "params", "message"),
    [
        (
            _Ranged,
            {"lo": 3},
            r"user.yaml: seats\[0\]\.params: making the strategy raised ValueError: "
            rf"lo above hi \({re.escape(__file__)}, line \d+, in validate\)$",
        ),
        (
            _Ranged,
            {"on_max": "bogus"},
            r"user.yaml: seats\[0\] \(ranged\): params.on_max must be "
            r"'reset' or 'cap', got 'bogus'$",
        ),
        (
            _NoSuper,
            {},
            r"user.yaml: seats\[0\] \(no-super\): _NoSuper has no params: its __init__ "
            r"must call super\(\).__init__\(params\)$",
        ),
        (
            _Exits,
            {},
            r"user.yaml: seats\[0\] \(exits\): raised SystemExit: 0 \(.*, in stakes\), "
            r"on hand 1 of shoe 1 in session 1$",
        ),
        (
            _OneArgument,
            {},
            r"user.yaml: seats\[0\] \(one-argument\): raised TypeError: "
            r"_OneArgument.stakes\(\) takes 1 positional argument but 2 were given "
            r"\(when the engine called it: check the methods' signatures, "
            r"stakes\(self, view\), .*\), on hand 1 of shoe 1 in session 1$",
        ),
    ],
    ids=["validate", "on_max", "no-super", "exit", "signature"],
)
def test_a_user_class_s_own_mistakes_are_one_line(
    monkeypatch: pytest.MonkeyPatch, cls: type[Strategy], params: dict[str, Any], message: str
) -> None:
    monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    with pytest.raises((ConfigError, StrategyError)) as info:
        engine.run(
            parse_config(
                {
                    "seed": 1,
                    "sessions": 2,
                    "shoe": {"decks": 8},
                    "seats": [{"strategy": cls.name, "params": params}],
                },
                source="user.yaml",
            ),
            workers=1,
        )
    assert re.match(message, str(info.value)), str(info.value)


def test_a_recorded_file_with_totals_is_told_only_what_it_lacks() -> None:
    """The live table's JSON records totals but not how many cards each side drew."""
    cfg = parse_config(
        {
            "seed": 1,
            "rules": "ez",
            "shoes": {"file": str(REPO_DATA / "live-table-shoe-state.json")},
            "seats": [{"strategy": "flat"}],
        },
        source="ez.yaml",
    )
    with pytest.raises(MissingDataError) as info:
        engine.run(cfg, workers=1)
    assert str(info.value).endswith(
        "needs the number of cards (two or three) of each side, "
        f"which {REPO_DATA / 'live-table-shoe-state.json'} does not "
        "record"
    )


class _ReadsEvs(_Asks):
    name = "reads-evs"
    seen: list[dict[Bet, float]] = []

    def stakes(self, view):  # type: ignore[no-untyped-def]
        type(self).seen.append(view.evs)
        return {}


@pytest.mark.parametrize("uses_cards", [False, True], ids=["full-shoe", "counting"])
def test_evs_of_a_bet_the_rules_do_not_offer_are_nan_either_way(
    monkeypatch: pytest.MonkeyPatch, uses_cards: bool
) -> None:
    monkeypatch.setattr(_ReadsEvs, "uses_cards", uses_cards)
    monkeypatch.setattr(_ReadsEvs, "seen", [])
    engine.run(_user_seat(monkeypatch, _ReadsEvs), workers=1)
    first = _ReadsEvs.seen[0]
    assert math.isnan(first[Bet.DRAGON_7]) and math.isnan(first[Bet.PANDA_8])
    assert first[Bet.BANKER] == pytest.approx(-0.010579, abs=1e-6)  # a full shoe


def test_default_workers_without_sched_getaffinity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the CPUs a process may use cannot be asked (macOS, Windows), all of them."""
    import os

    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert pool.default_workers() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert pool.default_workers() == 1


def test_too_many_sessions_asked_of_a_recorded_file_from_python(road_file: Path) -> None:
    """From Python the error says what was asked (no command-line option)."""
    flat = [{"strategy": "flat"}]
    with pytest.raises(plan.TooManySessions) as error:
        engine.run(recorded(road_file, flat), sessions=5)
    assert str(error.value).startswith(
        "the sessions asked for: 5 sessions of 1 shoe need more shoes than the 3 shoes of "
    )
    assert "--sessions" not in str(error.value)


def test_a_run_on_a_dask_cluster_gives_the_same_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """`run(..., executor="dask")`: the chunks of sessions on the workers of a
    real local cluster, which listens on the loopback address alone; the
    same sessions, summary and ledger as on one process."""
    distributed = pytest.importorskip("dask.distributed")
    started: list[Any] = []
    real = distributed.LocalCluster

    def local_cluster(*args: Any, **kwargs: Any) -> Any:
        cluster = real(*args, **kwargs)
        started.append(cluster)
        return cluster

    monkeypatch.setattr(distributed, "LocalCluster", local_cluster)
    cfg = generated([{"strategy": "martingale"}, {"strategy": "follow-the-shoe"}], sessions=40)
    here = engine.run(cfg, workers=1, ledger=True)
    there = engine.run(cfg, workers=2, ledger=True, executor="dask")
    assert there.sessions.equals(here.sessions)
    assert there.summary.equals(here.summary)
    assert ledger_of(there).equals(ledger_of(here))
    (cluster,) = started
    assert "127.0.0.1" in cluster.scheduler_address and "127.0.0.1" in cluster.dashboard_link
    assert str(cluster.status) in ("Status.closed", "closed")
    with pytest.raises(UsageError, match="--address goes with --executor dask"):
        engine.run(cfg, address="127.0.0.1:8786")


def test_the_bankroll_paths_are_kept_as_the_run_plays_them() -> None:
    """`run(paths=N)` runs the first N sessions first, with a ledger, and keeps
    their bankroll paths: the same as those played again afterwards, the
    same sessions and summary as a run without them, on one or two workers."""
    cfg = generated([{"strategy": "martingale"}, {"strategy": "follow-the-shoe"}], sessions=120)
    plain = engine.run(cfg, workers=1)
    for workers in (1, 2):
        kept = engine.run(cfg, workers=workers, paths=30)
        assert kept.sessions.equals(plain.sessions) and kept.summary.equals(plain.summary)
        assert kept.ledger is None and kept.paths is not None
        assert kept.paths["session"].max() == 30
        again = engine.bankroll_paths(plain, 30)  # played again: the run kept none
        assert kept.paths.equals(again)
        assert engine.bankroll_paths(kept, 10).equals(again.filter(pl.col("session") <= 10))


def test_a_counter_that_can_bet_only_pairs_where_pairs_need_a_main_bet_is_warned() -> None:
    from backtest.run.seats import NeverBetsWarning

    cfg = parse_config(
        {
            "rules": "no-commission",
            "sessions": 2,
            "shoe": {"decks": 8},
            "seats": [{"strategy": "counter", "params": {"bets": ["player_pair", "banker_pair"]}}],
        },
        source="pairs.yaml",
    )
    with pytest.warns(
        NeverBetsWarning,
        match=r"pairs.yaml: seats\[0\] \(counter\): may bet "
        r"only banker_pair and player_pair.*never bet",
    ):
        result = engine.run(cfg, workers=1)
    assert result.summary["bets"].to_list() == [0]
    # at a table that takes pair bets alone, no word
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", NeverBetsWarning)
        engine.run(parse_config({**cfg.raw, "rules": "commission"}, source="pairs.yaml"), workers=1)

"""The road-reading strategy: its compiled reading of the roads agrees with
`backtest.shoes.roads`, and it bets the side that gives the wanted colour."""

from __future__ import annotations

import numpy as np
import pytest

from backtest.run import engine
from backtest.run.config import parse_config
from backtest.shoes import roads
from strategies._common import road_marks
from strategies.patterns import PatternTable, Streak
from strategies.roadreader import ROADS, RoadReader
from strategies.slots import STATE_FLOATS, STATE_INTS


@pytest.mark.parametrize("offset", [1, 2, 3])
def test_road_marks_agree_with_the_roads_module(offset: int) -> None:
    rng = np.random.default_rng(offset)
    for _ in range(120):
        n = int(rng.integers(0, 50))
        w = rng.choice([0, 1, 2], size=n, p=[0.45, 0.45, 0.1]).astype(np.int8)
        signals = roads.derived_signals(w, offsets=(offset,))
        for i in range(n + 1):
            _, _, last, banker_mark = road_marks(w[:i], offset, np.zeros(8))
            marks = roads.derived_road(roads.big_road(w[:i]), offset)
            assert last == (0 if not marks else marks[-1].signal)
            if i < n:
                assert banker_mark == signals[i, 0]


def _decide(hist: str, road: str = "big-eye-boy", mode: str = "follow") -> dict[str, float]:
    strat = RoadReader({"base": 10, "road": road, "mode": mode})
    p, s, si = strat.encode(), np.zeros(520), np.zeros(8, np.int64)
    stakes = np.zeros(7)
    bet, stake = RoadReader.k_decide(
        p, s, si, np.zeros(8), np.array(roads.winners_from_text(hist), np.int8), np.zeros(7), stakes
    )
    assert not stakes.any()  # it returns its bet, and writes nothing
    stakes[bet] = stake
    return {name: float(stakes[i]) for i, name in enumerate(("player", "banker")) if stakes[i]}


def test_follow_and_chop_by_hand() -> None:
    # Big road of BBPPB: columns B2, P2, B1. The big eye boy has marked:
    # P at column 2 row 1 (lengths of columns... starts at column 2 row 2):
    # the 4th result (P, column 2 row 2): column 1 has row 2 -> red; the 5th
    # (B, column 3 row 1): columns 2 and 1 both 2 long -> red. Last mark red.
    # Next: B (column 3 row 2): column 2 has row 2 -> red; so follow = Banker.
    assert _decide("BBPPB") == {"banker": 10.0}
    assert _decide("BBPPB", mode="chop") == {"player": 10.0}
    # too early for the big eye boy: no mark yet, no bet
    assert _decide("BBP") == {}
    # the cockroach pig needs five columns
    assert _decide("BBPPB", road="cockroach-pig") == {}


def test_both_paths_agree_and_the_edge_is_the_house_edge() -> None:
    cfg = parse_config(
        {
            "seed": 9,
            "sessions": 300,
            "shoe": {"decks": 8},
            "session": {"bankroll": 1e6},
            "table": {"min": 1, "max": 1e6},
            "seats": [
                {"strategy": "road-reader", "params": {"road": road}}
                for road in ("big-eye-boy", "small-road", "cockroach-pig")
            ],
        }
    )
    fast = engine.run(cfg, ledger=True, workers=1)
    slow = engine.run(cfg, ledger=True, workers=1, force_python=True)
    assert fast.ledger is not None and fast.ledger.equals(slow.ledger)
    assert fast.sessions.equals(slow.sessions)
    assert (fast.summary["bets"] > 0.9 * fast.summary["hands"] * 0.5).all()
    assert (fast.summary["z"].abs() < 4).all()


def _bets_as_the_roads_module_says(
    strat: RoadReader,
    state: tuple[np.ndarray, np.ndarray],
    w: np.ndarray,
    i: int,
    signals: np.ndarray,
) -> bool:
    """Decide before hand `i` of the shoe `w` (the reader keeps its roads in
    `state` from call to call) and check the bet against `backtest.shoes.roads`:
    the side whose mark repeats (follow) or breaks (chop) the derived road's
    last colour, no bet before the road has a mark. `signals`: the road's
    `derived_signals` column. Whether it bet."""
    s, si = state
    offset = ROADS[strat.params.road]
    out = np.zeros(7)
    bet, stake = RoadReader.k_decide(strat.encode(), s, si, np.zeros(8), w[:i], np.zeros(7), out)
    assert not out.any()
    out[bet] = stake
    marks = roads.derived_road(roads.big_road(w[:i]), offset)
    last, banker = (marks[-1].signal if marks else 0), signals[i]
    if last == 0 or banker == 0:
        assert not out.any(), (i, w[:i])
        return False
    wanted = last if strat.params.mode == "follow" else -last
    side = 1 if banker == wanted else 0
    assert out[side] == 10.0 and not out[1 - side], (i, w[:i])
    return True


@pytest.mark.parametrize("road", list(ROADS))
@pytest.mark.parametrize("mode", ["follow", "chop"])
def test_a_shoe_read_hand_by_hand_bets_as_the_roads_module_says(road: str, mode: str) -> None:
    """The reader keeps its roads from hand to hand (it reads only the new
    hands); before every hand of random shoes it bets as `backtest.shoes.roads`
    draws the derived road."""
    strat = RoadReader({"base": 10, "road": road, "mode": mode})
    state = np.zeros(520), np.zeros(8, np.int64)
    rng = np.random.default_rng(ROADS[road])
    bets = 0
    for _ in range(40):  # shoes one after another: a shorter history starts the roads again
        w = rng.choice([0, 1, 2], size=int(rng.integers(1, 70)), p=[0.45, 0.45, 0.1]).astype(
            np.int8
        )
        signals = roads.derived_signals(w, offsets=(ROADS[road],))[:, 0]
        bets += sum(
            _bets_as_the_roads_module_says(strat, state, w, i, signals) for i in range(len(w))
        )
    assert bets > 500


def test_a_shoe_of_more_columns_than_any_dealt_shoe_is_read_to_its_end() -> None:
    """The reader keeps only the last columns' lengths (a derived road looks
    at most three columns back), so a recorded shoe of any length fits: here
    1,500 hands, mostly alternating, make over 1,000 big-road columns, more
    than the hands a 64-deck shoe can deal (832). Read a few hands at a time,
    it bets as `backtest.shoes.roads` says to the last hand."""
    rng = np.random.default_rng(5)
    w = np.arange(1500) % 2
    w[rng.random(1500) < 0.05] = 2  # ties
    doubled = rng.random(1500) < 0.1  # some columns of two
    w[1:][doubled[1:]] = w[:-1][doubled[1:]]
    w = w.astype(np.int8)
    assert len(roads.big_road(w).columns) > 1000
    signals = roads.derived_signals(w, offsets=(1, 2, 3))
    for road, offset in ROADS.items():
        strat = RoadReader({"base": 10, "road": road})
        state = np.zeros(520), np.zeros(8, np.int64)
        for i in [*range(0, 1500, 7), 1499]:
            _bets_as_the_roads_module_says(strat, state, w, i, signals[:, offset - 1])
        assert not state[0][8:].any()  # nothing written past the ring


@pytest.mark.parametrize("cls", [RoadReader, Streak, PatternTable], ids=lambda c: c.name)
def test_a_restart_at_the_table_maximum_keeps_the_reading_of_the_shoe(cls: type) -> None:
    """A shoe reader's stake is flat: the table maximum's restart (`k_reset`)
    has nothing to restart and leaves what was read of the shoe, which a
    session's start (`k_init`) clears. (Clearing it made every hand over the
    maximum read the whole shoe again.)"""
    p = cls().encode()
    s = np.arange(STATE_FLOATS, dtype=np.float64)
    si = np.arange(3, 3 + STATE_INTS, dtype=np.int64)
    kept = s.copy(), si.copy()
    cls.k_reset(p, s, si)
    assert np.array_equal(s, kept[0]) and np.array_equal(si, kept[1])
    cls.k_init(p, s, si, 7)
    assert si[0] == 0  # nothing of the shoe read

"""`backtest analyze`: fair shoes pass, planted patterns are found and named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import backtest_here

from backtest.core.cards import deck_cards, rank_of
from backtest.core.errors import UsageError
from backtest.present.analyze import analyze
from backtest.shoes.recorded import deal_cards, format_card_text, read_shoes
from backtest.shoes.shoe import ShoeSpec, generate_hands

DATA = Path(__file__).resolve().parents[2] / "data"


def planted_road(tmp_path: Path, shoes: int = 30, hands: int = 80, seed: int = 5) -> Path:
    """Shoes in which Player follows three Banker wins in a row 80% of the time
    (otherwise each hand is drawn at about the fair odds)."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(shoes):
        road: list[str] = []
        for _ in range(hands):
            last = [c for c in road if c != "T"][-3:]
            p = [0.8, 0.15, 0.05] if last == ["B", "B", "B"] else [0.446, 0.458, 0.096]
            road.append(str(rng.choice(list("PBT"), p=p)))
        lines.append("".join(road))
    path = tmp_path / "planted.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_on_fair_shoes_the_p_values_are_uniform() -> None:
    smallest, raw = [], []
    for i in range(500):
        record = generate_hands(ShoeSpec(decks=4), 1, seed=10_000 + i)
        result = analyze(record, decks=4, simulations=200, seed=7)
        smallest.append(result.smallest.adjusted_p)
        raw.append([t.p_value for t in result.tests])
    low, p = np.array(smallest), np.array(raw)
    # the family's smallest adjusted p: at most about 1% below 0.01, and neither
    # always large (a test that cannot fail) nor small
    assert (low < 0.01).mean() <= 0.015
    assert 0.01 <= (low < 0.1).mean() <= 0.16
    assert 0.4 <= (low < 0.5).mean() <= 0.6
    # each test's own p: uniform (discrete counts make it a little conservative)
    assert (p < 0.01).mean() <= 0.015
    assert 0.035 <= (p < 0.05).mean() <= 0.065
    assert 0.4 <= (p < 0.5).mean() <= 0.6


def test_a_planted_pattern_is_found_and_named(tmp_path: Path) -> None:
    hands = read_shoes(planted_road(tmp_path))
    result = analyze(hands, decks=8, simulations=300, seed=2)
    found = {t.name: t for t in result.deviations()}
    assert "after BBB" in found
    bbb = found["after BBB"]
    assert bbb.adjusted_p < 0.01 and bbb.detail.startswith("player 8")
    assert result.verdict().startswith("2,400 hands in 30 shoes: beyond chance: ")
    assert "after BBB: player" in result.verdict() or "after PBBB: player" in result.verdict()
    # patterns it did not plant are not called deviations
    for name in ("after P", "after PP", "after PPP", "after PBP", "after BPB"):
        assert name not in found


def test_fair_shoes_give_a_plain_verdict_and_the_same_numbers_for_a_seed() -> None:
    hands = read_shoes(DATA / "generated-8deck-seed1.txt")
    a = analyze(hands, decks=8, simulations=200, seed=4)
    b = analyze(hands, decks=8, simulations=200, seed=4)
    assert a == b
    assert a.verdict().startswith(
        "241 hands in 3 shoes: nothing beyond chance (smallest adjusted p = "
    )
    names = [t.name for t in a.tests]
    assert names[:5] == [
        "outcome frequencies",
        "pair frequencies",
        "runs (Player/Banker)",
        "streak lengths",
        "card composition",
    ]
    assert len([n for n in names if n.startswith("after ")]) == 2 + 4 + 8 + 16
    # the footnote says what the table shows: the patterns below 5%, or the smallest
    shown = [line for line in a.table().splitlines() if line.startswith("after ")]
    low = [t for t in a.tests if t.name.startswith("after ") and t.p_value < 0.05]
    note = next(line for line in a.table().splitlines() if "patterns tested" in line)
    if low:
        assert len(shown) == len(low)
        assert note == "(30 patterns tested; shown: those with p < 0.05, the others have p >= 0.05)"
    else:
        assert len(shown) == 1
        assert note == "(30 patterns tested, none with p < 0.05; shown: the one of smallest p)"


def test_a_shoe_missing_cards_fails_the_card_composition(tmp_path: Path) -> None:
    # shoes dealt from 8 decks from which every 8 and 9 was taken out
    rng = np.random.default_rng(3)
    pack = deck_cards(8)
    pack = pack[[rank_of(int(c)) not in (8, 9) for c in pack]]
    shoes = []
    for _ in range(4):
        order = rng.permutation(pack)
        columns, _ = deal_cards(order)
        shoes.append(columns)
    from backtest.core.hands import Hands

    n = [c["winner"].shape[0] for c in shoes]
    merged = {k: np.concatenate([c[k] for c in shoes]) for k in shoes[0]}
    hands = Hands.from_columns(
        sum(n),
        shoe=np.repeat(np.arange(4), n),
        hand=np.concatenate([np.arange(1, k + 1) for k in n]),
        **merged,
    )
    path = tmp_path / "no-eights.txt"
    path.write_text(format_card_text(hands), encoding="utf-8")
    result = analyze(read_shoes(path), decks=8, simulations=200, seed=1)
    first = result.deviations()[0]
    assert first.name == "card composition" and first.detail.startswith(
        ("most off: 8s", "most off: 9s")
    )
    assert " 0 dealt against " in first.detail


def test_analyze_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    live = str(DATA / "live-table-shoe-state.json")
    code, out, err = backtest_here(monkeypatch, capsys, "analyze", live, "--simulations", "200")
    assert code == 0, err
    assert "17 hands in 1 shoe: nothing beyond chance (smallest adjusted p = " in out
    assert "outcome frequencies" in out and "the record has no" not in out
    code, out, err = backtest_here(
        monkeypatch,
        capsys,
        "analyze",
        live,
        "--format",
        "json",
        "--simulations",
        "200",
        "--rules",
        "bulgarian",
    )
    data = json.loads(out)
    assert (data["hands"], data["shoes"]) == (17, 1)
    assert all(set(t) >= {"name", "statistic", "p_value"} for t in data["tests"])
    # bulgarian tables offer no pair bets: their frequencies are not among the tests
    assert "pair frequencies" not in {t["name"] for t in data["tests"]}
    code, out, err = backtest_here(monkeypatch, capsys, "analyze", live, "--simulations", "0")
    assert code == 2 and "--simulations must be from 1" in err
    code, out, err = backtest_here(monkeypatch, capsys, "analyze", live, "--rules", "nosuch")
    assert code == 2 and err.startswith("error: --rules: ")


def test_simulations_are_checked() -> None:
    hands = read_shoes(DATA / "roads-8deck-seed1.txt")
    with pytest.raises(UsageError, match="--simulations"):
        analyze(hands, simulations=0)

"""A recorded file's own shoe ids (a CSV's shoe column) name its shoes in
what `deal`, `roads` and `analyze` print; a file without ids is named by place."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import backtest_here

CARDS = (
    "shoe,card\n"
    + "".join(f"A1,{c}\n" for c in ("KS", "9H", "9C", "8D", "2S", "3S", "4S", "5S"))
    + "".join(f"A2,{c}\n" for c in ("7H", "7D", "QS", "JS"))
)


@pytest.fixture
def card_csv(tmp_path: Path) -> Path:
    path = tmp_path / "ids.csv"
    path.write_text(CARDS, encoding="utf-8")
    return path


def test_deal_names_each_shoe_by_its_id(
    card_csv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = backtest_here(monkeypatch, capsys, "deal", str(card_csv))
    assert code == 0, err
    assert [line for line in out.splitlines() if line.startswith("shoe ")] == [
        "shoe A1: 2 hands",
        "shoe A2: 1 hand",
    ]
    outcomes = tmp_path / "outcomes.csv"
    outcomes.write_text("shoe,hand,winner\nB7,1,banker\nB7,2,player\nB9,1,tie\n", encoding="utf-8")
    code, out, err = backtest_here(monkeypatch, capsys, "deal", str(outcomes))
    assert code == 0, err
    assert [line for line in out.splitlines() if line.startswith("shoe ")] == [
        "shoe B7: 2 hands",
        "shoe B9: 1 hand",
    ]
    text = tmp_path / "cards.txt"
    text.write_text("KS 9H 9C 8D\n7H 7D QS JS\n", encoding="utf-8")
    code, out, err = backtest_here(monkeypatch, capsys, "deal", str(text))
    assert code == 0, err
    assert [line for line in out.splitlines() if line.startswith("shoe ")] == [
        "shoe 1: 1 hand",
        "shoe 2: 1 hand",
    ]


def test_roads_selects_by_place_and_titles_with_the_id(
    card_csv: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = backtest_here(
        monkeypatch, capsys, "roads", str(card_csv), "--shoe", "2", "--no-color"
    )
    assert code == 0, err
    assert ", shoe A2 (2 of 2): 1 hands" in " ".join(out.split())


def test_analyze_names_the_shoe_most_off_by_its_id(
    card_csv: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = backtest_here(monkeypatch, capsys, "analyze", str(card_csv))
    assert code == 0, err
    assert "most off: 7s in shoe A2" in " ".join(out.split())


def shoe_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("shoe ")]


@pytest.mark.parametrize("streamed", [10**9, 0], ids=["whole", "cache"])
def test_deal_names_json_lines_shoes_by_their_ids(
    streamed: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from backtest.shoes.recorded import cache

    monkeypatch.setattr(cache, "BIG_BYTES", streamed)  # (0: read through the cache)
    monkeypatch.setenv("BACKTEST_SHOE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "rounds.jsonl"
    rounds = [("T7", "banker"), ("T7", "player"), ("T9", "tie")]
    path.write_text(
        "".join(f'{{"shoeId": "{s}", "winner": "{w}"}}\n' for s, w in rounds), encoding="utf-8"
    )
    code, out, err = backtest_here(monkeypatch, capsys, "deal", str(path))
    assert code == 0, err
    assert shoe_lines(out) == ["shoe T7: 2 hands", "shoe T9: 1 hand"]
    B, P, T = (
        f'{{"winner": "{w}", "playerScore": {p}, "bankerScore": {b}}}'
        for w, p, b in (("Banker", 5, 7), ("Player", 8, 2), ("Tie", 6, 6))
    )
    snapshots = tmp_path / "snapshots.jsonl"
    snapshots.write_text(
        "".join(
            f'{{"args": {{"shoeId": {s}, "history_v2": [{entries}]}}}}\n'
            for s, entries in [(31, f"{B}"), (31, f"{B}, {P}"), (32, f"{T}")]
        ),
        encoding="utf-8",
    )
    code, out, err = backtest_here(monkeypatch, capsys, "deal", str(snapshots))
    assert code == 0, err
    assert shoe_lines(out) == ["shoe 31: 2 hands", "shoe 32: 1 hand"]


def test_deal_names_a_big_outcome_csvs_shoes_by_their_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from backtest.shoes.recorded import cache

    monkeypatch.setattr(cache, "BIG_BYTES", 0)  # (read through the cache)
    monkeypatch.setenv("BACKTEST_SHOE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "outcomes.csv"
    path.write_text("shoe,hand,winner\nB7,1,banker\nB7,2,player\nB9,1,tie\n", encoding="utf-8")
    code, out, err = backtest_here(monkeypatch, capsys, "deal", str(path))
    assert code == 0, err
    assert shoe_lines(out) == ["shoe B7: 2 hands", "shoe B9: 1 hand"]

"""The table's record (read back by every command), a line of bets taken all
or none, and Ctrl-C at the prompt."""

from __future__ import annotations

import builtins
import io
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import backtest_here

from backtest.cli import table as table_cli
from backtest.core.cards import card_token
from backtest.play import PlaySession, open_table
from backtest.shoes.recorded import read_shoes

LINES = ["100", "banker 25", "done", "player 10; tie 5", "done", "", "done", "quit"]


def _session(tmp_path: Path) -> tuple[PlaySession, Path, str]:
    record = tmp_path / "table.txt"
    out = io.StringIO()
    session = PlaySession(open_table(seed=3), LINES, out, record=record)
    session.run()
    return session, record, out.getvalue()


def test_the_record_holds_the_hands_as_dealt_and_the_bets_beside(tmp_path: Path) -> None:
    session, record, out = _session(tmp_path)
    text = record.read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert "decks=8" in comments[0] and "seed=3" in comments[0]
    assert "hand 1:" in comments[1] and "Banker 25" in comments[1] and "net " in comments[1]
    assert "Player 10, Tie 5" in comments[2]
    assert "no bets" in comments[3]
    hands = read_shoes(record)
    assert len(hands) == 3 == session.summary().hands
    # the cards as the table dealt them, hand after hand
    for i, line in enumerate(comments[1:]):
        cards = line.split(": ")[1].split()
        dealt = [card_token(int(c)) for c in hands.cards[i] if c]
        assert sorted(cards) == sorted(dealt)
    assert "Player wins" in out or "Banker wins" in out


def test_every_command_reads_the_record_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, record, _ = _session(tmp_path)
    hands = read_shoes(record)
    code, out, err = backtest_here(monkeypatch, capsys, "deal", str(record))
    assert code == 0, err
    assert "3 hands in 1 shoe" in out
    code, out, err = backtest_here(monkeypatch, capsys, "roads", str(record), "--no-color")
    assert code == 0 and "3 hands" in out, err
    code, out, err = backtest_here(
        monkeypatch, capsys, "analyze", str(record), "--simulations", "20"
    )
    assert code == 0 and "3 hands in 1 shoe" in out, err
    code, out, err = backtest_here(monkeypatch, capsys, "run", "verdict", "--shoes", str(record))
    assert code == 0 and "3 hands" in out, err
    # the table deals the recorded shoe again: the same hands, in order
    again = io.StringIO()
    settings = open_table(shoe=record)
    PlaySession(settings, ["done"] * 3 + ["quit"], again).run()
    replayed = again.getvalue()
    assert "Recorded shoe 1 of 1: 13 cards" in replayed
    wins = [line.strip() for line in replayed.splitlines() if " wins, " in line or "Tie, " in line]
    assert len(wins) == 3
    assert np.array_equal(read_shoes(record).winner, hands.winner)


def test_record_at_the_table_writes_the_hands_so_far(tmp_path: Path) -> None:
    later = tmp_path / "later.txt"
    out = io.StringIO()
    lines = ["100", "banker 25", "done", f"record {later}", "banker 25", "done", "quit"]
    PlaySession(open_table(seed=3), lines, out).run()
    assert "Recording to" in out.getvalue()
    assert len(read_shoes(later)) == 2


def test_record_to_a_folder_is_refused_at_once(tmp_path: Path) -> None:
    from backtest.core.errors import UsageError

    with pytest.raises(UsageError, match="directory"):
        PlaySession(open_table(seed=3), [], io.StringIO(), record=tmp_path)


def test_a_line_of_bets_is_taken_all_or_none() -> None:
    out = io.StringIO()
    lines = ["100", "banker 700 box 1; banker 700 box 2", "bets", "quit"]
    session = PlaySession(open_table(seed=3, bankroll="1240.55"), lines, out, echo=True)
    session.run()
    text = out.getvalue()
    assert "'banker 700 box 2' (command 2 of 2 on the line)" in text
    assert "more than your bankroll of 1240.55" in text
    assert "none of the line's commands was taken" in text
    assert "Box 1: Banker 700" not in text  # the first was not placed, nor said
    assert "No bets on the table." in text.split("box 1> bets")[1]
    assert session.bankroll == Fraction("1240.55")


def test_a_line_of_bets_that_the_table_takes_is_placed_whole() -> None:
    out = io.StringIO()
    lines = ["100", "banker 600 box 1; banker 600 box 2", "bets", "quit"]
    PlaySession(open_table(seed=3, bankroll="1240.55"), lines, out, echo=True).run()
    assert "box 1: Banker 600; box 2: Banker 600 (total 1200)" in out.getvalue()


def test_ctrl_c_at_the_prompt_drops_the_line_and_asks_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answers: list[object] = [KeyboardInterrupt(), "quit", EOFError()]

    def typed(prompt: str) -> str:
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return str(answer)

    monkeypatch.setattr(builtins, "input", typed)
    assert table_cli._read_line("box 1> ") == "quit"
    assert "^C" in capsys.readouterr().out
    assert table_cli._read_line("box 1> ") is None  # Ctrl-D: the end, with the summary

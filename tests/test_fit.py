"""Every command's output fits the terminal's width (`COLUMNS`), counted in
display columns; help reads whole, no word cut by an ellipsis.

Machine formats (CSV, JSON, and the card-level text `shoe generate` writes,
a shoe a line) are exempt: programs read them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from cli_helpers import backtest_here

from backtest.core import tables
from backtest.play import PlaySession, open_table

DATA = Path(__file__).resolve().parents[1] / "data"
WIDTHS = (40, 60, 80, 120)

#: each command with the input that makes its widest output
WIDEST = {
    "deal": ["deal", str(DATA / "generated-8deck-seed1.txt")],
    "deal-outcomes": ["deal", str(DATA / "outcomes-8deck-seed1-shoe1.csv")],
    "analyze-live": ["analyze", str(DATA / "live-table-shoe-state.json"), "--simulations", "20"],
    "analyze-cards": ["analyze", str(DATA / "generated-8deck-seed1.txt"), "--simulations", "20"],
    "roads": ["roads", str(DATA / "generated-8deck-seed1.txt"), "--no-color"],
    "odds": ["odds", "--rules", "ez"],
    "strategies": ["strategies"],
    "configs": ["configs"],
    "run": ["run", "verdict", "--sessions", "3", "-q"],
}

COMMANDS = [
    [],
    ["deal"],
    ["odds"],
    ["run"],
    ["sweep"],
    ["strategies"],
    ["configs"],
    ["roads"],
    ["analyze"],
    ["play"],
    ["report"],
    ["shoe"],
    ["shoe", "generate"],
]


def _widest(text: str) -> str:
    return max(text.splitlines(), key=tables.cell_len, default="")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(WIDEST))
def test_each_command_fits_the_terminal(
    name: str, width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, err = backtest_here(monkeypatch, capsys, *WIDEST[name])
    assert code == 0, err
    assert out.strip()
    line = _widest(out)
    assert tables.cell_len(line) <= width, line


WIDE_NAMES = """\
name: wide names
seed: 1
sessions: 3
rules: commission
session: {bankroll: 1000}
table: {min: 10, max: 1000}
seats:
  - strategy: flat
    name: "LONG"
    params: {bets: {banker: 10}}
  - strategy: flat
    name: "WIDE"
    params: {bets: {player: 10}}
""".replace("LONG", ("A very long seat name " * 4).strip()).replace(
    "WIDE", "東京の長い名前の席" * 4
)

SWEEP = """\
name: fit
seed: 2
sessions: 3
run:
  rules: commission
  session: {bankroll: 1000}
  table: {min: 10, max: 1000}
  seats:
    - strategy: martingale
      name: Martingale on Banker
      params: {bet: banker, base: 10}
grid:
  table.max: [500, 1000]
"""


@pytest.fixture(scope="module")
def wide_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("fit")
    (tmp / "wide.yaml").write_text(WIDE_NAMES, encoding="utf-8")
    (tmp / "sweep.yaml").write_text(SWEEP, encoding="utf-8")
    return tmp


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_runs_and_sweeps_of_wide_names_fit(
    width: int,
    wide_files: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An 87-character seat name and one of 36 wide characters (72 columns)."""
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, err = backtest_here(monkeypatch, capsys, "run", str(wide_files / "wide.yaml"), "-q")
    assert code == 0, err
    assert tables.cell_len(_widest(out)) <= width, _widest(out)
    assert "東京の長い名前の席" in out.replace("\n", "")
    sweep = ["sweep", str(wide_files / "sweep.yaml"), "--out", str(wide_files / "out"), "-q"]
    code, out, err = backtest_here(monkeypatch, capsys, *sweep, "--workers", "1")
    assert code == 0, err
    assert tables.cell_len(_widest(out)) <= width, _widest(out)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "backtest")
def test_help_fits_and_cuts_no_word(
    command: list[str],
    width: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = backtest_here(monkeypatch, capsys, *command, "--help")
    assert code == 0
    assert "…" not in out and "..." not in out.replace("[ARGS]...", "").replace("]...", "")
    line = _widest(out)
    assert tables.cell_len(line) <= width, line
    if command == ["run"]:  # every option there, its help whole
        flat = " ".join(out.split())
        assert "winner=Result,shoe=Shoe." in flat and "--quiet" in flat


@pytest.mark.parametrize("width", WIDTHS)
def test_the_table_fits(width: int) -> None:
    out = io.StringIO()
    lines = ["100", "help", "banker 25", "done", "odds", "count", "road", "rules", "quit"]
    PlaySession(open_table(seed=3), lines, out, echo=True, width=width).run()
    line = _widest(out.getvalue())
    assert tables.cell_len(line) <= width, line


@pytest.mark.parametrize("width", WIDTHS)
def test_wide_names_wrap_counting_display_width(width: int) -> None:
    names = ["A" * 80, "名前" * 30, "Flat"]
    rows = [(name, "1,000", "-12.00", "-1.06%") for name in names]
    text = tables.render(("seat", "sessions", "net", "edge"), rows, width=width)
    assert tables.cell_len(_widest(text)) <= width
    # every character of every name is shown, wrapped
    flat = "".join(line.split()[0] for line in text.splitlines() if line.strip())
    for name in names:
        assert name in flat or name[:20] in flat
    # a wide character counts two columns: 60 of them would not fit 80 unwrapped
    para = tables.paragraphs(["名前" * 30 + " end"], width)
    assert all(tables.cell_len(line) <= width for line in para.splitlines())
    assert "".join(para.split()) == "名前" * 30 + "end"

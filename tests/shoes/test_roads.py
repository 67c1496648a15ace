"""Roads: bead plate, big road, the derived roads, their predictive marks, and
the `roads` command.

The expected roads are worked out by hand in the tests (the comments show the
working), not taken from the code under test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_helpers import Run, backtest_processes
from hypothesis import given, settings
from hypothesis import strategies as st

from backtest.core.errors import UsageError
from backtest.core.hands import Hands
from backtest.core.rules import Winner
from backtest.shoes.recorded import read_shoes
from backtest.shoes.road_text import render, render_shoe
from backtest.shoes.roads import (
    Colour,
    bead_plate,
    big_road,
    derived_grid,
    derived_road,
    derived_signals,
    draw,
    next_colour,
    winners_from_text,
)

DATA = Path(__file__).resolve().parents[2] / "data"
LIVE = DATA / "live-table-shoe-state.json"
GENERATED = DATA / "generated-8deck-seed1.txt"
#: the winners of GENERATED's shoes, as road strings (read without dealing any cards)
ROADS = DATA / "roads-8deck-seed1.txt"
ESC = "\x1b["


def letters(grid: list[list]) -> list[str]:
    """A grid as one string per row, '.' for an empty cell."""
    return [
        "".join(
            str(cell.letter if hasattr(cell, "letter") else cell) if cell is not None else "."
            for cell in row
        )
        for row in grid
    ]


def road(text: str):
    return big_road(winners_from_text(text))


def marks(text: str, offset: int) -> str:
    return "".join(derived_road(road(text), offset))


# --- bead plate -------------------------------------------------------------------------


def test_bead_plate_fills_down_each_column_then_the_next():
    winners = winners_from_text("BPTBBPPBT")
    grid = bead_plate(
        winners, player_pairs=[0, 0, 1, 0, 0, 0, 0, 0, 0], banker_pairs=[1, 0, 0, 0, 0, 0, 0, 1, 0]
    )
    # nine hands: six down the first column, three down the second
    assert letters(grid) == ["BP", "PB", "TT", "B.", "B.", "P."]
    for row in range(6):
        for col in range(2):
            cell = grid[row][col]
            if cell is not None:
                assert cell.hand == col * 6 + row
    # ties have their own bead, and keep their pair marks
    assert grid[2][0].letter == "T" and grid[2][0].player_pair
    assert grid[0][0].banker_pair and grid[1][1].banker_pair
    assert not grid[1][0].player_pair and not grid[1][0].banker_pair


def test_bead_plate_of_no_hands_is_six_empty_rows():
    assert bead_plate([]) == [[] for _ in range(6)]


# --- big road: ties, runs, pairs -----------------------------------------------------------


def test_ties_at_the_start_in_a_row_and_after_a_run():
    # T T B T T P P T B
    # hands 0-1: ties before any win: a leading count of 2 on the first cell
    # hand 2: B, then hands 3-4: two ties counted on it
    # hands 5-6: P P (a new column), hand 7: a tie on the second P
    # hand 8: B, a third column
    r = road("TTBTTPPTB")
    assert r.leading_ties == 2
    assert r.lengths == [1, 2, 1]
    (first,) = r.columns[0]
    assert (first.hand, first.winner, first.leading_ties, first.ties) == (2, 1, 2, 2)
    assert first.marked_ties == 4
    assert [(e.hand, e.ties) for e in r.columns[1]] == [(5, 0), (6, 1)]
    assert [(e.hand, e.ties) for e in r.columns[2]] == [(8, 0)]
    assert all(e.leading_ties == 0 for col in r.columns[1:] for e in col)
    assert letters(r.grid) == ["BPB", ".P.", "...", "...", "...", "..."]


def test_a_shoe_of_ties_only_keeps_them_as_leading_ties():
    r = road("TTT")
    assert r.columns == () and r.leading_ties == 3 and r.entries == 0
    assert r.grid == [[] for _ in range(6)]


def test_pairs_mark_the_cell_of_their_own_hand():
    # B (banker pair), T (player pair), P (both pairs), P
    r = big_road(winners_from_text("BTPP"), player_pairs=[0, 1, 1, 0], banker_pairs=[1, 0, 1, 0])
    (b,) = r.columns[0]
    p1, p2 = r.columns[1]
    assert (b.banker_pair, b.player_pair, b.ties) == (True, False, 1)  # the tie's pair is not drawn
    assert (p1.banker_pair, p1.player_pair) == (True, True)
    assert (p2.banker_pair, p2.player_pair) == (False, False)


def test_a_new_column_on_each_change_of_side():
    r = road("BPBBPPPB")
    assert [col[0].letter for col in r.columns] == ["B", "P", "B", "P", "B"]
    assert r.lengths == [1, 1, 2, 3, 1]
    assert letters(r.grid) == ["BPBPB", "..BP.", "...P.", ".....", ".....", "....."]


# --- big road: drawing, dragon tails ---------------------------------------------------------


def test_a_streak_longer_than_six_turns_right():
    # eight Bankers: rows 1-6 of the first column, then right along the
    # bottom row; the two Players start in the second column, above the tail
    r = road("BBBBBBBBPP")
    assert r.lengths == [8, 2]  # the logical column keeps its length
    assert letters(r.grid) == ["BP.", "BP.", "B..", "B..", "B..", "BBB"]
    assert [e.hand for e in r.columns[0]] == list(range(8))
    assert r.grid[5][2].hand == 7


def test_a_tail_blocked_by_the_previous_tail_turns_earlier():
    # B x7: column 1 full, the 7th on row 6 of column 2
    # P x7: column 2 rows 1-5 (row 6 is taken), then right along row 5
    # B x5: column 3 rows 1-4 (row 5 is taken by the P tail), then row 4 of column 4
    # P x1: column 4 row 1
    r = road("B" * 7 + "P" * 7 + "B" * 5 + "P")
    assert r.lengths == [7, 7, 5, 1]
    assert letters(r.grid) == ["BPBP", "BPB.", "BPB.", "BPBB", "BPPP", "BB.."]


def test_a_tail_along_the_top_row_pushes_the_next_column_right():
    # a staircase: each run turns one row higher than the one before
    # B7 P6 B5 P4 B3: tails on rows 6, 5, 4, 3, 2
    # P2: column 6 row 1, row 2 is taken by the B3 tail: right along row 1 into column 7
    # B1: column 7 row 1 is taken, so it starts at column 8
    r = road("B" * 7 + "P" * 6 + "B" * 5 + "P" * 4 + "B" * 3 + "P" * 2 + "B")
    assert letters(r.grid) == [
        "BPBPBPPB",
        "BPBPBB..",
        "BPBPP...",
        "BPBB....",
        "BPP.....",
        "BB......",
    ]


def test_draw_places_every_entry_once():
    lengths = [9, 1, 8, 3, 12, 1, 1, 7]
    placed = draw(lengths)
    cells = [cell for run in placed for cell in run]
    assert [len(run) for run in placed] == lengths
    assert len(set(cells)) == len(cells)
    assert all(0 <= row < 6 for row, _ in cells)


# --- derived roads -------------------------------------------------------------------------

# 20 wins (ties are skipped by every derived road) in ten big-road columns:
#   column   1   2   3    4   5   6     7   8   9   10
#   side     B   P   B    P   B   P     B   P   B   P
#   length   2   1   3    2   1   4     2   1   1   3
SEQUENCE = "BBT P BBB PP B PPTPP BB P B PPP"


def test_the_hand_worked_sequence_has_the_columns_above():
    assert road(SEQUENCE).lengths == [2, 1, 3, 2, 1, 4, 2, 1, 1, 3]


def test_big_eye_boy_by_hand():
    # offset 1. Row 1 of column c: lengths of c-1 and c-2 equal? red : blue.
    # Row k>1 of column c: column c-1 has row k: red; is exactly k-1 long: blue;
    # shorter: red. Column 2 has one entry, so the road starts at column 3 row 1.
    expected = (
        "BBR"  # col 3: r1 len2=1 vs len1=2 B; r2 col2 len 1 = k-1 B; r3 len 1 < 2 R
        "BR"  # col 4: r1 len3=3 vs len2=1 B; r2 col3 len 3 has row 2 R
        "B"  # col 5: r1 len4=2 vs len3=3 B
        "BBRR"  # col 6: r1 len5=1 vs len4=2 B; r2 col5 len 1 = k-1 B; r3, r4 shorter R R
        "BR"  # col 7: r1 len6=4 vs len5=1 B; r2 col6 len 4 has row 2 R
        "B"  # col 8: r1 len7=2 vs len6=4 B
        "B"  # col 9: r1 len8=1 vs len7=2 B
        "RBR"  # col 10: r1 len9=1 vs len8=1 R; r2 col9 len 1 = k-1 B; r3 shorter R
    )
    assert marks(SEQUENCE, 1) == expected


def test_small_road_by_hand():
    # offset 2: row 1 compares columns c-1 and c-3; row k>1 looks at column c-2.
    # Column 3 has a second row, so the road starts at column 3 row 2.
    expected = (
        "RB"  # col 3: r2 col1 len 2 has row 2 R; r3 col1 len 2 = k-1 B
        "BB"  # col 4: r1 len3=3 vs len1=2 B; r2 col2 len 1 = k-1 B
        "B"  # col 5: r1 len4=2 vs len2=1 B
        "BRBR"  # col 6: r1 len5=1 vs len3=3 B; r2 col4 len 2 R; r3 len 2 = k-1 B; r4 shorter R
        "BB"  # col 7: r1 len6=4 vs len4=2 B; r2 col5 len 1 = k-1 B
        "B"  # col 8: r1 len7=2 vs len5=1 B
        "B"  # col 9: r1 len8=1 vs len6=4 B
        "BBR"  # col 10: r1 len9=1 vs len7=2 B; r2 col8 len 1 = k-1 B; r3 shorter R
    )
    assert marks(SEQUENCE, 2) == expected


def test_cockroach_pig_by_hand():
    # offset 3: row 1 compares columns c-1 and c-4; row k>1 looks at column c-3.
    # Column 4 has a second row, so the road starts at column 4 row 2.
    expected = (
        "R"  # col 4: r2 col1 len 2 has row 2 R
        "R"  # col 5: r1 len4=2 vs len1=2 R
        "RRRB"  # col 6: r1 len5=1 vs len2=1 R; r2, r3 col3 len 3 R R; r4 len 3 = k-1 B
        "BR"  # col 7: r1 len6=4 vs len3=3 B; r2 col4 len 2 R
        "R"  # col 8: r1 len7=2 vs len4=2 R
        "R"  # col 9: r1 len8=1 vs len5=1 R
        "BRB"  # col 10: r1 len9=1 vs len6=4 B; r2 col7 len 2 R; r3 len 2 = k-1 B
    )
    assert marks(SEQUENCE, 3) == expected


def test_derived_road_starting_points():
    # big eye boy, first mark at column 2 row 2: col 1 is 1 long = k-1: blue
    assert marks("B", 1) == "" and marks("BP", 1) == "" and marks("BPP", 1) == "B"
    # ... or, when column 2 has one entry, at column 3 row 1: len2=1 vs len1=1: red
    assert marks("BPB", 1) == "R"
    # small road: column 3 row 2 (col 1 is 1 long = k-1: blue) or column 4 row 1
    assert marks("BPBB", 2) == "B" and marks("BPB", 2) == ""
    assert marks("BPBP", 2) == "R"  # len3=1 vs len1=1
    # cockroach pig: column 4 row 2 or column 5 row 1
    assert marks("BPBPP", 3) == "B" and marks("BPBP", 3) == ""
    assert marks("BPBPB", 3) == "R"


def test_derived_roads_read_logical_columns_not_the_drawn_grid():
    # B x7 then P x7 then B: both long columns are 7 long, though drawn 6 and 5 high.
    # Column 2 rows 2-7: column 1 has each row: red x6; column 3 row 1: 7 = 7: red.
    assert marks("B" * 7 + "P" * 7 + "B", 1) == "R" * 7


def test_derived_grid_draws_runs_of_colour():
    # the big eye boy marks above: BB R B R BBB RR B R BB R B R
    grid = derived_grid([Colour(c) for c in "BBRBRBBBRRBRBBRBR"])
    assert letters(grid) == [
        "BRBRBRBRBRBR",
        "B...BR..B...",
        "....B.......",
        "............",
        "............",
        "............",
    ]


# --- predictive marks ------------------------------------------------------------------------


def _check_predictions(winners: list[int]) -> None:
    signals = derived_signals(winners)
    for i in range(len(winners) + 1):
        prefix = big_road(winners[:i])
        for j, offset in enumerate((1, 2, 3)):
            before = derived_road(prefix, offset)
            predicted = {
                side: next_colour(prefix.columns, offset, side)
                for side in (Winner.BANKER, Winner.PLAYER)
            }
            for side, code in ((Winner.BANKER, 1), (Winner.PLAYER, 0)):
                after = derived_road(big_road(winners[:i] + [code]), offset)
                added = after[-1] if len(after) > len(before) else None
                assert predicted[side] == added, (winners[:i], offset, side)
            if predicted[Winner.BANKER] is not None:
                assert predicted[Winner.PLAYER] is not predicted[Winner.BANKER]
            if i < len(winners):
                expected = predicted[Winner.BANKER]
                assert signals[i, j] == (expected.signal if expected else 0)


def test_next_colour_is_what_the_next_result_adds_on_the_hand_worked_sequence():
    _check_predictions(winners_from_text(SEQUENCE))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2]), max_size=40))
def test_next_colour_is_what_the_next_result_adds(winners):
    _check_predictions(winners)


def test_next_colour_on_generated_shoes():
    hands = read_shoes(ROADS)
    for shoe in range(hands.n_shoes):
        _check_predictions([int(w) for w in hands.shoe_slice(shoe).winner])


def test_next_colour_before_a_road_starts_and_bad_sides():
    assert next_colour((), 1, "B") is None
    assert next_colour(road("BB").columns, 1, "P") is None  # column 2 row 1: no column 0
    assert next_colour(road("BB").columns, 1, 1) is None  # column 1 row 3: no column 0
    assert next_colour(road("BP").columns, 1, "P") is Colour.BLUE  # col 2 row 2; col 1 is 1 long
    with pytest.raises(ValueError, match="tie"):
        next_colour(road("BP").columns, 1, Winner.TIE)
    with pytest.raises(ValueError, match="offset"):
        derived_road(road("BP"), 0)


def test_derived_signals_shape_and_ties():
    signals = derived_signals(winners_from_text("BPTB"))
    assert signals.shape == (4, 3) and signals.dtype == np.int8
    # before hand 2 (after B P): big eye boy would write col 2 row 2 for a P, so
    # for a B (col 3 row 1): len2=1 vs len1=1 red; the tie changes nothing
    assert signals[:, 0].tolist() == [0, 0, 1, 1]
    assert signals[:, 1:].tolist() == [[0, 0]] * 4


# --- text ------------------------------------------------------------------------------------


def _hands(
    text: str, player_pairs: list[int] | None = None, banker_pairs: list[int] | None = None
) -> Hands:
    winners = winners_from_text(text)
    n = len(winners)
    return Hands.from_columns(
        n,
        known=frozenset({"player_pair", "banker_pair"}),
        source="test",
        shoe=[0] * n,
        hand=list(range(1, n + 1)),
        winner=winners,
        player_pair=player_pairs or [0] * n,
        banker_pair=banker_pairs or [0] * n,
    )


def test_render_marks_ties_and_pairs():
    text = render(_hands("TTBTP", banker_pairs=[0, 0, 1, 0, 0]), title="t")
    lines = text.splitlines()
    assert lines[0] == "t: 5 hands (Player 1, Banker 1, Tie 3)"
    big = lines.index("Big road (2 columns):")
    # two leading ties and one after: three ties on the first cell, with its banker pair
    assert lines[big + 1].split() == ["Bb3", "P"]
    assert "Big eye boy: 0 red, 0 blue: not started" in lines
    assert ESC not in text
    coloured = render(_hands("TTBTP"), colour=True)
    assert "\x1b[31mB" in coloured and "\x1b[34mP" in coloured and "\x1b[32mT" in coloured


def test_render_keeps_the_last_columns():
    text = render(_hands("BP" * 20), width=5)
    assert "Bead plate (7 columns, the first 2 not shown):" in text
    assert "Big road (40 columns, the first 35 not shown):" in text
    big = text.splitlines().index("Big road (40 columns, the first 35 not shown):")
    assert text.splitlines()[big + 1].split() == ["P", "B", "P", "B", "P"]


def test_render_shoe_checks_the_shoe_number_and_width():
    hands = read_shoes(ROADS)
    assert "shoe 3 of 3" in render_shoe(hands, 3, source="f")
    for bad in (0, 4):
        with pytest.raises(UsageError, match=f"--shoe {bad}: f has shoes 1 to 3"):
            render_shoe(hands, bad, source="f")
    with pytest.raises(UsageError, match="--width"):
        render_shoe(hands, 1, width=0)


# --- the command -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli() -> dict[str, Run]:
    commands = {
        "generated": ["roads", str(GENERATED), "--no-color"],
        "live": ["roads", str(LIVE), "--no-color"],
        # the generated shoes as road strings: quicker to read than cards, which are dealt
        "colour": ["roads", str(ROADS), "--color", "--shoe", "2", "--width", "6"],
        "piped": ["roads", str(ROADS), "--shoe", "2", "--width", "6"],
        "bad-shoe": ["roads", str(ROADS), "--shoe", "4"],
    }
    return backtest_processes(commands, at_once=len(commands))


LABELS = ("Bead plate", "Big road", "Big eye boy", "Small road", "Cockroach pig")


@pytest.mark.slow
def _header(out: str) -> str:
    """The roads' header, its lines (wrapped to the terminal) joined."""
    return " ".join(out.split("\n\n", 1)[0].split())


def test_cli_draws_a_generated_shoe(cli):
    run = cli["generated"]
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    # the road strings hold the same shoes' winners
    w = read_shoes(ROADS).shoe_slice(0).winner
    assert _header(run.stdout) == (
        f"{GENERATED}, shoe 1 of 3: {len(w)} hands (Player {(w == 0).sum()}, "
        f"Banker {(w == 1).sum()}, Tie {(w == 2).sum()})"
    )
    for label in LABELS:
        assert any(line.startswith(label) for line in lines), label
    assert f"Big road ({len(big_road(w).grid[0])} columns" in run.stdout
    assert "b banker pair, p player pair" in run.stdout
    assert ESC not in run.stdout


@pytest.mark.slow
def test_cli_draws_an_outcome_level_shoe(cli):
    run = cli["live"]
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert _header(run.stdout) == f"{LIVE}, shoe 1 of 1: 17 hands (Player 8, Banker 9, Tie 0)"
    # the record's two Banker pairs are marked on the bead plate
    bead = lines.index("Bead plate (3 columns):")
    assert sum(row.split().count("Bb") for row in lines[bead + 1 : bead + 7]) == 2


@pytest.mark.slow
def test_cli_shoe_and_width(cli):
    run = cli["piped"]
    assert run.returncode == 0, run.stderr
    assert run.stdout == render_shoe(read_shoes(ROADS), 2, source=str(ROADS), width=6)
    assert "shoe 2 of 3" in run.stdout and "not shown" in run.stdout
    lines = run.stdout.splitlines()
    big = next(i for i, line in enumerate(lines) if line.startswith("Big road"))
    assert all(len(line.split()) <= 6 for line in lines[big + 1 : big + 7])


@pytest.mark.slow
def test_cli_bad_shoe_number(cli):
    run = cli["bad-shoe"]
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == f"error: --shoe 4: {ROADS} has shoes 1 to 3\n"


@pytest.mark.slow
def test_cli_colour_only_when_asked(cli):
    run = cli["colour"]
    assert run.returncode == 0, run.stderr
    assert "\x1b[31m" in run.stdout and "\x1b[34m" in run.stdout
    assert run.stdout == render_shoe(read_shoes(ROADS), 2, source=str(ROADS), width=6, colour=True)
    # not a terminal, no option: plain text (and --no-color, above)
    assert ESC not in cli["piped"].stdout

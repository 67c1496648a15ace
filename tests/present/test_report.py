"""`backtest report`: one self-contained HTML file and PNG plots from a run's or a sweep's output.

What is checked: the numbers behind the plots (bankroll bands with ended sessions
held at their final bankroll, the measured edge converging and its band); a
report of a small run and of small sweeps with one, two and three varied keys
(every plot embedded as a PNG data URI that decodes to a PNG, the same plots
written as PNG files, the plots' titles, each seat's numbers in the verdict and
the table, nothing loaded from outside the file); the one-line message without
matplotlib; and bad directories, each a one-line error with its exit code and
nothing written. The command line is tested through its entry point `main`,
and as real `python -m backtest` processes (started at once) where the process
itself matters: the exit code, and matplotlib missing from it.
"""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import yaml
from cli_helpers import backtest_here

from backtest.core.errors import BacktestError, UsageError
from backtest.present import outputs
from backtest.present.report import numbers, run_plots, write
from backtest.present.report.results import load_results
from backtest.present.verdict import comparison_verdict
from backtest.run import engine
from backtest.run.config import parse_config
from backtest.run.intervals import Z95
from backtest.sweep import load_sweep, run_sweep

pytest.importorskip("matplotlib")

REPO = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
IMG = re.compile(r'<img src="data:image/png;base64,([^"]*)"')

#: two seats, one of them a Martingale on a short bankroll, so some sessions are ruined
RUN = """\
name: small run
seed: 4
sessions: 40
rules: commission
shoe: {decks: 8, cut_card: 14, burn: true}
session: {bankroll: 300, win_goal: 100, max_shoes: 1}
table: {min: 10, max: 1000}
seats:
- strategy: flat
  name: Flat Banker
  params: {bets: {banker: 10}}
- strategy: martingale
  name: Martingale <on> Banker
  params: {bet: banker, base: 10}
"""


RUN_TITLES = (
    "Bankroll through the session",
    "Final bankroll of each session",
    "Ruin over time",
    "Measured edge converging on the exact edge",
)

SWEEP_RUN = """\
rules: commission
shoe: {decks: 8, cut_card: 14, burn: true}
session: {bankroll: 1000, win_goal: 200, max_shoes: 1}
table: {min: 10, max: 1000}
seats:
- strategy: martingale
  name: Martingale
  params: {bet: banker, base: 10}
- strategy: flat
  name: Flat Player
  params: {bets: {player: 10}}
"""

#: the grid of each small sweep, by the number of keys it varies, and the titles it must get
SWEEP_GRIDS: dict[int, tuple[dict[str, list[Any]], list[str]]] = {
    1: ({"seats[0].params.base": [5, 25]}, ["Ruin rate and edge against seats[0].params.base"]),
    2: (
        {"session.bankroll": [200, 1000], "table.max": [500, 1000]},
        ["Ruin rate by session.bankroll and table.max", "Edge by session.bankroll and table.max"],
    ),
    3: (
        {"session.bankroll": [200, 1000], "table.max": [500, 1000], "rules": ["commission", "ez"]},
        [
            "Ruin rate and edge against session.bankroll",
            "Ruin rate and edge against table.max",
            "Ruin rate and edge against rules",
        ],
    ),
}


def pct(x: float, digits: int = 2) -> str:
    """An edge as the report shows it."""
    return f"{100 * x:+.{digits}f}%"


def share(x: float) -> str:
    """A rate as the report shows it."""
    return f"{100 * x:.1f}%"


def images(page: str) -> list[bytes]:
    """Every embedded image of a page, decoded; each must be a PNG."""
    found = [base64.b64decode(data, validate=True) for data in IMG.findall(page)]
    assert page.count("<img") == len(found)
    for png in found:
        assert png.startswith(PNG_SIGNATURE)
    return found


def table_rows(page: str) -> list[list[str]]:
    """The cells of the summary table's body rows, as text."""
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def written_files(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def assert_self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    for outside in ("<script", "<link", 'src="http', "src='http", "url(", "@import"):
        assert outside not in page


# --- the numbers behind the plots -------------------------------------------------------


def test_path_bands_hold_an_ended_session_at_its_final_bankroll() -> None:
    paths = pl.DataFrame(
        {
            "seat": ["a"] * 4,
            "session": [1, 1, 1, 2],
            "hand": [1, 2, 3, 1],
            "bankroll": [110.0, 120.0, 130.0, 90.0],
        }
    )
    bands = numbers.path_bands(paths, 100.0)
    assert bands["hand"].to_list() == [0, 1, 2, 3]
    assert bands["sessions"].to_list() == [2, 2, 2, 2]
    assert bands["p50"].to_list() == [100.0, 100.0, 105.0, 110.0]
    # session 2 ended after one hand: it counts at 90 at hands 2 and 3
    last = bands.row(3, named=True)
    assert last["p5"] == pytest.approx(90 + 0.05 * 40)
    assert last["p95"] == pytest.approx(90 + 0.95 * 40)
    assert numbers.with_start(paths, 100.0).filter(pl.col("hand") == 0)["bankroll"].to_list() == [
        100.0,
        100.0,
    ]


def test_edge_convergence_is_cumulative_net_over_cumulative_wagered() -> None:
    sessions = pl.DataFrame(
        {
            "seat": ["a"] * 3,
            "session": [2, 1, 3],
            "hands": [10, 20, 30],
            "wagered": [100.0, 0.0, 300.0],
            "net": [-10.0, 0.0, 4.0],
            "expected_net": [-1.0, 0.0, -3.0],
        }
    )
    curve = numbers.edge_convergence(sessions)
    # in session order; session 1 wagered nothing, so it has no edge yet
    assert curve["session"].to_list() == [2, 3]
    assert curve["cum_hands"].to_list() == [30, 60]
    assert curve["edge"].to_list() == pytest.approx([-0.1, -6 / 400])
    s = ((0.0 + 81.0 + 49.0) / 3) ** 0.5
    assert curve["half_width"].to_list() == pytest.approx(
        [Z95 * s * 2**0.5 / 100, Z95 * s * 3**0.5 / 400]
    )


# --- a run ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    cfg = parse_config(yaml.safe_load(RUN))
    result = engine.run(cfg, workers=1)
    outputs.write_run(out, result, engine.bankroll_paths(result, 20))
    return out


@pytest.fixture(scope="module")
def run_report(run_dir: Path) -> tuple[write.Report, str]:
    written = write.write_report(run_dir)
    return written, written.html.read_text(encoding="utf-8")


def test_a_run_report_embeds_every_plot_and_writes_them_as_png(
    run_dir: Path, run_report: tuple[write.Report, str]
) -> None:
    written, page = run_report
    assert written.html == run_dir / "report.html"
    assert written.plot_dir == run_dir / "report-plots"
    assert [p.name for p in written.plots] == [
        "bankroll-paths.png",
        "final-bankroll.png",
        "ruin-over-time.png",
        "edge-convergence.png",
    ]
    embedded = images(page)
    assert len(embedded) == len(RUN_TITLES)
    assert [p.read_bytes() for p in written.plots] == embedded
    for title in RUN_TITLES:
        assert f'alt="{title}"' in page and f"<b>{title}.</b>" in page
    assert "keeps its final bankroll for the later hands" in page
    assert_self_contained(page)
    assert not list(run_dir.rglob("*.tmp"))


def test_a_run_report_gives_each_seats_numbers(
    run_dir: Path, run_report: tuple[write.Report, str]
) -> None:
    _, page = run_report
    summary = pl.read_parquet(run_dir / "summary.parquet")
    assert summary.select(pl.col("ruin_rate").max()).item() > 0  # the Martingale is ruined
    verdict = page.split('<div class="verdict">', 1)[1].split("</div>", 1)[0]
    plots_at = page.index("<h2>Plots</h2>")
    assert page.index('<div class="verdict">') < plots_at < page.index("<h2>Summary</h2>")
    rows = {row[0]: row for row in table_rows(page)}
    for r in summary.iter_rows(named=True):
        name = html.escape(r["seat"])
        assert name in verdict
        said = verdict.split(name, 1)[1].split("</p>", 1)[0]
        assert f"Measured edge {pct(r['edge'])}" in said
        assert f"exact edge of the bets it placed is {pct(r['expected_edge'])}" in said
        assert share(r["ruin_rate"]) in said
        row = rows[r["seat"]]
        assert row[1] == f"{r['sessions']:,}"
        assert row[4] == f"{r['net']:,.2f}"
        assert row[5] == pct(r["edge"])
        assert row[7] == pct(r["expected_edge"])
        assert row[10] == share(r["ruin_rate"])
        # the interval and z the command line prints: from each hand's variance
        assert row[6] == f"{pct(r['edge_hands_ci_low'])} .. {pct(r['edge_hands_ci_high'])}"
        assert row[8] == f"{r['z_hands']:+.2f}"
    assert "Martingale &lt;on&gt; Banker" in page and "<on>" not in page
    assert len(rows) == summary.height
    # the paired comparisons, as the command line says them, and their table
    paired = pl.read_parquet(run_dir / "comparisons.parquet")
    section = page.split("<h2>Paired comparisons</h2>", 1)[1]
    for line in comparison_verdict(paired).splitlines():
        assert f"<p>{html.escape(line)}</p>" in section
    (cells,) = table_rows(section)
    (r,) = paired.iter_rows(named=True)
    assert cells[:2] == ["Martingale <on> Banker", "Flat Banker"]
    assert cells[4] == f"{pct(r['edge_diff_ci_low'], 3)} .. {pct(r['edge_diff_ci_high'], 3)}"


def test_a_run_without_paths_gets_the_other_plots(run_dir: Path, tmp_path: Path) -> None:
    for name in ("run.json", "summary.parquet", "sessions.parquet"):
        (tmp_path / name).write_bytes((run_dir / name).read_bytes())
    written = write.write_report(tmp_path, tmp_path / "out" / "no-paths.html")
    page = written.html.read_text(encoding="utf-8")
    assert len(images(page)) == 3
    assert "no paths.parquet" in page
    assert written.plot_dir == tmp_path / "out" / "no-paths-plots"
    assert sorted(p.name for p in written.plot_dir.iterdir()) == [
        "edge-convergence.png",
        "final-bankroll.png",
        "ruin-over-time.png",
    ]


def test_a_failed_drawing_writes_nothing(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(results: Any) -> Any:
        raise BacktestError("drawing failed")

    monkeypatch.setattr(write, "plot_edge", broken)
    with pytest.raises(BacktestError, match="drawing failed"):
        write.write_report(run_dir, tmp_path / "r.html")
    assert written_files(tmp_path) == []


def test_without_matplotlib_the_report_says_how_to_install_it(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UsageError, match=re.escape("pip install 'baccarat-backtest[plot]'")):
        write.write_report(run_dir, tmp_path / "r.html")
    assert written_files(tmp_path) == []


# --- sweeps ----------------------------------------------------------------------------


def make_sweep(out: Path, grid: dict[str, list[Any]]) -> Path:
    spec = out.parent / f"{out.name}.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": f"small sweep {len(grid)}",
                "seed": 9,
                "sessions": 12,
                "common_shoes": True,
                "run": yaml.safe_load(SWEEP_RUN),
                "grid": grid,
            },
            sort_keys=False,
        ),
        encoding="utf-8",
    )
    run_sweep(load_sweep(spec), out, workers=1)
    return out


@pytest.fixture(scope="module")
def sweep_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    tmp = tmp_path_factory.mktemp("sweeps")
    return {n: make_sweep(tmp / f"keys{n}", grid) for n, (grid, _) in SWEEP_GRIDS.items()}


@pytest.mark.parametrize("n_keys", sorted(SWEEP_GRIDS))
def test_a_sweep_report_plots_ruin_and_edge_against_its_keys(
    sweep_dirs: dict[int, Path], n_keys: int
) -> None:
    directory = sweep_dirs[n_keys]
    grid, titles = SWEEP_GRIDS[n_keys]
    written = write.write_report(directory)
    page = written.html.read_text(encoding="utf-8")
    embedded = images(page)
    assert len(embedded) == len(titles)
    assert [p.read_bytes() for p in written.plots] == embedded
    assert all(p.parent == directory / "report-plots" for p in written.plots)
    for title in titles:
        assert f"<b>{html.escape(title)}.</b>" in page
    if n_keys == 2:
        assert [p.name for p in written.plots] == ["heatmap-ruin-rate.png", "heatmap-edge.png"]
    else:
        assert all(p.name.startswith("sweep-") for p in written.plots)
    if n_keys == 3:
        assert "mean over the cells of the other key(s)" in page
    assert_self_contained(page)

    summary = pl.read_parquet(directory / "summary.parquet")
    keys = list(grid)
    rows = table_rows(page)
    assert len(rows) == summary.height
    for row, r in zip(rows, summary.iter_rows(named=True)):
        assert row[0] == str(r["cell"])
        assert row[1 : 1 + len(keys)] == [
            f"{r[k]:,}" if isinstance(r[k], int) else r[k] for k in keys
        ]
        seat = row[1 + len(keys) :]
        assert seat[0] == r["seat"]
        assert seat[5] == pct(r["edge"])
        assert seat[7] == pct(r["expected_edge"])
        assert seat[10] == share(r["ruin_rate"])
    verdict = page.split('<div class="verdict">', 1)[1].split("</div>", 1)[0]
    for name in ("Martingale", "Flat Player"):
        low = (
            summary.filter(pl.col("seat") == name)
            .select(pl.col("edge", "expected_edge").min(), pl.col("ruin_rate").max())
            .row(0, named=True)
        )
        said = verdict.split(f"<p>{name}:", 1)[1].split("</p>", 1)[0]
        assert pct(low["edge"]) in said and pct(low["expected_edge"]) in said
        assert (
            share(low["ruin_rate"]) in said
            if low["ruin_rate"]
            else "No session ended in ruin in any cell." in said
        )


# --- the command line -------------------------------------------------------------------

NO_MATPLOTLIB = (
    "import sys; sys.modules['matplotlib'] = None; "
    "sys.argv = ['backtest', *sys.argv[1:]]; "
    "from backtest.cli import main; main()"
)
EXPECTED = "expected the output of `backtest run --out DIR`"


def one_line_error(code: int, err: str, expected_code: int, *says: str) -> None:
    assert code == expected_code, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for words in says:
        assert words in lines[0]


cli = backtest_here


@pytest.mark.slow
def test_bad_directories_and_no_matplotlib_as_processes(run_dir: Path, tmp_path: Path) -> None:
    """`python -m backtest report` processes, started at once: one line on stderr, the
    exit code, and nothing written."""
    no_cells = tmp_path / "no-cells"
    (no_cells / "cells").mkdir(parents=True)
    (no_cells / "sweep.json").write_text(
        json.dumps({"kind": "sweep", "name": "s", "keys": ["table.max"], "cells": 2}),
        encoding="utf-8",
    )
    no_mpl = tmp_path / "no-mpl"

    def start(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    cases = [
        (
            start("-m", "backtest", "report", str(tmp_path / "missing")),
            2,
            ["no such directory", EXPECTED],
        ),
        (start("-m", "backtest", "report", str(no_cells)), 1, ["no finished cells", "--resume"]),
        (
            start("-c", NO_MATPLOTLIB, "report", str(run_dir), "--out", str(no_mpl / "r.html")),
            2,
            ["matplotlib", "pip install 'baccarat-backtest[plot]'"],
        ),
    ]
    for process, code, says in cases:
        _, err = process.communicate(timeout=120)
        one_line_error(process.returncode, err, code, *says)
    assert not (tmp_path / "missing").exists()
    assert written_files(no_cells) == ["cells", "sweep.json"]
    assert not no_mpl.exists()


def copy_files(source: Path, target: Path, *names: str) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        (target / name).write_bytes((source / name).read_bytes())
    return target


BAD_INPUT = {
    # name: (what to make in tmp/NAME from the run dir, extra args, exit code, what it says)
    "empty": ((), (), 2, ["holds no run.json or sweep.json", EXPECTED]),
    "only-summary": (
        ("summary.parquet",),
        (),
        2,
        ["summary.parquet but no run.json or sweep.json", EXPECTED],
    ),
    "unfinished-run": (
        ("run.json", "sessions.parquet"),
        (),
        1,
        ["the run did not finish", "summary.parquet"],
    ),
    "out-is-a-directory": (
        ("run.json", "sessions.parquet", "summary.parquet"),
        ("--out", "."),
        2,
        ["is a directory"],
    ),
    "out-over-the-summary": (
        ("run.json", "sessions.parquet", "summary.parquet"),
        ("--out", "./summary.parquet"),
        2,
        [
            "summary.parquet is one of the results the report reads",
            "give another file, e.g. report.html",
        ],
    ),
    "out-over-run-json": (
        ("run.json", "sessions.parquet", "summary.parquet"),
        ("--out", "./run.json"),
        2,
        ["run.json is one of the results the report reads"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_through_the_entry_point(
    case: str,
    run_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    names, extra, code, says = BAD_INPUT[case]
    directory = copy_files(run_dir, tmp_path / case, *names)
    before = written_files(directory)
    args = [a.replace(".", str(directory), 1) if a.startswith(".") else a for a in extra]
    got, _, err = cli(monkeypatch, capsys, "report", str(directory), *args)
    one_line_error(got, err, code, *says)
    assert written_files(directory) == before


@pytest.mark.parametrize(
    "key, value, says",
    [
        ("keys", 5, "keys: expected a list of key paths, got 5"),
        ("keys", None, "keys: expected a list of key paths, got None"),
        ("hands", "x", "hands: expected a whole number, got 'x'"),
        ("seed", 1.5, "seed: expected a whole number, got 1.5"),
    ],
)
def test_an_edited_metadata_file_is_one_line_error(
    key: str,
    value: Any,
    says: str,
    run_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    directory = copy_files(
        run_dir, tmp_path / "edited", "run.json", "sessions.parquet", "summary.parquet"
    )
    meta = json.loads((directory / "run.json").read_text(encoding="utf-8"))
    (directory / "run.json").write_text(json.dumps({**meta, key: value}), encoding="utf-8")
    code, _, err = cli(monkeypatch, capsys, "report", str(directory))
    one_line_error(code, err, 1, f"run.json: {says}", "was not written by backtest, or was edited")


def test_two_varied_seats_of_one_name_are_two_points(tmp_path: Path) -> None:
    seat = {"strategy": "flat", "params": {"bets": {"banker": 10}}}
    out = make_sweep(
        tmp_path / "same-name",
        {"seats[0]": [seat, {"strategy": "flat", "params": {"bets": {"tie": 10}}}]},
    )
    results = load_results(out)
    means = numbers.by_key(numbers.sweep_rows(results.summary, results.keys), "seats[0]").filter(
        pl.col("seat_no") == 0
    )
    assert means["seats[0]"].to_list() == ["flat (1)", "flat (2)"]
    assert means["cells"].to_list() == [1, 1]
    first = results.summary.group_by("cell", maintain_order=True).first()
    by_cell = dict(first.select("seats[0].json", "edge").iter_rows())
    assert means["edge"].to_list() == [
        by_cell[json.dumps(seat, sort_keys=True)],
        by_cell[json.dumps({"strategy": "flat", "params": {"bets": {"tie": 10}}}, sort_keys=True)],
    ]


def test_a_file_is_not_a_results_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("not a directory\n", encoding="utf-8")
    code, _, err = cli(monkeypatch, capsys, "report", str(a_file))
    one_line_error(code, err, 2, "is a file, not a directory", EXPECTED)
    assert written_files(tmp_path) == ["a-file.txt"]


def test_the_report_command_writes_where_out_says(
    run_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = tmp_path / "reports" / "mine.html"
    code, out, err = cli(monkeypatch, capsys, "report", str(run_dir), "--out", str(good))
    assert code == 0, err
    assert out == ""
    assert err.strip() == f"wrote {good} and 4 plot(s) in {good.parent / 'mine-plots'}"
    assert len(images(good.read_text(encoding="utf-8"))) == 4
    assert written_files(tmp_path) == [
        "reports",
        "reports/mine-plots",
        "reports/mine-plots/bankroll-paths.png",
        "reports/mine-plots/edge-convergence.png",
        "reports/mine-plots/final-bankroll.png",
        "reports/mine-plots/ruin-over-time.png",
        "reports/mine.html",
    ]


# --- plots that do not over-read ------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_histogram_bins_hold_as_many_possible_amounts_each(seed: int) -> None:
    """Amounts in steps of 0.50 (commission on 10): every bin spans a whole
    number of steps, with edges between the amounts, so no bin is empty by
    construction while its neighbours are full (a comb)."""
    rng = np.random.default_rng(seed)
    x = 1000 + 9.5 * rng.integers(-60, 60, 800) - 10 * rng.integers(0, 9, 800)
    edges = numbers.bins(x)
    widths = np.diff(edges)
    assert np.allclose(widths, widths[0]) and len(widths) <= numbers.MAX_BINS
    step = 0.5
    assert abs(widths[0] / step - round(widths[0] / step)) < 1e-9  # whole steps
    # each edge half a step off the lattice of possible amounts
    assert np.allclose(((edges - x.min()) / step) % 1, 0.5)
    assert edges[0] < x.min() and edges[-1] > x.max()
    lattice = np.arange(x.min(), x.max() + step / 2, step)
    per_bin = np.histogram(lattice, edges)[0]
    assert per_bin[1:-1].min() == per_bin[1:-1].max()  # every inner bin alike
    # one amount: one bar around it
    assert numbers.bins(np.array([300.0, 300.0])).tolist() == [299.5, 300.5]


def test_run_plots_share_axes_show_the_start_and_name_the_seats(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures: dict[str, Any] = {}
    real_png = run_plots.png_bytes

    def keep(fig: Any) -> bytes:
        figures[fig._suptitle.get_text().split(" (")[0]] = fig
        return real_png(fig)

    monkeypatch.setattr(run_plots, "png_bytes", keep)
    results = load_results(run_dir)
    plots, notes = write.drawn(results)
    assert notes == [] and len(plots) == 4
    seats = pl.read_parquet(run_dir / "summary.parquet")["seat"].to_list()
    for title in (
        "Bankroll through the session",
        "Final bankroll of each session",
        "Ruin over time",
    ):
        axes = [ax for ax in figures[title].axes if ax.get_visible()]
        assert [ax.get_title() for ax in axes] == seats
        first, second = axes[0], axes[1]
        assert first.get_shared_x_axes().joined(first, second)
        assert first.get_shared_y_axes().joined(first, second)
        assert first.get_ylim() == second.get_ylim() and first.get_xlim() == second.get_xlim()
    # no hidden, empty slot; every panel has something drawn
    for fig in figures.values():
        assert all(
            ax.get_visible() and (ax.lines or ax.patches or ax.images)
            for ax in fig.axes
            if ax.get_label() != "<colorbar>"
        )
    # the edge plot frames the whole measured curve, its first session included
    curve = numbers.edge_convergence(results.sessions)
    for ax in figures["Measured edge converging on the exact edge"].axes:
        edge = 100 * curve.filter(pl.col("seat") == ax.get_title())["edge"].to_numpy()
        low, high = ax.get_ylim()
        assert low <= edge.min() and edge.max() <= high


def test_sweep_cells_get_intervals_and_z_against_the_exact_edge(
    sweep_dirs: dict[int, Path],
) -> None:
    results = load_results(sweep_dirs[2])
    rows = numbers.sweep_rows(results.summary, results.keys)
    cells = numbers.heatmap_cells(rows, results.keys)
    joined = cells.join(
        rows.select(
            *results.keys,
            "seat_no",
            pl.col("z_hands").alias("z_cell"),
            "edge_hands_ci_low",
            "edge_hands_ci_high",
        ),
        on=[*results.keys, "seat_no"],
    )
    assert joined.height == rows.height
    # one cell per square: its own z and interval, those the command line prints
    assert joined["z"].to_list() == pytest.approx(joined["z_cell"].to_list())
    assert (joined["edge_half"] * 2).to_list() == pytest.approx(
        (joined["edge_hands_ci_high"] - joined["edge_hands_ci_low"]).to_list()
    )
    # the ruin rate's interval holds the rate, and stays inside 0..1
    wide = numbers.with_intervals(rows)
    assert (wide["ruin_rate"] - wide["ruin_low"] >= -1e-12).all()
    assert (wide["ruin_rate"] + wide["ruin_high"] <= 1 + 1e-12).all()
    assert (wide["ruin_low"] + wide["ruin_high"] > 0).all()
    # seats are named by their names in legends and titles
    assert set(rows["seat_label"]) == {"Martingale", "Flat Player"}
    assert numbers.sweep_rows(pl.DataFrame({"cell": [1, 2], "seat": ["a", "b"]}))[
        "seat_label"
    ].to_list() == ["a / b", "a / b"]


def test_a_plot_whose_values_are_all_equal_is_left_out(
    sweep_dirs: dict[int, Path], tmp_path: Path
) -> None:
    directory = tmp_path / "flat"
    shutil.copytree(sweep_dirs[2], directory)
    for f in [directory / "summary.parquet", *(directory / "cells").glob("*.parquet")]:
        pl.read_parquet(f).with_columns(pl.lit(0.0).alias("ruin_rate")).write_parquet(f)
    written = write.write_report(directory)
    page = written.html.read_text(encoding="utf-8")
    assert [p.name for p in written.plots] == ["heatmap-edge.png"]
    assert "No ruin rate plot: the ruin rate is 0.0% in every cell." in page
    assert len(images(page)) == 1


def test_new_results_remove_the_report_of_the_old(run_dir: Path, tmp_path: Path) -> None:
    directory = tmp_path / "again"
    shutil.copytree(run_dir, directory)
    write.write_report(directory)
    assert (directory / "report.html").is_file()
    # a report of a run without paths: the old paths plot goes with it
    (directory / "paths.parquet").unlink()
    written = write.write_report(directory)
    assert (
        sorted(p.name for p in (directory / "report-plots").iterdir())
        == sorted(p.name for p in written.plots)
        == ["edge-convergence.png", "final-bankroll.png", "ruin-over-time.png"]
    )
    # a new run written there: the report told of the old one, and goes
    result = engine.run(parse_config(yaml.safe_load(RUN)), sessions=5, workers=1)
    outputs.write_run(directory, result)
    assert not (directory / "report.html").exists()
    assert not (directory / "report-plots").exists()
    # a report.html this tool did not write stays
    (directory / "report.html").write_text("<p>my notes</p>", encoding="utf-8")
    outputs.write_run(directory, result)
    assert (directory / "report.html").read_text(encoding="utf-8") == "<p>my notes</p>"


def test_the_ruin_curve_counts_sessions_ruined_by_each_hand() -> None:
    """Four sessions: ruined after 2 and after 5 hands, one that reached its
    limit after 3, one never ruined in 6; the share by hand n and an interval
    that holds it."""
    sessions = pl.DataFrame(
        {
            "seat": ["a"] * 4,
            "session": [1, 2, 3, 4],
            "hands": [2, 5, 3, 6],
            "ended_by": ["ruin", "ruin", "limit", "win-goal"],
        }
    )
    curve = numbers.ruin_curve(sessions)
    assert curve["hand"].to_list() == [1, 2, 3, 4, 5, 6]
    assert curve["ruined"].to_list() == [0.0, 0.25, 0.25, 0.25, 0.5, 0.5]
    assert (curve["low"] <= curve["ruined"]).all() and (curve["ruined"] <= curve["high"]).all()
    assert curve["low"][0] == 0.0 and 0 < curve["high"][0] < 1

"""`backtest run` and `backtest strategies`, run as a user runs them.

Each command is a real `python -m backtest` process started from the project's
top folder, so the one error boundary in `backtest.cli.main` (one line on
stderr, exit code 1 or 2, never a traceback) is what is tested. The processes
are started by one fixture, a few at a time, and the tests read their results.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import polars as pl
import pytest
import yaml
from cli_helpers import Run, backtest_here, backtest_process, backtest_processes

from backtest.core.errors import ConfigError
from backtest.run.metrics import metric_names
from backtest.shoes.recorded import read_shoes
from strategies.registry import BUILTIN_NAMES

REPO = Path(__file__).resolve().parents[2]
# the module's tests read the runs of one fixture: on one worker, it runs once
pytestmark = pytest.mark.xdist_group("run-cli")
VERDICT = "configs/verdict.yaml"
RECORDED = "data/generated-8deck-seed1.txt"
ROADS = "data/roads-8deck-seed1.txt"
SEATS = ["Flat Banker", "Martingale on Banker", "Follow the shoe"]
JSON_KEYS = {
    "seat",
    "strategy",
    "sessions",
    "hands",
    "wagered",
    "net",
    "edge",
    "expected_edge",
    "ruin_rate",
}

SMALL = """\
seed: 1
sessions: 5
shoe: {decks: 8}
session: {bankroll: 1000}
table: {min: 10, max: 1000}
seats:
  - strategy: flat
  - strategy: martingale
    params: {base: 10}
"""

# a config file for each error, and what its one-line message must say
BAD_CONFIGS = {
    "unknown-key": (
        SMALL.replace("sessions: 5", "sesions: 5"),
        "line 2: sesions: unknown key; did you mean 'sessions'",
    ),
    "multiplier": (
        SMALL.replace("{base: 10}", "{base: 10, multiplier: 1}"),
        "line 9: seats[1].params.multiplier: must be more than 1",
    ),
    "unknown-strategy": (
        SMALL.replace("strategy: flat", "strategy: martingal"),
        "seats[0].strategy: unknown strategy 'martingal'; did you mean 'martingale'",
    ),
    "bad-yaml": (SMALL.replace("seats:\n", "seats: [\n"), "line 7"),
    "negative-bankroll": (
        SMALL.replace("bankroll: 1000", "bankroll: -5"),
        "session.bankroll: must be more than 0, got -5",
    ),
    "table-max": (
        SMALL.replace("max: 1000", "max: 5"),
        "table.max: the table maximum 5 is below the minimum 10",
    ),
    # max_shoes defaults to 1 unless max_hands is given; a session without either
    # end can only be asked for with an explicit null
    "no-end": (
        SMALL.replace("bankroll: 1000", "bankroll: 1000, max_shoes: null"),
        "session.max_shoes: a session needs an end: give max_shoes or max_hands",
    ),
    "param-type": (
        SMALL.replace("{base: 10}", "{base: ten}"),
        "seats[1].params.base: expected a number, got 'ten'",
    ),
    # money is counted in 64-bit ticks: amounts that could overflow them are refused
    "huge-bankroll": (
        SMALL.replace("bankroll: 1000", "bankroll: 1.0e+16"),
        "session.bankroll: a bankroll of 1e+16 is too much to count to the cent",
    ),
    # a key given twice: YAML would silently keep the second
    "duplicate-key": (
        SMALL.replace("sessions: 5\n", "sessions: 5\nsessions: 7\n"),
        "line 3, column 1: the key 'sessions' is given twice (first on line 2); remove one",
    ),
    # a few lines of aliases that stand for millions of values (copied into run.json)
    "alias-bomb": (
        SMALL
        + "description:\n  - &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 6)),
        "it holds more than 100,000 values once its aliases are expanded",
    ),
    "description": (SMALL + "description: [1, 2]\n", "description: expected text, got [1, 2]"),
    "empty-file": ("", "the file is empty; a run config is a mapping of keys"),
    "null-rules": (SMALL + "rules:\n", "rules: is empty: give a preset"),
    "a-sweep": (
        "base: verdict.yaml\ngrid: {seed: [1, 2]}\n",
        "this is a sweep (it has `grid`), not a run config: run it with `backtest sweep",
    ),
    "seat-name-two-lines": (
        SMALL.replace("  - strategy: flat", '  - strategy: flat\n    name: "a\\nb"'),
        "seats[0].name: must be one line of printable text",
    ),
    # whole numbers past any float: quoted by their size, never a traceback
    "huge-whole-number": (
        SMALL.replace("sessions: 5", f"sessions: {10**309}"),
        "sessions: at most 1,000,000,000, got a number of 310 digits",
    ),
    "huge-negative-seed": (
        SMALL.replace("seed: 1", f"seed: -{10**309}"),
        "seed: must be at least 0, got a negative number of 310 digits",
    ),
    "huge-decks": (
        SMALL.replace("decks: 8", f"decks: {10**309}"),
        "shoe.decks: must be from 1 to 64, got a number of 310 digits",
    ),
    "inline-rules": (
        SMALL + "rules: {base: commision, tie_payout: 9}\n",
        ".yaml: line 10: rules: base: unknown rules preset 'commision'; did you mean 'commission'",
    ),
    # YAML 1.1 reads 1e6 (no dot, no sign) as text
    "yaml-exponent": (
        SMALL.replace("bankroll: 1000", "bankroll: 1e6"),
        "session.bankroll: expected a number, got '1e6' (YAML reads 1e6 as text; write 1.0e+6)",
    ),
    # money is whole cents: an amount that rounds to none is refused, not played as nothing
    "sub-cent-bankroll": (
        SMALL.replace("bankroll: 1000", "bankroll: 0.001"),
        "session.bankroll: must be at least 0.01: money is counted in whole cents, got 0.001",
    ),
    "sub-cent-table-min": (
        SMALL.replace("min: 10", "min: 0.004"),
        "table.min: must be at least 0.01: money is counted in whole cents",
    ),
    "sub-cent-base": (
        SMALL.replace("{base: 10}", "{base: 0.001}"),
        "seats[1].params.base: must be at least 0.01: money is counted in whole cents",
    ),
    "sub-cent-stake": (
        SMALL.replace(
            "strategy: flat", "strategy: flat\n    params: {bets: {banker: 10, tie: 0.005}}"
        ),
        "seats[0].params.bets.tie: must be at least 0.01 (or 0): money is counted in whole cents, got 0.005",
    ),
    "huge-table-max": (
        SMALL.replace("max: 1000", "max: 1.0e+14"),
        "table.max (or table.limits): with table maxima up to 1e+14 and sessions of up to",
    ),
    # amounts whose cents no 64-bit integer holds (times 100, 1e308 is infinite)
    "money-overflow": (
        SMALL.replace("bankroll: 1000", "bankroll: 1.0e+308"),
        "session.bankroll: must be below 4.61e+16: money is counted in whole "
        "cents in 64-bit integers, got 1e+308",
    ),
    "stop-loss-overflow": (
        SMALL.replace("bankroll: 1000", "bankroll: 1000, stop_loss: 1.0e+308"),
        "session.stop_loss: must be below 4.61e+16",
    ),
    "table-max-overflow": (
        SMALL.replace("max: 1000", "max: 1.0e+308"),
        "table.max: must be below 4.61e+16",
    ),
    # deeper than the YAML parser recurses
    "deep-yaml": (
        SMALL + "description: " + "[" * 3000 + "]" * 3000 + "\n",
        "its values are nested too deeply to read",
    ),
    "pattern-twice": (
        SMALL.replace(
            "strategy: flat", "strategy: pattern\n    params: {patterns: {PPB: P, ppb: B}}"
        ),
        "seats[0].params.patterns.ppb: the pattern PPB is given twice (as 'PPB' "
        "and 'ppb'); keep one",
    ),
    "recorded-decks": (
        SMALL.replace(
            "shoe: {decks: 8}", f"shoes: {{file: {REPO / RECORDED}, decks: 1000000}}"
        ).replace("sessions: 5\n", ""),
        "shoes.decks: must be from 1 to 64, got 1000000",
    ),
    # the burn rule of a file with no cards: the config's mistake, exit 1
    "road-burn": (
        SMALL.replace("shoe: {decks: 8}", f"shoes: {{file: {REPO / ROADS}, burn: true}}").replace(
            "sessions: 5\n", ""
        ),
        "shoes: " + str(REPO / ROADS) + ": the burn rule applies to card-level shoes",
    ),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Run]]:
    tmp = tmp_path_factory.mktemp("run-cli")
    (tmp / "small.yaml").write_text(SMALL, encoding="utf-8")
    (tmp / "recorded.yaml").write_text(
        SMALL.replace("shoe: {decks: 8}\n", "").replace("sessions: 5\n", ""), encoding="utf-8"
    )
    (tmp / "a-file").write_text("not a directory\n", encoding="utf-8")
    json_run = ["run", VERDICT, "--sessions", "50", "--format", "json"]
    commands = {
        "json": json_run,
        "json-again": json_run,
        "json-seed-2": [*json_run, "--seed", "2"],
        "json-seed-1": [*json_run, "--seed", "1"],
        "table": ["run", VERDICT, "--sessions", "50"],
        "csv": ["run", VERDICT, "--sessions", "10", "-f", "csv"],
        "out-ledger": ["run", VERDICT, "--sessions", "20", "--ledger", "--out", str(tmp / "out")],
        "out": ["run", VERDICT, "--sessions", "20", "--out", str(tmp / "out-no-ledger")],
        "shoes": ["run", str(tmp / "recorded.yaml"), "--shoes", RECORDED, "-f", "json"],
        "shoes-verdict": ["run", VERDICT, "--shoes", RECORDED, "--sessions", "3", "-f", "json"],
        "strategies": ["strategies"],
        "missing": ["run", "nope.yaml"],
        "out-is-a-file": ["run", str(tmp / "small.yaml"), "--out", str(tmp / "a-file")],
    }
    for name, (text, _) in BAD_CONFIGS.items():
        (tmp / f"{name}.yaml").write_text(text, encoding="utf-8")
        commands[name] = ["run", str(tmp / f"{name}.yaml")]

    # the first run alone (it compiles the seats' session loops when numba's cache
    # is cold), then the others four at a time
    results = {"json": backtest_process(commands.pop("json"), cwd=REPO)}
    results.update(backtest_processes(commands, cwd=REPO))
    return tmp, results


def ok(run: Run) -> Run:
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    return run


# --- results ---------------------------------------------------------------------------------


def _strict(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


@pytest.mark.slow
def test_json_summary(runs: tuple[Path, dict[str, Run]]) -> None:
    rows = json.loads(ok(runs[1]["json"]).stdout, parse_constant=_strict)
    assert isinstance(rows, list) and [r["seat"] for r in rows] == SEATS
    assert list(rows[0]) == ["seat", "strategy", *metric_names()]  # every summary column
    assert [r["strategy"] for r in rows] == ["flat", "martingale", "follow-the-shoe"]
    for r in rows:
        assert JSON_KEYS <= set(r), r
        assert r["sessions"] == 50 and r["hands"] > 0
        assert r["edge"] == pytest.approx(r["net"] / r["wagered"], rel=1e-12)
        assert 0 <= r["ruin_rate"] <= 1
    assert rows[0]["hands"] > 50 * 60  # flat Banker 10 rarely meets its win goal
    assert rows[0]["expected_edge"] == pytest.approx(-0.010579, abs=5e-7)


@pytest.mark.slow
def test_the_seed_decides_the_numbers(runs: tuple[Path, dict[str, Run]]) -> None:
    r = runs[1]
    assert ok(r["json-again"]).stdout == ok(r["json"]).stdout
    assert ok(r["json-seed-1"]).stdout == r["json"].stdout  # verdict.yaml has seed 1
    assert ok(r["json-seed-2"]).stdout != r["json"].stdout
    a, b = json.loads(r["json"].stdout), json.loads(r["json-seed-2"].stdout)
    assert [x["net"] for x in a] != [x["net"] for x in b]


@pytest.mark.slow
def test_table_and_verdict(runs: tuple[Path, dict[str, Run]]) -> None:
    out = ok(runs[1]["table"]).stdout
    rows = json.loads(runs[1]["json"].stdout)
    header = re.fullmatch(r"verdict: ([\d,]+) hands, seed 1, rules commission", out.splitlines()[0])
    assert header is not None, out.splitlines()[0]
    assert int(header[1].replace(",", "")) >= max(r["hands"] for r in rows)
    paragraphs = [" ".join(p.split()) for p in out.split("\n\n")]  # wrapped to the terminal
    for seat in SEATS:
        verdicts = [p for p in paragraphs if p.startswith(f"{seat}: won money in")]
        assert len(verdicts) == 1, seat
        assert "of 50 sessions" in verdicts[0] and "Measured edge" in verdicts[0]
        assert "the exact edge of the bets it placed is" in verdicts[0]
    assert "exact edge" in out  # the table's header (stacked in 80 columns)


@pytest.mark.slow
def test_csv_summary(runs: tuple[Path, dict[str, Run]]) -> None:
    frame = pl.read_csv(ok(runs[1]["csv"]).stdout.encode())
    assert frame["seat"].to_list() == SEATS
    assert frame["sessions"].to_list() == [10, 10, 10]


@pytest.mark.slow
def test_out_writes_parquet_and_run_json(runs: tuple[Path, dict[str, Run]]) -> None:
    tmp, r = runs
    run = ok(r["out-ledger"])
    out = tmp / "out"
    assert f"to {out}" in run.stderr
    summary = pl.read_parquet(out / "summary.parquet")
    sessions = pl.read_parquet(out / "sessions.parquet")
    ledger = pl.read_parquet(out / "ledger.parquet")
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert summary["seat"].to_list() == SEATS
    assert summary["sessions"].to_list() == [20, 20, 20]
    assert sessions.height == 60 and ledger.height == sessions["hands"].sum()
    assert set(ledger["seat"]) == set(SEATS)
    assert meta["seed"] == 1 and meta["hands"] > 0 and meta["name"] == "verdict"
    # what the files say agrees: the summary's net is the sessions' and the ledger's
    for seat, net in summary.select("seat", "net").rows():
        assert sessions.filter(pl.col("seat") == seat)["net"].sum() == pytest.approx(net)
        assert ledger.filter(pl.col("seat") == seat)["net"].sum() == pytest.approx(net)
    # the table is still printed
    assert "Flat Banker: won money in" in run.stdout

    ok(r["out"])
    written = {p.name for p in (tmp / "out-no-ledger").iterdir()}
    assert {"summary.parquet", "sessions.parquet", "run.json"} <= written
    assert "ledger.parquet" not in written
    # the sessions went to disk chunk by chunk; nothing of that is left behind
    assert written == {
        "summary.parquet",
        "sessions.parquet",
        "run.json",
        "paths.parquet",
        "comparisons.parquet",
    }  # the verdict's three seats, paired
    # the sample paths are of sessions the run played (--sessions 20, not the config's)
    paths = pl.read_parquet(tmp / "out-no-ledger" / "paths.parquet")
    assert sorted(set(paths["session"])) == list(range(1, 21))
    assert sessions.columns == pl.read_parquet(tmp / "out-no-ledger" / "sessions.parquet").columns


@pytest.mark.slow
def test_shoes_plays_a_recorded_file(runs: tuple[Path, dict[str, Run]]) -> None:
    rows = json.loads(ok(runs[1]["shoes"]).stdout)
    hands = read_shoes(REPO / RECORDED)
    assert [r["sessions"] for r in rows] == [hands.n_shoes] * 2  # one session a shoe
    assert rows[0]["hands"] == len(hands)  # flat never stops


@pytest.mark.slow
def test_shoes_replaces_the_generated_shoes_of_a_config(runs: tuple[Path, dict[str, Run]]) -> None:
    # `--shoes` plays recorded shoes "instead of generated ones": configs/verdict.yaml
    # has a `shoe:` section, which the option replaces
    rows = json.loads(ok(runs[1]["shoes-verdict"]).stdout)
    assert [r["sessions"] for r in rows] == [3, 3, 3]
    assert rows[0]["hands"] == len(read_shoes(REPO / RECORDED))


@pytest.mark.slow
def test_strategies_lists_every_builtin_with_its_parameters(
    runs: tuple[Path, dict[str, Run]],
) -> None:
    """Each strategy with its own parameters, and its other names; the edges
    every built-in shares, once, at the top."""
    from strategies.params import CommonParams
    from strategies.registry import ALIASES

    lines = []  # each wrapped line joined to the one it continues
    for line in ok(runs[1]["strategies"]).stdout.splitlines():
        if line.startswith("  ") and not line.startswith("    ") or line.startswith(" " * 8):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    common = [f.name for f in dataclasses.fields(CommonParams)]

    def block(start: int) -> list[str]:
        out = []
        for line in lines[start + 1 :]:
            if not line.startswith("    "):
                break
            out.append(line)
        return out

    assert lines[0].startswith("Every strategy below marked (+) also takes these")
    top = block(0)
    assert [line.split()[0] for line in top] == common
    for name, cls in BUILTIN_NAMES.items():
        heading = [
            i for i, line in enumerate(lines) if line.startswith(f"{name} (+): {cls.description}")
        ]
        assert len(heading) == 1, name
        for alias in (a for a, target in ALIASES.items() if target == name):
            assert alias in lines[heading[0]].split("(also: ")[1], (name, alias)
        own = block(heading[0])
        params = [p[0] for p in cls.parameters()]
        assert [line.split()[0] for line in top + own] == common + [
            p for p in params if p not in common
        ], name
        for pname, _, default, _ in cls.parameters():
            # each default as a config would write it: YAML that reads back as the value
            shown = [
                re.match(r"    \S+ \(.*?, default (.*?)\): ", line)
                for line in top + own
                if line.startswith(f"    {pname} (")
            ]
            assert len(shown) == 1 and shown[0] is not None, (name, pname)
            assert yaml.safe_load(shown[0].group(1)) == default, (name, pname)
    text = "\n".join(lines)
    assert "multiplier (a number, default 2.0)" in text
    assert "bets (a mapping, default {banker: 10.0})" in text
    assert "ignore_ties (true or false, default true)" in text


# --- errors: one line on stderr, exit code 1 (2 for the command line) --------------------------


def one_line_error(run: Run, code: int = 1) -> str:
    assert run.returncode == code, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize("name", BAD_CONFIGS)
@pytest.mark.slow
def test_config_errors(runs: tuple[Path, dict[str, Run]], name: str) -> None:
    tmp, r = runs
    message = one_line_error(r[name])
    assert f"{tmp / name}.yaml" in message  # the file
    assert BAD_CONFIGS[name][1] in message  # the key path and what is wrong
    assert r[name].stdout == ""


@pytest.mark.slow
def test_missing_config_file(runs: tuple[Path, dict[str, Run]]) -> None:
    assert (
        one_line_error(runs[1]["missing"], code=2) == "error: config file nope.yaml does not exist"
    )


@pytest.mark.slow
def test_out_pointing_at_a_file_is_a_usage_error(runs: tuple[Path, dict[str, Run]]) -> None:
    tmp, r = runs
    message = one_line_error(r["out-is-a-file"], code=2)
    assert f"--out {tmp / 'a-file'} is a file, not a directory" in message
    assert (tmp / "a-file").read_text(encoding="utf-8") == "not a directory\n"


def test_an_unwritable_out_directory_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from backtest.core.errors import UsageError
    from backtest.present import outputs

    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(UsageError, match="not writable"):
        outputs.check_out_dir(tmp_path)


@pytest.mark.parametrize("failure", ["os", "polars"])
def test_a_full_disk_while_writing_is_one_line_not_a_traceback(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failure: str,
) -> None:
    """Whichever library finds the disk full, the message names --out, and
    what was there before is kept."""
    import polars as pl

    from backtest.present import outputs

    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.parquet").write_text("an earlier run's\n", encoding="utf-8")

    def full(*args: object, **kwargs: object) -> None:
        if failure == "os":
            raise OSError(28, "No space left on device")
        raise pl.exceptions.ComputeError("No space left on device (os error 28)")

    monkeypatch.setattr(outputs, "write_parquet", full)
    code, _, err = backtest_here(
        monkeypatch, capsys, "run", str(REPO / VERDICT), "--sessions", "3", "--out", str(out)
    )
    assert code == 1
    said = "No space left on device" + ("" if failure == "os" else " (os error 28)")
    assert err.strip().splitlines()[-1] == (
        f"error: --out {out}: cannot write the results: {said}; the files already there are "
        "unchanged"
    )
    assert "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["summary.parquet"]  # nothing half-written
    assert (out / "summary.parquet").read_text(encoding="utf-8") == "an earlier run's\n"


def test_a_run_that_fails_leaves_no_new_out_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--out is made before the run, so that the run can spill into it; a run
    refused by a check of its own (a bad shoe file here) removes it again, and
    a directory where no file can be made is refused at once."""
    import tempfile

    bad = tmp_path / "bad.txt"
    bad.write_text("5H 9C XX 2S\n", encoding="utf-8")
    out = tmp_path / "new" / "out"
    code, _, err = backtest_here(
        monkeypatch, capsys, "run", str(REPO / VERDICT), "--shoes", str(bad), "--out", str(out)
    )
    assert code != 0 and "XX" in err
    assert not (tmp_path / "new").exists()
    code, _, err = backtest_here(
        monkeypatch, capsys, "run", str(REPO / VERDICT), "--shoes", str(tmp_path), "--out", str(out)
    )
    assert (code, err.strip()) == (2, f"error: --shoes: {tmp_path} is a directory, not a shoe file")

    def refused(*args: object, **kwargs: object) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    code, _, err = backtest_here(
        monkeypatch, capsys, "run", str(REPO / VERDICT), "--sessions", "3", "--out", str(out)
    )
    assert (code, err.strip()) == (
        2,
        f"error: --out {out}: cannot write files there (Operation "
        "not permitted); give a directory you can write to",
    )
    assert not (tmp_path / "new").exists()


# options click checks (types, choices, commands): its usage message and exit
# code 2, whichever copy of click typer uses, never a traceback
BAD_OPTIONS = {
    "seed": (["run", VERDICT, "--seed", "abc"], "Invalid value for '--seed'"),
    "format": (["run", VERDICT, "--format", "xml"], "Invalid value for '--format'"),
    "command": (["nosuch"], "No such command 'nosuch'"),
    "no-config": (["run"], "Missing argument"),
    "unknown-option": (["run", VERDICT, "--bogus"], "No such option: --bogus"),
}


@pytest.mark.parametrize("name", BAD_OPTIONS)
def test_bad_options_are_click_usage_errors(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args, says = BAD_OPTIONS[name]
    monkeypatch.chdir(REPO)
    code, out, err = backtest_here(monkeypatch, capsys, *args)
    assert code == 2, err
    assert says in err and "Usage: backtest" in err
    assert "Traceback" not in err and out == ""


def test_ctrl_c_exits_130_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from backtest.run import engine

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "run", interrupted)
    code, out, err = backtest_here(
        monkeypatch,
        capsys,
        "run",
        str(REPO / VERDICT),
        "--sessions",
        "3",
        "--out",
        str(tmp_path / "out"),
    )
    assert code == 130
    assert err.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in err and out == ""


# --- writing into a directory that already holds results ----------------------------------------


def _run_into(
    out: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *more: str
) -> tuple[int, str, str]:
    return backtest_here(
        monkeypatch, capsys, "run", str(REPO / VERDICT), "--sessions", "4", "--out", str(out), *more
    )


def _files(out: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(out.iterdir())}


def test_a_rerun_without_a_ledger_removes_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert _run_into(out, monkeypatch, capsys, "--ledger")[0] == 0
    assert (out / "ledger.parquet").is_file()
    code, _, err = _run_into(out, monkeypatch, capsys, "--seed", "5")
    assert code == 0, err
    assert sorted(_files(out)) == [
        "comparisons.parquet",
        "paths.parquet",
        "run.json",
        "sessions.parquet",
        "summary.parquet",
    ]  # nothing hidden left behind either
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["seed"] == 5


def test_a_rerun_that_fails_while_writing_leaves_the_earlier_run_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from backtest.present import outputs

    out = tmp_path / "out"
    assert _run_into(out, monkeypatch, capsys, "--ledger")[0] == 0
    before = _files(out)

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device", "run.json")

    monkeypatch.setattr(outputs, "write_json", full)
    code, _, err = _run_into(out, monkeypatch, capsys, "--seed", "5", "--sessions", "6")
    assert code == 1 and "No space left on device" in err
    assert _files(out) == before


def test_a_run_and_a_sweep_do_not_share_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from backtest.core.errors import UsageError
    from backtest.present import outputs

    swept = tmp_path / "swept"
    swept.mkdir()
    (swept / "sweep.json").write_text("{}\n", encoding="utf-8")
    code, out, err = _run_into(swept, monkeypatch, capsys)
    assert code == 2 and out == ""
    assert err.strip() == (
        f"error: --out {swept} holds the results of a sweep (sweep.json); "
        "give another directory for those of a run"
    )
    assert _files(swept) == {"sweep.json": b"{}\n"}
    ran = tmp_path / "ran"
    ran.mkdir()
    (ran / "run.json").write_text("{}\n", encoding="utf-8")
    with pytest.raises(UsageError, match="holds the results of a run"):
        outputs.check_out_dir(ran, "sweep")


def test_a_directory_in_the_way_of_a_result_file_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from backtest.run import engine

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started")

    monkeypatch.setattr(engine, "run", must_not_run)
    (tmp_path / "out" / "run.json").mkdir(parents=True)
    code, _, err = _run_into(tmp_path / "out", monkeypatch, capsys)
    assert code == 2
    assert f"{tmp_path / 'out' / 'run.json'} is a directory" in err


# numbers beyond what a run can do: one line naming the option, exit 2, no work done
OUT_OF_RANGE = {
    "sessions-0": (
        ["run", VERDICT, "--sessions", "0"],
        "error: --sessions must be from 1 to 1,000,000,000, got 0",
    ),
    "sessions-huge": (
        ["run", VERDICT, "--sessions", "99999999999999999999"],
        "error: --sessions must be from 1 to 1,000,000,000, got 99,999,999,999,999,999,999",
    ),
    "workers-huge": (
        ["run", VERDICT, "--workers", "99999999999999999999"],
        "error: --workers must be at most 256, got 99999999999999999999",
    ),
    "sweep-workers-0": (
        ["sweep", "configs/sweeps/martingale-ruin.yaml", "--out", "{tmp}/sweep", "--workers", "0"],
        "error: --workers must be at least 1, got 0",
    ),
    "dask-address": (
        [
            "sweep",
            "configs/sweeps/martingale-ruin.yaml",
            "--out",
            "{tmp}/sweep",
            "--executor",
            "dask",
            "--address",
            "not a url",
            "--sessions",
            "2",
        ],
        "error: --address not a url: not a scheduler address",
    ),
    "generate-seed": (
        ["shoe", "generate", "--seed", "-1"],
        "error: --seed must be a whole number of at least 0, got -1",
    ),
    "run-seed": (
        ["run", VERDICT, "--seed", "-1"],
        "error: --seed must be a whole number of at least 0, got -1",
    ),
    # the ledger is kept for the files --out writes: without them it is lost work
    "ledger-without-out": (
        ["run", VERDICT, "--ledger"],
        "error: --ledger keeps a row per seat per hand for the files --out "
        "writes; give --out DIR as well",
    ),
    "generate-decks": (
        ["shoe", "generate", "--decks", "0"],
        "error: --decks must be a whole number from 1 to 64, got 0",
    ),
    "generate-cut-card": (
        ["shoe", "generate", "--cut-card", "9999"],
        "error: --cut-card must be from 0 to 410 (8 decks' 416 cards less a hand's 6), got 9999",
    ),
    "generate-count": (
        ["shoe", "generate", "--count", "10000000000"],
        "error: --count must be from 1 to 1,000,000, got 10,000,000,000",
    ),
}


@pytest.mark.parametrize("name", OUT_OF_RANGE)
def test_numbers_out_of_range_are_usage_errors(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args, says = OUT_OF_RANGE[name]
    monkeypatch.chdir(REPO)
    code, out, err = backtest_here(monkeypatch, capsys, *(a.format(tmp=tmp_path) for a in args))
    assert code == 2, err
    assert err.strip().startswith(says) and len(err.strip().splitlines()) == 1
    assert out == ""
    if name == "sweep-workers-0":
        assert not (tmp_path / "sweep").exists()  # refused before the directory is made


def test_a_session_that_could_need_more_shoes_than_can_be_numbered_is_refused() -> None:
    from backtest.run.config import parse_config
    from backtest.run.engine import prepare

    cfg = parse_config(
        {
            "seed": 1,
            "sessions": 1,
            "shoe": {"decks": 1, "cut_card": 46},
            "session": {"bankroll": 1000, "max_hands": 1_048_577},
            "seats": [{"strategy": "flat"}],
        },
        source="long.yaml",
    )
    with pytest.raises(
        ConfigError,
        match=r"^long.yaml: session.max_hands: a session can deal "
        r"at most 1,048,576 shoes, and these sessions could "
        r"need 1,048,577",
    ):
        prepare(cfg)


def test_shoes_keeps_the_config_s_other_shoes_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--shoes names the file; the config's decks and burn still apply to it."""
    six = REPO / "data" / "generated-6deck-seed2.txt"
    config = tmp_path / "six.yaml"
    config.write_text(
        f"shoes: {{file: {six}, decks: 6, burn: true}}\nseats: [{{strategy: counter}}]\n",
        encoding="utf-8",
    )
    runs = [
        backtest_here(monkeypatch, capsys, "run", str(config), "-f", "json", *more)
        for more in ([], ["--shoes", str(six)])
    ]
    assert [code for code, _, _ in runs] == [0, 0]
    first, again = (json.loads(out) for _, out, _ in runs)
    assert again == first
    unburnt = tmp_path / "unburnt.yaml"  # and it is the burn that changes the hands
    unburnt.write_text(
        config.read_text(encoding="utf-8").replace("burn: true", "burn: false"), encoding="utf-8"
    )
    code, out, _ = backtest_here(monkeypatch, capsys, "run", str(unburnt), "-f", "json")
    assert json.loads(out)[0]["hands"] != first[0]["hands"]


def test_more_sessions_than_the_shoes_make_names_where_the_number_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Too many sessions for a recorded file: the config's `sessions` key when
    the config asked, --sessions when it did."""
    shoes = read_shoes(REPO / RECORDED).n_shoes
    config = tmp_path / "many.yaml"
    config.write_text(
        f"shoes: {{file: {REPO / RECORDED}}}\nsessions: {shoes + 1}\nseats: [{{strategy: flat}}]\n",
        encoding="utf-8",
    )
    code, out, err = backtest_here(monkeypatch, capsys, "run", str(config))
    assert code == 1 and out == ""
    assert err.startswith(
        f"error: {config}: line 2: sessions: {shoes + 1} sessions of 1 shoe "
        "need more "
        f"shoes than the {shoes} shoes of {REPO / RECORDED}, which make "
        f"{shoes}; ask for at most {shoes} sessions, or set shoes.loop: true"
    )
    code, out, err = backtest_here(
        monkeypatch,
        capsys,
        "run",
        str(REPO / VERDICT),
        "--shoes",
        str(REPO / RECORDED),
        "--sessions",
        str(shoes + 2),
    )
    assert code == 2 and out == ""  # an option's value: a usage error
    assert err.startswith(f"error: --sessions: {shoes + 2} sessions of 1 shoe")
    assert str(REPO / VERDICT) not in err  # the file did not ask for them


def test_shoes_in_place_of_generated_shoes_are_of_their_decks(tmp_path: Path) -> None:
    """`run --shoes` on a config of generated 6-deck shoes reads the file as
    6-deck shoes (a counter's cards left, the settled bets), not the default 8,
    and plays all of it, whatever number of sessions the config gave."""
    from backtest.run.config import load_config

    config = tmp_path / "gen6.yaml"
    config.write_text(
        "sessions: 500\nshoe: {decks: 6, burn: false}\nseats: [{strategy: counter}]\n",
        encoding="utf-8",
    )
    six = str(REPO / "data" / "generated-6deck-seed2.txt")
    cfg = load_config(config, {"shoes": {"file": six}}, remove=("shoe",), merge=("shoes",))
    assert cfg.recorded is not None and cfg.recorded.decks == 6
    # the config's 500 sessions were for generated shoes: the file is played whole
    assert cfg.sessions is None
    # decks given for the file must be the ones it says it was dealt from
    with pytest.raises(
        ConfigError,
        match=r"shoes.decks is 8, but .*generated-6deck-seed2.txt, "
        r"line 1 says its shoes were dealt from 6 decks",
    ):
        load_config(
            config, {"shoes": {"file": six, "decks": 8}}, remove=("shoe",), merge=("shoes",)
        )


def test_a_directory_given_as_the_config_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = backtest_here(monkeypatch, capsys, "run", str(tmp_path))
    assert (code, out) == (2, "")
    assert err.strip() == f"error: config file {tmp_path} is a directory, not a file"


def test_strategies_names_one_or_a_class_of_one_s_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine.py").write_text(
        "from dataclasses import dataclass\nfrom strategies.base import Strategy\n"
        "from strategies.params import Money, param\n\n"
        "class Mine(Strategy):\n    name = 'mine'\n    description = 'Mine.'\n\n"
        "    @dataclass(frozen=True)\n    class Params:\n"
        "        stake: Money = param(10.0, 'stake per bet')\n\n"
        "    def stakes(self, view):\n        return {'banker': self.params.stake}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = backtest_here(monkeypatch, capsys, "strategies", "mine.py:Mine", "follow")
    assert code == 0, err
    assert "mine.py:Mine: Mine.\n    stake (an amount, default 10.0): stake per bet" in out
    assert "follow-the-shoe (+): Bet on the last winner" in out and "martingale" not in out
    code, out, err = backtest_here(monkeypatch, capsys, "strategies", "martingal")
    assert (code, out) == (2, "")
    assert err.startswith("error: unknown strategy 'martingal'") and "martingale" in err


def test_strategies_as_csv_has_a_row_per_parameter(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv
    import io

    code, out, err = backtest_here(monkeypatch, capsys, "strategies", "-f", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert set(BUILTIN_NAMES) <= {r["strategy"] for r in rows}
    base = [r for r in rows if r["strategy"] == "martingale" and r["parameter"] == "base"]
    assert len(base) == 1 and base[0]["default"] == "10.0"
    bets = [r for r in rows if r["strategy"] == "flat" and r["parameter"] == "bets"]
    assert len(bets) == 1 and bets[0]["default"] == "{banker: 10.0}"


def test_a_config_error_gives_the_line_of_the_key_it_names(tmp_path: Path) -> None:
    """The line of the key, of the nearest key above it for one the file does
    not write, of what a `<<` merge brings in; none for a key an option set."""
    from backtest.core.errors import ConfigError
    from backtest.run.config import load_config

    def error(text: str, **overrides: object) -> str:
        path = tmp_path / "lines.yaml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as info:
            load_config(path, overrides)
        return str(info.value).removeprefix(f"{path}: ")

    seats = "seats:\n  - strategy: flat\n  - strategy: martingale\n    params:\n"
    assert (
        error(f"seed: 1\n{seats}      base: 10\n      multiplier: 1\n")
        == "line 7: seats[1].params.multiplier: must be more than 1, got 1"
    )
    # the table's maximum is not written: the line of `table`
    assert error("seed: 1\ntable:\n  min: 2000000\n" + seats + "      base: 10\n").startswith(
        "line 2: table.max: "
    )
    # a key a merge brings in: the line where it is written
    assert error(
        "seed: 1\nsession: &s {bankroll: 1000}\ntable:\n  <<: *s\n  min: 10\n"
        + seats
        + "      base: 10\n"
    ).startswith("line 2: table.bankroll: unknown key")
    # a value given on the command line is not the file's: no line
    assert error(f"seed: 1\n{seats}      base: 10\n", seed=-1) == "seed: must be at least 0, got -1"

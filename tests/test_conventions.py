"""The command line as a person meets it: --version, help as command lines
write it, -q, NO_COLOR, the ready configs by name, and output that fits an
80-column terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_helpers import backtest_here

from backtest.cli import entry, shell
from backtest.run import ready

REPO = Path(__file__).resolve().parents[1]
WIDTH = 80


def run_here(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    return backtest_here(monkeypatch, capsys, *args)


def too_wide(text: str, width: int = WIDTH) -> list[str]:
    return [line for line in text.splitlines() if len(line) > width]


def test_version(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from backtest import __version__

    code, out, err = run_here(monkeypatch, capsys, "--version")
    assert (code, out, err) == (0, f"backtest {__version__}\n", "")


def test_help_names_arguments_in_capitals_and_shows_no_bool(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run_here(monkeypatch, capsys, "run", "--help")
    assert code == 0
    assert "backtest run [OPTIONS] CONFIG" in out and "{config}" not in out
    assert "<bool>" not in out and "--ledger" in out
    code, out, _ = run_here(monkeypatch, capsys, "strategies", "--help")
    assert "backtest strategies [OPTIONS] [NAMES]..." in out
    code, out, _ = run_here(monkeypatch, capsys, "--help")
    assert "backtest [OPTIONS] COMMAND [ARGS]..." in out
    assert "--install-completion" in out and "--show-completion" in out and "--version" in out
    assert "<bool>" not in out


def test_no_color_only_when_set_and_not_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert shell.colour_wanted()
    monkeypatch.setenv("NO_COLOR", "")
    assert shell.colour_wanted()  # empty: as if unset
    monkeypatch.setenv("NO_COLOR", "1")
    assert not shell.colour_wanted()
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert not shell.colour_wanted()


def test_quiet_says_nothing_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("shoe", "generate", "--count", "2", "--out", str(tmp_path / "s.txt"))
    code, _, err = run_here(monkeypatch, capsys, *args)
    assert code == 0 and err.startswith("wrote 2 shoe(s)")
    code, _, err = run_here(monkeypatch, capsys, *args, "-q")
    assert (code, err) == (0, "")
    code, _, err = run_here(monkeypatch, capsys, "--quiet", *args)
    assert (code, err) == (0, "")
    # a warning is a note too: gone with -q, errors are not
    monkeypatch.setattr(shell, "quiet_mode", False)
    entry._show_warning(UserWarning("careful"), UserWarning, "x.py", 1)
    assert capsys.readouterr().err == "warning: careful\n"
    monkeypatch.setattr(shell, "quiet_mode", True)
    entry._show_warning(UserWarning("careful"), UserWarning, "x.py", 1)
    assert capsys.readouterr().err == ""
    code, _, err = run_here(monkeypatch, capsys, "-q", "run", str(tmp_path / "none.yaml"))
    assert code != 0 and err.startswith("error:")


def test_the_ready_configs_are_listed_and_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_here(monkeypatch, capsys, "configs", "-f", "json")
    assert code == 0
    listed = {(r["name"], r["kind"]) for r in json.loads(out)}
    on_disk = {(p.stem, "run") for p in (REPO / "configs").glob("*.yaml")}
    on_disk |= {(p.stem, "run") for p in (REPO / "configs" / "strategies").glob("*.yaml")}
    on_disk |= {(p.stem, "sweep") for p in (REPO / "configs" / "sweeps").glob("*.yaml")}
    on_disk |= {(p.stem, "rules") for p in (REPO / "configs" / "rules").glob("*.yaml")}
    assert listed == on_disk and ("verdict", "run") in listed and ("german", "rules") in listed
    assert ready.resolve(Path("verdict"), "run") == REPO / "configs" / "verdict.yaml"
    assert ready.resolve(Path("progressions"), "sweep").name == "progressions.yaml"
    # a name of the other kind, or a path, is left to the loader
    assert ready.resolve(Path("progressions"), "run") == Path("progressions")
    assert ready.resolve(Path("configs/verdict.yaml"), "run") == Path("configs/verdict.yaml")
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    code, out, _ = run_here(monkeypatch, capsys, "configs")
    assert code == 0 and not too_wide(out) and "verdict" in out


def test_run_sweep_odds_strategies_fit_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.chdir(tmp_path)  # the ready config by name, from anywhere
    code, out, err = run_here(
        monkeypatch, capsys, "run", "verdict", "--sessions", "30", "--workers", "1"
    )
    assert code == 0, err
    assert not too_wide(out), too_wide(out)
    # every number of the wide table is there, in the stacked one
    monkeypatch.setenv("COLUMNS", "400")
    _, wide, _ = run_here(
        monkeypatch, capsys, "run", "verdict", "--sessions", "30", "--workers", "1"
    )

    def numbers(text: str) -> list[str]:
        return sorted(w for w in text.split() if any(c.isdigit() for c in w))

    def table_of(text: str) -> str:
        return text.split("\n\n" + "Flat Banker: won")[0]

    assert numbers(table_of(wide)) == sorted(numbers(table_of(out)))
    assert "Flat Banker: won money in" in out
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    code, out, err = run_here(
        monkeypatch,
        capsys,
        "sweep",
        "progressions",
        "--sessions",
        "3",
        "--out",
        str(tmp_path / "sweep"),
        "--workers",
        "1",
    )
    assert code == 0, err
    assert not too_wide(out), too_wide(out)
    for args in (("odds", "--rules", "ez"), ("odds",), ("strategies",)):
        code, out, err = run_here(monkeypatch, capsys, *args)
        assert code == 0, err
        assert not too_wide(out), (args, too_wide(out))
    # piped formats are as they were: a line per row, however wide
    code, out, _ = run_here(monkeypatch, capsys, "odds", "-f", "csv")
    assert too_wide(out)


def test_every_parquet_file_says_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import polars as pl

    from backtest import __version__

    out = tmp_path / "run"
    code, _, err = run_here(
        monkeypatch,
        capsys,
        "run",
        "verdict",
        "--sessions",
        "5",
        "--seed",
        "7",
        "--workers",
        "1",
        "--out",
        str(out),
        "--ledger",
    )
    assert code == 0, err
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    files = sorted(out.glob("*.parquet"))
    assert {f.name for f in files} == {
        "summary.parquet",
        "sessions.parquet",
        "paths.parquet",
        "ledger.parquet",
        "comparisons.parquet",
    }
    for f in files:
        tags = pl.read_parquet_metadata(f)
        assert tags["backtest.version"] == __version__
        assert tags["backtest.command"] == (
            f"backtest run verdict --sessions 5 --seed 7 --workers 1 --out {out} --ledger"
        )
        assert tags["backtest.seed"] == "7"
        assert tags["backtest.config_sha256"] == meta["config_sha256"]
        assert len(meta["config_sha256"]) == 64
    # another seed: another config as run
    code, _, err = run_here(
        monkeypatch,
        capsys,
        "run",
        "verdict",
        "--sessions",
        "5",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "other"),
    )
    other = pl.read_parquet_metadata(tmp_path / "other" / "summary.parquet")
    assert other["backtest.seed"] == "1"
    assert other["backtest.config_sha256"] != meta["config_sha256"]
    # a sweep's cells and summary: the sweep's seed and the hash sweep.json keeps
    sweep_out = tmp_path / "sweep"
    code, _, err = run_here(
        monkeypatch,
        capsys,
        "sweep",
        "progressions",
        "--sessions",
        "2",
        "--out",
        str(sweep_out),
        "--workers",
        "1",
        "-q",
    )
    assert code == 0, err
    sweep_meta = json.loads((sweep_out / "sweep.json").read_text(encoding="utf-8"))
    for f in [sweep_out / "summary.parquet", *(sweep_out / "cells").glob("*.parquet")]:
        tags = pl.read_parquet_metadata(f)
        assert tags["backtest.seed"] == str(sweep_meta["seed"])
        assert tags["backtest.config_sha256"] == sweep_meta["spec_hash"]
        assert tags["backtest.command"].startswith("backtest sweep progressions")


@pytest.mark.slow
def test_shell_completion_completes_the_commands() -> None:
    import os
    import subprocess

    environ = os.environ | {
        "_BACKTEST_COMPLETE": "complete_bash",
        "COMP_WORDS": "backtest ru",
        "COMP_CWORD": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "backtest"], env=environ, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout.split()) == (0, ["run"])

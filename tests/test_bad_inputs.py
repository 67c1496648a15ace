"""Every case of the bad-input corpus (`tests/bad_inputs/cases.yaml`) run
through the command line's entry point, in this process.

For each: no traceback, the exit code the README promises (2 for an option's
value or what it points at, 1 for the contents of config and shoe files),
one error line on stderr that says what the case expects (the file and
line, the key or the option, and what is wrong), and nothing left in `--out`
by the refused run.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml
from cli_helpers import backtest_here

from backtest import cli

REPO = Path(__file__).resolve().parents[1]
CASES = yaml.safe_load((REPO / "tests" / "bad_inputs" / "cases.yaml").read_text(encoding="utf-8"))


def with_repo(text: str) -> str:
    return text.replace("{repo}", str(REPO))


def write_files(folder: Path, files: dict[str, Any]) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(with_repo(content), encoding="utf-8")
        elif "hex" in content:
            path.write_bytes(bytes.fromhex(content["hex"]))
        else:  # a big file: a head, then one line many times
            path.write_text(
                content.get("head", "") + content["repeat"] * content["times"], encoding="utf-8"
            )


def snapshot(folder: Path) -> dict[str, bytes] | None:
    """Every file under `folder`, with its contents (None: no such folder)."""
    if not folder.is_dir():
        return None
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


#: the words of the command itself, which name nothing of the input
COMMAND_WORDS = {
    "run",
    "sweep",
    "odds",
    "deal",
    "roads",
    "play",
    "shoe",
    "generate",
    "report",
    "strategies",
}


def names_its_place(error: str, case: dict[str, Any]) -> bool:
    """Whether the error line names where the input is wrong: a line, an
    option, one of the files, or the argument it refuses."""
    if re.search(r"\bline \d+|--[a-z]", error):
        return True
    things = [
        a
        for a in case["args"]
        if a not in COMMAND_WORDS and not a.startswith("-") and len(a) > 1 and not a.isdigit()
    ]
    things += [name.split("/")[0] for name in case.get("files", {})]
    return any(with_repo(t) in error for t in things)


def run_case(
    case: dict[str, Any],
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    write_files(folder, case.get("files", {}))
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "stdin", io.StringIO(case.get("stdin", "")))
    return backtest_here(monkeypatch, capsys, *(with_repo(a) for a in case["args"]))


@pytest.fixture(scope="module", autouse=True)
def command_built_once() -> Iterator[None]:
    """The click command typer builds from the app on every call, built once
    for the corpus (most of a refused command's time in this process)."""
    built = typer.main.get_command(cli.app)
    real = typer.main.get_command
    typer.main.get_command = lambda app: built if app is cli.app else real(app)  # type: ignore[assignment]
    try:
        yield
    finally:
        typer.main.get_command = real


def test_the_corpus_is_large_and_its_cases_named_once() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 150
    commands = {c["args"][0] for c in CASES}
    assert {
        "run",
        "sweep",
        "odds",
        "deal",
        "roads",
        "play",
        "shoe",
        "report",
        "strategies",
    } <= commands
    assert all(c["says"] for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_a_bad_input_is_refused_cleanly(
    case: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [with_repo(a) for a in case["args"]]
    out = tmp_path / args[args.index("--out") + 1] if "--out" in args else None
    # what --out held before the run (the case's own files in it, or nothing)
    write_files(tmp_path, case.get("files", {}))
    before = snapshot(out) if out is not None else None
    code, stdout, stderr = run_case(case, tmp_path, monkeypatch, capsys)
    assert "Traceback" not in stdout + stderr
    errors = [line for line in stderr.splitlines() if line.lower().startswith("error:")]
    assert len(errors) == 1, stderr
    assert with_repo(case["says"]) in errors[0], errors[0]
    assert names_its_place(errors[0], case), errors[0]
    assert code == case["code"], errors[0]
    if out is not None and not out.is_file():
        assert snapshot(out) == before, "the refused run left files in --out"

"""Every code block of the README and of the pages in docs/, run as a reader
would run it, so that no page drifts from the code.

- A ```python block runs as written, from the project's folder. Each strategy
  class it defines plays a short run from a file, as a config names it.
- A ```yaml block is a run config (it has `seats`), a sweep (`grid` or `zip`)
  or a rules file; each plays a few sessions, or prints the odds.
- A ```sh block's `backtest` commands parse on the command line (the fast
  tier) and run as real processes, in order, block by block (the slow tier).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer.main
import yaml
from cli_helpers import backtest_here

from backtest import cli

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
STRATEGY_CLASS = re.compile(r"^class (\w+)\((Strategy|Compiled)\):", re.M)
#: "Save this as `my-table.yaml`": the name a page gives the block above it
SAVED_AS = re.compile(r"as `([\w.-]+\.yaml)`")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str
    after: str  # the page's text just after the block

    def __str__(self) -> str:
        return f"{self.page.name}:{self.line}"


def blocks(lang: str | None = None) -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if lang is None or match[1] == lang:
                line = text.count("\n", 0, match.start()) + 1
                after = text[match.end() : match.end() + 400]
                found.append(Block(page, line, match[1], match[2], after))
    return found


def doc_block(after: str) -> str:
    """The first ```python block after the text `after`, in the README or a
    page of docs/: the tests run the pages' own code, not a copy."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if after in text:
            start = text.index("```python\n", text.index(after)) + len("```python\n")
            return text[start : text.index("```", start)]
    raise LookupError(f"no page holds {after!r}")


def scratch(folder: Path) -> Path:
    """A folder that looks like the project's to a reader's commands."""
    for name in ("configs", "data"):
        (folder / name).symlink_to(REPO / name)
    return folder


def test_every_page_starts_with_an_example() -> None:
    for page in PAGES[1:]:
        if page.name == "DESIGN.md":
            continue
        lines = [line for line in page.read_text(encoding="utf-8").splitlines() if line]
        assert lines[0].startswith("# ") and lines[1].startswith("```"), page.name
    unknown = [str(b) for b in blocks() if b.lang not in {"python", "yaml", "sh", "text"}]
    assert not unknown


@pytest.mark.parametrize("block", blocks("python"), ids=str)
def test_python_block_runs(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    module = ModuleType("doc_block")  # its dataclasses look their module up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(block.text, str(block.page), "exec"), module.__dict__)


def _classes() -> list[object]:
    return [
        pytest.param(
            block, name, id=f"{block}:{name}", marks=[pytest.mark.slow] * (kind == "Compiled")
        )
        for block in blocks("python")
        for name, kind in STRATEGY_CLASS.findall(block.text)
    ]


@pytest.mark.parametrize(("block", "name"), _classes())
def test_strategy_class_plays(
    block: Block,
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "doc_strategy.py").write_text(block.text, encoding="utf-8")
    config = tmp_path / "config.yaml"
    seat = {"strategy": f"{tmp_path / 'doc_strategy.py'}:{name}", "name": "doc seat"}
    config.write_text(yaml.safe_dump({"seed": 1, "sessions": 30, "seats": [seat]}))
    code, out, err = backtest_here(monkeypatch, capsys, "run", str(config), "--workers", "1")
    assert code == 0, err
    assert "doc seat" in out


@pytest.mark.parametrize("block", blocks("yaml"), ids=str)
def test_yaml_block_runs(
    block: Block,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = yaml.safe_load(block.text)
    monkeypatch.chdir(scratch(tmp_path))
    path = tmp_path / "block.yaml"
    path.write_text(block.text, encoding="utf-8")
    if "seats" in data:
        args = ["run", str(path), "--sessions", "3", "--workers", "1"]
    elif "grid" in data or "zip" in data:
        out = tmp_path / "out"
        args = ["sweep", str(path), "--out", str(out), "--sessions", "2", "--workers", "1"]
    else:
        args = ["odds", "--rules", str(path)]
    code, out_text, err = backtest_here(monkeypatch, capsys, *args)
    assert code == 0, err
    assert out_text


def _commands(block: Block) -> list[list[str]]:
    """The `backtest` commands of a shell block, without comments; a pipe's
    input and an `&&` before them (an install) are not the command's."""
    found = []
    for line in block.text.splitlines():
        for part in re.split(r"&&|\|", line):
            words = shlex.split(part, comments=True)
            if words[:1] == ["backtest"]:
                found.append(words[1:])
    return found


def _parse(args: list[str]) -> None:
    """Resolve `args` to a command and parse its options and arguments as
    click does before it runs one: an unknown command or option, an option
    without its value or an argument too many raises. (typer may bundle its
    own copy of click, so a group is told by its method.)"""
    command: Any = typer.main.get_command(cli.app)
    ctx = command.context_class(command, info_name="backtest")
    rest = list(args)
    while hasattr(command, "resolve_command"):
        _, rest, _ = command.make_parser(ctx).parse_args(rest)
        name, command, rest = command.resolve_command(ctx, rest)
        ctx = command.context_class(command, info_name=name, parent=ctx)
    _, extra, _ = command.make_parser(ctx).parse_args(rest)
    assert not extra, f"{args}: unexpected {extra}"


SHELL_BLOCKS = [b for b in blocks("sh") if _commands(b)]


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=str)
def test_shell_block_commands_parse(block: Block) -> None:
    for args in _commands(block):
        _parse(args)


#: lines a test cannot run: installs, the tests and benchmarks themselves, a
#: cluster of one's own
NOT_RUN = re.compile(r"^(pip|python|dask) |--address")


@pytest.mark.slow
@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=str)
def test_shell_block_runs(block: Block, tmp_path: Path) -> None:
    folder = scratch(tmp_path)
    for other in blocks("yaml"):  # the files the page says to save
        if other.page == block.page and (saved := SAVED_AS.search(other.after)):
            (folder / saved[1]).write_text(other.text, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    shell = f'backtest() {{ "{sys.executable}" -m backtest "$@"; }}\n'
    for line in block.text.splitlines():
        line = line.split("  #")[0].strip()
        parts = [p.strip() for p in line.split("&&")]
        runnable = " && ".join(p for p in parts if p and not NOT_RUN.search(p))
        if not runnable:
            continue
        proc = subprocess.run(
            ["bash", "-c", shell + runnable],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"{block}: {runnable}\n{proc.stderr}"

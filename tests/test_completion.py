"""Completion of names: each completion function, and the parameters of the
command line that call them (as a shell's completion request reaches them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main

from backtest.cli import entry
from backtest.cli.completion import (
    complete_rules,
    complete_run_config,
    complete_strategies,
    complete_sweep,
    yaml_paths,
)
from backtest.core.rules import PRESETS
from strategies.registry import BUILTIN_NAMES


def values(found: list[Any]) -> list[str]:
    return [item[0] if isinstance(item, tuple) else item for item in found]


@pytest.fixture(autouse=True)
def in_an_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No files beside the names, unless a test makes them."""
    monkeypatch.chdir(tmp_path)


def test_rules_complete_to_the_presets_with_their_descriptions() -> None:
    assert sorted(values(complete_rules(""))) == sorted(PRESETS)
    found = dict(item for item in complete_rules("no") if isinstance(item, tuple))
    assert list(found) == ["no-commission"]
    assert found["no-commission"]  # its description


def test_configs_complete_to_the_ready_ones_of_their_kind() -> None:
    assert values(complete_run_config("verd")) == ["verdict"]
    assert "martingale-ruin" in values(complete_sweep("mart"))
    assert "verdict" not in values(complete_sweep(""))
    assert "martingale-ruin" not in values(complete_run_config(""))


def test_strategies_complete_to_the_built_ins() -> None:
    assert values(complete_strategies("")) == list(BUILTIN_NAMES)
    assert values(complete_strategies("mart")) == ["martingale"]


def test_beside_the_names_come_yaml_files_and_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "run.yaml").touch()
    (tmp_path / "mine" / "notes.txt").touch()
    (tmp_path / "main.yml").touch()
    (tmp_path / ".hidden.yaml").touch()
    monkeypatch.chdir(tmp_path)
    assert yaml_paths("m") == ["main.yml", "mine/"]
    assert yaml_paths("mine/") == ["mine/run.yaml"]
    assert yaml_paths(".h") == [".hidden.yaml"]
    assert yaml_paths("nowhere/x") == []
    assert values(complete_run_config("mi")) == ["mine/"]
    assert yaml_paths(f"{tmp_path}/mine/r") == [f"{tmp_path}/mine/run.yaml"]


def shell_completes(command: list[str], param: str, incomplete: str) -> list[str]:
    """What the parameter `param` of `backtest COMMAND...` completes
    `incomplete` to, as the command line's completion asks it."""
    group: Any = typer.main.get_command(entry.app)
    for name in command:
        group = group.commands[name]
    ctx = group.context_class(group, info_name=command[-1])
    (found,) = [p for p in group.params if p.name == param]
    return [item.value for item in found.shell_complete(ctx, incomplete)]


@pytest.mark.parametrize(
    ("command", "param", "incomplete", "expected"),
    [
        (["run"], "config", "verd", ["verdict"]),
        (["run"], "rules", "no-", ["no-commission"]),
        (["run"], "fmt", "", ["table", "csv", "json"]),
        (["run"], "executor", "", ["local", "dask"]),
        (["sweep"], "sweep_file", "martingale-", ["martingale-ruin"]),
        (["sweep"], "rules", "germ", ["german"]),
        (["sweep"], "fmt", "j", ["json"]),
        (["sweep"], "executor", "d", ["dask"]),
        (["odds"], "rules", "e", ["ez"]),
        (["play"], "rules", "bul", ["bulgarian"]),
        (["analyze"], "rules", "viet", ["vietnamese"]),
        (["strategies"], "names", "oscars", ["oscars-grind"]),
    ],
)
def test_the_command_line_completes_names(
    command: list[str], param: str, incomplete: str, expected: list[str]
) -> None:
    assert shell_completes(command, param, incomplete) == expected

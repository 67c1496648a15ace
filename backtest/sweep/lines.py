"""An error in a sweep placed at its line: the run config checked once, before
the cells, and the line of the value a cell's error is about."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from backtest.core import yamlfile
from backtest.core.errors import ConfigError
from backtest.run.config import parse_config, with_line
from backtest.run.paths import top_key


def check_shared(
    path: Path,
    base: Mapping[str, Any],
    from_file: bool,
    run_dir: Path,
    run_source: str,
    keys: Sequence[str],
    memo: dict[Any, Any],
    fixed: Mapping[str, Any],
) -> None:
    """The run config alone, once, before the cells: an error in a setting no
    cell varies (nor depends on: a table's limits on the rules) is the run
    config's, named by its own file and line (or the sweep's `run:`)."""
    try:
        parse_config({**base, **fixed}, run_dir, run_source, memo)
    except ConfigError as exc:
        message = str(exc)
        if not message.startswith(run_source + ": "):
            return
        rest = message[len(run_source) + 2 :]
        named = top_key(re.split(r"[: ]", rest, maxsplit=1)[0])
        varied = {top_key(k) for k in keys}
        if (
            named is None
            or named in varied
            or (named == "table" and "rules" in varied)
            or named in fixed
        ):
            return  # the cells say it, each with its values
        if from_file:
            raise with_line(exc, Path(run_source), set()) from None
        lines = _lines(path)
        key = re.split(r"[: ]", rest, maxsplit=1)[0]
        while key and f"run.{key}" not in lines:
            key = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", key) if re.search(r"[.\[]", key) else ""
        where = f"line {lines[f'run.{key}']}: " if key else ""
        raise ConfigError(f"{path}: {where}run.{rest}") from None


def _lines(path: Path) -> dict[str, int]:
    try:
        return yamlfile.key_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return {}


def varied_line(
    path: Path,
    message: str,
    index: int,
    grid: Mapping[str, list[Any]],
    zipped: Mapping[str, list[Any]],
) -> str:
    """'line L: ' of the value in the sweep file that cell `index` takes for
    the varied key `message` is about (it starts with a key path); '' when it
    is about no varied key, or the file cannot be read again."""
    named = re.split(r"[: ]", message, maxsplit=1)[0]
    # the cell's position in each list: the grid's last key varies fastest, then the zip
    rows = len(next(iter(zipped.values()))) if zipped else 1
    flat, position = divmod(index, rows)
    positions = {key: position for key in zipped}
    for key in reversed(list(grid)):
        flat, positions[key] = divmod(flat, len(grid[key]))
    for key, at in positions.items():
        if (
            named == key
            or named.startswith((f"{key}.", f"{key}["))
            or key.startswith((f"{named}.", f"{named}["))
        ):
            section = "grid" if key in grid else "zip"
            try:
                lines = yamlfile.key_lines(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
                return ""
            line = lines.get(f"{section}.{key}[{at}]", lines.get(f"{section}.{key}"))
            return f"line {line}: " if line else ""
    return ""

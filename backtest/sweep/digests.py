"""What a sweep's numbers depend on beyond its text: the cells' rules as read
and the files they read, digested, so that `--resume` sees a change."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from backtest.run.config import RunConfig


def _digest(path: str | Path, seen: dict[str, str]) -> str:
    key = str(path)
    if key not in seen:
        try:
            with open(path, "rb") as fh:  # a block at a time: a shoe file may be large
                seen[key] = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError:
            seen[key] = "unreadable"
    return seen[key]


def rules_text(config: RunConfig) -> str:
    """A cell's rules as read (a rules file's settings, not its description):
    what its numbers depend on beyond the sweep's text. `--resume` compares them."""
    rules = {k: v for k, v in config.rules.to_mapping().items() if k != "description"}
    return json.dumps(rules, sort_keys=True, default=str)


def file_digests(config: RunConfig, seen: dict[str, str]) -> dict[str, str]:
    """The contents of the files a cell reads (recorded shoes, a strategy's own
    file), by resolved path, however the sweep or the current folder reached
    them. `--resume` compares them."""
    from strategies import registry

    files: list[str | Path] = [config.recorded.path] if config.recorded is not None else []
    for seat in config.seats:
        if ":" in seat.strategy:
            module = sys.modules.get(registry.get(seat.strategy, seat.base_dir).__module__)
            file = getattr(module, "__file__", None)
            files += [file] if file else []
    return {key: _digest(key, seen) for key in (str(Path(f).resolve()) for f in files)}

"""What a sweep's numbers depend on beyond its text: the cells' rules as read,
the files they read and the code that ran them, digested, so that
`--resume` sees a change."""

from __future__ import annotations

import hashlib
import json
import sys
from functools import cache
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


@cache
def code_digest() -> str:
    """SHA-256 (in hex) of the code that works out a cell's numbers: the
    package's version and every source file of its two packages (`backtest`
    and the built-in `strategies`). Each cell's file records it, and
    `--resume` takes only cells made by the same code."""
    from backtest import __version__

    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256(__version__.encode())
    for package in ("backtest", "strategies"):
        for file in sorted((root / package).rglob("*.py")):
            digest.update(file.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()

"""A sweep's cells: each one's varied values, key, id, label and seed, and the
sweep they make."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from backtest.run.config import RunConfig


@dataclass(frozen=True)
class Cell:
    """One combination of the varied settings."""

    index: int
    values: tuple[tuple[str, Any], ...]
    config: RunConfig
    sessions: int
    per_session: int

    @property
    def key(self) -> str:
        return cell_key(self.values)

    @property
    def id(self) -> str:
        return hashlib.sha256(self.key.encode()).hexdigest()[:16]

    def label(self) -> str:
        return cell_label(self.values)


@dataclass(frozen=True)
class Sweep:
    name: str
    source: str
    base_dir: Path
    keys: tuple[str, ...]
    cells: tuple[Cell, ...]
    seed: int
    metric: str
    spec_hash: str
    #: digests of what the cells read beyond the sweep's text (`rules_text`, `file_digests`)
    inputs: Mapping[str, str]
    #: what the spec hash is made from, as JSON reads it back (run config, grid, zip,
    #: seed, sessions, common_shoes): kept in sweep.json to say what another sweep changed
    settings: Mapping[str, Any]


def cell_label(values: Sequence[tuple[str, Any]]) -> str:
    """A cell in words: its varied values, short (a seat by its name)."""
    return (
        ", ".join(
            f"{k}={short_value(value_label(v) if isinstance(v, (dict, list)) else v)}"
            for k, v in values
        )
        or "(base)"
    )


def cell_key(values: Sequence[tuple[str, Any]]) -> str:
    """A cell's identity: its varied values, whatever order the keys were written in."""
    return json.dumps(sorted([k, v] for k, v in values), sort_keys=True, default=str)


def value_label(value: Any) -> str:
    """A short name for a varied value that is a mapping or a list (a seat: its name)."""
    if isinstance(value, Mapping):
        for key in ("name", "strategy"):
            if isinstance(value.get(key), str):
                return value[key]
    return json.dumps(value, sort_keys=True, default=str)


def short_value(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, str) else v
    return text if len(text) <= 40 else text[:37] + "..."


def cell_seed(master: int, key: str) -> int:
    words = np.frombuffer(hashlib.sha256(key.encode()).digest()[:16], dtype=np.uint32)
    state = np.random.SeedSequence([master, *map(int, words)]).generate_state(2, np.uint32)
    return int(state[0]) << 31 | int(state[1]) >> 1

"""The run config the streamed- and indexed-read tests play a shoe file
with: flat Banker and a Martingale (and follow-the-shoe if asked) at a
table of 1 to 100, over the file's shoes, looped when `sessions` is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backtest.run.config import RunConfig, parse_config

SEATS = [
    {"strategy": "flat", "params": {"bets": {"banker": 5}}},
    {"strategy": "martingale", "params": {"base": 5}},
]
FOLLOW = {"strategy": "follow-the-shoe", "params": {"base": 5}}


def recorded_run(
    path: Path,
    sessions: int | None,
    *,
    decks: int | None = 1,
    follow: bool = False,
    source: str = "streamed.yaml",
    **session: Any,
) -> RunConfig:
    shoes: dict[str, Any] = {"file": path.name, "loop": sessions is not None}
    if decks is not None:
        shoes["decks"] = decks
    data: dict[str, Any] = {
        "seed": 1,
        "shoes": shoes,
        "session": {"bankroll": 300, **session},
        "table": {"min": 1, "max": 100},
        "seats": [*SEATS, FOLLOW] if follow else list(SEATS),
    }
    if sessions is not None:
        data["sessions"] = sessions
    return parse_config(data, base_dir=path.parent, source=source)

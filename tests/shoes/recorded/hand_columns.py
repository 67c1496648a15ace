"""What the big-file tests compare: every column of some hands, as
lists, and what they record (`known`)."""

from __future__ import annotations

from typing import Any

from backtest.core.hands import COLUMNS


def columns(hands: Any) -> dict[str, Any]:
    return {"known": sorted(hands.known), **{n: getattr(hands, n).tolist() for n in COLUMNS}}

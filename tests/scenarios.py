"""Tables that reach the edges a session loop must get right, shared by the
tests that compare two ways of playing them (compiled and plain Python,
interpreted and compiled): (session, table, each seat's params) by name."""

from __future__ import annotations

from typing import Any

SCENARIOS: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    # the table maximum restarts progressions; ruin when stakes exceed the bankroll; win goal
    "max-reset-stop": (
        {"bankroll": 300, "win_goal": 150, "max_shoes": 1},
        {"min": 10, "max": 80},
        {"on_max": "reset", "on_bankroll": "stop"},
    ),
    # capped at the maximum, all in at the bankroll, pushes reset, a Tie side bet
    "cap-all-in-side-bet": (
        {"bankroll": 170, "max_shoes": 1},
        {"min": 5, "max": 60, "limits": {"tie": {"min": 1, "max": 5}}},
        {"on_max": "cap", "on_bankroll": "all-in", "on_push": "reset", "side_bets": {"tie": 1}},
    ),
    # sessions of 120 hands across shoes, ended by a stop-loss or a win goal
    "stop-loss-win-goal-hands": (
        {"bankroll": 400, "stop_loss": 100, "win_goal": 60, "max_hands": 120},
        {"min": 10, "max": 500},
        {"on_max": "reset", "on_bankroll": "all-in"},
    ),
}

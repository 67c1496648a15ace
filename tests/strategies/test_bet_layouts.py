"""Every per-bet layout follows `Bet`, and which bets combine follows `Rules`:
with an eighth bet added to the game (an Either Pair, a pair bet), the slots
of the parameter vector stay apart, the strategies' own stakes and masks grow
by one, and the table's rules refuse it alone where pair bets need a main bet.

The eighth bet is added to `backtest.core.rules` as a player of the game would
add one (a member of `Bet`, its group, its payout), in a child interpreter
that reads the patched module before anything else imports it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from backtest.core.rules import MAIN_BETS, Bet, Winner

# the child: patch the rules module, then read every layout as the code derives it
CHILD = textwrap.dedent(
    """
    import importlib.util, json, sys
    from pathlib import Path

    spec = importlib.util.find_spec("backtest.core.rules")
    source = Path(spec.origin).read_text(encoding="utf-8")
    for old, new in (
        ('    PANDA_8 = "panda8"\\n', '    PANDA_8 = "panda8"\\n    EITHER_PAIR = "either_pair"\\n'),
        ("PAIR_BETS = (Bet.PLAYER_PAIR, Bet.BANKER_PAIR)",
         "PAIR_BETS = (Bet.PLAYER_PAIR, Bet.BANKER_PAIR, Bet.EITHER_PAIR)"),
        ("            Bet.BANKER_PAIR: self.pair_payout,\\n",
         "            Bet.BANKER_PAIR: self.pair_payout,\\n"
         "            Bet.EITHER_PAIR: self.pair_payout,\\n"),
    ):
        assert source.count(old) == 1, f"the rules module no longer reads {old!r}"
        source = source.replace(old, new)
    rules = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = rules
    exec(compile(source, spec.origin, "exec"), rules.__dict__)

    import numpy as np

    from backtest.core.errors import RulesError
    from backtest.loop import table_rules as tr
    from strategies import slots
    from strategies.counting import CounterParams, ExactCounter
    from strategies.counting import decide as counter_decide
    from strategies.flat import Flat, FlatParams
    from strategies.flat import decide as flat_decide

    Bet = rules.Bet
    fake = Bet.EITHER_PAIR.code
    n = slots.N_BETS
    facts = {"n_bets": n, "fake": fake, "main": [b.code for b in rules.MAIN_BETS]}
    facts["head"] = [slots.P_ON_MAX, slots.P_ON_BANKROLL, slots.P_ON_PUSH]
    facts["head"] += [slots.P_SIDE + b.code for b in Bet] + [slots.P_PAIRS_ALONE]
    facts["own"] = slots.P_OWN

    # a flat seat on Banker and the eighth bet, with a side bet on the eighth
    flat = Flat(FlatParams(bets={"banker": 10, "either_pair": 5}, side_bets={"either_pair": 2}))
    flat.at_table(rules.Rules(pairs_need_main_bet=True))
    p = flat.encode()
    out = np.zeros(n)
    flat_decide(p, None, None, None, None, None, out)
    facts["flat"] = {
        "side": p[slots.P_SIDE + fake], "pairs_alone": p[slots.P_PAIRS_ALONE],
        "size": len(p), "out": out.tolist(),
    }

    # the counter, where only the eighth bet is favourable
    counter = ExactCounter(CounterParams(bets=["banker", "either_pair"]))
    evs = np.full(n, -1.0)
    evs[fake] = 0.5
    picks = {}
    for alone in (True, False):
        counter.at_table(rules.Rules(pairs_need_main_bet=not alone))
        p = counter.encode()
        picks[str(alone)] = list(counter_decide(p, None, None, None, None, evs, np.zeros(n)))
    facts["counter"] = {"size": len(p), "picks": picks}

    # the table's rules over eight stakes
    def place(stakes, pb_together, pairs_need_main):
        cents = np.array(stakes, np.int64)
        big = np.full(n, 10**9, np.int64)
        return tr.place.py_func(
            False, cents, np.ones(n, np.int64), big, 10**12, 1, np.ones(n, np.bool_),
            pb_together, pairs_need_main, np.arange(n, dtype=np.uint64),
        )[0]

    def one(code, also=()):
        stakes = [0] * n
        for c in (code, *also):
            stakes[c] = 100
        return stakes

    facts["place"] = {
        "alone, pairs need a main bet": place(one(fake), True, True),
        "alone": place(one(fake), True, False),
        "beside tie": place(one(fake, [Bet.TIE.code]), True, True),
        "player and banker apart": place(one(Bet.PLAYER.code, [Bet.BANKER.code]), False, False),
    }
    fast = np.zeros((2, n), np.int64)
    tr.short_path_bounds.py_func(
        np.ones(n, np.int64), np.full(n, 500, np.int64), np.ones(n, np.bool_), True, 0, fast
    )
    facts["short_path_max"] = fast[1].tolist()
    try:
        rules.check_bets({Bet.EITHER_PAIR: 1}, rules.Rules(pairs_need_main_bet=True))
        facts["check_bets"] = "taken"
    except RulesError as exc:
        facts["check_bets"] = str(exc)
    print(json.dumps(facts))
    """
)


@pytest.fixture(scope="module")
def eighth(repo_root: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=repo_root,  # (the child imports this tree's packages)
        capture_output=True,
        text=True,
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    facts: dict[str, Any] = json.loads(done.stdout)
    assert facts["n_bets"] == len(Bet) + 1 and facts["fake"] == len(Bet)
    return facts


def test_the_main_bets_come_first_in_the_winners_order() -> None:
    # the shoe readers bet the winner they read: a winner's code is its bet's
    assert [b.code for b in MAIN_BETS] == [w.code for w in Winner]
    assert [b.value for b in MAIN_BETS] == [w.value for w in Winner]


def test_the_parameter_head_follows_the_bets(eighth: dict[str, Any]) -> None:
    head = eighth["head"]
    assert len(set(head)) == len(head) == 3 + eighth["n_bets"] + 1  # no slot shared
    assert sorted(head) == list(range(eighth["own"]))  # and none left out before P_OWN
    assert eighth["main"] == [0, 1, 2]


def test_the_strategies_stakes_and_masks_follow_the_bets(eighth: dict[str, Any]) -> None:
    n, fake = eighth["n_bets"], eighth["fake"]
    flat = eighth["flat"]
    assert flat["side"] == 2.0 and flat["pairs_alone"] == 0.0
    assert flat["size"] == eighth["own"] + n
    assert flat["out"] == [0.0, 10.0] + [0.0] * (n - 3) + [5.0]
    assert eighth["counter"]["size"] == eighth["own"] + 2 + n
    # a pair bet alone: staked where the table takes it so, not where it needs a main bet
    assert eighth["counter"]["picks"] == {"True": [fake, 10.0], "False": [0, 0.0]}


def test_the_table_rules_follow_the_bets(eighth: dict[str, Any]) -> None:
    forbidden = 3  # table_rules.PLACE_FORBIDDEN
    assert eighth["place"] == {
        "alone, pairs need a main bet": forbidden,
        "alone": 0,
        "beside tie": 0,
        "player and banker apart": forbidden,
    }
    # a pair bet that needs a main bet never takes the one-bet short path
    assert eighth["short_path_max"] == [500, 500, 500, 0, 0, 500, 500, 0]
    assert "a pair bet needs a Player, Banker or Tie bet" in eighth["check_bets"]

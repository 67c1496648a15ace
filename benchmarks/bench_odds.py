"""Timings of the exact-odds engine.

Run: python benchmarks/bench_odds.py [--calls 200] [--seed 1]

Prints the first `bet_evs` call (compile, or load from numba's cache), the
warm time per call on random compositions, and the full 8-deck table (in
this process, and in a fresh interpreter including its start-up).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np


def random_compositions(n: int, seed: int) -> list[np.ndarray]:
    """8-deck shoes with 0 to 400 random cards taken out."""
    from backtest.core.cards import deck_cards
    from backtest.odds import composition

    rng = np.random.default_rng(seed)
    pack = deck_cards(8)
    out = []
    for _ in range(n):
        gone = int(rng.integers(0, 401))
        out.append(composition(8, remove=rng.permutation(pack)[:gone].tolist()))
    return out


def fresh_process_seconds(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="warm calls to time")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    start = time.perf_counter()
    from backtest import odds
    from backtest.core.rules import Rules

    imported = time.perf_counter()
    rules = Rules.preset("ez")
    odds.bet_evs(odds.composition(8), rules)
    first = time.perf_counter()
    print(f"import backtest.odds:                 {(imported - start) * 1e3:8.1f} ms")
    print(f"first bet_evs call (compile/cache):   {(first - imported) * 1e3:8.1f} ms")

    shoes = random_compositions(args.calls, args.seed)
    payouts = odds.payout_vector(rules)
    out, work = np.zeros(odds.N_BETS), odds.ev_work(ahead=True)
    for label, call in (
        ("bet_evs (checks input, dict out)", lambda c: odds.bet_evs(c, rules)),
        ("ev_array (array out)", lambda c: odds.ev_array(c, payouts)),
        ("ev_fill (the counter's call)", lambda c: odds.ev_fill(c, payouts, out, *work)),
    ):
        times = []
        for counts in shoes:
            t = time.perf_counter()
            call(counts)
            times.append(time.perf_counter() - t)
        print(
            f"{label:37s} median {statistics.median(times) * 1e3:.3f} ms, "
            f"max {max(times) * 1e3:.3f} ms over {len(times)} random compositions"
        )

    # a shoe's hands priced LANES at a time, as the counter's loop does
    from backtest.jit.lanes import LANES
    from backtest.shoes.shoe import ShoeSpec, generate_hands

    hands = generate_hands(ShoeSpec(decks=8), max(1, args.calls // 60), args.seed)
    full = odds.composition(8)
    rows = np.zeros((len(hands.hand), odds.N_BETS))
    odds.ev_fill_ahead(full, hands.cards, hands.hand, 0, payouts, rows, *work)  # compiled
    for rules_name in ("commission", "ez"):
        pay = odds.payout_vector(Rules.preset(rules_name))
        spent, k, counts = 0.0, 0, full.copy()
        while k < len(hands.hand):
            if hands.hand[k] == 1:
                counts = full.copy()
            t = time.perf_counter()
            m = odds.ev_fill_ahead(counts, hands.cards, hands.hand, k, pay, rows[k:], *work)
            spent += time.perf_counter() - t
            for card in hands.cards[k : k + m].ravel():
                counts[card & 15] -= card != 0
            k += m
        per = spent / len(hands.hand)
        print(
            f"ev_fill_ahead, {LANES} hands a call, {rules_name:10s} {per * 1e6:8.2f} us a hand "
            f"over {len(hands.hand)} hands of {len(np.unique(hands.shoe))} shoes"
        )

    t = time.perf_counter()
    for name in ("commission", "no-commission", "ez"):
        odds.exact.outcome_table_of.cache_clear()
        odds.exact_odds(odds.composition(8), Rules.preset(name), decks=8)
    print(f"full exact 8-deck table, in process:  {(time.perf_counter() - t) / 3 * 1e3:8.1f} ms")
    cold = fresh_process_seconds(
        "from backtest import odds; from backtest.core.rules import Rules; "
        "odds.exact_odds(None, Rules.preset('ez'), decks=8)"
    )
    print(
        f"same in a fresh interpreter:          {cold * 1e3:8.1f} ms (start-up, imports included)"
    )
    cli = fresh_process_seconds(
        "import sys; sys.argv = ['backtest', 'odds']; from backtest.cli import main; main()"
    )
    print(f"`backtest odds` command, end to end:  {cli * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()

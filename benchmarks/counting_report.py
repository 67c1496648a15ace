"""How often card counting finds a bet with positive expectation.

Run: python benchmarks/counting_report.py [--shoes 10000] [--seed 1] [--workers 2]

Deals generated 8-deck shoes with the cut card 14 cards from the end and
prices every bet exactly before each hand, from the composition left: the
full shoe less every card dealt so far. The shoes are dealt without the burn
(`ShoeSpec(burn=False)`): the generated hands do not keep the identities of
burned cards, so a composition with a burn could not be known exactly.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit

from backtest import odds
from backtest.core.rules import Bet, Rules
from backtest.shoes.shoe import ShoeSpec, generate_hands

SPEC = ShoeSpec(decks=8, cut_card=14, burn=False)
TABLES = (Rules.preset("commission"), Rules.preset("ez"))
#: (label, table index, bet) of each row of the report
ROWS = (
    ("Player 1:1", 0, Bet.PLAYER),
    ("Banker 0.95:1 (commission)", 0, Bet.BANKER),
    ("Tie 8:1", 0, Bet.TIE),
    ("Player Pair 11:1", 0, Bet.PLAYER_PAIR),
    ("Banker Pair 11:1", 0, Bet.BANKER_PAIR),
    ("Banker 1:1, 3-card 7 push (EZ)", 1, Bet.BANKER),
    ("Dragon 7 40:1 (EZ)", 1, Bet.DRAGON_7),
    ("Panda 8 25:1 (EZ)", 1, Bet.PANDA_8),
)


@njit(cache=True)
def scan(
    shoe: np.ndarray,
    cards: np.ndarray,
    full: np.ndarray,
    payouts: np.ndarray,
    hits: np.ndarray,
    ev_sum: np.ndarray,
    ev_max: np.ndarray,
    shoes_hit: np.ndarray,
    nodes: np.ndarray,
    coef: np.ndarray,
    work: np.ndarray,
) -> int:
    """Price every bet of every table before each hand; accumulate, per table and
    bet, the hands with EV > 0, their EV sum and maximum, and the shoes with
    at least one such hand. Hands must be grouped by shoe, in deal order.
    Returns the number of hands priced. nodes, coef, work: `odds.ev_work()`."""
    counts = full.copy()
    evs = np.empty(hits.shape[1])
    seen = np.zeros(hits.shape, dtype=np.bool_)
    for i in range(shoe.shape[0]):
        if i == 0 or shoe[i] != shoe[i - 1]:
            counts[:] = full
            seen[:] = False
        for t in range(payouts.shape[0]):
            odds.ev_fill(counts, payouts[t], evs, nodes, coef, work)
            for b in range(evs.shape[0]):
                ev = evs[b]
                if ev > 0.0:
                    hits[t, b] += 1
                    ev_sum[t, b] += ev
                    if ev > ev_max[t, b]:
                        ev_max[t, b] = ev
                    if not seen[t, b]:
                        seen[t, b] = True
                        shoes_hit[t, b] += 1
        for j in range(6):
            if cards[i, j] != 0:
                counts[cards[i, j] & 15] -= 1
    return shoe.shape[0]


@dataclass
class Tally:
    hands: int
    hits: np.ndarray
    ev_sum: np.ndarray
    ev_max: np.ndarray
    shoes_hit: np.ndarray

    @classmethod
    def zero(cls) -> Tally:
        shape = (len(TABLES), len(Bet))
        return cls(
            0,
            np.zeros(shape, np.int64),
            np.zeros(shape),
            np.zeros(shape),
            np.zeros(shape, np.int64),
        )

    def add(self, other: Tally) -> Tally:
        return Tally(
            self.hands + other.hands,
            self.hits + other.hits,
            self.ev_sum + other.ev_sum,
            np.maximum(self.ev_max, other.ev_max),
            self.shoes_hit + other.shoes_hit,
        )


def run_block(first_shoe: int, n_shoes: int, seed: int) -> Tally:
    """Deal and price shoes first_shoe .. first_shoe + n_shoes - 1."""
    hands = generate_hands(SPEC, n_shoes, seed, first_shoe=first_shoe)
    tally = Tally.zero()
    payouts = np.stack([odds.payout_vector(r) for r in TABLES])
    tally.hands = scan(
        hands.shoe.astype(np.int64),
        hands.cards,
        SPEC.counts(),
        payouts,
        tally.hits,
        tally.ev_sum,
        tally.ev_max,
        tally.shoes_hit,
        *odds.ev_work(),
    )
    return tally


def report(tally: Tally, shoes: int) -> str:
    head = ("bet", "hands EV>0", "% of hands", "mean EV when >0", "max EV", "% of shoes")
    rows = []
    for label, t, bet in ROWS:
        b = bet.code
        hits = int(tally.hits[t, b])
        mean = tally.ev_sum[t, b] / hits if hits else float("nan")
        rows.append(
            (
                label,
                f"{hits:,}",
                f"{100 * hits / tally.hands:.4f}%",
                f"{100 * mean:+.3f}%" if hits else "-",
                f"{100 * tally.ev_max[t, b]:+.3f}%" if hits else "-",
                f"{100 * tally.shoes_hit[t, b] / shoes:.2f}%",
            )
        )
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )

    return "\n".join([line(head), line(tuple("-" * w for w in widths)), *map(line, rows)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=10_000, help="shoes to deal")
    parser.add_argument("--seed", type=int, default=1, help="master seed of the shoes")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--block", type=int, default=100, help="shoes per task")
    args = parser.parse_args()

    start = time.perf_counter()
    run_block(0, 1, args.seed)  # compile (or load) before the workers fork
    blocks = [(s, min(args.block, args.shoes - s)) for s in range(0, args.shoes, args.block)]
    total = Tally.zero()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(run_block, s, n, args.seed) for s, n in blocks]
        for f in futures:
            total = total.add(f.result())
    elapsed = time.perf_counter() - start

    print(f"{args.shoes:,} shoes of 8 decks, cut card 14 from the end, no burn; seed {args.seed}")
    print(
        f"{total.hands:,} hands priced exactly before the deal "
        f"({total.hands / args.shoes:.1f} per shoe), in {elapsed:.1f} s on {args.workers} "
        f"worker(s)"
    )
    print("EV per unit staked; '% of shoes': shoes with at least one such hand\n")
    print(report(total, args.shoes))


if __name__ == "__main__":
    main()

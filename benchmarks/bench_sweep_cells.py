"""A sweep's cost per cell beyond its hands, on one worker.

    python benchmarks/bench_sweep_cells.py [--cells 2000] [--sessions 5]

Runs a grid of small cells (session.bankroll x table.max over a flat Banker
seat, `--sessions` one-shoe sessions each) on one worker, warm: a sweep of
20 cells of the same seat runs first, so numba's cache holds every kernel
the sweep calls. Prints the cells per second, the seconds in all (and the
CPU seconds of this process, a steadier figure on a shared machine), and
the seconds of the sweep's checks (`load_sweep`) apart from its run.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backtest import sweep  # noqa: E402


def write_sweep(path: Path, cells: int, sessions: int) -> Path:
    """A grid of about `cells` cells: bankrolls x table maxima, a flat Banker seat."""
    rows = max(d for d in range(1, math.isqrt(max(1, cells)) + 1) if cells % d == 0)
    cols = max(1, cells // rows)
    doc = {
        "name": "bench-cells",
        "seed": 1,
        "sessions": sessions,
        "run": {
            "rules": "commission",
            "shoe": {"decks": 8},
            "session": {"bankroll": 1000, "max_shoes": 1},
            "table": {"min": 10, "max": 1000},
            "seats": [{"strategy": "flat", "params": {"bets": {"banker": 10}}}],
        },
        "grid": {
            "session.bankroll": [100 + 10 * i for i in range(rows)],
            "table.max": [100 + 10 * j for j in range(cols)],
        },
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        warm = sweep.load_sweep(write_sweep(folder / "warm.yaml", 20, 1))
        sweep.run_sweep(warm, folder / "warm", workers=1)
        c0, t0 = time.process_time(), time.perf_counter()
        spec = sweep.load_sweep(write_sweep(folder / "cells.yaml", args.cells, args.sessions))
        t1 = time.perf_counter()
        summary = sweep.run_sweep(spec, folder / "out", workers=1)
        c2, t2 = time.process_time(), time.perf_counter()
        n = len(spec.cells)
        hands = int(summary["table_hands"].sum())
        print(
            f"sweep of {n:,} cells x {args.sessions} sessions ({hands:,} hands), 1 worker: "
            f"{t2 - t0:6.2f} s, {n / (t2 - t0):7.1f} cells/s ({c2 - c0:.2f} CPU s)"
        )
        print(f"  load_sweep (checks, cells): {t1 - t0:6.2f} s")
        print(f"  run_sweep (cells run, written): {t2 - t1:6.2f} s")


if __name__ == "__main__":
    main()

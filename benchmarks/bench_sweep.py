"""Sweep throughput on one worker and on every local worker.

    python benchmarks/bench_sweep.py [--hands 20000000] [--executor local|dask]

Runs the same sweep (a Martingale over four bankrolls, 1 seat) twice, once
with one worker and once with all cores, and prints hands per second for each
and their ratio (the scaling). Worker start-up is included: that is what a
user waits for.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backtest import sweep  # noqa: E402


def write_sweep(folder: Path, hands: int) -> Path:
    cells = 4
    sessions = max(1, hands // (cells * 81))
    doc = {
        "name": "bench",
        "seed": 1,
        "sessions": sessions,
        "run": {
            "shoe": {"decks": 8},
            "session": {"bankroll": 1000, "max_shoes": 1},
            "table": {"min": 10, "max": 1000},
            "seats": [{"strategy": "martingale", "params": {"base": 10}}],
        },
        "grid": {"session.bankroll": [500, 1000, 2000, 5000]},
    }
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def timed(spec: sweep.Sweep, out: Path, workers: int, executor: str) -> tuple[float, int]:
    t = time.perf_counter()
    summary = sweep.run_sweep(spec, out, workers=workers, executor=executor)
    dt = time.perf_counter() - t
    return dt, int(summary["table_hands"].unique(maintain_order=True).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=float, default=2e7)
    parser.add_argument("--executor", default="local", choices=("local", "dask"))
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        spec = sweep.load_sweep(write_sweep(folder, int(args.hands)))
        warm = sweep.load_sweep(
            write_sweep(folder / "w" if (folder / "w").mkdir() is None else folder, 10_000)
        )
        sweep.run_sweep(warm, folder / "warm", workers=1)
        one, hands = timed(spec, folder / "one", 1, args.executor)
        print(
            f"sweep of {hands:,} hands, {len(spec.cells)} cells, 1 worker: {one:6.1f} s "
            f"{hands / one / 1e6:6.2f} M hands/s"
        )
        if cores > 1:
            many, hands = timed(spec, folder / "many", cores, args.executor)
            print(
                f"sweep of {hands:,} hands, {len(spec.cells)} cells, {cores} workers: {many:6.1f} s "
                f"{hands / many / 1e6:6.2f} M hands/s; scaling {one / many:.2f}x"
            )


if __name__ == "__main__":
    main()

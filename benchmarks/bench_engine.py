"""Throughput of dealing, of each strategy's session loop, and of whole runs;
start-up and compile times.

    python benchmarks/bench_engine.py [--hands 10000000] [--rounds 7] [--quick] [--cold]

Prints hands per second for: dealing generated 8-deck shoes; each built-in
strategy's compiled session loop (dealing excluded); the README's compiled
user strategy, through the same loop; three plain-Python strategies (flat,
follow the shoe, Martingale) through the same engine; `engine.run` of one
Martingale seat over 10**7 hands beside the C reference
(`../shared/bench/c_reference.c`, built with gcc when it is there) run in
the same script, their ratio, and where a hand's nanoseconds go in each
(the deal, the loop, the rest); a whole `backtest run` of --hands hands on
one process and on every core, with the peak resident memory; the warm
start-up of `backtest run`, `odds`, `deal`, `roads` and `strategies`; and
with --cold, the README's main job and a first run of one more strategy on
a fresh numba cache. Throughput timings are of
warm code: numba compiles (or loads from its cache) before the clock starts.
The per-part figures are measured in rounds, each of which times every part
once (see `Timed`), and printed as the best and the median of the rounds;
the first line names the processor, since the figures are that machine's.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backtest.loop import inputs, payouts, session_loop, table_rules
from backtest.loop.python_seat import PythonSeat
from backtest.run import chunks, engine, plan  # noqa: E402
from backtest.run.config import parse_config  # noqa: E402
from backtest.shoes.shoe import ShoeSpec, generate_hands  # noqa: E402
from strategies import registry  # noqa: E402
from strategies.base import Strategy  # noqa: E402
from strategies.dispatch import user_functions  # noqa: E402


class PlainFlat(Strategy):
    """A user's plain-Python strategy: Banker, 10 a hand."""

    name = "plain-flat"

    def stakes(self, view):  # type: ignore[no-untyped-def]
        return {"banker": 10.0}


class PlainFollow(Strategy):
    """A user's plain-Python strategy: follow the last decisive winner."""

    name = "plain-follow"

    def stakes(self, view):  # type: ignore[no-untyped-def]
        w = view.last_decisive
        return {w: 10.0} if w is not None else {}


class PlainMartingale(Strategy):
    """A user's plain-Python strategy: double Banker after a loss."""

    name = "plain-martingale"

    def reset(self) -> None:
        self.stake = 10.0

    def stakes(self, view):  # type: ignore[no-untyped-def]
        return {"banker": self.stake}

    def update(self, view, result):  # type: ignore[no-untyped-def]
        if result.net < 0:
            self.stake *= 2
        elif result.net > 0:
            self.stake = 10.0


def config(seats: list[dict], sessions: int, bankroll: float = 1e9) -> object:
    return parse_config(
        {
            "seed": 7,
            "sessions": sessions,
            "rules": "commission",
            "shoe": {"decks": 8},
            "session": {"bankroll": bankroll},
            "table": {"min": 1, "max": 1e8},
            "seats": seats,
        }
    )


def rate(hands: int, seconds: float) -> str:
    return f"{hands / seconds / 1e6:8.2f} M hands/s"


def cpu_model() -> str:
    """The processor's name, as the kernel gives it (figures differ by machine)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown processor"


class Timed:
    """Figures measured in rounds: each round times every figure once, so
    that each one is sampled across the machine's slow and fast spells (on a
    shared virtual machine they last seconds to minutes, and slow a whole
    process by up to half). Prints the best and the median of the rounds."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, int, object]] = []

    def add(self, label: str, hands: int, once) -> None:  # type: ignore[no-untyped-def]
        """`once()` runs the figure's work once and returns its seconds."""
        once()  # compiled, or loaded from numba's cache, and memory touched
        self.parts.append((label, hands, once))

    def report(self, rounds: int) -> None:
        seconds: list[list[float]] = [[] for _ in self.parts]
        for _ in range(rounds):
            for k, (_, _, once) in enumerate(self.parts):
                seconds[k].append(once())
        print(f"{'':51} {'best':>8} {'median':>8}   (M hands/s, {rounds} rounds)")
        for (label, hands, _), times in zip(self.parts, seconds):
            rates = sorted(hands / t / 1e6 for t in times)
            print(f"{label:<39} {hands:>11,} {rates[-1]:8.2f} {rates[len(rates) // 2]:8.2f}")


def bench_deal(timed: Timed, shoes: int) -> None:
    """Dealing `shoes` 8-deck shoes as the engine deals them, a chunk of about
    `plan.CHUNK_HANDS` hands a call; and in one call, where most of the
    time goes to the operating system mapping fresh pages for the output."""
    spec = ShoeSpec(decks=8)
    hands = len(generate_hands(spec, shoes, 1))
    per_call = max(1, min(shoes, plan.CHUNK_HANDS * shoes // hands))

    def chunked() -> float:
        t = time.perf_counter()
        for first in range(0, shoes, per_call):
            generate_hands(spec, min(per_call, shoes - first), 1, first)
        return time.perf_counter() - t

    def once() -> float:
        t = time.perf_counter()
        generate_hands(spec, shoes, 1)
        return time.perf_counter() - t

    timed.add(f"deal {shoes:,} 8-deck shoes, {per_call:,} a call", hands, chunked)
    timed.add(f"deal {shoes:,} 8-deck shoes in one call", hands, once)


def chunk_args(
    cfg: object, sessions: int, strat: Strategy | None = None, counting_seats: int = 1
) -> tuple:
    """A chunk's hands and the loops' arguments after the seat (dealt, table,
    stops, shared EVs, outputs) for one seat (`strat`, if it counts cards) at
    a table of `counting_seats` counting seats (from two, they share the EVs:
    `inputs.shared_evs`)."""
    hands, bounds, shoe_no, table, unit, stats, wag, ex = _dealt(cfg, sessions)
    z = np.zeros(0, np.int64)
    uses = bool(strat is not None and strat.uses_cards)
    shared = inputs.SharedEvs(
        *inputs.shared_evs(
            len(hands), counting_seats if uses else 0, uses and inputs.needs_deals(strat, True)
        )
    )
    dealt = inputs.Dealt(
        hands.winner,
        hands.hand,
        shoe_no,
        unit,
        hands.cards,
        bounds,
        np.arange(sessions, dtype=np.int64),
    )
    stops = inputs.Stops(10**15 * table.den, -1, -1, -1, 0)
    no_cents = np.zeros((0, table_rules.N_BETS), np.int64)
    outputs = inputs.Outputs(
        stats,
        wag,
        ex,
        np.zeros_like(ex),
        False,
        z,
        no_cents,
        z,
        z,
        np.zeros_like(ex),
        np.zeros_like(ex),
        no_cents,
        inputs.BASE_NONE,
    )
    return hands, (dealt, table, stops, shared, outputs)


_DEALT: dict[int, tuple] = {}


def _dealt(cfg: object, sessions: int) -> tuple:
    """The hands of `sessions` sessions, the table, the unit results and the
    output arrays, made once for every figure of that size: the configs here
    differ only in their seats, and each run writes every output row."""
    if sessions not in _DEALT:
        hands, bounds, shoe_no = plan.hands_for(cfg, 0, sessions)
        _DEALT[sessions] = (
            hands,
            bounds,
            shoe_no,
            chunks._table(cfg, hands, counting=True),  # (the EV table for counters too)
            payouts.unit_results(hands, cfg.rules),
            np.zeros((sessions, table_rules.N_STATS), np.int64),
            np.zeros((sessions, 7), np.int64),
            np.zeros(sessions),
        )
    return _DEALT[sessions]


def compiled_once(strat: Strategy, args: tuple):  # type: ignore[no-untyped-def]
    """One timed run of the compiled loop, from a fresh state."""
    seat = inputs.seat_of(strat, np.uint64(5))
    fns = user_functions(strat)

    def once() -> float:
        work = inputs.work_for(seat, args[0])
        t = time.perf_counter()
        session_loop.run_sessions(seat, fns, *args, work)
        return time.perf_counter() - t

    return once


def bench_strategies(timed: Timed, sessions: int) -> None:
    """Each built-in in the session loop."""
    runs = [(name, name, {}) for name in registry.BUILTIN_NAMES]
    # a counter that can bet only the pairs needs no deals counted
    runs.append(("counter-pairs", "counter", {"bets": ["player_pair", "banker_pair"]}))
    for label, name, params in runs:
        cfg = config([{"strategy": name, "params": params}], sessions)
        strat = engine.build_strategies(cfg)[0]
        if label != "counter":
            hands, args = chunk_args(cfg, sessions, strat)
            timed.add(f"session loop {label}", len(hands), compiled_once(strat, args))
            continue
        # the exact EVs cost microseconds a hand: worked out once per table,
        # and read by every further counting seat at it (the rows stay filled)
        hands, args = chunk_args(cfg, max(50, sessions // 200), strat)
        timed.add("session loop counter, EVs worked out", len(hands), compiled_once(strat, args))
        hands, args = chunk_args(cfg, max(50, sessions // 20), strat, counting_seats=2)
        timed.add("session loop counter, EVs read", len(hands), compiled_once(strat, args))
    cfg = config([{"strategy": "flat"}], sessions // 10)
    for plain in (PlainFlat(), PlainFollow(), PlainMartingale()):
        hands, args = chunk_args(cfg, sessions // 10)

        def once(plain: Strategy = plain, args: tuple = args) -> float:
            seat = PythonSeat(plain, np.uint64(5), args[0], args[1])
            t = time.perf_counter()
            session_loop.run_sessions(seat.seat, seat.fns, *args, seat.work)
            return time.perf_counter() - t

        timed.add(f"plain Python {plain.name}", len(hands), once)


ROOT = Path(__file__).resolve().parent.parent
C_REFERENCE = ROOT.parent / "shared" / "bench" / "c_reference.c"


def bench_user_compiled(timed: Timed, sessions: int) -> None:
    """docs/strategies.md's compiled user strategy, through the loop (first-class functions)."""
    import re

    text = (ROOT / "docs" / "strategies.md").read_text(encoding="utf-8")
    start = text.index("```python\n", text.index("## Your own strategy, compiled")) + 10
    folder = Path(tempfile.mkdtemp())
    (folder / "readme_compiled.py").write_text(text[start : text.index("```", start)])
    name = f"{folder / 'readme_compiled.py'}:" + re.search(
        r"class (\w+)\(Compiled\)", text[start:]
    ).group(1)  # type: ignore[union-attr]
    cfg = config([{"strategy": name}], sessions)
    strat = engine.build_strategies(cfg)[0]
    hands, args = chunk_args(cfg, sessions, strat)
    timed.add("session loop, README's compiled class", len(hands), compiled_once(strat, args))


class Split:
    """Seconds spent in a few functions of a module while it is timed: each is
    wrapped, for the `with` block, by a timer that adds to `seconds`."""

    def __init__(self, parts: dict[str, tuple[object, str]]) -> None:
        self.parts = parts
        self.seconds = dict.fromkeys(parts, 0.0)

    def __enter__(self) -> Split:
        self.saved = [getattr(module, name) for module, name in self.parts.values()]
        for (label, (module, name)), fn in zip(self.parts.items(), self.saved):

            def timed(*args, _fn=fn, _label=label, **kwargs):  # type: ignore[no-untyped-def]
                t = time.perf_counter()
                try:
                    return _fn(*args, **kwargs)
                finally:
                    self.seconds[_label] += time.perf_counter() - t

            setattr(module, name, timed)
        return self

    def __exit__(self, *exc: object) -> None:
        for (module, name), fn in zip(self.parts.values(), self.saved):
            setattr(module, name, fn)


def _c_figures(binary: Path, martingale: int) -> dict[str, float]:
    import subprocess

    out = subprocess.run(
        [str(binary), "gen", "125000", "1", "1", str(martingale), "1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fields = dict(word.split("=", 1) for word in out.split() if "=" in word)
    return {k: float(fields[k]) for k in ("e2e_hps", "shuffle_only_shoes_per_s", "hands")}


def bench_against_c(rounds: int) -> None:
    """`engine.run`, one Martingale seat, 10**7 hands, one worker, beside the C
    reference's shuffle + deal + Martingale in one pass, alternately; then
    where the time of a hand goes in each (nanoseconds, medians of the rounds):
    ours in the deal, the table's arrays, the unit results, the session loop
    and the rest (the frames, the merge and the summary), timed inside
    one run; C's in the shuffle (its shuffle alone), the tableau (its run
    without the Martingale, less the shuffle) and the Martingale (the
    difference of its two runs)."""
    import shutil
    import subprocess

    cfg = config([{"strategy": "martingale", "params": {"base": 10}}], 10**7 // 81)
    engine.run(config([{"strategy": "martingale"}], 100), workers=1)
    binary = None
    if C_REFERENCE.is_file() and shutil.which("gcc"):
        binary = Path(tempfile.mkdtemp()) / "c_reference"
        subprocess.run(
            ["gcc", "-O3", "-march=native", "-o", str(binary), str(C_REFERENCE)], check=True
        )
    forms = ["shared loop"]
    ours: dict[str, list[float]] = {form: [] for form in forms}
    theirs: list[float] = []
    split: dict[str, list[float]] = {}
    c_split: dict[str, list[float]] = {}
    engine.run(cfg, sessions=2000, workers=1)  # compiled, or loaded, before the clock
    for _ in range(rounds):
        for form in forms:
            t = time.perf_counter()
            result = engine.run(cfg, workers=1)
            ours[form].append(result.hands / (time.perf_counter() - t))
        parts = {
            "deal": (chunks, "hands_for"),
            "table": (chunks, "_table"),
            "unit results": (payouts, "unit_results"),
            "session loop": (session_loop, "run_sessions"),
        }
        with Split(parts) as timer:
            t = time.perf_counter()
            result = engine.run(cfg, workers=1)
            total = time.perf_counter() - t
        for label, sec in {**timer.seconds, "rest": total - sum(timer.seconds.values())}.items():
            split.setdefault(label, []).append(sec / result.hands * 1e9)
        if binary is not None:
            with_m, without = _c_figures(binary, 1), _c_figures(binary, 0)
            theirs.append(with_m["e2e_hps"])
            per_shoe = with_m["hands"] / 125_000
            shuffle = 1e9 / with_m["shuffle_only_shoes_per_s"] / per_shoe
            for label, ns in {
                "shuffle": shuffle,
                "tableau": 1e9 / without["e2e_hps"] - shuffle,
                "Martingale": 1e9 / with_m["e2e_hps"] - 1e9 / without["e2e_hps"],
            }.items():
                c_split.setdefault(label, []).append(ns)
    for form, rates in ours.items():
        line = (
            f"engine.run, Martingale ({form}), 10**7 hands, 1 worker: "
            f"best {max(rates) / 1e6:.1f} M hands/s"
        )
        if theirs:
            ratios = sorted(a / b for a, b in zip(rates, theirs))
            line += (
                f"; C reference best {max(theirs) / 1e6:.1f} M hands/s; ratio median "
                f"{ratios[len(ratios) // 2]:.2f}x (range {ratios[0]:.2f}-{ratios[-1]:.2f})"
            )
        else:
            line += "; no C reference (gcc or ../shared/bench missing)"
        print(line)
    for who, figures in (("engine.run", split), ("C reference", c_split)):
        if figures:
            medians = {k: sorted(v)[len(v) // 2] for k, v in figures.items()}
            print(
                f"  a hand's ns, {who}: {sum(medians.values()):.1f} = "
                + " + ".join(f"{k} {v:.1f}" for k, v in medians.items())
            )


def bench_startup(rounds: int = 5) -> None:
    """Warm start-up of the commands, best of `rounds` (a fresh process each)."""
    import subprocess

    shoe = str(ROOT / "data" / "generated-6deck-seed2.txt")
    commands = {
        "run (50 sessions)": ["run", str(ROOT / "configs" / "verdict.yaml"), "--sessions", "50"],
        "run (1,000, compiled)": [
            "run",
            str(ROOT / "configs" / "verdict.yaml"),
            "--sessions",
            "1000",
        ],
        "odds": ["odds"],
        "deal": ["deal", shoe],
        "roads": ["roads", shoe],
        "strategies": ["strategies"],
        "--help": ["--help"],
    }
    for label, args in commands.items():
        best = float("inf")
        for _ in range(rounds):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "backtest", *args], capture_output=True, check=True
            )
            best = min(best, time.perf_counter() - t)
        print(f"warm start-up, backtest {label:<20} {best:5.2f} s")


def bench_cold() -> None:
    """The README's main job, then a first run of one more strategy, on a
    fresh numba cache (as on a new machine)."""
    import subprocess

    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        verdict = str(ROOT / "configs" / "verdict.yaml")
        for label, args in (
            ("backtest run configs/verdict.yaml", ["run", verdict]),
            (
                "then a first run of labouchere",
                [
                    "run",
                    str(ROOT / "configs" / "strategies" / "labouchere.yaml"),
                    "--sessions",
                    "50",
                ],
            ),
        ):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "backtest", *args], capture_output=True, check=True, env=env
            )
            print(f"cold numba cache: {label:<40} {time.perf_counter() - t:6.1f} s")


def bench_run(total: int, workers: int) -> None:
    seats = [
        {"strategy": "flat", "params": {"bets": {"banker": 10}}},
        {"strategy": "martingale", "params": {"base": 10}},
        {"strategy": "follow-the-shoe", "params": {"base": 10}},
    ]
    sessions = max(1, total // 81)
    cfg = config(seats, sessions)
    engine.run(config(seats, 100), workers=1)
    with tempfile.TemporaryDirectory() as spill:  # as `backtest run` does
        t = time.perf_counter()
        result = engine.run(cfg, workers=workers, spill=Path(spill))
        dt = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"backtest run, 3 seats, {result.hands:,} hands, {workers} worker(s): {dt:6.1f} s "
        f"{rate(result.hands, dt)} (table), {rate(3 * result.hands, dt)} (seat-hands); "
        f"peak memory {peak:.0f} MiB (workers {children:.0f} MiB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=float, default=1e7, help="hands for the whole-run figure")
    parser.add_argument("--quick", action="store_true", help="small sizes, to check it runs")
    parser.add_argument(
        "--run-only",
        action="store_true",
        help="only the whole-run figures (e.g. --hands 1e8 for flat memory)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="with --run-only: this many workers only (a fresh process "
        "for each figure measures memory without the other's)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=7,
        help="rounds of the per-part figures (best and median printed)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="also time the main job and one more strategy on a fresh numba cache",
    )
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"machine: {cpu_model()}, {cores} core(s), numpy {np.__version__}")
    if args.run_only:
        for workers in [args.workers] if args.workers else [1] + ([cores] if cores > 1 else []):
            bench_run(int(args.hands), workers)
        return
    timed = Timed()
    if args.quick:
        bench_deal(timed, 2_000)
        bench_strategies(timed, 500)
        bench_user_compiled(timed, 500)
        timed.report(2)
        bench_run(200_000, 1)
        bench_startup(1)
        return
    bench_deal(timed, 100_000)
    bench_strategies(timed, 20_000)
    bench_user_compiled(timed, 20_000)
    timed.report(args.rounds)
    _DEALT.clear()
    bench_against_c(args.rounds)
    bench_run(int(args.hands), 1)
    if cores > 1:
        bench_run(int(args.hands), cores)
    bench_startup()
    if args.cold:
        bench_cold()


if __name__ == "__main__":
    main()

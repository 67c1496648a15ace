"""Memory and time of the commands that read a big shoe file.

    python benchmarks/bench_big_file.py [--mb 200] [--format card-text] [--file PATH]
        [--tree DIR] [--only NAME]

Writes a card-level text file of about --mb megabytes in the system's
temporary folder (shoes of `backtest shoe generate`, written again and again;
kept, and used again, for later runs), or with --format an outcome-level CSV
(`deal -f csv` of generated shoes, their labels renumbered on each copy), a
Parquet file of that CSV, road strings of it, JSON Lines of its rounds
(a record a hand, as a live table publishes them), or JSON Lines of
shoe-state snapshots of its first shoes (a snapshot of the shoe so far after
each hand, as a live table publishes them); then runs each command on it in a
process of its own under /usr/bin/time -v and prints its maximum resident set
size and wall-clock seconds. --tree runs another checkout's code (its folder
goes first on PYTHONPATH), to compare before and after. Figures, not a test:
nothing here fails on a number.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: shoes written once and repeated to make the big file
BLOCK_SHOES = 20_000


def big_file(mb: int, tree: Path) -> Path:
    """A card-level text file of about `mb` megabytes (made once, then kept)."""
    path = Path(tempfile.gettempdir()) / f"backtest-big-{mb}mb.txt"
    if path.exists():
        return path
    block = path.with_suffix(".block")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "backtest",
            "shoe",
            "generate",
            "--count",
            str(BLOCK_SHOES),
            "--out",
            str(block),
            "--quiet",
        ],
        check=True,
        env=_env(tree),
    )
    data = block.read_bytes()
    with open(path.with_suffix(".part"), "wb") as fh:
        for _ in range(max(1, round(mb * 2**20 / len(data)))):
            fh.write(data)
    path.with_suffix(".part").rename(path)
    block.unlink()
    return path


#: the formats --format makes, besides card-level text
FORMATS = ("card-text", "outcome-csv", "parquet", "road", "jsonl", "snapshots")
#: shoes of the block `deal -f csv` writes once (it is slow) for the other formats
CSV_BLOCK_SHOES = 2_000


def big_other(mb: int, fmt: str, tree: Path) -> Path:
    """A file of about `mb` megabytes in `fmt` (see FORMATS; made once, then
    kept): an outcome-level CSV of generated shoes, or that CSV as Parquet or
    as road strings (of the same shoes)."""
    import polars as pl

    csv = Path(tempfile.gettempdir()) / f"backtest-big-{mb}mb.csv"
    if not csv.exists():
        block = csv.with_suffix(".block.txt")
        subprocess.run(
            [sys.executable, "-m", "backtest", "shoe", "generate"]
            + ["--count", str(CSV_BLOCK_SHOES), "--out", str(block), "--quiet"],
            check=True,
            env=_env(tree),
        )
        dealt = subprocess.run(
            [sys.executable, "-m", "backtest", "deal", "-f", "csv", str(block)],
            check=True,
            env=_env(tree),
            stdout=subprocess.PIPE,
        ).stdout
        block.unlink()
        frame = pl.read_csv(dealt, infer_schema=False).with_columns(pl.col("shoe").cast(pl.Int64))
        copies = max(1, round(mb * 2**20 / len(dealt)))
        with open(csv.with_suffix(".part"), "wb") as fh:
            for k in range(copies):
                copy = frame.with_columns(pl.col("shoe") + k * CSV_BLOCK_SHOES)
                copy.write_csv(fh, include_header=k == 0)
        csv.with_suffix(".part").rename(csv)
    if fmt == "outcome-csv":
        return csv
    suffixes = {"parquet": ".parquet", "jsonl": ".jsonl", "snapshots": ".snapshots.jsonl"}
    path = csv.with_suffix(suffixes.get(fmt, ".road.txt"))
    if path.exists():
        return path
    lazy = pl.scan_csv(csv, infer_schema=False)
    if fmt == "parquet":
        lazy.sink_parquet(path)
    elif fmt == "jsonl":
        shoe = pl.col("shoe")
        rounds = lazy.select(
            shoe.alias("shoeId"),
            pl.concat_str(shoe, pl.col("hand"), separator="-").alias("gameId"),
            (pl.col("winner").str.to_uppercase() + "_WIN").alias("winner"),
            pl.col("player_total").cast(pl.Int8).alias("player"),
            pl.col("banker_total").cast(pl.Int8).alias("banker"),
            pl.col("player_cards").str.split(" ").alias("playerCards"),
            pl.col("banker_cards").str.split(" ").alias("bankerCards"),
        )
        rounds.sink_ndjson(path)
    elif fmt == "snapshots":
        _write_snapshots(csv, path, mb)
    else:
        letters = pl.col("winner").str.slice(0, 1).str.to_uppercase()
        roads = lazy.group_by("shoe", maintain_order=True).agg(letters.str.join(""))
        path.write_text("\n".join(roads.collect()["winner"].to_list()) + "\n", encoding="utf-8")
    return path


def _write_snapshots(csv: Path, path: Path, mb: int) -> None:
    """JSON Lines of shoe-state snapshots of the first shoes of `csv`, about
    `mb` megabytes: after each hand, the shoe so far (`args.history_v2`)
    under the shoe's id. A snapshot holds every hand before it, so a file of
    snapshots holds far fewer shoes than one of rounds of its size."""
    import json

    import polars as pl

    frame = pl.scan_csv(csv, infer_schema=False).head(400_000).collect()
    written = 0
    with open(path.with_suffix(".part"), "w", encoding="utf-8") as fh:
        for (shoe,), rows in frame.group_by("shoe", maintain_order=True):
            entries: list[dict[str, object]] = []
            for r in rows.iter_rows(named=True):
                entries.append(
                    {
                        "winner": r["winner"].title(),
                        "playerScore": int(r["player_total"]),
                        "bankerScore": int(r["banker_total"]),
                        "natural": r["natural"] == "true",
                        "playerPair": r["player_pair"] == "true",
                        "bankerPair": r["banker_pair"] == "true",
                    }
                )
                message = {"type": "shoeState", "args": {"shoeId": shoe, "history_v2": entries}}
                written += fh.write(json.dumps(message, separators=(",", ":")) + "\n")
            if written >= mb * 2**20:
                break
    path.with_suffix(".part").rename(path)


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "80"}


def configs(folder: Path, shoes: Path) -> dict[str, Path]:
    """The run configs: a session a shoe (every shoe of the file), sessions
    of 200 hands (max_hands only), and as many sessions of a generated shoe
    as the file has shoes (what a run of that many sessions keeps, without
    a file)."""
    seats = textwrap.dedent(
        """\
        seats:
          - {strategy: flat, params: {bets: {banker: 10}}}
          - {strategy: martingale, params: {bet: banker, base: 10}}
        """
    )
    count = shoe_count(shoes)
    out = {}
    for name, session, source in (
        ("shoe", "{bankroll: 1000, max_shoes: 1}", f"shoes: {{file: {shoes}}}"),
        ("hands", "{bankroll: 1000, max_hands: 200}", f"shoes: {{file: {shoes}}}"),
        ("generated", "{bankroll: 1000, max_shoes: 1}", f"sessions: {count}\nshoe: {{decks: 8}}"),
    ):
        path = folder / f"big-{name}.yaml"
        path.write_text(
            f"seed: 1\n{source}\nsession: {session}\ntable: {{min: 10, max: 1000}}\n{seats}",
            encoding="utf-8",
        )
        out[name] = path
    return out


def shoe_count(shoes: Path) -> int:
    """The shoes of the file (a line each; of a CSV or Parquet file, its labels)."""
    import polars as pl

    if shoes.suffix == ".csv":
        return int(
            pl.scan_csv(shoes, infer_schema=False)
            .select(pl.col("shoe").n_unique())
            .collect()
            .item()
        )
    if shoes.suffix == ".jsonl":
        rounds = pl.scan_ndjson(shoes)
        if "shoeId" in rounds.collect_schema():
            return int(rounds.select(pl.col("shoeId").n_unique()).collect().item())
        import warnings

        from backtest.shoes.recorded import read_shoes

        with warnings.catch_warnings():  # (snapshots, or rounds without a shoe id)
            warnings.simplefilter("ignore")
            return read_shoes(shoes).n_shoes
    if shoes.suffix == ".parquet":
        return int(pl.scan_parquet(shoes).select(pl.col("shoe").n_unique()).collect().item())
    with open(shoes, "rb") as fh:
        return sum(1 for line in fh if line.strip() and not line.startswith(b"#"))


#: the conversion alone (`python -c`): the one pass over the whole file, into
#: Parquet in the cache, that a whole-file run or `deal` makes before its
#: first shoe is read of the cache (the cases after it find the file there)
CONVERSION = (
    "import sys, warnings; from backtest.shoes.recorded import cache; "
    "warnings.simplefilter('ignore'); "
    "cache.columnar(sys.argv[1], 8, False, cache.big_kind(sys.argv[1]))"
)


def cases(cfg: dict[str, Path], shoes: Path) -> dict[str, list[str]]:
    run = ["run", "--quiet", "--workers", "1", "--format", "json"]
    return {
        "conversion to the cache alone": ["-c", CONVERSION, str(shoes)],
        "run, every shoe (a session a shoe)": [*run, str(cfg["shoe"])],
        "run of generated shoes, as many sessions": [*run, str(cfg["generated"])],
        "run --sessions 10 (a session a shoe)": [*run, "--sessions", "10", str(cfg["shoe"])],
        "run, every shoe (sessions of 200 hands)": [*run, str(cfg["hands"])],
        "run --sessions 10 (sessions of 200 hands)": [*run, "--sessions", "10", str(cfg["hands"])],
        "roads --shoe 2": ["roads", "--shoe", "2", str(shoes)],
        "odds --shoe-number 2": ["odds", "--shoe", str(shoes), "--shoe-number", "2"],
        "deal (to /dev/null)": ["deal", str(shoes)],
    }


def measure(args: list[str], tree: Path) -> tuple[float, float]:
    """(maximum resident MB, seconds) of `python -m backtest ARGS` (of
    `python -c ...` for ARGS that start with -c)."""
    command = args if args[0] == "-c" else ["-m", "backtest", *args]
    with open(os.devnull, "wb") as sink:
        done = subprocess.run(
            ["/usr/bin/time", "-v", sys.executable, *command],
            stdout=sink,
            stderr=subprocess.PIPE,
            env=_env(tree),
            cwd=tree,  # (`python -m` puts the working folder before PYTHONPATH)
            check=False,
        )
    report = done.stderr.decode("utf-8", "replace")
    if done.returncode:
        last = [line for line in report.splitlines() if line.strip() and "\t" not in line]
        raise RuntimeError(last[-1] if last else f"exit {done.returncode}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", report)
    assert rss and wall
    seconds = 0.0
    for part in wall.group(1).split(":"):
        seconds = 60 * seconds + float(part)
    return int(rss.group(1)) / 1024, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the big file")
    parser.add_argument("--format", choices=FORMATS, default="card-text", help="of the big file")
    parser.add_argument("--file", type=Path, help="a shoe file to use instead")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to run")
    parser.add_argument("--only", help="run only the cases whose name holds this")
    opts = parser.parse_args()
    tree = opts.tree.resolve()
    if opts.file:
        shoes = opts.file.resolve()
    elif opts.format == "card-text":
        shoes = big_file(opts.mb, tree)
    else:
        shoes = big_other(opts.mb, opts.format, tree)
    print(f"{shoes}: {shoes.stat().st_size / 2**20:,.0f} MB; code of {tree}")
    # a cache of converted files of this benchmark's own, empty at its start
    os.environ["BACKTEST_SHOE_CACHE"] = tempfile.mkdtemp(prefix="bench-shoe-cache-")
    # compile the kernels first, so that no case pays for it
    subprocess.run(
        [
            sys.executable,
            "-m",
            "backtest",
            "deal",
            str(ROOT / "data" / "generated-8deck-seed1.txt"),
        ],
        env=_env(tree),
        cwd=tree,  # (the tree's own kernels: see `measure`)
        stdout=subprocess.DEVNULL,
        check=False,
    )
    with tempfile.TemporaryDirectory() as folder:
        cfg = configs(Path(folder), shoes)
        # and those of a run over the file (else the first case pays for them)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "backtest",
                "run",
                "--quiet",
                "--sessions",
                "2",
                str(cfg["shoe"]),
            ],
            env=_env(tree),
            cwd=tree,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        for name, args in cases(cfg, shoes).items():
            if opts.only and opts.only not in name:
                continue
            try:
                rss, seconds = measure(args, tree)
            except RuntimeError as exc:
                print(f"{name:45} failed: {exc}", flush=True)
                continue
            print(f"{name:45} {rss:8,.0f} MB {seconds:8.1f} s", flush=True)
    shutil.rmtree(os.environ["BACKTEST_SHOE_CACHE"], ignore_errors=True)


if __name__ == "__main__":
    main()

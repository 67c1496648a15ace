"""A shoe file read a shoe at a time, and a big one held as Parquet in the cache.

A file's shoes come off its lines one at a time (`shoes_of`), each checked
and dealt as it comes: card-level text or CSV, an outcome-level CSV, roads a
shoe a line, JSON Lines of rounds or of shoe-state snapshots, and a Parquet
file as the CSV its columns make. A file past BIG_BYTES (`big_kind` tells
its format from its first megabyte) is read so: its first shoes
(`first_hands`), or all of it once into Parquet files in the cache
(`columnar`), any of whose shoes polars then reads (`Columnar.hands`,
`Columnar.blocks`). The cache is keyed by the file's digest and what it was
read with (decks, burn rule, column mapping, the readers' code), and written
under a temporary name then renamed: never seen half-made.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "shoes.txt"
>>> _ = path.write_text("# two shoes\\n5 K 9 2 3 8\\n\\n2 9 3 K 8 9 K K\\n", encoding="utf-8")
>>> shoes = columnar(path, decks=8, burn=False, kind="card-text")
>>> shoes.lengths.tolist(), shoes.hands([1]).hand.tolist()
([1, 2], [1, 2])
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from backtest.core.errors import ShoeFormatError, UsageError, shown
from backtest.core.hands import ALL_KNOWN, COLUMNS, Hands
from backtest.shoes.recorded.card_level import Growing, card_csv_shoes, card_text_shoes, dealt_shoes
from backtest.shoes.recorded.live_json import json_line_shoes, json_lines_kind
from backtest.shoes.recorded.options import PARQUET_MAGIC, check_options, sniff
from backtest.shoes.recorded.outcomes import HANDS_PER_DECK, outcome_csv_shoes, too_many_hands
from backtest.shoes.recorded.road_strings import a_shoe_a_line, line_shoes, road_shoe_hands
from backtest.shoes.recorded.text import (
    HEAD_BYTES,
    JSON_LINE_BYTES,
    StrPath,
    is_piped,
    load_head,
    source_name,
    stream_lines,
)

#: files larger than this are read a shoe at a time (smaller ones are read whole)
BIG_BYTES = HEAD_BYTES
#: Parquet files larger than this (compressed: about half a million hands)
#: are read a shoe at a time (a smaller one's hands are held: 26 bytes a hand)
BIG_PARQUET_BYTES = 1 << 22
#: the largest JSON document read whole (not JSON Lines): its values take
#: about 10 times its size in memory
JSON_DOCUMENT_BYTES = 16 << 20
#: the formats read a shoe at a time (json-rounds: JSON Lines of per-round
#: records; json-snapshots: of shoe-state snapshots)
KINDS = ("card-text", "road", "card-csv", "outcome-csv", "json-rounds", "json-snapshots")
JSON_KINDS = ("json-rounds", "json-snapshots")
#: rows of a Parquet file read at a time
PARQUET_BATCH = 1 << 14
#: hands a Parquet file of the cache holds (a block of whole shoes)
PART_HANDS = 1 << 20
#: days a converted file is kept in the cache after it was last used
KEPT_DAYS = 30
#: rows of a row group (a read of a few shoes decodes the groups that hold them)
GROUP_ROWS = 1 << 16

#: the columns of `Hands` a file stores (`cards` as six columns)
_CARDS = tuple(f"card{k}" for k in range(6))
_FLAT = tuple(c for c in COLUMNS if c != "cards")  # the cards are `_CARDS`


def big_kind(
    path: StrPath, fmt: str | None = None, columns: Mapping[str, str] | None = None
) -> str | None:
    """The format (one of KINDS: `fmt`, or as its first megabyte reads) of a
    file past BIG_BYTES, or a Parquet file past BIG_PARQUET_BYTES (as the
    CSV its columns make), to be read a shoe at a time; None for standard
    input or a pipe, a smaller file, another format (a JSON document, roads
    that may be a column of results), or a file that cannot be read (its
    reader says why). A JSON document past JSON_DOCUMENT_BYTES is refused."""
    try:
        if is_piped(path):
            return None
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            data = fh.read(HEAD_BYTES + 1)
    except (OSError, UsageError):
        return None
    if data.startswith(PARQUET_MAGIC):
        big = fmt in (None, "parquet") and size > BIG_PARQUET_BYTES
        return parquet_kind(path, columns) if big else None
    if size <= BIG_BYTES or fmt not in (None, "json", *KINDS):
        return None
    source, head, _ = load_head(path, data)
    kind = fmt or sniff(source, head, columns)[0]
    if not head.strip() and Path(source).suffix.lower() in (".json", ".jsonl", ".ndjson"):
        kind = "json"  # (no line ends in the first megabyte: told by the name)
    if kind == "json":
        lines_of = json_lines_kind(stream_lines(path, most=JSON_LINE_BYTES))
        if lines_of is None and size > JSON_DOCUMENT_BYTES:
            raise ShoeFormatError(
                f"{source}: {size / 2**20:,.0f} MB of JSON that is not JSON Lines of round "
                "records or shoe-state snapshots (one object a line, read a line at a time), "
                f"and a JSON document is read whole only up to {JSON_DOCUMENT_BYTES >> 20} MB "
                "(it takes about 10 times its size in memory); write it as JSON Lines, a "
                "record or a snapshot a line, or as an outcome-level CSV"
            )
        return f"json-{lines_of}" if lines_of else None
    if kind == "road" and not a_shoe_a_line(head, source):
        return None  # (maybe a column of results, a result a line: read whole)
    return kind if kind in KINDS else None


def parquet_kind(file: StrPath | bytes, columns: Mapping[str, str] | None) -> str:
    """The CSV a Parquet file reads as: card-level (a `card` column and no
    `winner`) or outcome-level (as well when polars cannot read it: its
    reader says why)."""
    try:
        names = _parquet(file).collect_schema().names()
    except Exception:  # polars raises its own errors, and OSError
        return "outcome-csv"
    header = {c.strip().lower() for c in names}
    if columns:
        header = (header - {c.strip().lower() for c in columns.values()}) | set(columns)
    return "card-csv" if "card" in header and "winner" not in header else "outcome-csv"


def _parquet(file: StrPath | bytes) -> Any:
    import polars as pl

    if isinstance(file, bytes):
        return pl.read_parquet(io.BytesIO(file)).lazy()
    return pl.scan_parquet(os.fspath(file))


def parquet_lines(source: str, file: StrPath | bytes) -> Generator[tuple[int, str], None, None]:
    """The numbered lines of the CSV a Parquet file's columns make (a list
    as a space-separated string, a null empty), its header first (line 1,
    row r line r + 1), made PARQUET_BATCH rows at a time (`file`: its path,
    or its bytes)."""
    import polars as pl

    def failed(exc: Exception) -> ShoeFormatError:
        said = shown(str(exc), 120)[1:-1]
        return ShoeFormatError(f"{source}: not a Parquet file polars can read: {said}")

    try:
        lazy = _parquet(file)
        schema = lazy.collect_schema()
    except Exception as exc:  # polars raises its own errors, and OSError
        raise failed(exc) from None
    cast = []
    for name, dtype in schema.items():
        col = pl.col(name)
        if isinstance(dtype, pl.List):
            col = col.cast(pl.List(pl.String)).list.join(" ")
        cast.append(col.cast(pl.String).fill_null("").alias(name))
    number = offset = 0
    while True:
        try:
            batch = lazy.slice(offset, PARQUET_BATCH).collect()
        except Exception as exc:  # polars raises its own errors, and OSError
            raise failed(exc) from None
        for line in batch.select(cast).write_csv(include_header=offset == 0).splitlines():
            number += 1
            yield number, line
        if batch.height < PARQUET_BATCH:
            return
        offset += PARQUET_BATCH


def in_rows(exc: ShoeFormatError, source: str) -> ShoeFormatError:
    """An error about a line of the CSV a Parquet file makes, about its row
    (line 1 is the header, line n row n - 1)."""
    return ShoeFormatError(
        re.sub(
            rf"^{re.escape(source)}, line (\d+)",
            lambda m: f"{source}, " + ("the header" if m[1] == "1" else f"row {int(m[1]) - 1}"),
            str(exc),
        )
    )


def shoes_of(
    kind: str,
    lines: Iterator[tuple[int, str]],
    source: str,
    decks: int,
    burn: bool = False,
    columns: Mapping[str, str] | None = None,
    parquet: bool = False,
) -> Generator[tuple[int, Any], None, None]:
    """(hands, the shoe read) for each shoe with a hand in it of numbered
    lines of a file of `kind` (of a Parquet file: an error names its row), in
    turn: the shoe read is a `DealtShoe` (card level), the codes of its
    results (road) or its hands (outcome level). An outcome-level shoe of
    more hands than the decks deal is refused once every shoe is read."""
    too_long: tuple[int, int] | None = None  # (the first such: shoe, hands)
    try:
        if kind in ("card-text", "card-csv"):
            cards = (
                card_text_shoes(lines, source)
                if kind == "card-text"
                else card_csv_shoes(lines, source, columns)
            )
            for shoe in dealt_shoes(cards, source, decks, burn):
                yield int(shoe.columns["winner"].shape[0]), shoe
            return
        if kind == "road":
            for _, codes in line_shoes(lines, source, decks):
                yield int(codes.shape[0]), codes
            return
        if kind in JSON_KINDS:
            parts: Iterator[Hands] = json_line_shoes(lines, source, decks)
        else:
            parts = (
                replace(p, labels=(label,))
                for p, _, label in outcome_csv_shoes(lines, source, decks, columns)
            )
        for k, part in enumerate(parts):
            if too_long is None and len(part) > HANDS_PER_DECK * decks:
                too_long = (k + 1, len(part))
            yield len(part), part
    except ShoeFormatError as exc:
        raise (in_rows(exc, source) if parquet else exc) from None
    if too_long is not None:
        raise too_many_hands(source, f"shoe {too_long[0]}", too_long[1], decks)


def _file_shoes(
    path: StrPath, decks: int, burn: bool, kind: str, columns: Mapping[str, str] | None
) -> Generator[tuple[int, Any], None, None]:
    """`shoes_of` a file's lines, read as they are needed."""
    source = source_name(path)
    check_options(source, "json" if kind in JSON_KINDS else kind, columns, burn)
    with open(path, "rb") as fh:
        parquet = fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
    if parquet:
        lines = parquet_lines(source, path)
    elif kind in JSON_KINDS:
        lines = stream_lines(path, most=JSON_LINE_BYTES)
    else:
        lines = stream_lines(path, decks)
    return shoes_of(kind, lines, source, decks, burn, columns, parquet)


def collect(
    kind: str,
    shoes: Generator[tuple[int, Any], None, None],
    source: str,
    burn: bool,
    until: Callable[[int], bool] | None = None,
) -> tuple[Hands, bool]:
    """The hands of `shoes` (`shoes_of`), read until `until` (told each
    shoe's hands in turn) answers True; and whether they are all of them."""
    block = _Block(kind, source)
    for k, (n, read) in enumerate(shoes):
        block.add(k, n, read)
        if until is not None and until(n):
            shoes.close()
            return block.hands(burn), False
    return block.hands(burn), True


def first_hands(
    path: StrPath,
    decks: int,
    burn: bool,
    kind: str,
    columns: Mapping[str, str] | None,
    until: Callable[[int], bool] | None,
) -> tuple[Hands, bool]:
    """The hands of a big file's first shoes (`collect`): the file is read no
    further than `until` asks (None: all of them)."""
    shoes = _file_shoes(path, decks, burn, kind, columns)
    return collect(kind, shoes, source_name(path), burn, until)


@dataclass(frozen=True)
class Columnar:
    """A file's shoes as Parquet files of their hands (`parts`, the first
    shoe of each in `firsts`): each shoe's hands (`lengths`), the cards
    burned before each (with the burn rule), and what the hands record."""

    folder: Path
    source: str
    lengths: np.ndarray  # int64, a shoe each
    firsts: np.ndarray  # int64, a part each
    known: frozenset[str]
    burned: tuple[tuple[int, ...], ...]
    labels: tuple[str, ...] = ()  # the file's own shoe ids (`Hands.labels`)

    def __len__(self) -> int:
        return int(self.lengths.shape[0])

    def hands(self, shoes: Any) -> Hands:
        """The hands of `shoes` (their places, from 0, in increasing order),
        each numbered by its place, read of the row groups that hold them."""
        import polars as pl

        ks = np.asarray(shoes, np.int64)
        frames = []
        if ks.size:
            lo, hi = int(ks[0]), int(ks[-1])
            parts = range(
                int(np.searchsorted(self.firsts, lo, "right")) - 1,
                int(np.searchsorted(self.firsts, hi, "right")),
            )
            wanted = pl.col("shoe").is_between(lo, hi)
            if hi - lo + 1 != ks.size:
                wanted = pl.col("shoe").is_in(ks.tolist())
            for p in parts:
                frames.append(pl.scan_parquet(self.folder / f"part-{p}.parquet").filter(wanted))
        frame = pl.concat(frames).collect() if frames else None
        columns: dict[str, Any] = {}
        if frame is not None:
            columns = {name: frame[name].to_numpy() for name in _FLAT}
            columns["cards"] = frame.select(_CARDS).to_numpy()
        return Hands.from_columns(
            0 if frame is None else frame.height,
            known=self.known,
            source=self.source,
            burned=tuple(self.burned[k] for k in ks.tolist()) if self.burned else (),
            labels=self.labels,
            **columns,
        )

    def blocks(self, hands: int) -> Iterator[Hands]:
        """Every shoe, in blocks of whole shoes of about `hands` hands (at least a shoe)."""
        ends = np.cumsum(self.lengths, dtype=np.int64)
        first = 0
        while first < len(self):
            done = int(ends[first - 1]) if first else 0
            last = max(first + 1, int(np.searchsorted(ends, done + hands, side="right")))
            yield self.hands(np.arange(first, min(last, len(self))))
            first = last


def columnar(
    path: StrPath,
    decks: int,
    burn: bool,
    kind: str,
    columns: Mapping[str, str] | None = None,
) -> Columnar:
    """The shoes of a big file of `kind` (as `big_kind` tells) as Parquet in
    the cache: read of the cache if the file was converted before, else
    converted now (each shoe checked as `read_shoes` checks it: its errors
    and warnings)."""
    source = source_name(path)
    check_options(source, "json" if kind in JSON_KINDS else kind, columns, burn)
    key = hashlib.blake2b(digest_size=16)
    for part in (_file_digest(path), kind, str(decks), str(burn), _code_digest()):
        key.update(part.encode() + b"\0")
    key.update(json.dumps(sorted((columns or {}).items())).encode())
    folder = _cache_base() / key.hexdigest()
    if not (folder / "shoes.json").is_file():
        _convert(path, source, decks, burn, kind, columns, folder)
    with contextlib.suppress(OSError):
        os.utime(folder)  # (used now: kept another KEPT_DAYS)
    meta = json.loads((folder / "shoes.json").read_text(encoding="utf-8"))
    return Columnar(
        folder,
        source,
        np.asarray(meta["lengths"], np.int64),
        np.asarray(meta["firsts"], np.int64),
        frozenset(meta["known"]),
        tuple(tuple(b) for b in meta["burned"]),
        tuple(meta["labels"]),
    )


def _convert(
    path: StrPath,
    source: str,
    decks: int,
    burn: bool,
    kind: str,
    columns: Mapping[str, str] | None,
    folder: Path,
) -> None:
    """Read every shoe of the file into Parquet files in a new folder, then
    rename it `folder`."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".part-", dir=folder.parent))
    try:
        lengths: list[int] = []
        firsts: list[int] = []
        burned: list[tuple[int, ...]] = []
        ids: list[str] = []
        block = _Block(kind, source)
        known = block.known
        for n, read in _file_shoes(path, decks, burn, kind, columns):
            if not block.n:
                firsts.append(len(lengths))
            block.add(len(lengths), n, read)
            lengths.append(n)
            if block.n >= PART_HANDS:
                known = block.write(work / f"part-{len(firsts) - 1}.parquet")
                burned += block.burned
                ids += block.ids
                block = _Block(kind, source, known)
        if block.n:
            known = block.write(work / f"part-{len(firsts) - 1}.parquet")
        burned += block.burned
        ids += block.ids
        meta = {
            "lengths": lengths,
            "firsts": firsts,
            "known": sorted(known),
            "burned": burned if burn else [],
            "labels": ids if ids and all(ids) else [],
        }
        (work / "shoes.json").write_text(json.dumps(meta), encoding="utf-8")
        try:
            work.rename(folder)
        except OSError:  # made meanwhile by another process: it is the same
            if not (folder / "shoes.json").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


class _Block:
    """The hands of shoes read of a file of `kind`, added a shoe at a time
    (its place, hands and the shoe read: see `shoes_of`), with the file's
    own id of each ("" where it has none) and the cards burned before it."""

    def __init__(self, kind: str, source: str, known: frozenset[str] | None = None) -> None:
        self.kind, self.source = kind, source
        self.known = (frozenset() if kind == "road" else ALL_KNOWN) if known is None else known
        self.out = Growing()
        self.codes: list[np.ndarray] = []  # (a road's results)
        self.numbers: list[int] = []
        self.burned: list[tuple[int, ...]] = []
        self.ids: list[str] = []
        self.n = 0

    def add(self, number: int, n: int, read: Any) -> None:
        self.n += n
        if self.kind == "road":
            self.codes.append(read)
            self.numbers.append(number)
            self.ids.append("")
        elif self.kind in ("card-text", "card-csv"):
            part = dict(read.columns)
            part["shoe"] = np.full(n, number, dtype=np.int64)
            part["hand"] = np.arange(1, n + 1, dtype=np.int32)
            self.out.add(part)
            self.burned.append(read.burned)
            self.ids.append(str(read.read.id))
        else:
            self.known = read.known
            part = {name: getattr(read, name) for name in self.out.columns}
            self.out.add(part | {"shoe": np.full(n, number, dtype=np.int64)})
            self.ids.append(str(read.labels[0]) if read.labels else "")

    def hands(self, burn: bool = False) -> Hands:
        labels = tuple(self.ids) if self.ids and all(self.ids) else ()
        if self.kind == "road":
            return road_shoe_hands(
                np.concatenate(self.codes) if self.codes else np.zeros(0, np.int8),
                np.array([len(c) for c in self.codes], np.int64),
                np.array(self.numbers, np.int64),
                self.source,
            )
        return Hands.from_columns(
            self.out.n,
            known=self.known,
            source=self.source,
            labels=labels,
            burned=tuple(self.burned) if burn else (),
            **self.out.filled(),
        )

    def write(self, file: Path) -> frozenset[str]:
        """Write the hands to `file`; what they record."""
        import polars as pl

        hands = self.hands()
        frame = {name: getattr(hands, name) for name in _FLAT}
        frame |= {name: hands.cards[:, k] for k, name in enumerate(_CARDS)}
        pl.DataFrame(frame).write_parquet(file, row_group_size=GROUP_ROWS, statistics=True)
        return hands.known


def _file_digest(path: StrPath) -> str:
    """The BLAKE2 digest of the file's bytes."""
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@cache
def _code_digest() -> str:
    """A digest of the code that reads shoe files (a change to it makes new caches)."""
    from backtest import __version__

    digest = hashlib.blake2b(__version__.encode(), digest_size=16)
    here = Path(__file__).resolve().parent
    for file in sorted([*here.glob("*.py"), here.parents[1] / "core" / "hands.py"]):
        digest.update(file.read_bytes())
    return digest.hexdigest()


@cache
def _cache_base() -> Path:
    """The folder of converted files: $BACKTEST_SHOE_CACHE if set, else the
    user's cache, else (neither can be written) a temporary folder."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = Path(os.environ.get("BACKTEST_SHOE_CACHE") or base / "baccarat-backtest" / "shoes")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if os.access(folder, os.W_OK):
            return _pruned(folder)
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="backtest-shoes-"))


def _pruned(folder: Path) -> Path:
    """`folder`, the files in it unused for KEPT_DAYS removed, and any
    conversion cut short (a day old)."""
    for old in folder.iterdir():
        age = time.time() - old.stat().st_mtime
        if age > 86400 * (KEPT_DAYS if not old.name.startswith(".") else 1):
            shutil.rmtree(old, ignore_errors=True)
    return folder

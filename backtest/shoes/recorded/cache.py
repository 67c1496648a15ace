"""A big shoe file's hands as Parquet in the cache: the file read once, a
shoe at a time, checked and dealt as `read_shoes` deals it, into Parquet
files of its hands (the columns of `Hands`), and then any of its shoes read
of them by polars (`Columnar.hands`), or all of them in blocks
(`Columnar.blocks`). The cache is keyed by the file's digest and what it
was read with (decks, burn rule, column mapping, the readers' code), and
written under a temporary name then renamed: never seen half-made.

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
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from backtest.core.errors import ShoeFormatError
from backtest.core.hands import ALL_KNOWN, Hands
from backtest.shoes.recorded.card_level import Growing
from backtest.shoes.recorded.options import check_options
from backtest.shoes.recorded.outcomes import HANDS_PER_DECK, too_many_hands
from backtest.shoes.recorded.parquet_lines import in_rows, is_parquet, parquet_lines
from backtest.shoes.recorded.road_strings import road_shoe_hands
from backtest.shoes.recorded.stream import JSON_KINDS, shoes_of
from backtest.shoes.recorded.text import JSON_LINE_BYTES, StrPath, source_name, stream_lines

#: hands a Parquet file of the cache holds (a block of whole shoes)
PART_HANDS = 1 << 20

#: days a converted file is kept in the cache after it was last used
KEPT_DAYS = 30

#: rows of a row group (a read of a few shoes decodes the groups that hold them)
GROUP_ROWS = 1 << 16

#: the columns of `Hands` a file stores (`cards` as six columns)
_CARDS = tuple(f"card{k}" for k in range(6))
_FLAT = (
    "shoe",
    "hand",
    "player_total",
    "banker_total",
    "winner",
    "natural",
    "player_pair",
    "banker_pair",
    "player_card_count",
    "banker_card_count",
)


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
    """The shoes of a big file of `kind` (as `stream.streamable` tells) as
    Parquet in the cache: read of the cache if the file was converted
    before, else converted now (each shoe checked as `read_shoes` checks
    it: its errors and warnings)."""
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
        tuple(meta.get("labels", ())),
    )


def first_hands(
    path: StrPath,
    decks: int,
    burn: bool,
    kind: str,
    columns: Mapping[str, str] | None,
    until: Callable[[int], bool],
) -> tuple[Hands, bool]:
    """The hands of a big file's first shoes, read a shoe at a time as
    `columnar` reads them until `until` (told each shoe's hands in turn)
    answers True, the file read no further; and whether they are all of it."""
    source = source_name(path)
    check_options(source, "json" if kind in JSON_KINDS else kind, columns, burn)
    block = _Block(kind, frozenset() if kind == "road" else ALL_KNOWN, source)
    burned: list[tuple[int, ...]] = []
    ids: list[str] = []
    shoes = _read_shoes(path, source, decks, burn, kind, columns)
    whole = True
    for k, (n, read) in enumerate(shoes):
        block.add(k, n, read)
        if kind in ("card-text", "card-csv"):
            burned.append(read.burned)
        ids.append(_label(kind, read))
        if until(n):
            whole = False
            shoes.close()
            break
    hands = replace(block.hands(), labels=tuple(ids) if ids and all(ids) else ())
    return replace(hands, burned=tuple(burned)) if burn else hands, whole


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
        known: frozenset[str] = frozenset() if kind == "road" else ALL_KNOWN
        block = _Block(kind, known, source)
        for n, read in _read_shoes(path, source, decks, burn, kind, columns):
            if kind in ("card-text", "card-csv"):
                burned.append(read.burned)
            ids.append(_label(kind, read))
            if not block.n:
                firsts.append(len(lengths))
            block.add(len(lengths), n, read)
            lengths.append(n)
            if block.n >= PART_HANDS:
                known = block.write(work / f"part-{len(firsts) - 1}.parquet")
                block = _Block(kind, known, source)
        if block.n:
            known = block.write(work / f"part-{len(firsts) - 1}.parquet")
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


def _read_shoes(
    path: StrPath,
    source: str,
    decks: int,
    burn: bool,
    kind: str,
    columns: Mapping[str, str] | None,
) -> Generator[tuple[int, Any], None, None]:
    """(hands, the shoe read: see `stream.shoes_of`) of each shoe of the file;
    a file with no text, or (an outcome-level record) a shoe of more hands
    than the decks deal, refused as `read_shoes` refuses them."""
    parquet = is_parquet(path)
    bound: dict[str, Any] = {"most": JSON_LINE_BYTES} if kind in JSON_KINDS else {"decks": decks}

    def lines() -> Iterator[tuple[int, str]]:
        seen_text = False
        read = parquet_lines(source, path) if parquet else stream_lines(path, **bound)
        for number, text in read:
            seen_text = seen_text or bool(text.strip())
            yield number, text
        if not seen_text:
            raise ShoeFormatError(f"{source}: no shoes: the file is empty")

    too_long: tuple[int, int] | None = None  # (an outcome-level record's first: shoe, hands)
    try:
        shoes = shoes_of(kind, lines(), source, decks, burn, columns)
        for k, (n, read) in enumerate(shoes):
            if kind in ("outcome-csv", *JSON_KINDS) and too_long is None:
                too_long = (k + 1, n) if n > HANDS_PER_DECK * decks else None
            yield n, read
    except ShoeFormatError as exc:
        raise (in_rows(exc, source) if parquet else exc) from None
    if too_long is not None:  # (as a whole read refuses it, once it has read the shoes)
        raise too_many_hands(source, f"shoe {too_long[0]}", too_long[1], decks)


def _label(kind: str, read: Any) -> str:
    """The file's own id of a shoe read (`_read_shoes`); "" where it has none."""
    if kind in ("card-text", "card-csv"):
        return str(read.read.id)
    return "" if kind == "road" or not read.labels else str(read.labels[0])


class _Block:
    """The hands of shoes read of a file of `kind`, added a shoe at a time
    (its place, hands and the shoe read), written as a Parquet file."""

    def __init__(self, kind: str, known: frozenset[str], source: str) -> None:
        self.kind, self.known, self.source = kind, known, source
        self.out = Growing(0)
        self.codes: list[np.ndarray] = []  # (a road's results)
        self.numbers: list[int] = []
        self.n = 0

    def add(self, number: int, n: int, read: Any) -> None:
        self.n += n
        if self.kind == "road":
            self.codes.append(read)
            self.numbers.append(number)
        elif self.kind in ("outcome-csv", *JSON_KINDS):
            self.known = read.known
            self.out.add({name: getattr(read, name) for name in self.out.columns})
        else:
            part = dict(read.columns)
            part["shoe"] = np.full(n, number, dtype=np.int64)
            part["hand"] = np.arange(1, n + 1, dtype=np.int32)
            self.out.add(part)

    def hands(self) -> Hands:
        if self.kind == "road":
            return road_shoe_hands(
                np.concatenate(self.codes) if self.codes else np.zeros(0, np.int8),
                np.array([len(c) for c in self.codes], np.int64),
                np.array(self.numbers, np.int64),
                self.source,
            )
        return Hands.from_columns(
            self.out.n, known=self.known, source=self.source, **self.out.filled()
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

"""Which format a shoe file is in, told from its content (and its name)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from backtest.core.errors import ShoeFormatError, shown
from backtest.core.rules import Winner
from backtest.shoes.recorded.card_level import card_code
from backtest.shoes.recorded.road_strings import ROAD_CHARS, TOKEN, token_results
from backtest.shoes.recorded.text import content_lines, csv_cells, numbered_lines

KIND_WORDS = {
    "card-text": "card text",
    "card-csv": "a card CSV",
    "outcome-csv": "an outcome CSV",
    "json": "JSON",
    "road": "a road",
    "parquet": "Parquet",
}
PARQUET_MAGIC = b"PAR1"


def sniff(source: str, text: str, columns: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """The format the text is in, and whether that is sure (else a reader that
    fails lists every format tried)."""
    suffix = Path(source).suffix.lower()
    first = next(
        (
            (n, line)
            for n, line in numbered_lines(text)
            if line.strip() and not line.lstrip().startswith("#")
        ),
        None,
    )
    if first is None:
        return "card-text", True  # only comments: reported as a file with no shoes
    number, line = first
    if suffix in (".json", ".jsonl", ".ndjson") or (
        suffix != ".csv" and line.lstrip().startswith(("{", "["))
    ):
        return "json", True
    if suffix == ".csv" or "," in line:
        header = {c.strip().lower() for c in csv_cells(line, source, number)}
        if columns:
            header = (header - {c.strip().lower() for c in columns.values()}) | set(columns)
        if "card" in header and "winner" not in header:
            return "card-csv", True
        if "winner" in header and "card" not in header:
            return "outcome-csv", True
        cells = [c.strip() for c in csv_cells(line, source, number)]
        if not columns and all(c and token_results(c) is not None for c in cells):
            return "road", True  # P,B,B,P,T: no header is all results
        raise ShoeFormatError(
            f"{source}, line {number}: a CSV shoe file needs a header with shoe,card (card "
            f"level, one card per row) or shoe,winner (outcome level, one hand per row), or "
            f"a mapping of its columns (--columns winner=Result,shoe=Shoe); "
            f"got {shown(line.strip())}"
        )
    # No card token holds a B or a P; text that is mostly results is a road
    # (so that a stray character in it is reported as a bad result, not a bad card).
    content = "".join("".join(c.split()) for _, c in content_lines(text)).upper()
    if content and content.count("T") == len(content):
        # only T's: ties, or cards of ten? "TTT" is no card; "T T T" is either
        if any(len(token) > 1 for _, c in content_lines(text) for token in c.split()):
            return "road", True
        raise ShoeFormatError(
            f"{source}: the file holds only T's standing alone, which read as "
            "ties (a road) or as cards of ten: write ties run together (TTT), "
            "or tens as 10"
        )
    if _results_share(text) >= 0.5:
        return "road", True
    tokens = [t for _, c in content_lines(text) for t in c.split()]
    cards = sum(_is_card(t) for t in tokens[:2000])
    return "card-text", 2 * cards >= min(len(tokens), 2000)


def _is_card(token: str) -> bool:
    try:
        card_code(token)
    except ValueError:
        return False
    return True


def _results_share(text: str) -> float:
    """The share of the text's characters (outside comments, separators and
    space) that are results of a road, when it holds a Player or Banker win."""
    total = results = 0
    decisive = False
    for _, content in content_lines(text):
        for match in TOKEN.finditer(content):
            token = match.group()
            total += len(token)
            got = token_results(token)
            if got is None:  # partly a road: count its road characters
                got_chars = [ch for ch in token if ch.upper() in ROAD_CHARS]
                results += len(got_chars)
                decisive = decisive or any(
                    ROAD_CHARS[c.upper()] is not Winner.TIE for c in got_chars
                )
                continue
            results += len(token)
            decisive = decisive or any(w is not Winner.TIE for w in got)
    return results / total if total and decisive else 0.0

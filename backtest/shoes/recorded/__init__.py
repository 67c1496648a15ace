"""Recorded shoes: read real shoes from files into `Hands`; write shoes as text.

Two levels of record are read:

* card level: the cards as dealt into hands, one shoe per line of a text
  file (`KS 9H 2C ...`) or one card per row of a `shoe,card` CSV. The hands
  are dealt from the cards by the rules, so every column is known.
* outcome level: what a table's scoreboard shows: a `shoe,winner,...` CSV
  (or Parquet; another CSV's column names mapped to ours), the live-table
  shoe-state JSON (`args.history_v2`; JSON Lines of snapshots merged into
  shoes), per-round results as JSON (with their cards: card level), or road
  strings (`BPPBT`, `P,B,T`, 庄闲和). Such a Hands knows only the columns recorded (`Hands.known`),
  and a bet that needs more fails with MissingDataError.

Every problem in a file is a ShoeFormatError naming the file, the place in
it (line and column, CSV field, or JSON path), what is wrong and what would
be valid. A card-level shoe that ends in the middle of a hand is only a
warning (IncompleteHandWarning): the hands before it are dealt.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "shoe.txt"
>>> _ = path.write_text("5 K 9 2 3 8   2 9 3 K\\n", encoding="utf-8")
>>> hands = read_shoes(path)
>>> hands.to_frame()["winner"].to_list(), format_card_text(hands)
(['player', 'banker'], '5 K 9 2 3 8 2 9 3 K\\n')

The package, by job: `files` (the reader for a file's format), `sniff`
(which format a file is), `options` (its decks, given or declared; a column
mapping), `text` (the bounded reader of files, pipes and standard input;
lines and CSV cells), a module a format (`card_level`, `outcome_csv` with
`outcomes`, the checks of an outcome record and the winner words,
`live_json` with `live_snapshots` and `rounds`, `road_strings`), `cache` (a
file's shoes one at a time off its lines, Parquet as its CSV; a big file
read once into Parquet in the cache, then any of its shoes read by polars)
and `writing`.
"""

from __future__ import annotations

from backtest.shoes.recorded.card_level import deal_cards
from backtest.shoes.recorded.files import FORMATS, read_shoes
from backtest.shoes.recorded.options import (
    MAPPED_COLUMNS,
    check_columns,
    decks_option,
    declared_decks,
    parse_columns,
    shoe_decks,
)
from backtest.shoes.recorded.outcomes import OUTCOME_COLUMNS
from backtest.shoes.recorded.text import IncompleteHandWarning, StrPath, source_name, stdin_bytes
from backtest.shoes.recorded.writing import format_card_text, write_atomic

__all__ = [
    "FORMATS",
    "MAPPED_COLUMNS",
    "OUTCOME_COLUMNS",
    "IncompleteHandWarning",
    "StrPath",
    "check_columns",
    "deal_cards",
    "declared_decks",
    "decks_option",
    "format_card_text",
    "parse_columns",
    "read_shoes",
    "shoe_decks",
    "source_name",
    "stdin_bytes",
    "write_atomic",
]

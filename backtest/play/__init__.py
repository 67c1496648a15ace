"""A mini-baccarat table in a terminal: cut the deck, place chips on up to three
boxes, watch each hand dealt by the rules core, and see the big road grow.

`PlaySession` reads typed commands one line at a time from any iterator of
strings and writes to any writer, so a person, a pipe, a script or a test can
sit at the table; `backtest play` wires it to standard input and output. End
of input acts like `quit`.

The shoe: before each generated shoe the player cuts the pack (a position, or
Enter for a random one), the first card is turned and as many more burned as
its value (ten for a ten or a face card), and the cut card is placed 14 cards
from the end. When it comes out, the hand is finished, one more is played, and
the shoe ends; a fresh shoe is then shuffled and the player is asked for a new
cut (`quit` at that prompt ends the session). A recorded card-level shoe file
is played card for card instead, one recorded shoe after another, without a
cut or burn; the session ends after its last shoe.

>>> from backtest.play import big_road, chips_text
>>> big_road("TBBPPT")
[['1B', 'P'], ['B', 'P1'], ['', ''], ['', ''], ['', ''], ['', '']]
>>> chips_text(130)
'100 + 25 + 5'

The package, by job: `money` (amounts and chips), `board` (the big road
under the table), `table` (the settings and the shoes), `words` (what a player
types, read), `bets` (the chips on the table and their checks), `texts` (what
the table says), `session` (the lines read, the shoes dealt, the hands settled).
"""

from __future__ import annotations

from backtest.play.board import ROAD_COLUMNS_SHOWN, ROAD_ROWS, big_road, render_big_road
from backtest.play.money import CHIPS, chips_text, money, parse_amount
from backtest.play.session import PlaySession, SessionSummary, Writer
from backtest.play.table import CUT_CARD, TableSettings, open_table, parse_bankroll
from backtest.play.words import BET_NAMES, BET_WORDS

__all__ = [
    "BET_NAMES",
    "BET_WORDS",
    "CHIPS",
    "CUT_CARD",
    "ROAD_COLUMNS_SHOWN",
    "ROAD_ROWS",
    "PlaySession",
    "SessionSummary",
    "TableSettings",
    "Writer",
    "big_road",
    "chips_text",
    "money",
    "open_table",
    "parse_amount",
    "parse_bankroll",
    "render_big_road",
]

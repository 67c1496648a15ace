"""A session at the table: the commands a player types, the hands dealt,
the bets settled, and what is said of each."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Literal, Protocol

import numpy as np

from backtest.core import settlement
from backtest.core.cards import card_token, value
from backtest.core.errors import RulesError, shown
from backtest.core.rules import (
    MAIN_BETS,
    PAIR_BETS,
    Bet,
    Hand,
    Winner,
    check_bets,
    deal_hand,
    rule_reasons,
)
from backtest.core.settlement import settle
from backtest.play.board import ROAD_COLUMNS_SHOWN, big_road, render_big_road
from backtest.play.money import (
    AMOUNT_PATTERN,
    CHIPS,
    chips_text,
    money,
    parse_amount,
    payout_words,
    whole_number,
)
from backtest.play.table import TableSettings, open_table, parse_bankroll
from backtest.shoes.shoe import ShoeSpec, shoe_order

#: how the table names each bet: as here, else its name in words ("Player Pair")
_NAMED = {Bet.DRAGON_7: "Dragon 7", Bet.PANDA_8: "Panda 8"}
BET_NAMES: Mapping[Bet, str] = {b: _NAMED.get(b, b.value.replace("_", " ").title()) for b in Bet}
#: what a player may type for each bet (after lower-casing, `-` read as `_`)
BET_WORDS: Mapping[str, Bet] = {
    **{b.value: b for b in Bet},
    "p": Bet.PLAYER,
    "player": Bet.PLAYER,
    "b": Bet.BANKER,
    "banker": Bet.BANKER,
    "bank": Bet.BANKER,
    "t": Bet.TIE,
    "tie": Bet.TIE,
    "pp": Bet.PLAYER_PAIR,
    "player_pair": Bet.PLAYER_PAIR,
    "playerpair": Bet.PLAYER_PAIR,
    "bp": Bet.BANKER_PAIR,
    "banker_pair": Bet.BANKER_PAIR,
    "bankerpair": Bet.BANKER_PAIR,
    "dragon7": Bet.DRAGON_7,
    "dragon_7": Bet.DRAGON_7,
    "dragon": Bet.DRAGON_7,
    "d7": Bet.DRAGON_7,
    "panda8": Bet.PANDA_8,
    "panda_8": Bet.PANDA_8,
    "panda": Bet.PANDA_8,
    "p8": Bet.PANDA_8,
}
#: the words a refusal suggests for each bet (by default its own name)
_SHORT = {
    Bet.PLAYER: "p/player",
    Bet.BANKER: "b/banker",
    Bet.TIE: "t/tie",
    Bet.PLAYER_PAIR: "pp/player_pair",
    Bet.BANKER_PAIR: "bp/banker_pair",
    Bet.DRAGON_7: "d7/dragon7",
    Bet.PANDA_8: "p8/panda8",
}
_SHORT_WORDS: Mapping[Bet, str] = {b: _SHORT.get(b, b.value) for b in Bet}
_FILLER = frozenset({"bet", "on", "at", "chips", "chip", "and"})
_QUIT = frozenset({"quit", "exit", "q", "leave"})
_DEAL = frozenset({"done", "deal", "go"})
_HELP = frozenset({"help", "h", "?", "commands"})
#: take back bets; `cancel` is the word of the Bulgarian table
_TAKE = frozenset({"take", "remove", "back", "cancel"})
#: a stake typed with a minus sign: `banker -5`, `-5 banker`
_NEGATIVE = re.compile(r"-[0-9$]")


class Writer(Protocol):
    """Where the table writes: a text stream, or anything with `write(str)`."""

    def write(self, text: str, /) -> object: ...


@dataclass(frozen=True)
class SessionSummary:
    """What a session at the table came to."""

    hands: int
    hands_bet: int
    wagered: int
    start_bankroll: Fraction
    bankroll: Fraction
    biggest_win: Fraction
    biggest_loss: Fraction
    results: Mapping[Winner, int]

    @property
    def net(self) -> Fraction:
        return self.bankroll - self.start_bankroll

    def text(self) -> str:
        win = money(self.biggest_win, signed=True) if self.biggest_win > 0 else "none"
        loss = money(self.biggest_loss, signed=True) if self.biggest_loss < 0 else "none"
        r = self.results
        return (
            "\n".join(
                [
                    "Session summary",
                    f"  hands played     {self.hands} ({self.hands_bet} with bets)",
                    f"  total wagered    {money(self.wagered)}",
                    f"  net              {money(self.net, signed=True)}",
                    f"  final bankroll   {money(self.bankroll)} (started with {money(self.start_bankroll)})",
                    f"  biggest win      {win}",
                    f"  biggest loss     {loss}",
                    f"  results          Player {r[Winner.PLAYER]}, Banker {r[Winner.BANKER]}, "
                    f"Tie {r[Winner.TIE]}",
                ]
            )
            + "\n"
        )


class _SessionOver(Exception):
    """Raised by `quit` or the end of input to leave the table."""


class _Refused(Exception):
    """A bet or command the table does not take; the message says why."""


Boxes = list[dict[Bet, int]]


@dataclass
class _Shoe:
    """A shoe being dealt: the cards in order, the next card's position, and the
    position past which the cut card has come out (None for a recorded shoe)."""

    number: int
    cards: tuple[int, ...]
    pos: int
    cut_at: int | None

    def has_hand(self) -> bool:
        if self.cut_at is None:
            return self.pos < len(self.cards)
        # as the generator deals: a hand is only started with six cards left
        return self.pos + 6 <= len(self.cards)


@dataclass
class _Tally:
    hands: int = 0
    hands_bet: int = 0
    wagered: int = 0
    biggest_win: Fraction = Fraction(0)
    biggest_loss: Fraction = Fraction(0)
    results: dict[Winner, int] = field(default_factory=lambda: {w: 0 for w in Winner})


class PlaySession:
    """One player at the table, driven by lines of input.

    >>> import io
    >>> out = io.StringIO()
    >>> table = PlaySession(open_table(seed=3), ["100", "banker 25", "done", "quit"], out)
    >>> summary = table.run()
    >>> summary.hands, summary.wagered
    (1, 25)
    """

    def __init__(
        self,
        settings: TableSettings,
        lines: Iterable[str],
        out: Writer,
        echo: bool = False,
        ask: Callable[[str], str | None] | None = None,
    ) -> None:
        """`ask(prompt)`, when given, reads each line in place of `lines`: it shows the
        prompt itself (as `input` does, with readline's editing and history on a
        terminal) and returns None at the end of input."""
        self.settings = settings
        self._read = ask
        self._shoe: _Shoe | None = None
        self.rules = settings.rules
        self.bankroll = settings.bankroll
        self._lines = iter(lines)
        self._out = out
        self._echo = echo
        self._queue: deque[str] = deque()
        self._bets: Boxes = self._no_bets()
        self._undo: list[Boxes] = []
        self._last_bets: Boxes | None = None
        self._box = 1
        self._winners: list[Winner] = []
        self._shoes_started = 0
        self._tally = _Tally()
        # the checks made as each chip goes down; a pair bet alone is only refused
        # at the deal, so that it may be placed before its main bet
        self._placing_rules = replace(self.rules, pairs_need_main_bet=False)

    # -- input and output

    def _write(self, text: str) -> None:
        self._out.write(text)
        flush = getattr(self._out, "flush", None)
        if flush is not None:
            flush()

    def _ask(self, prompt: str) -> str:
        """The next command: from the rest of a `;`-joined line, or a new line."""
        if self._queue:
            return self._queue.popleft()
        if self._read is not None:
            line = self._read(prompt)
        else:
            self._write(prompt)
            line = next(self._lines, None)
        if line is None:
            self._write("\n")
            raise _SessionOver("end of input")
        line = line.rstrip("\r\n")
        if self._echo:
            self._write(line + "\n")
        first, *rest = (part.strip() for part in line.split(";"))
        self._queue.extend(p for p in rest if p)
        return first

    # -- the session

    def run(self) -> SessionSummary:
        """Play until `quit`, the end of input, the end of the recorded shoes, or a
        bankroll below the table minimum; write the summary and return it."""
        self._write(self._intro())
        try:
            while self._play_shoe():
                pass
        except _SessionOver:
            pass
        summary = self.summary()
        self._write("\n" + summary.text())
        return summary

    def summary(self) -> SessionSummary:
        t = self._tally
        return SessionSummary(
            hands=t.hands,
            hands_bet=t.hands_bet,
            wagered=t.wagered,
            start_bankroll=self.settings.bankroll,
            bankroll=self.bankroll,
            biggest_win=t.biggest_win,
            biggest_loss=t.biggest_loss,
            results=dict(t.results),
        )

    def _intro(self) -> str:
        s = self.settings
        if s.recorded is not None:
            shoes = f"{len(s.recorded)} recorded shoe{'s' if len(s.recorded) > 1 else ''} from {s.source}"
        else:
            shoes = (
                f"{s.decks}-deck shoes shuffled from seed {s.seed} (--seed {s.seed} deals "
                f"the same shoes again)"
            )
        return (
            f"Mini baccarat at the {self.rules.name} table. {self.rules.description}\n"
            f"Boxes: {self.rules.boxes}. Chips: {' '.join(map(str, CHIPS))}. "
            f"Bets from {s.table_min} to {s.table_max}. Bankroll {money(self.bankroll)}.\n"
            f"Cards: {shoes}.\n"
            f"Type help for the commands, quit to leave.\n"
        )

    def _play_shoe(self) -> bool:
        """Deal one shoe to its end; False when there is no further shoe."""
        shoe = self._next_shoe()
        if shoe is None:
            self._write("\nThat was the last recorded shoe: the session ends.\n")
            return False
        self._winners = []
        self._shoe = shoe
        hand_no = 0
        cut_card_out = False
        while shoe.has_hand():
            hand_no += 1
            last = " This is the last hand of the shoe." if cut_card_out else ""
            self._write(
                f"\nShoe {shoe.number}, hand {hand_no}: place your bets, then done.{last} "
                f"Bankroll {money(self.bankroll)}.\n"
            )
            self._take_bets()
            hand = deal_hand(shoe.cards[shoe.pos : shoe.pos + 6])
            shoe.pos += hand.cards_used
            self._write(self._hand_text(shoe.number, hand_no, hand))
            self._settle(hand)
            self._winners.append(hand.winner)
            self._write(
                f"\nBig road, shoe {shoe.number}:\n"
                f"{render_big_road(big_road(self._winners), ROAD_COLUMNS_SHOWN)}\n"
            )
            if self.bankroll < self.settings.table_min:
                self._write(
                    f"\nYour bankroll of {money(self.bankroll)} is below the table "
                    f"minimum of {self.settings.table_min}: the session ends.\n"
                )
                raise _SessionOver("bankroll")
            if cut_card_out:
                break
            if shoe.cut_at is not None and shoe.pos > shoe.cut_at:
                cut_card_out = True
                self._write("\nThe cut card has come out: one more hand, then the shoe ends.\n")
        left = len(shoe.cards) - shoe.pos
        self._write(f"\nThe shoe is over: {hand_no} hands dealt, {left} cards left undealt.\n")
        return True

    # -- a new shoe: the cut and the burn

    def _next_shoe(self) -> _Shoe | None:
        index = self._shoes_started
        recorded = self.settings.recorded
        if recorded is not None:
            if index >= len(recorded):
                return None
            self._shoes_started += 1
            self._write(
                f"\nRecorded shoe {index + 1} of {len(recorded)}: "
                f"{len(recorded[index])} cards, dealt as recorded.\n"
            )
            return _Shoe(index + 1, recorded[index], 0, None)
        n_cards = 52 * self.settings.decks
        fresh = "A fresh shoe is shuffled" if index else "The shoe is shuffled"
        decks = f"{self.settings.decks} deck{'s' if self.settings.decks > 1 else ''}"
        self._write(
            f"\n{fresh} (shoe {index + 1}: {decks}, {n_cards} cards).\n"
            f"Cut the deck: type a position from 1 to {n_cards - 1} (that many cards go "
            f"from the top to the bottom), or press Enter for a random cut.\n"
        )
        cut = self._ask_cut(n_cards)
        self._shoes_started += 1
        pack, position = self._cut_pack(cut, index)
        self._write(f"Cut at {position}: {position} cards moved from the top to the bottom.\n")
        first = pack[0]
        burn = value(first) or 10
        burned = " ".join(card_token(c) for c in pack[1 : 1 + burn])
        self._write(
            f"Burn: the first card is {card_token(first)} (value {value(first)}), so "
            f"{burn} more {'is' if burn == 1 else 'are'} burned: {burned}.\n"
            f"The cut card goes {self.settings.cut_card} cards from the end; "
            f"{n_cards - 1 - burn} cards to deal.\n"
        )
        return _Shoe(index + 1, pack, 1 + burn, n_cards - self.settings.cut_card)

    def _ask_cut(self, n_cards: int) -> int | Literal["random"]:
        while True:
            text = self._ask("cut> ").strip().lower()
            if text in _QUIT:
                raise _SessionOver("quit")
            if text in ("", "random", "r"):
                return "random"
            if text in _HELP:
                self._write(
                    f"Type a number from 1 to {n_cards - 1}: that many cards are moved "
                    "from the top of the pack to the bottom. Enter alone cuts at random; "
                    "quit leaves the table.\n"
                )
                continue
            position = whole_number(text)
            if position is not None and 1 <= position < n_cards:
                return position
            self._write(
                f"A cut is a position from 1 to {n_cards - 1}, or Enter for a random "
                f"cut; got {shown(text)}.\n"
            )

    def _cut_pack(self, cut: int | Literal["random"], index: int) -> tuple[tuple[int, ...], int]:
        """The pack in dealing order after the cut, and where it was cut."""
        s = self.settings
        spec = ShoeSpec(decks=s.decks, cut_card=s.cut_card, burn=True, cut=cut)
        pack = shoe_order(spec, s.seed, index)
        position = cut
        if cut == "random":
            # the shoe module draws the position; find it by rolling the uncut pack
            plain = shoe_order(replace(spec, cut=None), s.seed, index)
            position = next(
                c for c in range(len(plain)) if np.array_equal(np.roll(plain, -c), pack)
            )
        return tuple(int(c) for c in pack), int(position)

    # -- betting

    def _no_bets(self) -> Boxes:
        return [{} for _ in range(self.rules.boxes)]

    def _take_bets(self) -> None:
        """Read commands until the bets are placed and `done` is accepted."""
        while True:
            command = self._ask(f"box {self._box}> ")
            try:
                if self._command(command):
                    return
            except _Refused as refusal:
                self._write(
                    f"Refused: {refusal}. Nothing changed; bankroll {money(self.bankroll)}.\n"
                )

    def _command(self, line: str) -> bool:
        """Carry out one command; True when the hand is to be dealt."""
        text = re.sub(r"\s*\+\s*", "+", line.strip().lower().replace(",", " "))
        words = text.split()
        if not words:
            self._write(
                f"{self._bets_text()}\nPlace chips (e.g. banker 25), then done; "
                "help lists the commands.\n"
            )
            return False
        head, rest = words[0], words[1:]
        if head in _QUIT:
            raise _SessionOver("quit")
        if head in _DEAL:
            return self._ready()
        if head in _HELP:
            self._write(self._help())
        elif head in ("same", "rebet", "repeat"):
            self._same()
        elif head == "undo":
            if not self._undo:
                self._write("Nothing to undo.\n")
            else:
                self._bets = self._undo.pop()
                self._write(f"Undone. {self._bets_text()}\n")
        elif head == "clear":
            self._change(self._no_bets(), "All bets taken back.")
        elif head == "cancel" and not rest:  # cancel: the current box's bets
            self._take(["box", str(self._box)])
        elif head in _TAKE:
            self._take(rest)
        elif head == "odds":
            self._write(self._odds_text())
        elif head == "count":
            self._write(self._count_text())
        elif head in ("bets", "show", "table"):
            self._write(self._bets_text() + "\n")
        elif head == "road":
            self._write(render_big_road(big_road(self._winners)) + "\n")
        elif head == "rules":
            self._write(self._rules_text())
        elif head in ("bankroll", "balance", "money"):
            self._write(f"Bankroll {money(self.bankroll)}.\n")
        else:
            self._place(words)
        return False

    def _help(self) -> str:
        offered = ", ".join(_SHORT_WORDS[b] for b in self.rules.offered_bets())
        n = self.rules.boxes
        return (
            "Commands (one a line, or several joined with ';'):\n"
            "  banker 25            put 25 on Banker in the current box (also: bet banker 25, b 25,\n"
            "                       25 banker, banker 25+5)\n"
            "  player 10 tie 5      several bets at once\n"
            f"  banker 25 box 2      put the chips in box 2 (box 2 becomes the current box)\n"
            f"  box 2                switch the current box (boxes 1 to {n})\n"
            "  take tie             take back the Tie bet of the current box\n"
            "                       (take tie 5: only 5 of it; take box 2: all of box 2;\n"
            "                       take all, or clear: every bet)\n"
            "  cancel               take back the bets of the current box (cancel tie,\n"
            "                       cancel all: as take)\n"
            "  undo                 undo the last change to the bets\n"
            "  same                 place again the bets of your last betting round\n"
            "  bets                 show the bets on the table\n"
            "  done (or deal)       no more bets: deal the hand (with no bets: just watch)\n"
            "  road / rules / bankroll   the big road of this shoe, the table's rules, your money\n"
            "  odds                 exact odds and EV of every bet for the cards not yet seen\n"
            "  count                the cards seen in this shoe, by value\n"
            "  quit                 leave the table and see the summary (end of input too)\n"
            f"Bets at this table: {offered}.\n"
            f"Amounts are whole numbers made of chips {' '.join(map(str, CHIPS))}; "
            f"each bet from {self.settings.table_min} to {self.settings.table_max}.\n"
        )

    def _rules_text(self) -> str:
        r = self.rules
        lines = [f"The {r.name} table: {r.description}"]
        for bet in r.offered_bets():
            payout = r.payout(bet)
            assert payout is not None  # offered_bets lists only paid bets
            # the terms beside the plain payout (a Banker 6 paid half, a 3-card 7 pushed)
            note = "".join(f"; {_term_words(t)}" for t in settlement.terms(bet, r) if t.note)
            lines.append(f"  {BET_NAMES[bet]:<12} pays {payout_words(payout)}{note}")
        if not r.player_and_banker_together:
            lines.append("  Player and Banker may not both be bet in one box.")
        if r.pairs_need_main_bet:
            lines.append("  A pair bet needs a Player, Banker or Tie bet beside it in its box.")
        lines.append(
            f"  Boxes: {r.boxes}. Each bet from {self.settings.table_min} to "
            f"{self.settings.table_max}; all bets together at most your bankroll."
        )
        return "\n".join(lines) + "\n"

    def _bets_text(self) -> str:
        parts = []
        for i, box in enumerate(self._bets, start=1):
            if box:
                parts.append(
                    f"box {i}: " + ", ".join(f"{BET_NAMES[b]} {box[b]}" for b in Bet if b in box)
                )
        if not parts:
            return "No bets on the table."
        return f"On the table: {'; '.join(parts)} (total {_staked(self._bets)})."

    def _parse_box(self, words: list[str]) -> tuple[int | None, list[str]]:
        """Take a box token (`box 2`, `box2`, `box=2`) out of `words`."""
        box: int | None = None
        kept: list[str] = []
        i = 0
        while i < len(words):
            word = words[i]
            match = re.fullmatch(r"box[=:#]?([0-9]+)?", word)
            if match is None:
                kept.append(word)
                i += 1
                continue
            number = match.group(1)
            if number is None:
                if i + 1 < len(words) and whole_number(words[i + 1]) is not None:
                    number = words[i + 1]
                    i += 1
                else:
                    raise _Refused("box needs a number, e.g. box 2")
            asked = whole_number(number)
            if asked is None or not 1 <= asked <= self.rules.boxes:
                said = number if asked is not None else shown(number)
                raise _Refused(
                    f"there is no box {said}: this table has boxes 1 to {self.rules.boxes}"
                )
            if box is not None and box != asked:
                raise _Refused("one box to a line, please")
            box = asked
            i += 1
        return box, kept

    @staticmethod
    def _bet_words(words: list[str]) -> list[str | Bet]:
        """Words read as bets where they are bets (`player pair` joined), the rest as is."""
        out: list[str | Bet] = []
        i = 0
        while i < len(words):
            word = words[i].replace("-", "_")
            if (
                word in ("player", "p", "banker", "b")
                and i + 1 < len(words)
                and words[i + 1] in ("pair", "pairs")
            ):
                out.append(Bet.PLAYER_PAIR if word.startswith("p") else Bet.BANKER_PAIR)
                i += 2
                continue
            out.append(BET_WORDS.get(word, word))
            i += 1
        return out

    def _place(self, words: list[str]) -> None:
        negative = next((w for w in words if _NEGATIVE.match(w)), None)
        if negative is not None:
            raise _Refused(
                f"a stake must be a positive amount, got {negative} (chips come "
                f"back with take, e.g. take banker {negative[1:]})"
            )
        box, words = self._parse_box(words)
        items = [w for w in self._bet_words(words) if w not in _FILLER]
        if box is not None and not items:
            self._box = box
            self._write(f"Box {box} is the current box.\n")
            return
        if not any(isinstance(w, Bet) for w in items):
            first = next((w for w in items if not AMOUNT_PATTERN.match(str(w))), None)
            if first is None:
                # only amounts, or only words such as 'bet on'
                raise _Refused(
                    f"on what? e.g. banker {items[0] if items else 25} (help lists the bets)"
                )
            self._write(f"Unknown command {first!r}: type help for the commands.\n")
            return
        stakes: list[tuple[Bet, int]] = []
        pending_bet: Bet | None = None
        pending_amount: int | None = None
        for item in items:
            if isinstance(item, Bet):
                if pending_bet is not None:
                    raise _Refused(
                        f"how much on {BET_NAMES[pending_bet]}? e.g. {pending_bet.value} 25"
                    )
                pending_bet = item
            else:
                try:
                    amount = parse_amount(item)
                except ValueError as exc:
                    if not item[:1].isdigit() and not item.startswith("$"):
                        raise _Refused(
                            f"unknown bet {item!r}; bets at this table: "
                            + ", ".join(_SHORT_WORDS[b] for b in self.rules.offered_bets())
                        ) from None
                    raise _Refused(str(exc)) from None
                if pending_amount is not None:
                    raise _Refused(
                        f"two amounts in a row ({pending_amount} and {amount}): "
                        "put a bet between them"
                    )
                pending_amount = amount
            if pending_bet is not None and pending_amount is not None:
                stakes.append((pending_bet, pending_amount))
                pending_bet = pending_amount = None
        if pending_bet is not None:
            raise _Refused(f"how much on {BET_NAMES[pending_bet]}? e.g. {pending_bet.value} 25")
        if pending_amount is not None:
            raise _Refused(f"{pending_amount} on what? e.g. banker {pending_amount}")
        target = box if box is not None else self._box
        new = _copy(self._bets)
        for bet, amount in stakes:
            new[target - 1][bet] = new[target - 1].get(bet, 0) + amount
        placed = ", ".join(f"{BET_NAMES[b]} {a} (chips: {chips_text(a)})" for b, a in stakes)
        self._change(new, f"Box {target}: {placed}.")
        if box is not None:  # only a bet the table took moves the current box
            self._box = box
        note = self._pair_alone(new[target - 1])
        if note:
            self._write(f"Note: {note}; add one before done.\n")

    def _take(self, words: list[str]) -> None:
        if not words:
            if not self._undo:
                self._write("Nothing to take back.\n")
                return
            self._bets = self._undo.pop()
            self._write(f"Taken back. {self._bets_text()}\n")
            return
        if words[0] == "all":
            self._change(self._no_bets(), "All bets taken back.")
            return
        box, words = self._parse_box(words)
        target = box if box is not None else self._box
        new = _copy(self._bets)
        items = [w for w in self._bet_words(words) if w not in _FILLER]
        if not items:
            if not new[target - 1]:
                self._write(f"There are no bets in box {target}.\n")
                return
            new[target - 1] = {}
            self._change(new, f"Box {target}: every bet taken back.")
            return
        bet = items[0]
        if not isinstance(bet, Bet) or len(items) > 2:
            raise _Refused("take what? e.g. take banker, take tie 5, take box 2, take all")
        if bet not in new[target - 1]:
            self._write(f"There is no {BET_NAMES[bet]} bet in box {target}.\n")
            return
        if len(items) == 2:
            try:
                amount = parse_amount(str(items[1]))
            except ValueError as exc:
                raise _Refused(str(exc)) from None
            if amount > new[target - 1][bet]:
                raise _Refused(
                    f"there are only {new[target - 1][bet]} on {BET_NAMES[bet]} in box {target}"
                )
            new[target - 1][bet] -= amount
            if not new[target - 1][bet]:
                del new[target - 1][bet]
            self._change(new, f"Box {target}: {amount} taken back from {BET_NAMES[bet]}.")
            return
        del new[target - 1][bet]
        self._change(new, f"Box {target}: {BET_NAMES[bet]} bet taken back.")

    def _same(self) -> None:
        if self._last_bets is None:
            self._write("There is no earlier round with bets to repeat.\n")
            return
        self._change(_copy(self._last_bets), "The bets of your last round are placed again.")

    def _change(self, new: Boxes, message: str) -> None:
        """Put `new` on the table if the table takes it (else _Refused, nothing changes)."""
        refusal = self._refusal(new)
        if refusal is not None:
            raise _Refused(refusal)
        self._undo.append(self._bets)
        self._bets = new
        self._write(f"{message} {self._bets_text()}\n")

    def _refusal(self, boxes: Boxes) -> str | None:
        """Why the table would not take these bets as they are placed, or None."""
        for i, box in enumerate(boxes, start=1):
            try:
                check_bets(box, self._placing_rules)
            except RulesError as exc:
                return f"box {i}: {exc}"
            for bet, stake in box.items():
                if stake > self.settings.table_max:
                    return (
                        f"{BET_NAMES[bet]} {stake} in box {i} is above the table maximum "
                        f"of {self.settings.table_max}"
                    )
        if not self.rules.player_and_banker_together:
            player = [i for i, box in enumerate(boxes, start=1) if Bet.PLAYER in box]
            banker = [i for i, box in enumerate(boxes, start=1) if Bet.BANKER in box]
            if player and banker:
                return (
                    f"Player (box {player[0]}) and Banker (box {banker[0]}) together: at "
                    f"the {self.rules.name} table one player bets one side, in every box"
                )
        total = _staked(boxes)
        if total > self.bankroll:
            return (
                f"the bets would come to {total} over all boxes, more than your bankroll "
                f"of {money(self.bankroll)}"
            )
        return None

    def _pair_alone(self, box: Mapping[Bet, int]) -> str | None:
        if (
            self.rules.pairs_need_main_bet
            and any(b in box for b in PAIR_BETS)
            and not any(b in box for b in MAIN_BETS)
        ):
            return (
                f"at the {self.rules.name} table a pair bet needs a Player, Banker or Tie "
                "bet beside it"
            )
        return None

    def _ready(self) -> bool:
        """Whether the bets may be dealt; if not, say why (nothing is dealt or lost)."""
        problems = []
        for i, box in enumerate(self._bets, start=1):
            note = self._pair_alone(box)
            if note:
                problems.append(f"box {i}: {note}")
            for bet in Bet:
                if bet in box and box[bet] < self.settings.table_min:
                    problems.append(
                        f"{BET_NAMES[bet]} {box[bet]} in box {i} is below the table "
                        f"minimum of {self.settings.table_min}"
                    )
        refusal = self._refusal(self._bets)
        if refusal:
            problems.append(refusal)
        if problems:
            self._write(
                f"Not dealt: {'; '.join(problems)}. Change the bets (take, undo, "
                f"clear) and type done again. Bankroll {money(self.bankroll)}.\n"
            )
            return False
        return True

    # -- what the cards seen say

    def _seen(self) -> list[int]:
        """The cards of this shoe seen so far: the burn (turned face up) and every card
        dealt; none before the first shoe."""
        shoe = self._shoe
        return [] if shoe is None else list(shoe.cards[: shoe.pos])

    def _odds_text(self) -> str:
        """Exact odds and EV of every bet for the cards not yet seen in this shoe."""
        from backtest import odds
        from backtest.core import tables
        from backtest.core.settlement import payout_text

        seen = self._seen()
        try:
            counts = odds.remove_cards(odds.composition(self.settings.decks), seen)
            result = odds.exact_odds(counts, self.rules, self.settings.decks)
        except RulesError as exc:
            return f"No odds: {exc}.\n"
        rows = [
            (
                BET_NAMES[b.bet],
                payout_text(b.bet, self.rules),
                f"{float(b.p_win):.4%}",
                f"{float(b.p_push):.4%}",
                f"{float(b.p_loss):.4%}",
                f"{float(b.ev):+.4f}",
            )
            for b in result.bets
        ]
        head = ("bet", "pays", "P(win)", "P(push)", "P(loss)", "EV per unit")
        return (
            f"Exact odds for the next hand, the {len(seen)} cards seen taken out "
            f"({result.shoe_description}):\n"
            f"{tables.render(head, rows, key=1)}\n"
        )

    def _count_text(self) -> str:
        """The cards seen in this shoe, by value (tens and faces as 0), and those left."""
        seen = [value(c) for c in self._seen()]
        per_deck = {v: 4 for v in range(1, 10)} | {0: 16}
        order = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]
        counted = {v: seen.count(v) for v in order}
        decks = self.settings.decks
        head = "value  " + "  ".join(f"{'A' if v == 1 else '0' if v == 0 else v:>3}" for v in order)
        seen_line = "seen   " + "  ".join(f"{counted[v]:>3}" for v in order)
        left_line = "left   " + "  ".join(f"{per_deck[v] * decks - counted[v]:>3}" for v in order)
        return (
            f"Cards seen in this shoe: {len(seen)} (burn and hands; 0 is a ten or a face "
            f"card):\n{head}\n{seen_line}\n{left_line}\n"
        )

    # -- the deal and the settlement

    def _hand_text(self, shoe: int, number: int, hand: Hand) -> str:
        p, b = hand.player_cards, hand.banker_cards
        lines = [
            f"\n== Shoe {shoe}, hand {number} ==",
            _side_line("Player", p[:2]),
            _side_line("Banker", b[:2]),
        ]
        reasons = rule_reasons(hand)
        for reason in reasons:
            if reason.startswith("Player") and " draws" in reason.split(":")[0]:
                reason += f" -> {card_token(p[2])}"
            elif reason.startswith("Banker") and " draws" in reason.split(":")[0]:
                reason += f" -> {card_token(b[2])}"
            lines.append(f"  {reason}")
        if len(p) == 3 or len(b) == 3:
            lines += [_side_line("Player", p), _side_line("Banker", b)]
        pt, bt = hand.player_total, hand.banker_total
        if hand.winner is Winner.TIE:
            lines.append(f"  Tie, {pt} to {bt}.")
        elif hand.winner is Winner.PLAYER:
            lines.append(f"  Player wins, {pt} to {bt}.")
        else:
            lines.append(f"  Banker wins, {bt} to {pt}.")
        return "\n".join(lines) + "\n"

    def _settle(self, hand: Hand) -> None:
        t = self._tally
        t.hands += 1
        t.results[hand.winner] += 1
        staked = _staked(self._bets)
        if not staked:
            self._write("  No bets this hand.\n")
            return
        lines = []
        net = Fraction(0)
        for i, box in enumerate(self._bets, start=1):
            if not box:
                continue
            results = settle(box, hand, self.rules)
            for bet in Bet:
                if bet not in results:
                    continue
                r = results[bet]
                net += r
                what = f"  Box {i}: {BET_NAMES[bet]} {box[bet]}"
                if r > 0:
                    lines.append(f"{what} wins {money(r)}{self._win_note(bet, hand)}")
                elif r < 0:
                    lines.append(f"{what} loses {money(-r)}")
                else:
                    lines.append(f"{what} pushes: returned{self._push_note(bet, hand)}")
        before = self.bankroll
        self.bankroll += net
        t.hands_bet += 1
        t.wagered += staked
        t.biggest_win = max(t.biggest_win, net)
        t.biggest_loss = min(t.biggest_loss, net)
        lines.append(
            f"  Net {money(net, signed=True)}: bankroll {money(before)} -> {money(self.bankroll)}"
        )
        self._write("\n".join(lines) + "\n")
        self._last_bets = self._bets
        self._bets = self._no_bets()
        self._undo = []

    def _win_note(self, bet: Bet, hand: Hand) -> str:
        """The term beside the plain payout that paid this win, if any."""
        for t in settlement.terms(bet, self.rules):
            if t.note and t.net != 0 and settlement.shows(t.event, hand, bet):
                return f" ({_term_words(t)})"
        return ""

    def _push_note(self, bet: Bet, hand: Hand) -> str:
        if hand.winner is Winner.TIE:
            return " (tie)"
        for t in settlement.terms(bet, self.rules):
            if t.note and t.net == 0 and settlement.shows(t.event, hand, bet):
                return f" ({_term_words(t)})"
        return ""


def _term_words(term: settlement.Term) -> str:
    """'a winning Banker 6 pays 1 to 2', 'a winning Banker three-card 7 pushes'."""
    said = "pushes" if term.net == 0 else f"pays {payout_words(term.net)}"
    return f"{settlement.EVENT_WORDS[term.event]} {said}"


def _side_line(name: str, cards: Sequence[int]) -> str:
    tokens = " ".join(card_token(c) for c in cards)
    total = sum(value(c) for c in cards) % 10
    return f"  {name:<7} {tokens:<10} total {total}"


def _staked(boxes: Boxes) -> int:
    return sum(sum(box.values()) for box in boxes)


def _copy(boxes: Boxes) -> Boxes:
    return [dict(box) for box in boxes]


__all__ = [
    "BET_WORDS",
    "CHIPS",
    "PlaySession",
    "SessionSummary",
    "TableSettings",
    "big_road",
    "chips_text",
    "money",
    "open_table",
    "parse_amount",
    "parse_bankroll",
    "render_big_road",
]

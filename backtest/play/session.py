"""A session at the table: the lines read, the shoes cut, burned and dealt, the
hands settled against the bets, and the tally kept. What a player types is read
in `words`, the bets kept in `bets`, what the table says written in `texts`."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from copy import deepcopy
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Literal, Protocol

from backtest.core import tables
from backtest.core.cards import card_token, value
from backtest.core.errors import shown
from backtest.core.rules import Bet, Hand, Winner, deal_hand
from backtest.core.settlement import settle
from backtest.play import texts
from backtest.play.bets import Bets, copy_boxes, staked
from backtest.play.board import ROAD_COLUMNS_SHOWN, big_road, render_big_road
from backtest.play.money import money, whole_number
from backtest.play.table import DealingShoe, TableSettings, cut_pack
from backtest.play.words import BET_NAMES, DEAL, HELP, QUIT, TAKE, Refused, command_words


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


class _Said:
    """A writer that keeps what is written, to be written later or dropped."""

    def __init__(self, kept: list[str]) -> None:
        self.kept = kept

    def write(self, text: str, /) -> object:
        self.kept.append(text)
        return len(text)


class _SessionOver(Exception):
    """Raised by `quit` or the end of input to leave the table."""


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
    >>> from backtest.play.table import open_table
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
        width: int | None = None,
        record: str | Path | None = None,
    ) -> None:
        """`ask(prompt)`, when given, reads each line in place of `lines`: it shows the
        prompt itself (as `input` does, with readline's editing and history on a
        terminal) and returns None at the end of input. `width`: the terminal's
        columns, which every line written is wrapped to fit (None: as written).
        `record`: a file kept, hand by hand, with the session's record
        (`record_text`); the `record FILE` command starts one at the table."""
        self.settings = settings
        self._read = ask
        self._shoe: DealingShoe | None = None
        self.rules = settings.rules
        self.bankroll = settings.bankroll
        self._lines = iter(lines)
        self._out = out
        self._echo = echo
        self._queue: deque[str] = deque()
        self._bets = Bets(self.rules, settings.table_min, settings.table_max)
        self._winners: list[Winner] = []
        self._shoes_started = 0
        self._tally = _Tally()
        self._width = width
        # the session's hands: per shoe, the cards dealt into hands and a note for each hand
        self._dealt: list[tuple[int, list[str], list[str]]] = []
        self._record: Path | None = None
        if record is not None:
            self._start_record(Path(record))

    # -- input and output

    def _write(self, text: str) -> None:
        if self._width is not None:
            text = tables.fit_lines(text, self._width)
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
        self._write(texts.intro_text(self.settings))
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
            self._write(texts.hand_text(shoe.number, hand_no, hand))
            boxes = copy_boxes(self._bets.boxes)
            net = self._settle(hand)
            self._winners.append(hand.winner)
            self._keep(shoe, hand_no, hand, boxes, net)
            self._write(
                f"\nBig road, shoe {shoe.number}:\n"
                f"{render_big_road(big_road(self._winners), ROAD_COLUMNS_SHOWN, self._width)}\n"
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

    def _next_shoe(self) -> DealingShoe | None:
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
            return DealingShoe(index + 1, recorded[index], 0, None)
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
        pack, position = cut_pack(self.settings, cut, index)
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
        return DealingShoe(index + 1, pack, 1 + burn, n_cards - self.settings.cut_card)

    def _ask_cut(self, n_cards: int) -> int | Literal["random"]:
        while True:
            text = self._ask("cut> ").strip().lower()
            if text in QUIT:
                raise _SessionOver("quit")
            if text in ("", "random", "r"):
                return "random"
            if text in HELP:
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

    # -- betting

    def _take_bets(self) -> None:
        """Read commands until the bets are placed and `done` is accepted. The
        commands of a line (joined with `;`) up to a deal or quit are taken
        all or none: one refused, the bets stay as they were before the line."""
        while True:
            command = self._ask(f"box {self._bets.box}> ")
            group = [command]
            while self._queue and not (set(command_words(self._queue[0])[:1]) & (DEAL | QUIT)):
                group.append(self._queue.popleft())
            if len(group) == 1 or set(command_words(command)[:1]) & (DEAL | QUIT):
                self._queue.extendleft(reversed(group[1:]))
                try:
                    if self._command(command):
                        return
                except Refused as refusal:
                    self._write(
                        f"Refused: {refusal}. Nothing changed; bankroll {money(self.bankroll)}.\n"
                    )
                continue
            self._commands(group)

    def _commands(self, group: list[str]) -> None:
        """The commands of one line, all or none: what they say is written once
        every one is taken; a refusal puts the bets back as they were and drops
        the rest of the line."""
        before = deepcopy(self._bets)
        out = self._out
        said: list[str] = []
        self._out = _Said(said)
        try:
            for i, command in enumerate(group, start=1):
                try:
                    self._command(command)
                except Refused as refusal:
                    self._bets = before
                    self._queue.clear()
                    self._out = out
                    self._write(
                        f"Refused: {shown(command)} (command {i} of {len(group)} on the "
                        f"line): {refusal}. Nothing changed: none of the line's commands "
                        f"was taken; bankroll {money(self.bankroll)}.\n"
                    )
                    return
        finally:
            self._out = out
        self._write("".join(said))

    def _command(self, line: str) -> bool:
        """Carry out one command; True when the hand is to be dealt."""
        words = command_words(line)
        bets = self._bets
        if not words:
            self._write(
                f"{bets.text()}\nPlace chips (e.g. banker 25), then done; "
                "help lists the commands.\n"
            )
            return False
        head, rest = words[0], words[1:]
        if head in QUIT:
            raise _SessionOver("quit")
        if head in DEAL:
            return self._ready()
        if head in HELP:
            self._write(texts.help_text(self.settings))
        elif head in ("same", "rebet", "repeat"):
            self._write(bets.same(self.bankroll))
        elif head == "undo":
            self._write(bets.undo())
        elif head == "clear":
            self._write(bets.clear(self.bankroll))
        elif head == "cancel" and not rest:  # cancel: the current box's bets
            self._write(bets.take(["box", str(bets.box)], self.bankroll))
        elif head in TAKE:
            self._write(bets.take(rest, self.bankroll))
        elif head == "odds":
            self._write(texts.odds_text(self.settings, self._seen(), self._width))
        elif head == "count":
            self._write(texts.count_text(self._seen(), self.settings.decks, self._width))
        elif head in ("bets", "show", "table"):
            self._write(bets.text() + "\n")
        elif head == "road":
            self._write(render_big_road(big_road(self._winners), width=self._width) + "\n")
        elif head == "rules":
            self._write(texts.rules_text(self.settings))
        elif head == "record":
            self._write(self._record_command(line))
        elif head in ("bankroll", "balance", "money"):
            self._write(f"Bankroll {money(self.bankroll)}.\n")
        else:
            self._write(self._bets.place(words, self.bankroll))
        return False

    def _record_command(self, line: str) -> str:
        """`record FILE`: keep the session's record in FILE (the hands so far too)."""
        from backtest.core.errors import BacktestError

        name = line.strip()[len("record") :].strip()
        if not name:
            where = f"kept in {self._record}" if self._record is not None else "not kept"
            return f"The record is {where}. record FILE keeps the hands and bets in FILE.\n"
        try:
            self._start_record(Path(name))
        except BacktestError as exc:
            raise Refused(f"no record kept: {exc}") from None
        return f"Recording to {name}: {self._tally.hands} hand(s) so far, and each hand from now.\n"

    def _ready(self) -> bool:
        """Whether the bets may be dealt; if not, say why (nothing is dealt or lost)."""
        problems = self._bets.not_ready(self.bankroll)
        if problems:
            self._write(
                f"Not dealt: {'; '.join(problems)}. Change the bets (take, undo, "
                f"clear) and type done again. Bankroll {money(self.bankroll)}.\n"
            )
            return False
        return True

    def _seen(self) -> list[int]:
        """The cards of this shoe seen so far: the burn (turned face up) and every card
        dealt; none before the first shoe."""
        shoe = self._shoe
        return [] if shoe is None else list(shoe.cards[: shoe.pos])

    # -- the settlement

    def _settle(self, hand: Hand) -> Fraction:
        """Pay or take every bet against `hand`; the net of them all."""
        t = self._tally
        t.hands += 1
        t.results[hand.winner] += 1
        boxes = self._bets.boxes
        stake = staked(boxes)
        if not stake:
            self._write("  No bets this hand.\n")
            return Fraction(0)
        lines = []
        net = Fraction(0)
        for i, box in enumerate(boxes, start=1):
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
                    lines.append(f"{what} wins {money(r)}{texts.win_note(bet, hand, self.rules)}")
                elif r < 0:
                    lines.append(f"{what} loses {money(-r)}")
                else:
                    lines.append(f"{what} pushes: returned{texts.push_note(bet, hand, self.rules)}")
        before = self.bankroll
        self.bankroll += net
        t.hands_bet += 1
        t.wagered += stake
        t.biggest_win = max(t.biggest_win, net)
        t.biggest_loss = min(t.biggest_loss, net)
        lines.append(
            f"  Net {money(net, signed=True)}: bankroll {money(before)} -> {money(self.bankroll)}"
        )
        self._write("\n".join(lines) + "\n")
        self._bets.settled()
        return net

    # -- the record

    def _keep(
        self,
        shoe: DealingShoe,
        hand_no: int,
        hand: Hand,
        boxes: list[dict[Bet, int]],
        net: Fraction,
    ) -> None:
        """Add a hand dealt to the session's record (and its file, when kept)."""
        if not self._dealt or self._dealt[-1][0] != shoe.number:
            self._dealt.append((shoe.number, [], []))
        cards = [card_token(c) for c in shoe.cards[shoe.pos - hand.cards_used : shoe.pos]]
        placed = "; ".join(
            f"box {i}: " + ", ".join(f"{BET_NAMES[b]} {box[b]}" for b in Bet if b in box)
            for i, box in enumerate(boxes, start=1)
            if box
        )
        winner = {Winner.PLAYER: "Player wins", Winner.BANKER: "Banker wins", Winner.TIE: "a tie"}
        self._dealt[-1][1].extend(cards)
        self._dealt[-1][2].append(
            f"shoe {shoe.number}, hand {hand_no}: {' '.join(cards)}: "
            f"Player {hand.player_total}, Banker {hand.banker_total}, {winner[hand.winner]}; "
            + (f"bets {placed}; net {money(net, signed=True)}" if placed else "no bets")
            + f"; bankroll {money(self.bankroll)}"
        )
        if self._record is not None:
            self._save_record(self._record)

    def record_text(self) -> str:
        """The session's hands in the card-level text format every command reads
        (`deal`, `roads`, `analyze`, `run --shoes`, `play --shoe`): a line per
        shoe with its cards as dealt into hands; the bets and nets of each hand
        in `#` comments above it, which readers skip."""
        s = self.settings
        where = f"the recorded shoes of {s.source}" if s.recorded is not None else f"seed={s.seed}"
        lines = [
            f"# recorded at the backtest play table: decks={s.decks} {where} "
            f"rules={self.rules.name} bankroll={money(s.bankroll)}; the cards as dealt into "
            "hands, a shoe a line; each hand's bets and net in the comments above its shoe",
        ]
        for _, cards, notes in self._dealt:
            lines += [f"# {note}" for note in notes]
            lines.append(" ".join(cards))
        return "\n".join(lines) + "\n"

    def _save_record(self, path: Path) -> None:
        from backtest.shoes.recorded import write_atomic

        write_atomic(path, self.record_text())

    def _start_record(self, path: Path) -> None:
        """Keep the record in `path` from now on (written at once: the hands so far)."""
        self._save_record(path)
        self._record = path

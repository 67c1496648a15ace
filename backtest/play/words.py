"""What a player types, read: the words for each bet and command, a box token,
and a line of bets and amounts turned into stakes.

>>> bet_words(["player", "pair", "5", "b", "10"])
[<Bet.PLAYER_PAIR: 'player_pair'>, '5', <Bet.BANKER: 'banker'>, '10']
>>> parse_stakes([Bet.BANKER, "25", "5", Bet.TIE], [Bet.BANKER, Bet.TIE])
[(<Bet.BANKER: 'banker'>, 25), (<Bet.TIE: 'tie'>, 5)]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from backtest.core.errors import shown
from backtest.core.rules import Bet
from backtest.play.money import parse_amount, whole_number

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
SHORT_WORDS: Mapping[Bet, str] = {b: _SHORT.get(b, b.value) for b in Bet}
FILLER = frozenset({"bet", "on", "at", "chips", "chip", "and"})
QUIT = frozenset({"quit", "exit", "q", "leave"})
DEAL = frozenset({"done", "deal", "go"})
HELP = frozenset({"help", "h", "?", "commands"})
#: take back bets; `cancel` is the word of the Bulgarian table
TAKE = frozenset({"take", "remove", "back", "cancel"})
#: a stake typed with a minus sign: `banker -5`, `-5 banker`
NEGATIVE = re.compile(r"-[0-9$]")


class Refused(Exception):
    """A bet or command the table does not take; the message says why."""


def command_words(line: str) -> list[str]:
    """A typed line as lower-case words, commas as spaces, `25 + 5` as `25+5`."""
    return re.sub(r"\s*\+\s*", "+", line.strip().lower().replace(",", " ")).split()


def parse_box(words: list[str], boxes: int) -> tuple[int | None, list[str]]:
    """Take a box token (`box 2`, `box2`, `box=2`) out of `words`; `boxes` is how
    many the table has."""
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
                raise Refused("box needs a number, e.g. box 2")
        asked = whole_number(number)
        if asked is None or not 1 <= asked <= boxes:
            said = number if asked is not None else shown(number)
            raise Refused(f"there is no box {said}: this table has boxes 1 to {boxes}")
        if box is not None and box != asked:
            raise Refused("one box to a line, please")
        box = asked
        i += 1
    return box, kept


def bet_words(words: list[str]) -> list[str | Bet]:
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


def parse_stakes(items: Sequence[str | Bet], offered: Sequence[Bet]) -> list[tuple[Bet, int]]:
    """Bets and amounts, each bet beside its amount (either first), as stakes;
    `offered` are the table's bets, named when a word is no bet."""
    stakes: list[tuple[Bet, int]] = []
    pending_bet: Bet | None = None
    pending_amount: int | None = None
    for item in items:
        if isinstance(item, Bet):
            if pending_bet is not None:
                raise Refused(f"how much on {BET_NAMES[pending_bet]}? e.g. {pending_bet.value} 25")
            pending_bet = item
        else:
            try:
                amount = parse_amount(item)
            except ValueError as exc:
                if not item[:1].isdigit() and not item.startswith("$"):
                    raise Refused(
                        f"unknown bet {item!r}; bets at this table: "
                        + ", ".join(SHORT_WORDS[b] for b in offered)
                    ) from None
                raise Refused(str(exc)) from None
            if pending_amount is not None:
                raise Refused(
                    f"two amounts in a row ({pending_amount} and {amount}): put a bet between them"
                )
            pending_amount = amount
        if pending_bet is not None and pending_amount is not None:
            stakes.append((pending_bet, pending_amount))
            pending_bet = pending_amount = None
    if pending_bet is not None:
        raise Refused(f"how much on {BET_NAMES[pending_bet]}? e.g. {pending_bet.value} 25")
    if pending_amount is not None:
        raise Refused(f"{pending_amount} on what? e.g. banker {pending_amount}")
    return stakes

"""The chips on the table: placed, taken back, undone and placed again, box by
box, each change checked against the table's rules, its maximum and the
bankroll before it is made (a refused change leaves the bets as they were).

>>> from fractions import Fraction
>>> from backtest.core.rules import Rules
>>> bets = Bets(Rules.preset("commission"), table_min=1, table_max=1000)
>>> bets.place(["banker", "25"], Fraction(100))
'Box 1: Banker 25 (chips: 25). On the table: box 1: Banker 25 (total 25).\\n'
>>> bets.undo()
'Undone. No bets on the table.\\n'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction

from backtest.core.errors import RulesError
from backtest.core.rules import (
    BOTH_SIDES,
    PAIR_ALONE,
    SIDES,
    Bet,
    Rules,
    bet_mask,
    check_bets,
    combination,
)
from backtest.play.money import AMOUNT_PATTERN, chips_text, money, parse_amount
from backtest.play.words import (
    BET_NAMES,
    FILLER,
    NEGATIVE,
    Refused,
    bet_words,
    parse_box,
    parse_stakes,
)

Boxes = list[dict[Bet, int]]


def staked(boxes: Boxes) -> int:
    return sum(sum(box.values()) for box in boxes)


def copy_boxes(boxes: Boxes) -> Boxes:
    return [dict(box) for box in boxes]


def bets_text(boxes: Boxes) -> str:
    """`On the table: box 1: Banker 25 (total 25).`, or that there are none."""
    parts = []
    for i, box in enumerate(boxes, start=1):
        if box:
            parts.append(
                f"box {i}: " + ", ".join(f"{BET_NAMES[b]} {box[b]}" for b in Bet if b in box)
            )
    if not parts:
        return "No bets on the table."
    return f"On the table: {'; '.join(parts)} (total {staked(boxes)})."


class Bets:
    """The bets of the round being placed, the current box, the changes that may
    be undone, and the last round's bets (for `same`). Each change returns what
    the table says of it; a change the table does not take raises `Refused`."""

    def __init__(self, rules: Rules, table_min: int, table_max: int) -> None:
        self.rules = rules
        self.table_min = table_min
        self.table_max = table_max
        self.boxes: Boxes = self.no_bets()
        self.box = 1  # the current box
        self._undo: list[Boxes] = []
        self._last: Boxes | None = None
        # the checks made as each chip goes down; a pair bet alone is only refused
        # at the deal, so that it may be placed before its main bet
        self._placing_rules = replace(rules, pairs_need_main_bet=False)

    def no_bets(self) -> Boxes:
        return [{} for _ in range(self.rules.boxes)]

    def text(self) -> str:
        return bets_text(self.boxes)

    def place(self, words: list[str], bankroll: Fraction) -> str:
        negative = next((w for w in words if NEGATIVE.match(w)), None)
        if negative is not None:
            raise Refused(
                f"a stake must be a positive amount, got {negative} (chips come "
                f"back with take, e.g. take banker {negative[1:]})"
            )
        box, words = parse_box(words, self.rules.boxes)
        items = [w for w in bet_words(words) if w not in FILLER]
        if box is not None and not items:
            self.box = box
            return f"Box {box} is the current box.\n"
        if not any(isinstance(w, Bet) for w in items):
            first = next((w for w in items if not AMOUNT_PATTERN.match(str(w))), None)
            if first is None:
                # only amounts, or only words such as 'bet on'
                raise Refused(
                    f"on what? e.g. banker {items[0] if items else 25} (help lists the bets)"
                )
            return f"Unknown command {first!r}: type help for the commands.\n"
        stakes = parse_stakes(items, self.rules.offered_bets())
        target = box if box is not None else self.box
        new = copy_boxes(self.boxes)
        for bet, amount in stakes:
            new[target - 1][bet] = new[target - 1].get(bet, 0) + amount
        placed = ", ".join(f"{BET_NAMES[b]} {a} (chips: {chips_text(a)})" for b, a in stakes)
        said = self.change(new, f"Box {target}: {placed}.", bankroll)
        if box is not None:  # only a bet the table took moves the current box
            self.box = box
        note = self.pair_alone(new[target - 1])
        if note:
            said += f"Note: {note}; add one before done.\n"
        return said

    def take(self, words: list[str], bankroll: Fraction) -> str:
        if not words:
            if not self._undo:
                return "Nothing to take back.\n"
            self.boxes = self._undo.pop()
            return f"Taken back. {self.text()}\n"
        if words[0] == "all":
            return self.clear(bankroll)
        box, words = parse_box(words, self.rules.boxes)
        target = box if box is not None else self.box
        new = copy_boxes(self.boxes)
        items = [w for w in bet_words(words) if w not in FILLER]
        if not items:
            if not new[target - 1]:
                return f"There are no bets in box {target}.\n"
            new[target - 1] = {}
            return self.change(new, f"Box {target}: every bet taken back.", bankroll)
        bet = items[0]
        if not isinstance(bet, Bet) or len(items) > 2:
            raise Refused("take what? e.g. take banker, take tie 5, take box 2, take all")
        if bet not in new[target - 1]:
            return f"There is no {BET_NAMES[bet]} bet in box {target}.\n"
        if len(items) == 2:
            try:
                amount = parse_amount(str(items[1]))
            except ValueError as exc:
                raise Refused(str(exc)) from None
            if amount > new[target - 1][bet]:
                raise Refused(
                    f"there are only {new[target - 1][bet]} on {BET_NAMES[bet]} in box {target}"
                )
            new[target - 1][bet] -= amount
            if not new[target - 1][bet]:
                del new[target - 1][bet]
            return self.change(
                new, f"Box {target}: {amount} taken back from {BET_NAMES[bet]}.", bankroll
            )
        del new[target - 1][bet]
        return self.change(new, f"Box {target}: {BET_NAMES[bet]} bet taken back.", bankroll)

    def clear(self, bankroll: Fraction) -> str:
        return self.change(self.no_bets(), "All bets taken back.", bankroll)

    def undo(self) -> str:
        if not self._undo:
            return "Nothing to undo.\n"
        self.boxes = self._undo.pop()
        return f"Undone. {self.text()}\n"

    def same(self, bankroll: Fraction) -> str:
        if self._last is None:
            return "There is no earlier round with bets to repeat.\n"
        return self.change(
            copy_boxes(self._last), "The bets of your last round are placed again.", bankroll
        )

    def change(self, new: Boxes, message: str, bankroll: Fraction) -> str:
        """Put `new` on the table if the table takes it (else Refused, nothing changes)."""
        refusal = self.refusal(new, bankroll)
        if refusal is not None:
            raise Refused(refusal)
        self._undo.append(self.boxes)
        self.boxes = new
        return f"{message} {self.text()}\n"

    def settled(self) -> None:
        """The hand is settled: its bets become the last round's, the table is cleared."""
        self._last = self.boxes
        self.boxes = self.no_bets()
        self._undo = []

    def refusal(self, boxes: Boxes, bankroll: Fraction) -> str | None:
        """Why the table would not take these bets as they are placed, or None."""
        for i, box in enumerate(boxes, start=1):
            try:
                check_bets(box, self._placing_rules)
            except RulesError as exc:
                return f"box {i}: {exc}"
            for bet, stake in box.items():
                if stake > self.table_max:
                    return (
                        f"{BET_NAMES[bet]} {stake} in box {i} is above the table maximum "
                        f"of {self.table_max}"
                    )
        every = bet_mask(b for box in boxes for b in box)
        if combination(every, self.rules.player_and_banker_together, False) == BOTH_SIDES:
            player, banker = (
                next(i for i, box in enumerate(boxes, start=1) if side in box) for side in SIDES
            )
            return (
                f"Player (box {player}) and Banker (box {banker}) together: at "
                f"the {self.rules.name} table one player bets one side, in every box"
            )
        total = staked(boxes)
        if total > bankroll:
            return (
                f"the bets would come to {total} over all boxes, more than your bankroll "
                f"of {money(bankroll)}"
            )
        return None

    def pair_alone(self, box: Mapping[Bet, int]) -> str | None:
        if combination(bet_mask(box), True, self.rules.pairs_need_main_bet) == PAIR_ALONE:
            return (
                f"at the {self.rules.name} table a pair bet needs a Player, Banker or Tie "
                "bet beside it"
            )
        return None

    def not_ready(self, bankroll: Fraction) -> list[str]:
        """Why these bets may not be dealt (none: they may)."""
        problems = []
        for i, box in enumerate(self.boxes, start=1):
            note = self.pair_alone(box)
            if note:
                problems.append(f"box {i}: {note}")
            for bet in Bet:
                if bet in box and box[bet] < self.table_min:
                    problems.append(
                        f"{BET_NAMES[bet]} {box[bet]} in box {i} is below the table "
                        f"minimum of {self.table_min}"
                    )
        refusal = self.refusal(self.boxes, bankroll)
        if refusal:
            problems.append(refusal)
        return problems

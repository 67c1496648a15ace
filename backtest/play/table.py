"""The table's settings: its rules, decks, bankroll, and the shoes it deals; a
shoe being dealt, and a pack cut where the player says."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Literal

import numpy as np

from backtest.core.errors import UsageError, shown
from backtest.core.rules import Rules, load_rules
from backtest.play.money import AMOUNT_DIGITS, money
from backtest.shoes.shoe import MAX_DECKS, ShoeSpec, new_seed, shoe_order

#: cards left behind the cut card
CUT_CARD = 14


@dataclass(frozen=True)
class TableSettings:
    """Everything fixed for a session at the table.

    `recorded` holds the cards of each shoe of a recorded card-level file in
    dealing order; None means shoes are shuffled from `seed`.
    """

    rules: Rules
    decks: int = 8
    bankroll: Fraction = Fraction(1000)
    seed: int = 0
    table_min: int = 1
    table_max: int = 1000
    cut_card: int = CUT_CARD
    recorded: tuple[tuple[int, ...], ...] | None = None
    source: str = ""

    def __post_init__(self) -> None:
        def whole(name: str, option: str, v: object, lo: int, hi: int | None) -> None:
            if (
                isinstance(v, bool)
                or not isinstance(v, int)
                or v < lo
                or (hi is not None and v > hi)
            ):
                span = f"from {lo} to {hi}" if hi is not None else f"of at least {lo}"
                raise UsageError(f"{option} must be a whole number {span}, got {v!r}")

        whole("decks", "--decks", self.decks, 1, MAX_DECKS)
        whole("seed", "--seed", self.seed, 0, None)
        whole("table_min", "--min", self.table_min, 1, None)
        whole("table_max", "--max", self.table_max, self.table_min, None)
        most = 10**AMOUNT_DIGITS - 1  # money is read with at most AMOUNT_DIGITS digits
        for option, v in (("--min", self.table_min), ("--max", self.table_max)):
            if v > most:
                raise UsageError(
                    f"{option} must be at most {most:,} (money has at most "
                    f"{AMOUNT_DIGITS} digits before the point), got {v}"
                )
        whole("cut_card", "the cut card", self.cut_card, 0, 52 * self.decks - 6)
        object.__setattr__(self, "bankroll", Fraction(self.bankroll))
        if self.bankroll < self.table_min:
            raise UsageError(
                f"--bankroll {money(self.bankroll)} is below the table minimum "
                f"of {self.table_min} (--min): there would be no bet to make"
            )


def parse_bankroll(text: str | int | Fraction) -> Fraction:
    """A bankroll typed as money: `1000`, `250.50`."""
    if isinstance(text, (int, Fraction)) and not isinstance(text, bool):
        amount = Fraction(text)
    else:
        match = re.fullmatch(
            rf"\$?([0-9]{{1,{AMOUNT_DIGITS}}}(?:\.[0-9]{{1,2}})?)", str(text).strip()
        )
        if match is None:
            raise UsageError(
                f"--bankroll must be an amount of money such as 1000 or 250.50 "
                f"(at most {AMOUNT_DIGITS} digits before the point), got {shown(text)}"
            )
        amount = Fraction(match.group(1))
    if amount <= 0:
        raise UsageError(f"--bankroll must be more than 0, got {shown(text)}")
    return amount


def open_table(
    rules: str | Rules = "commission",
    decks: int | None = None,
    bankroll: str | int | Fraction = 1000,
    seed: int | None = None,
    shoe: str | Path | None = None,
    table_min: int = 1,
    table_max: int = 1000,
) -> TableSettings:
    """Check every option and build the settings; a bad option raises a
    BacktestError before anything is dealt. `seed` None picks a fresh one;
    `decks` None: 8, or those a `shoe` file says it was dealt from."""
    from backtest.shoes.recorded import decks_option

    decks = decks_option(shoe, decks)
    table_rules = load_rules(rules)
    amount = parse_bankroll(bankroll)
    recorded = None
    source = ""
    if shoe is not None:
        recorded = _recorded_shoes(shoe, decks)
        source = str(shoe)
    return TableSettings(
        rules=table_rules,
        decks=decks,
        bankroll=amount,
        seed=new_seed() if seed is None else seed,
        table_min=table_min,
        table_max=table_max,
        recorded=recorded,
        source=source,
    )


def _recorded_shoes(path: str | Path, decks: int) -> tuple[tuple[int, ...], ...]:
    from backtest.shoes import recorded

    hands = recorded.read_shoes(path, decks=decks)
    if "cards" not in hands.known:
        raise UsageError(
            f"{path}: the table deals real cards, so --shoe needs a card-level shoe (the cards "
            f"in order, e.g. 'KS 9H 2C 7D ...', or a shoe,card CSV); this file records only "
            f"the outcomes of the hands"
        )
    return tuple(
        tuple(int(c) for c in hands.shoe_slice(int(s)).dealt_cards()) for s in np.unique(hands.shoe)
    )


@dataclass
class DealingShoe:
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


def cut_pack(
    settings: TableSettings, cut: int | Literal["random"], index: int
) -> tuple[tuple[int, ...], int]:
    """The pack in dealing order after the cut, and where it was cut."""
    s = settings
    spec = ShoeSpec(decks=s.decks, cut_card=s.cut_card, burn=True, cut=cut)
    pack = shoe_order(spec, s.seed, index)
    position = cut
    if cut == "random":
        # the shoe module draws the position; find it by rolling the uncut pack
        plain = shoe_order(replace(spec, cut=None), s.seed, index)
        position = next(c for c in range(len(plain)) if np.array_equal(np.roll(plain, -c), pack))
    return tuple(int(c) for c in pack), int(position)

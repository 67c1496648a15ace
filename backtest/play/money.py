"""Money at the table: amounts as a person writes them, in chips."""

from __future__ import annotations

import re
from fractions import Fraction

from backtest.core.errors import shown

#: the chip values on the table; any whole amount is a sum of them
CHIPS = (1, 5, 25, 100, 500)


def money(amount: Fraction | int, signed: bool = False) -> str:
    """Money with two decimals, halves of a cent rounded away from zero.

    >>> money(Fraction(95, 4)), money(-5, signed=True), money(Fraction(1, 8), signed=True)
    ('23.75', '-5.00', '+0.13')
    """
    amount = Fraction(amount)
    cents = int(abs(amount) * 100 + Fraction(1, 2))
    text = f"{cents // 100}.{cents % 100:02d}"
    if cents and amount < 0:
        return "-" + text
    return ("+" + text) if signed and cents else text


def chips_text(amount: int) -> str:
    """The fewest chips that make `amount`, largest first: `2x500 + 25`."""
    parts = []
    for chip in reversed(CHIPS):
        count, amount = divmod(amount, chip)
        if count:
            parts.append(f"{count}x{chip}" if count > 1 else str(chip))
    return " + ".join(parts)


AMOUNT_PATTERN = re.compile(r"\$?([0-9]+)(?:\.([0-9]*))?")
AMOUNT_DIGITS = 15  # the most digits an amount of money is read with


def whole_number(text: str) -> int | None:
    """A small whole number typed in ASCII digits (a cut, a box), else None:
    `str.isdigit` would take "²", and `int` refuses thousands of digits."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


def parse_amount(text: str) -> int:
    """A stake typed as a whole number, or a sum of them (`25+5`).

    Raises ValueError with the reason: cents, zero, or not a number.

    >>> parse_amount("25"), parse_amount("25+5+1"), parse_amount("$100.00")
    (25, 31, 100)
    """
    total = 0
    for part in text.split("+"):
        match = AMOUNT_PATTERN.fullmatch(part)
        if match is None:
            raise ValueError(
                f"{shown(text)} is not an amount: type a whole number such as 25 "
                f"(or a sum of chips, 25+5)"
            )
        if len(match.group(1)) > AMOUNT_DIGITS:
            raise ValueError(f"{shown(text)} is more than any table takes")
        if match.group(2) and match.group(2).strip("0"):
            raise ValueError(
                f"{text} has cents: bets are made of whole chips ({' '.join(map(str, CHIPS))})"
            )
        total += int(match.group(1))
    if total == 0:
        raise ValueError(f"a bet of {text} is no bet: the smallest chip is {CHIPS[0]}")
    return total


def payout_words(payout: Fraction) -> str:
    return f"{payout.numerator} to 1" if payout.denominator == 1 else f"{float(payout):g} to 1"

"""The mini-baccarat rules: totals, the drawing tableau, outcome, the table's settings.

Pure functions and frozen values: no I/O, no randomness, no globals that
change. Every difference between the source documents is a field of `Rules`,
and each source's table is a named preset (`Rules.preset("german")`).

>>> hand = deal_hand(parse_cards("5 K 9 2 3 8"))
>>> hand.player_total, hand.banker_total, hand.winner
(7, 0, <Winner.PLAYER: 'player'>)

How each bet is settled under a `Rules` is `settlement`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

from backtest.core.cards import card_token, parse_cards, value  # noqa: F401 (the doctests use parse_cards)
from backtest.core.errors import RulesError, shown

#: the most betting boxes a table may have (the largest baccarat tables seat 14)
MAX_BOXES = 14


class Winner(StrEnum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"

    @property
    def code(self) -> int:
        """0 player, 1 banker, 2 tie: the code used in arrays."""
        return _WINNER_CODES[self]

    @classmethod
    def from_code(cls, code: int) -> Winner:
        return _WINNERS[code]


_WINNERS = (Winner.PLAYER, Winner.BANKER, Winner.TIE)
_WINNER_CODES = {w: i for i, w in enumerate(_WINNERS)}


class Bet(StrEnum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"
    PLAYER_PAIR = "player_pair"
    BANKER_PAIR = "banker_pair"
    DRAGON_7 = "dragon7"
    PANDA_8 = "panda8"

    @property
    def code(self) -> int:
        """Index of the bet in stake arrays (the order of this enum)."""
        return _BET_CODES[self]


_BET_CODES = {b: i for i, b in enumerate(Bet)}
MAIN_BETS = (Bet.PLAYER, Bet.BANKER, Bet.TIE)
PAIR_BETS = (Bet.PLAYER_PAIR, Bet.BANKER_PAIR)

# --- totals and the tableau -------------------------------------------------


def hand_total(values: Iterable[int]) -> int:
    """Sum of card values modulo 10: 9 + 5 = 4."""
    return sum(values) % 10


def is_natural(two_card_total: int) -> bool:
    """An 8 or 9 on the first two cards; both hands then stand."""
    return two_card_total >= 8


def player_draws(player_total: int) -> bool:
    """The Player draws on 0 to 5 and stands on 6 or 7 (no natural)."""
    return player_total <= 5


#: banker total -> values of the Player's third card on which the Banker draws
BANKER_DRAWS_ON: Mapping[int, frozenset[int]] = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}),
    4: frozenset({2, 3, 4, 5, 6, 7}),
    5: frozenset({4, 5, 6, 7}),
    6: frozenset({6, 7}),
    7: frozenset(),
    8: frozenset(),
    9: frozenset(),
}


def banker_draws(banker_total: int, player_third_value: int | None) -> bool:
    """Whether the Banker draws (no natural on the table).

    `player_third_value` is the VALUE of the Player's third card (0 for a ten
    or face card), or None when the Player stood.
    """
    if player_third_value is None:
        return banker_total <= 5
    return player_third_value in BANKER_DRAWS_ON[banker_total]


def rule_reasons(hand: Hand) -> list[str]:
    """The tableau decisions of a dealt hand, in words, in the order made."""
    p2 = hand_total(value(c) for c in hand.player_cards[:2])
    b2 = hand_total(value(c) for c in hand.banker_cards[:2])
    if is_natural(p2) or is_natural(b2):
        who = "Player" if is_natural(p2) else "Banker"
        if is_natural(p2) and is_natural(b2):
            who = "Both hands"
        total = p2 if is_natural(p2) else b2
        return [f"{who} natural {total}: both hands stand"]
    reasons = []
    if len(hand.player_cards) == 3:
        third = value(hand.player_cards[2])
        reasons.append(f"Player {p2} draws")
        verb = "draws" if len(hand.banker_cards) == 3 else "stands"
        card = card_token(hand.player_cards[2])
        reasons.append(f"Banker {b2} {verb}: Player's third card is {card} (value {third})")
    else:
        reasons.append(f"Player {p2} stands")
        verb = "draws" if len(hand.banker_cards) == 3 else "stands"
        reasons.append(f"Banker {b2} {verb}: Player stood, Banker draws on 0 to 5")
    return reasons


# --- a dealt hand -------------------------------------------------------------


class HandResult(Protocol):
    """What settlement reads of a hand. Recorded outcome-level shoes may leave
    any field but `winner` as None (not recorded)."""

    @property
    def winner(self) -> Winner: ...
    @property
    def player_total(self) -> int | None: ...
    @property
    def banker_total(self) -> int | None: ...
    @property
    def player_pair(self) -> bool | None: ...
    @property
    def banker_pair(self) -> bool | None: ...
    @property
    def player_card_count(self) -> int | None: ...
    @property
    def banker_card_count(self) -> int | None: ...


@dataclass(frozen=True)
class Hand:
    """One dealt hand: the cards (codes) of each side and what follows."""

    player_cards: tuple[int, ...]
    banker_cards: tuple[int, ...]

    @property
    def player_total(self) -> int:
        return hand_total(value(c) for c in self.player_cards)

    @property
    def banker_total(self) -> int:
        return hand_total(value(c) for c in self.banker_cards)

    @property
    def winner(self) -> Winner:
        return outcome(self.player_total, self.banker_total)

    @property
    def natural(self) -> bool:
        return (
            len(self.player_cards) == 2
            and len(self.banker_cards) == 2
            and (is_natural(self.player_total) or is_natural(self.banker_total))
        )

    @property
    def player_pair(self) -> bool:
        return (self.player_cards[0] & 0xF) == (self.player_cards[1] & 0xF)

    @property
    def banker_pair(self) -> bool:
        return (self.banker_cards[0] & 0xF) == (self.banker_cards[1] & 0xF)

    @property
    def player_card_count(self) -> int:
        return len(self.player_cards)

    @property
    def banker_card_count(self) -> int:
        return len(self.banker_cards)

    @property
    def cards_used(self) -> int:
        return len(self.player_cards) + len(self.banker_cards)


def outcome(player_total: int, banker_total: int) -> Winner:
    """The hand closer to 9 wins; equal totals tie."""
    if player_total > banker_total:
        return Winner.PLAYER
    if banker_total > player_total:
        return Winner.BANKER
    return Winner.TIE


def deal_hand(cards: Iterable[int]) -> Hand:
    """Deal one hand from the front of `cards` (codes), P B P B, then the tableau.

    Raises RulesError if the cards run out before the hand is complete.
    """
    it: Iterator[int] = iter(cards)

    def draw() -> int:
        try:
            return next(it)
        except StopIteration:
            raise RulesError("the cards ran out in the middle of a hand") from None

    p = [draw()]
    b = [draw()]
    p.append(draw())
    b.append(draw())
    p2 = hand_total(value(c) for c in p)
    b2 = hand_total(value(c) for c in b)
    if not (is_natural(p2) or is_natural(b2)):
        third: int | None = None
        if player_draws(p2):
            p.append(draw())
            third = value(p[2])
        if banker_draws(b2, third):
            b.append(draw())
    return Hand(tuple(p), tuple(b))


def deal_hands(cards: Sequence[int]) -> list[Hand]:
    """Deal every complete hand from `cards`; an incomplete tail is not dealt."""
    hands: list[Hand] = []
    pos = 0
    while True:
        try:
            hand = deal_hand(cards[pos : pos + 6])
        except RulesError:
            return hands
        hands.append(hand)
        pos += hand.cards_used


# --- rules settings -----------------------------------------------------------


#: bounds on a payout (net per unit staked): money is counted in whole ticks of
#: 1/(100 D) of a currency unit, D the payouts' common denominator
MAX_PAYOUT = 1000
MAX_PAYOUT_DENOMINATOR = 1000


def _fraction(name: str, raw: Any) -> Fraction:
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str, Fraction)):
        raise RulesError(f"rules: {name} must be a number, got {raw!r}")
    try:
        # floats go through str so that 0.95 means 19/20, not its binary neighbour
        result = Fraction(str(raw)) if isinstance(raw, float) else Fraction(raw)
    except (ValueError, ZeroDivisionError):
        raise RulesError(f"rules: {name} must be a number, got {raw!r}") from None
    if result <= 0:
        raise RulesError(f"rules: {name} must be positive, got {raw!r}")
    if result > MAX_PAYOUT:
        raise RulesError(f"rules: {name} must be at most {MAX_PAYOUT} (to 1), got {raw!r}")
    if result.denominator > MAX_PAYOUT_DENOMINATOR:
        raise RulesError(
            f"rules: {name} must be a whole number of thousandths of the stake "
            f"(such as 0.95 or 0.975), got {raw!r}"
        )
    return result


@dataclass(frozen=True)
class Rules:
    """Every setting in which the sources' tables differ.

    Payouts are net per unit staked, as exact fractions. A bet whose payout is
    None is not offered at the table.
    """

    name: str = "custom"
    banker_payout: Fraction = Fraction(19, 20)
    #: payout of a Banker win with a total of 6 (no-commission game); None = as any win
    banker_six_payout: Fraction | None = None
    #: EZ: a Banker win with a three-card 7 pushes the Banker bet
    banker_three_card_seven_push: bool = False
    tie_payout: Fraction = Fraction(8)
    pair_payout: Fraction | None = Fraction(11)
    dragon7_payout: Fraction | None = None
    panda8_payout: Fraction | None = None
    #: whether Player and Banker may both be bet on one hand (box)
    player_and_banker_together: bool = True
    #: whether a pair bet needs a Player, Banker or Tie bet beside it
    pairs_need_main_bet: bool = False
    #: betting boxes a player may play in one round
    boxes: int = 3
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for name in ("banker_payout", "tie_payout"):
            object.__setattr__(self, name, _fraction(name, getattr(self, name)))
        for name in ("banker_six_payout", "pair_payout", "dragon7_payout", "panda8_payout"):
            raw = getattr(self, name)
            if raw is not None:
                object.__setattr__(self, name, _fraction(name, raw))
        for name in (
            "banker_three_card_seven_push",
            "player_and_banker_together",
            "pairs_need_main_bet",
        ):
            if not isinstance(getattr(self, name), bool):
                raise RulesError(
                    f"rules: {name} must be true or false, got {getattr(self, name)!r}"
                )
        if (
            isinstance(self.boxes, bool)
            or not isinstance(self.boxes, int)
            or not 1 <= self.boxes <= MAX_BOXES
        ):
            raise RulesError(
                f"rules: boxes must be a whole number from 1 to {MAX_BOXES} (a "
                f"table's betting boxes), got {shown(self.boxes)}"
            )
        if not isinstance(self.name, str) or not self.name:
            raise RulesError(f"rules: name must be a non-empty string, got {self.name!r}")

    # -- presets and files

    @classmethod
    def preset(cls, name: str) -> Rules:
        """A named preset; see `PRESETS`. Unknown names fail with close matches."""
        try:
            return PRESETS[name]
        except KeyError:
            raise RulesError(_unknown("rules preset", name, PRESETS)) from None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "rules") -> Rules:
        """Build from a mapping such as a YAML file's; `base:` names a preset to start from."""
        if not isinstance(data, Mapping):
            raise RulesError(
                f"{source}: expected a mapping of rules settings, got {type(data).__name__}"
            )
        data = dict(data)
        base_name = data.pop("base", None)
        try:
            base = cls.preset(str(base_name)) if base_name is not None else cls()
        except RulesError as exc:  # `base:` names a preset, never a file
            raise RulesError(f"{source}: base: {exc}") from None
        known = {f.name for f in dataclasses.fields(cls)}
        for key in data:
            if key not in known:
                raise RulesError(f"{source}: " + _unknown("rules key", key, known))
        try:
            rules = dataclasses.replace(base, **data)
        except RulesError as exc:
            raise RulesError(f"{source}: {str(exc).removeprefix('rules: ')}") from None
        if "name" not in data and dataclasses.replace(rules, name=base.name) != base:
            # not the preset any more: its name would pass it off as one
            rules = dataclasses.replace(rules, name=f"{base.name}, modified")
        return rules

    def offered_bets(self) -> tuple[Bet, ...]:
        """The bets this table takes, in `Bet` order."""
        return tuple(b for b in Bet if self.payout(b) is not None)

    def payout(self, bet: Bet) -> Fraction | None:
        """Net payout of a plain win of `bet` (None if the table does not offer it)."""
        return {
            Bet.PLAYER: Fraction(1),
            Bet.BANKER: self.banker_payout,
            Bet.TIE: self.tie_payout,
            Bet.PLAYER_PAIR: self.pair_payout,
            Bet.BANKER_PAIR: self.pair_payout,
            Bet.DRAGON_7: self.dragon7_payout,
            Bet.PANDA_8: self.panda8_payout,
        }[bet]

    def to_mapping(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = (
                (int(v) if v.denominator == 1 else float(v)) if isinstance(v, Fraction) else v
            )
        return out

    @property
    def money_denominator(self) -> int:
        """Least common denominator of every payout: nets are whole multiples of
        1/money_denominator of a stake unit."""
        den = 1
        for p in (
            self.banker_payout,
            self.banker_six_payout,
            self.tie_payout,
            self.pair_payout,
            self.dragon7_payout,
            self.panda8_payout,
        ):
            if p is not None:
                den = den * p.denominator // _gcd(den, p.denominator)
        return den


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def _unknown(what: str, name: str, known: Iterable[str]) -> str:
    import difflib

    choices = sorted(known)
    close = difflib.get_close_matches(str(name), choices, n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {what} {name!r}{hint} (known: {', '.join(choices)})"


_COMMISSION = Rules(
    name="commission",
    description="Banker wins pay 0.95 (5% commission); Tie 8 to 1; pairs 11 to 1.",
)
_NO_COMMISSION = Rules(
    name="no-commission",
    banker_payout=Fraction(1),
    banker_six_payout=Fraction(1, 2),
    pairs_need_main_bet=True,
    description="Banker wins pay 1 to 1, but 0.5 to 1 with a total of 6; pairs need a main bet.",
)
_EZ = Rules(
    name="ez",
    banker_payout=Fraction(1),
    banker_three_card_seven_push=True,
    dragon7_payout=Fraction(40),
    panda8_payout=Fraction(25),
    description="EZ Baccarat: a Banker three-card 7 win pushes the Banker bet; "
    "Dragon 7 pays 40 to 1, Panda 8 pays 25 to 1.",
)

#: the named presets: the three games, and each source document's own table
PRESETS: Mapping[str, Rules] = {
    r.name: r
    for r in (
        _COMMISSION,
        _NO_COMMISSION,
        _EZ,
        dataclasses.replace(
            _NO_COMMISSION,
            name="macedonian",
            description="The Macedonian (and English) house rules: no commission, "
            "6 pays half, pairs 11 to 1 beside a main bet.",
        ),
        dataclasses.replace(
            _NO_COMMISSION,
            name="vietnamese",
            description="The Vietnamese house rules: no commission, 6 pays half, "
            "pairs 11 to 1 beside a main bet.",
        ),
        dataclasses.replace(
            _COMMISSION,
            name="bulgarian",
            pair_payout=None,
            description="The Bulgarian house rules: 5% commission, Tie 8 to 1, "
            "no pair bets, up to three boxes.",
        ),
        dataclasses.replace(
            _COMMISSION,
            name="german",
            pair_payout=None,
            player_and_banker_together=False,
            description="The German house rules: 5% commission, Tie 8 to 1, no pair "
            "bets; Player+Tie or Banker+Tie, never Player+Banker.",
        ),
    )
}


def load_rules(spec: str | Path | Mapping[str, Any] | Rules) -> Rules:
    """A preset name, a YAML file path, a mapping, or a Rules (returned as is)."""
    if isinstance(spec, Rules):
        return spec
    if isinstance(spec, Mapping):
        return Rules.from_mapping(spec)
    text = str(spec)
    if text in PRESETS:
        return PRESETS[text]
    if not text.strip():
        raise RulesError(
            f"no rules given (an empty name): give a preset ({', '.join(PRESETS)}) or a rules file"
        )
    path = Path(text)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        if path.is_dir():
            raise RulesError(f"rules file {text} is a directory, not a file")
        if not path.is_file():
            raise RulesError(f"rules file {text} does not exist")
        import yaml

        from backtest.core import yamlfile

        try:
            data = yamlfile.load(yamlfile.read_text(path))
        except UnicodeDecodeError as exc:
            raise RulesError(
                f"{text}: not UTF-8 text (byte {exc.start}); save the file as UTF-8"
            ) from None
        except yaml.YAMLError as exc:
            raise RulesError(f"{text}:{yamlfile.describe(exc)}") from None
        if isinstance(data, Mapping) and "rules" in data and len(data) == 1:
            data = data["rules"]
        if data is None:
            raise RulesError(
                f"{text}: the rules file is empty; give rules settings, e.g. base: commission"
            )
        return Rules.from_mapping(data, source=text)
    return Rules.preset(text)


# --- settlement ---------------------------------------------------------------

Stake = int | Fraction


def check_bets(bets: Mapping[Bet, Stake], rules: Rules) -> None:
    """Refuse a set of bets (one box) the table does not take, with the reason."""
    placed = {Bet(b) for b, s in bets.items() if s}
    for bet, stake in bets.items():
        if stake < 0:
            raise RulesError(f"a stake cannot be negative ({bet}: {stake})")
    for bet in placed:
        if rules.payout(bet) is None:
            offered = ", ".join(rules.offered_bets())
            raise RulesError(
                f"the {rules.name} table does not offer the {bet} bet (offered: {offered})"
            )
    if not rules.player_and_banker_together and {Bet.PLAYER, Bet.BANKER} <= placed:
        raise RulesError(
            f"the {rules.name} table does not take Player and Banker on one hand: "
            "bet Player (with Tie) or Banker (with Tie)"
        )
    if rules.pairs_need_main_bet and placed & set(PAIR_BETS) and not placed & set(MAIN_BETS):
        raise RulesError(
            f"at the {rules.name} table a pair bet needs a Player, Banker or Tie bet beside it"
        )


__all__ = [
    "Bet",
    "Hand",
    "HandResult",
    "PRESETS",
    "Rules",
    "Winner",
    "banker_draws",
    "check_bets",
    "deal_hand",
    "deal_hands",
    "hand_total",
    "is_natural",
    "load_rules",
    "outcome",
    "player_draws",
    "rule_reasons",
]

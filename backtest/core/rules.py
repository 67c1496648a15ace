"""The mini-baccarat table's settings: the bets, the `Rules`, the presets.

Every difference between the source documents is a field of `Rules`, each
declared with how it is checked (`backtest.core.fields`), and each source's
table is a named preset (`Rules.preset("german")`). The tableau (totals, who
draws, a dealt hand) is `tableau`'s, and its names are given here too.

>>> hand = deal_hand(parse_cards("5 K 9 2 3 8"))
>>> hand.player_total, hand.banker_total, hand.winner
(7, 0, <Winner.PLAYER: 'player'>)

How each bet is settled under a `Rules` is `settlement`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any

from backtest.core.cards import parse_cards  # noqa: F401 (the doctests use parse_cards)
from backtest.core.errors import RulesError
from backtest.core.fields import MAX_PAYOUT, MAX_PAYOUT_DENOMINATOR, Check, did_you_mean
from backtest.core.fields import payout as _payout
from backtest.core.tableau import (
    BANKER_DRAWS_ON,
    Hand,
    HandResult,
    Winner,
    banker_draws,
    deal_hand,
    deal_hands,
    hand_total,
    is_natural,
    outcome,
    player_draws,
    rule_reasons,
)

#: the most betting boxes a table may have (the largest baccarat tables seat 14)
MAX_BOXES = 14


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
#: the bets on who wins, first in `Bet` and in `Winner`'s order: a winner's
#: code is the code of the bet on it
MAIN_BETS = (Bet.PLAYER, Bet.BANKER, Bet.TIE)
#: the bets a table may take only beside a main bet (`Rules.pairs_need_main_bet`)
PAIR_BETS = (Bet.PLAYER_PAIR, Bet.BANKER_PAIR)
#: the two sides a table may refuse together on one hand (`Rules.player_and_banker_together`)
SIDES = (Bet.PLAYER, Bet.BANKER)


def bet_mask(bets: Iterable[Bet | str]) -> int:
    """The bets as one number: bit `Bet.code` set for each."""
    return sum(1 << Bet(b).code for b in set(bets))


MAIN_MASK, PAIR_MASK, SIDES_MASK = bet_mask(MAIN_BETS), bet_mask(PAIR_BETS), bet_mask(SIDES)

# what `combination` answers
TAKEN, BOTH_SIDES, PAIR_ALONE = 0, 1, 2


def combination(placed: int, pb_together: bool, pairs_need_main: bool) -> int:
    """Whether a table takes the bets `placed` (a `bet_mask`) together on one
    hand: TAKEN, or why not (BOTH_SIDES, PAIR_ALONE). `pb_together` and
    `pairs_need_main` are the `Rules`' `player_and_banker_together` and
    `pairs_need_main_bet`. Plain Python that numba compiles as it is: the
    session loops ask it too (`table_rules`)."""
    if not pb_together and (placed & SIDES_MASK) == SIDES_MASK:
        return BOTH_SIDES
    if pairs_need_main and (placed & PAIR_MASK) != 0 and (placed & MAIN_MASK) == 0:
        return PAIR_ALONE
    return TAKEN


# --- rules settings -----------------------------------------------------------


def _setting(check: Check) -> Any:
    """A field of `Rules`, with the check its value is held to."""
    return field(default=check.default, metadata={"check": check})


@dataclass(frozen=True)
class Rules:
    """Every setting in which the sources' tables differ, each declared with
    its check (`backtest.core.fields`), which `__post_init__` applies.

    Payouts are net per unit staked, as exact fractions (at most
    `fields.MAX_PAYOUT` to 1, in whole thousandths). A bet whose payout is
    None is not offered at the table.
    """

    name: str = _setting(Check("text", "custom", nonempty=True))
    banker_payout: Fraction = _setting(_payout(Fraction(19, 20), offered=True))
    #: payout of a Banker win with a total of 6 (no-commission game); None = as any win
    banker_six_payout: Fraction | None = _setting(_payout(None))
    #: EZ: a Banker win with a three-card 7 pushes the Banker bet
    banker_three_card_seven_push: bool = _setting(Check("flag", False))
    tie_payout: Fraction = _setting(_payout(Fraction(8), offered=True))
    pair_payout: Fraction | None = _setting(_payout(Fraction(11)))
    dragon7_payout: Fraction | None = _setting(_payout(None))
    panda8_payout: Fraction | None = _setting(_payout(None))
    #: whether Player and Banker may both be bet on one hand (box)
    player_and_banker_together: bool = _setting(Check("flag", True))
    #: whether a pair bet needs a Player, Banker or Tie bet beside it
    pairs_need_main_bet: bool = _setting(Check("flag", False))
    #: betting boxes a player may play in one round
    boxes: int = _setting(
        Check("whole", 3, minimum=1, maximum=MAX_BOXES, about="a table's betting boxes")
    )
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            check = f.metadata.get("check")
            if check is not None:
                value = check.read(getattr(self, f.name), f"rules: {f.name}", RulesError)
                object.__setattr__(self, f.name, value)

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

    @cached_property  # (asked for by every chunk of a run; a Rules never changes)
    def money_denominator(self) -> int:
        """Least common denominator of every payout (each setting declared as
        one): nets are whole multiples of 1/money_denominator of a stake unit."""
        den = 1
        for f in dataclasses.fields(self):
            check, p = f.metadata.get("check"), getattr(self, f.name)
            if check is not None and check.kind == "payout" and p is not None:
                den = den * p.denominator // _gcd(den, p.denominator)
        return den


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def _unknown(what: str, name: str, known: Iterable[str]) -> str:
    choices = sorted(known)
    return f"unknown {what} {name!r}{did_you_mean(name, choices, 3)} (known: {', '.join(choices)})"


#: the three games: named first wherever the presets are listed
GAMES = ("commission", "no-commission", "ez")


class _Presets(Mapping[str, Rules]):
    """The named presets: the rules files of the package's `configs/rules/`
    (the one source of the presets: a new table is a new file), each read
    the first time it is named, its description the comment it opens with.
    The three games come first, then the house tables by name."""

    def __init__(self) -> None:
        self._read: dict[str, Rules] = {}
        self._files: dict[str, Path] | None = None

    def _paths(self) -> dict[str, Path]:
        if self._files is None:
            from backtest.core.files import configs_folder

            folder = configs_folder()
            paths = sorted((folder / "rules").glob("*.yaml")) if folder is not None else []
            paths.sort(key=lambda p: GAMES.index(p.stem) if p.stem in GAMES else len(GAMES))
            self._files = {p.stem: p for p in paths}
        return self._files

    def __getitem__(self, name: str) -> Rules:
        if name not in self._read:
            path = self._paths()[name]  # KeyError: no such preset
            rules = load_rules(path)
            with path.open(encoding="utf-8") as fh:  # (only its opening comment line)
                opening = fh.readline()
            description = opening.lstrip("#").strip() if opening.startswith("#") else ""
            self._read[name] = dataclasses.replace(rules, description=description)
        return self._read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths())

    def __len__(self) -> int:
        return len(self._paths())

    def __contains__(self, name: object) -> bool:
        return name in self._paths()


#: the named presets: the three games, and each source document's own table
PRESETS: Mapping[str, Rules] = _Presets()


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
    why = combination(bet_mask(placed), rules.player_and_banker_together, rules.pairs_need_main_bet)
    if why == BOTH_SIDES:
        raise RulesError(
            f"the {rules.name} table does not take Player and Banker on one hand: "
            "bet Player (with Tie) or Banker (with Tie)"
        )
    if why == PAIR_ALONE:
        raise RulesError(
            f"at the {rules.name} table a pair bet needs a Player, Banker or Tie bet beside it"
        )


__all__ = [
    "BANKER_DRAWS_ON",
    "MAIN_BETS",
    "MAX_BOXES",
    "MAX_PAYOUT",
    "MAX_PAYOUT_DENOMINATOR",
    "PAIR_BETS",
    "SIDES",
    "Bet",
    "Hand",
    "HandResult",
    "PRESETS",
    "Rules",
    "Winner",
    "banker_draws",
    "bet_mask",
    "check_bets",
    "combination",
    "deal_hand",
    "deal_hands",
    "hand_total",
    "is_natural",
    "load_rules",
    "outcome",
    "player_draws",
    "rule_reasons",
]

"""How every bet is settled: one spec, built from `Rules`.

A bet's settlement is a short list of terms, read in order: the first term
whose event the hand shows gives the net result per unit staked; a hand
that shows none loses the stake. Every other form of settlement in the
project is derived from this list: `bet_result` and `settle` read it for
one hand, `payouts.unit_results` for every hand of a chunk at once (through
`unit_table`, the net for each combination of events), the exact odds count
its events (`outcome_atoms`), the compiled EVs price every bet from a
matrix of its nets (`odds.payout_vector`), and the odds table prints its notes
(`payout_text`). So a rule setting that changes a payout is read here and
nowhere else.

>>> from backtest.core.rules import Rules
>>> [str(t) for t in terms(Bet.BANKER, Rules.preset("no-commission"))]
['tie: 0', 'player_wins: -1', 'banker_six: 1/2', 'banker_wins: 1']
>>> settle({Bet.BANKER: 10, Bet.TIE: 1}, deal_hand(parse_cards("2 9 3 K")), Rules.preset("commission"))
{<Bet.BANKER: 'banker'>: Fraction(19, 2), <Bet.TIE: 'tie'>: Fraction(-1, 1)}
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from enum import IntEnum
from fractions import Fraction
from functools import lru_cache

from backtest.core.cards import parse_cards  # noqa: F401 (the doctests use it)
from backtest.core.errors import MissingDataError, RulesError
from backtest.core.rules import Bet, HandResult, Rules, Stake, Winner, check_bets, deal_hand  # noqa: F401

LOSE = Fraction(-1)
PUSH = Fraction(0)


class SettleEvent(IntEnum):
    """What a hand shows that a bet's settlement reads; the value is its bit
    in an event mask (`unit_table`)."""

    PLAYER_WINS = 0
    BANKER_WINS = 1
    TIE = 2
    BANKER_SIX = 3  # the Banker wins with a total of 6
    BANKER_THREE_CARD_SEVEN = 4  # the Banker wins with three cards totalling 7
    PLAYER_THREE_CARD_EIGHT = 5  # the Player wins with three cards totalling 8
    PLAYER_PAIR = 6  # the Player's first two cards are a pair
    BANKER_PAIR = 7

    @property
    def bit(self) -> int:
        return 1 << int(self)


E = SettleEvent
N_EVENTS = len(SettleEvent)
#: the columns of a hand an event reads, beyond the winner (`Hands.known` names)
EVENT_NEEDS: dict[SettleEvent, tuple[str, ...]] = {
    E.PLAYER_WINS: (),
    E.BANKER_WINS: (),
    E.TIE: (),
    E.BANKER_SIX: ("banker_total",),
    E.BANKER_THREE_CARD_SEVEN: ("card_counts", "banker_total"),
    E.PLAYER_THREE_CARD_EIGHT: ("card_counts", "player_total"),
    E.PLAYER_PAIR: ("player_pair",),
    E.BANKER_PAIR: ("banker_pair",),
}


#: how a person names the hand that shows each event
EVENT_WORDS: dict[SettleEvent, str] = {
    E.PLAYER_WINS: "a Player win",
    E.BANKER_WINS: "a Banker win",
    E.TIE: "a tie",
    E.BANKER_SIX: "a winning Banker 6",
    E.BANKER_THREE_CARD_SEVEN: "a winning Banker three-card 7",
    E.PLAYER_THREE_CARD_EIGHT: "a winning Player three-card 8",
    E.PLAYER_PAIR: "a Player pair",
    E.BANKER_PAIR: "a Banker pair",
}


@dataclass(frozen=True)
class Term:
    """`event` gives `net` per unit staked; `note` is how the odds table
    words a term beside the plain payout ('' for none)."""

    event: SettleEvent
    net: Fraction
    note: str = ""

    def __str__(self) -> str:
        return f"{self.event.name.lower()}: {self.net}"


@lru_cache(maxsize=256)
def terms(bet: Bet, rules: Rules) -> tuple[Term, ...]:
    """The settlement of `bet` under `rules`, in the order it is read (empty:
    the table does not offer the bet)."""
    payout = rules.payout(bet)
    if payout is None:
        return ()
    if bet is Bet.PLAYER:
        return (Term(E.TIE, PUSH), Term(E.PLAYER_WINS, payout))
    if bet is Bet.BANKER:
        out = [Term(E.TIE, PUSH), Term(E.PLAYER_WINS, LOSE)]
        if rules.banker_six_payout is not None:
            out.append(
                Term(
                    E.BANKER_SIX,
                    rules.banker_six_payout,
                    f"6 pays {number_text(rules.banker_six_payout)}",
                )
            )
        if rules.banker_three_card_seven_push:
            out.append(Term(E.BANKER_THREE_CARD_SEVEN, PUSH, "3-card 7 pushes"))
        out.append(Term(E.BANKER_WINS, payout))
        return tuple(out)
    wins = {
        Bet.TIE: E.TIE,
        Bet.PLAYER_PAIR: E.PLAYER_PAIR,
        Bet.BANKER_PAIR: E.BANKER_PAIR,
        Bet.DRAGON_7: E.BANKER_THREE_CARD_SEVEN,
        Bet.PANDA_8: E.PLAYER_THREE_CARD_EIGHT,
    }[bet]
    return (Term(wins, payout),)


def needs(bet: Bet, rules: Rules | None = None) -> tuple[str, ...]:
    """The columns of a hand, beyond the winner, that settling `bet` reads
    under `rules` (by default, at a table with no special payouts that
    offers every bet: what the bet needs at any table)."""
    found = (c for t in terms(bet, rules or _plain_table()) for c in EVENT_NEEDS[t.event])
    return tuple(dict.fromkeys(found))


@lru_cache(maxsize=1)
def _plain_table() -> Rules:
    """A table that offers every bet, with no special Banker payouts."""
    return replace(Rules.preset("ez"), banker_three_card_seven_push=False)


def net_on(bet: Bet, events: Collection[SettleEvent], rules: Rules) -> Fraction:
    """The net per unit of `bet` on a hand showing exactly `events`."""
    for t in terms(bet, rules):
        if t.event in events:
            return t.net
    return LOSE


# --- one hand --------------------------------------------------------------------------


def _field(hand: HandResult, name: str, bet: Bet) -> object:
    v = getattr(hand, name)
    if v is None:
        raise MissingDataError(
            f"the {bet} bet needs the {name} of each hand, which this recorded shoe does not have"
        )
    return v


def shows(event: SettleEvent, hand: HandResult, bet: Bet) -> bool:
    """Whether `hand` shows `event`; a column it needs and the hand lacks is
    a MissingDataError naming `bet` (read only when the winner leaves the
    event open)."""
    w = hand.winner
    if event is E.PLAYER_WINS:
        return w is Winner.PLAYER
    if event is E.BANKER_WINS:
        return w is Winner.BANKER
    if event is E.TIE:
        return w is Winner.TIE
    if event is E.BANKER_SIX:
        return w is Winner.BANKER and _field(hand, "banker_total", bet) == 6
    if event is E.BANKER_THREE_CARD_SEVEN:
        return (
            w is Winner.BANKER
            and _field(hand, "banker_card_count", bet) == 3
            and _field(hand, "banker_total", bet) == 7
        )
    if event is E.PLAYER_THREE_CARD_EIGHT:
        return (
            w is Winner.PLAYER
            and _field(hand, "player_card_count", bet) == 3
            and _field(hand, "player_total", bet) == 8
        )
    if event is E.PLAYER_PAIR:
        return bool(_field(hand, "player_pair", bet))
    return bool(_field(hand, "banker_pair", bet))


def bet_result(bet: Bet, hand: HandResult, rules: Rules) -> Fraction:
    """Net result per unit staked on `bet` for this hand: payout, 0 (push) or -1.

    >>> bet_result(Bet.BANKER, deal_hand(parse_cards("K 3 K 3 T")), Rules.preset("no-commission"))
    Fraction(1, 2)
    """
    spec = terms(bet, rules)
    if not spec:
        raise RulesError(f"the {rules.name} table does not offer the {bet} bet")
    for t in spec:
        if shows(t.event, hand, bet):
            return t.net
    return LOSE


def settle(bets: Mapping[Bet, Stake], hand: HandResult, rules: Rules) -> dict[Bet, Fraction]:
    """Each placed bet's exact net result (stake times its per-unit result).

    The bets are checked against the table first; a forbidden combination
    raises RulesError and nothing is settled.
    """
    check_bets(bets, rules)
    return {Bet(b): Fraction(s) * bet_result(Bet(b), hand, rules) for b, s in bets.items() if s}


# --- every hand at once, and the exact counts ------------------------------------------------


@lru_cache(maxsize=64)
def unit_table(rules: Rules) -> tuple[tuple[int, ...], ...]:
    """For each bet (in `Bet` order), its net per unit in 1/money_denominator
    for every event mask 0..2**N_EVENTS-1 (bit `SettleEvent.bit` set where
    the hand shows the event); all zeros for a bet not offered."""
    den = rules.money_denominator
    out = []
    for bet in Bet:
        if not terms(bet, rules):
            out.append((0,) * (1 << N_EVENTS))
            continue
        row = []
        for mask in range(1 << N_EVENTS):
            net = net_on(bet, [e for e in SettleEvent if mask & e.bit], rules) * den
            assert net.denominator == 1, "a net is a whole number of 1/den units"
            row.append(int(net))
        out.append(tuple(row))
    return tuple(out)


#: the hands an exact count splits into, by what they show: (the events, the
#: counted events it is, the counted events taken away), for the winner's
#: family and for each pair (a bet reads the events of one family)
WINNER_ATOMS = (
    ((E.PLAYER_WINS, E.PLAYER_THREE_CARD_EIGHT), ("player_three_card_eight",), ()),
    ((E.PLAYER_WINS,), ("player",), ("player_three_card_eight",)),
    ((E.BANKER_WINS, E.BANKER_SIX), ("banker_six",), ()),
    ((E.BANKER_WINS, E.BANKER_THREE_CARD_SEVEN), ("banker_three_card_seven",), ()),
    ((E.BANKER_WINS,), ("banker",), ("banker_six", "banker_three_card_seven")),
    ((E.TIE,), ("tie",), ()),
)


def _pair_atoms(
    event: SettleEvent, counted: str
) -> tuple[tuple[tuple[SettleEvent, ...], tuple[str, ...], tuple[str, ...]], ...]:
    return (((event,), (counted,), ()), ((), ("all",), (counted,)))


PAIR_ATOMS = {
    E.PLAYER_PAIR: _pair_atoms(E.PLAYER_PAIR, "player_pair"),
    E.BANKER_PAIR: _pair_atoms(E.BANKER_PAIR, "banker_pair"),
}


def outcome_atoms(
    bet: Bet, rules: Rules
) -> tuple[tuple[Fraction, tuple[str, ...], tuple[str, ...]], ...]:
    """The net of `bet` on each kind of hand an exact count tells apart:
    (net, counts to add, counts to take away), the counts named by
    `odds.Event` values ('all' for every hand). The kinds partition the
    hands, so the nets' counts add up to every deal."""
    events = {t.event for t in terms(bet, rules)}
    pairs = events & PAIR_ATOMS.keys()
    if pairs:
        assert len(events) == 1, f"the {bet} bet reads a pair beside another event"
        atoms = PAIR_ATOMS[next(iter(pairs))]
    else:
        atoms = WINNER_ATOMS
    return tuple((net_on(bet, shown, rules), add, sub) for shown, add, sub in atoms)


def payout_text(bet: Bet, rules: Rules) -> str:
    """'0.95 to 1', '1 to 1 (6 pays 0.5)', '1 to 1 (3-card 7 pushes)'."""
    payout = rules.payout(bet)
    if payout is None:
        return "not offered"
    notes = "".join(f" ({t.note})" for t in terms(bet, rules) if t.note)
    return f"{number_text(payout)} to 1{notes}"


def number_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"

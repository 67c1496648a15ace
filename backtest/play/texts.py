"""What the table says: the welcome, the help, the rules, a hand dealt with the
reason for every third card, the exact odds and the count of the cards seen."""

from __future__ import annotations

from collections.abc import Sequence

from backtest.core import settlement
from backtest.core.cards import card_token, value
from backtest.core.errors import RulesError
from backtest.core.rules import Bet, Hand, Rules, Winner, rule_reasons
from backtest.play.money import CHIPS, money, payout_words
from backtest.play.table import TableSettings
from backtest.play.words import BET_NAMES, SHORT_WORDS


def intro_text(settings: TableSettings) -> str:
    s = settings
    if s.recorded is not None:
        shoes = (
            f"{len(s.recorded)} recorded shoe{'s' if len(s.recorded) > 1 else ''} from {s.source}"
        )
    else:
        shoes = (
            f"{s.decks}-deck shoes shuffled from seed {s.seed} (--seed {s.seed} deals "
            f"the same shoes again)"
        )
    return (
        f"Mini baccarat at the {s.rules.name} table. {s.rules.description}\n"
        f"Boxes: {s.rules.boxes}. Chips: {' '.join(map(str, CHIPS))}. "
        f"Bets from {s.table_min} to {s.table_max}. Bankroll {money(s.bankroll)}.\n"
        f"Cards: {shoes}.\n"
        f"Type help for the commands, quit to leave.\n"
    )


def help_text(settings: TableSettings) -> str:
    offered = ", ".join(SHORT_WORDS[b] for b in settings.rules.offered_bets())
    n = settings.rules.boxes
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
        f"each bet from {settings.table_min} to {settings.table_max}.\n"
    )


def rules_text(settings: TableSettings) -> str:
    r = settings.rules
    lines = [f"The {r.name} table: {r.description}"]
    for bet in r.offered_bets():
        payout = r.payout(bet)
        assert payout is not None  # offered_bets lists only paid bets
        # the terms beside the plain payout (a Banker 6 paid half, a 3-card 7 pushed)
        note = "".join(f"; {term_words(t)}" for t in settlement.terms(bet, r) if t.note)
        lines.append(f"  {BET_NAMES[bet]:<12} pays {payout_words(payout)}{note}")
    if not r.player_and_banker_together:
        lines.append("  Player and Banker may not both be bet in one box.")
    if r.pairs_need_main_bet:
        lines.append("  A pair bet needs a Player, Banker or Tie bet beside it in its box.")
    lines.append(
        f"  Boxes: {r.boxes}. Each bet from {settings.table_min} to "
        f"{settings.table_max}; all bets together at most your bankroll."
    )
    return "\n".join(lines) + "\n"


def odds_text(settings: TableSettings, seen: Sequence[int], width: int | None = None) -> str:
    """Exact odds and EV of every bet for the cards not yet seen in this shoe."""
    from backtest import odds
    from backtest.core import tables
    from backtest.core.settlement import payout_text

    rules = settings.rules
    try:
        counts = odds.remove_cards(odds.composition(settings.decks), list(seen))
        result = odds.exact_odds(counts, rules, settings.decks)
    except RulesError as exc:
        return f"No odds: {exc}.\n"
    rows = [
        (
            BET_NAMES[b.bet],
            payout_text(b.bet, rules),
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
        f"{tables.render(head, rows, key=1, width=width)}\n"
    )


def count_text(seen_cards: Sequence[int], decks: int, width: int | None = None) -> str:
    """The cards seen in this shoe, by value (tens and faces as 0), and those
    left; a table fitted to `width` (default: the terminal's)."""
    from backtest.core import tables

    seen = [value(c) for c in seen_cards]
    per_deck = {v: 4 for v in range(1, 10)} | {0: 16}
    order = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]
    counted = {v: seen.count(v) for v in order}
    head = ("value", *("A" if v == 1 else str(v) for v in order))
    rows = [
        ("seen", *(str(counted[v]) for v in order)),
        ("left", *(str(per_deck[v] * decks - counted[v]) for v in order)),
    ]
    return (
        f"Cards seen in this shoe: {len(seen)} (burn and hands; 0 is a ten or a face "
        f"card):\n{tables.render(head, rows, width=width)}\n"
    )


def hand_text(shoe: int, number: int, hand: Hand) -> str:
    p, b = hand.player_cards, hand.banker_cards
    lines = [
        f"\n== Shoe {shoe}, hand {number} ==",
        side_line("Player", p[:2]),
        side_line("Banker", b[:2]),
    ]
    reasons = rule_reasons(hand)
    for reason in reasons:
        if reason.startswith("Player") and " draws" in reason.split(":")[0]:
            reason += f" -> {card_token(p[2])}"
        elif reason.startswith("Banker") and " draws" in reason.split(":")[0]:
            reason += f" -> {card_token(b[2])}"
        lines.append(f"  {reason}")
    if len(p) == 3 or len(b) == 3:
        lines += [side_line("Player", p), side_line("Banker", b)]
    pt, bt = hand.player_total, hand.banker_total
    if hand.winner is Winner.TIE:
        lines.append(f"  Tie, {pt} to {bt}.")
    elif hand.winner is Winner.PLAYER:
        lines.append(f"  Player wins, {pt} to {bt}.")
    else:
        lines.append(f"  Banker wins, {bt} to {pt}.")
    return "\n".join(lines) + "\n"


def win_note(bet: Bet, hand: Hand, rules: Rules) -> str:
    """The term beside the plain payout that paid this win, if any."""
    for t in settlement.terms(bet, rules):
        if t.note and t.net != 0 and settlement.shows(t.event, hand, bet):
            return f" ({term_words(t)})"
    return ""


def push_note(bet: Bet, hand: Hand, rules: Rules) -> str:
    if hand.winner is Winner.TIE:
        return " (tie)"
    for t in settlement.terms(bet, rules):
        if t.note and t.net == 0 and settlement.shows(t.event, hand, bet):
            return f" ({term_words(t)})"
    return ""


def term_words(term: settlement.Term) -> str:
    """'a winning Banker 6 pays 1 to 2', 'a winning Banker three-card 7 pushes'."""
    said = "pushes" if term.net == 0 else f"pays {payout_words(term.net)}"
    return f"{settlement.EVENT_WORDS[term.event]} {said}"


def side_line(name: str, cards: Sequence[int]) -> str:
    tokens = " ".join(card_token(c) for c in cards)
    total = sum(value(c) for c in cards) % 10
    return f"  {name:<7} {tokens:<10} total {total}"

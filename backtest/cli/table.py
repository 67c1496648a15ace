"""The commands of the table: `odds` (the exact odds of every bet for a shoe) and
`play` (a seat at the table in the terminal)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from backtest.cli.completion import complete_rules
from backtest.cli.shell import (
    Format,
    echo,
    rules_option,
)
from backtest.core.errors import RulesError, UsageError


def odds_command(
    decks: Annotated[
        Optional[int],
        typer.Option(help="Decks in the shoe (default 8, or what the --shoe file says)."),
    ] = None,
    rules: Annotated[
        str, typer.Option(help="Rules preset name or YAML file.", autocompletion=complete_rules)
    ] = "commission",
    remove: Annotated[
        Optional[str],
        typer.Option(
            help='Cards taken out of the shoe, e.g. "5 5 K Td" (by rank; a card with '
            "its suit at most once a deck)."
        ),
    ] = None,
    shoe: Annotated[
        Optional[Path],
        typer.Option(
            exists=True,
            dir_okay=False,
            help="A recorded shoe (card level): take out the cards of its first hands.",
        ),
    ] = None,
    after_hands: Annotated[
        Optional[int],
        typer.Option(help="With --shoe: how many of its hands have been dealt (default 0)."),
    ] = None,
    shoe_number: Annotated[
        Optional[int],
        typer.Option(help="With --shoe: which of the file's shoes (1 for the first)."),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.TABLE,
) -> None:
    """Exact odds, EV and house edge of every bet the rules offer, for a shoe's composition."""
    from backtest import odds
    from backtest.core.cards import parse_cards
    from backtest.odds.events import check_cards_left

    if after_hands is not None and shoe is None:
        raise UsageError("--after-hands needs --shoe (a recorded file of shoes)")
    if shoe_number is not None and shoe is None:
        raise UsageError("--shoe-number needs --shoe (a recorded file of shoes)")
    try:
        removed = parse_cards(remove) if remove else []
    except ValueError as exc:
        raise UsageError(f"--remove: {exc}") from None
    table_rules = rules_option(rules)
    from backtest.shoes import recorded

    decks = recorded.decks_option(shoe, decks)
    # (the file is read only as far as the shoe asked for)
    wanted = 1 if shoe_number is None else shoe_number if shoe_number >= 1 else None
    hands = recorded.read_shoes(shoe, decks=decks, shoes=wanted) if shoe is not None else None
    # as odds.shoe_odds, with each option's error named as the option (exit 2)
    out: list[int] = []
    if hands is not None:
        try:
            out = odds.cards_before(
                hands, after_hands or 0, decks, 1 if shoe_number is None else shoe_number
            )
        except RulesError as exc:
            raise UsageError(
                str(exc)
                .replace("after_hands", "--after-hands", 1)
                .replace("shoe must", "--shoe-number must", 1)
            ) from None
    counts = odds.remove_cards(odds.composition(decks), out)
    try:
        odds.check_suited([*out, *removed], decks)
        counts = odds.remove_cards(counts, removed)
    except RulesError as exc:
        raise UsageError(f"--remove: {exc}") from None
    try:  # fewer than a hand may need: the option that took them out is wrong
        check_cards_left(int(counts.sum()))
    except RulesError as exc:
        raise UsageError(f"{'--remove' if removed else '--after-hands'}: {exc}") from None
    echo(odds.render(odds.exact_odds(counts, table_rules, decks), fmt.value))


def play_command(
    rules: Annotated[
        str, typer.Option(help="Rules preset name or YAML file.", autocompletion=complete_rules)
    ] = "commission",
    decks: Annotated[
        Optional[int],
        typer.Option(help="Decks in the shoe (default 8, or what the --shoe file says)."),
    ] = None,
    bankroll: Annotated[
        str, typer.Option(help="Money you sit down with, e.g. 1000 or 250.50.")
    ] = "1000",
    seed: Annotated[
        Optional[int],
        typer.Option(help="Seed of the shuffles (default: a fresh one, shown at the start)."),
    ] = None,
    shoe: Annotated[
        Optional[Path],
        typer.Option(
            help="Deal the cards of a recorded card-level shoe file instead, in order (no cut)."
        ),
    ] = None,
    table_max: Annotated[int, typer.Option("--max", help="Table maximum of each bet.")] = 1000,
    table_min: Annotated[int, typer.Option("--min", help="Table minimum of each bet.")] = 1,
    record: Annotated[
        Optional[Path],
        typer.Option(
            help="Keep the hands dealt, card by card, in this file (the card-level text every "
            "command reads), with each hand's bets and net in comments."
        ),
    ] = None,
) -> None:
    """Sit at a mini-baccarat table: cut, bet on up to three boxes, watch each hand dealt.

    Commands are read line by line from standard input (type help). At a
    terminal, Ctrl-C clears the line; Ctrl-D or quit ends with the summary.
    """
    from backtest import play
    from backtest.core.tables import terminal_width

    settings = play.open_table(
        rules=rules_option(rules),
        decks=decks,
        bankroll=bankroll,
        seed=seed,
        shoe=shoe,
        table_min=table_min,
        table_max=table_max,
    )
    lines = iter(sys.stdin.readline, "")
    ask = None
    if sys.stdin.isatty() and sys.stdout.isatty():
        try:  # line editing and history (the arrow keys) as a shell has them
            import readline  # noqa: F401
        except ImportError:  # not on every platform: plain lines then
            pass
        ask = _read_line
    play.PlaySession(
        settings,
        lines,
        sys.stdout,
        echo=not sys.stdin.isatty(),
        ask=ask,
        width=terminal_width(),
        record=record,
    ).run()


def _read_line(prompt: str) -> str | None:
    """A line typed at the terminal (readline's editing, when loaded), None at
    the end (Ctrl-D); Ctrl-C drops the line typed and asks again."""
    while True:
        try:
            return input(prompt)
        except EOFError:
            return None
        except KeyboardInterrupt:
            print("^C", flush=True)

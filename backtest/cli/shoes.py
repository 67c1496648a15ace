"""The commands on shoe files: `deal` (every hand of a record), `shoe generate`,
`roads` (a shoe's scoreboards) and `analyze` (a record's tests against fair shoes)."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer

from backtest.cli.completion import complete_rules
from backtest.cli.shell import (
    ColumnsOption,
    Format,
    Quiet,
    be_quiet,
    check_seed,
    colour_wanted,
    columns_option,
    echo,
    note,
)
from backtest.core.errors import RulesError, UsageError, shown_count


def deal(
    shoe_file: Annotated[
        Path,
        typer.Argument(help="A recorded shoe file (card or outcome level); - for standard input."),
    ],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.TABLE,
    decks: Annotated[
        Optional[int],
        typer.Option(
            help="Decks in the shoe the records came from (default: what the file says, else 8)."
        ),
    ] = None,
    burn: Annotated[bool, typer.Option(help="Apply the burn rule to card-level shoes.")] = False,
    columns: ColumnsOption = None,
) -> None:
    """Print every hand of a recorded shoe."""
    from backtest.present import render
    from backtest.shoes import recorded
    from backtest.shoes.recorded.cache import big_kind, columnar

    mapping = columns_option(columns)
    decks = recorded.decks_option(shoe_file, decks)
    kind = big_kind(shoe_file, None, mapping)
    if kind is not None:  # a big file: read as Parquet in the cache, printed in blocks
        shoes = columnar(shoe_file, decks, burn, kind, mapping)
        pieces = render.block_pieces(
            lambda: shoes.blocks(render.BLOCK_HANDS), shoes.known, fmt.value
        )
    else:
        hands = recorded.read_shoes(shoe_file, decks=decks, burn=burn, columns=mapping)
        pieces = render.pieces(hands, fmt.value)
    for piece in pieces:
        typer.echo(piece, nl=False)


# shoes one `shoe generate` writes at most (about 0.6 GB of text)
MAX_GENERATED_SHOES = 10**6


def shoe_generate(
    decks: Annotated[int, typer.Option(help="Decks shuffled together.")] = 8,
    seed: Annotated[int, typer.Option(help="Master seed; the same seed gives the same shoes.")] = 1,
    count: Annotated[int, typer.Option(help="How many shoes.")] = 1,
    session: Annotated[
        Optional[int],
        typer.Option(
            help="The shoes session N of `backtest run` with this seed plays (its first --count; "
            "else the shoes from the first)."
        ),
    ] = None,
    out: Annotated[
        Optional[Path], typer.Option(help="Write here instead of standard output.")
    ] = None,
    cut_card: Annotated[
        int,
        typer.Option(
            help="Cards behind the cut card (0: none; a hand starts while six cards are left)."
        ),
    ] = 14,
    burn: Annotated[bool, typer.Option(help="Burn cards at the start of each shoe.")] = True,
    cut: Annotated[
        Optional[str], typer.Option(help="Cut the pack: a number of cards, or 'random'.")
    ] = None,
    extra_hands: Annotated[
        int, typer.Option(help="Hands played after the cut card comes out.")
    ] = 1,
    quiet: Quiet = False,
) -> None:
    """Write generated shoes in the card-level text format (one shoe per line)."""
    from backtest.shoes import recorded
    from backtest.shoes.shoe import ShoeSpec, generate_hands

    be_quiet(quiet)
    if not 1 <= count <= MAX_GENERATED_SHOES:
        raise UsageError(
            f"--count must be from 1 to {MAX_GENERATED_SHOES:,}, got {shown_count(count)}"
        )
    check_seed(seed)
    recorded.decks_option(None, decks)  # in the words of the other commands' --decks
    cut_spec: int | str | None = cut
    if cut is not None and cut != "random":
        try:
            cut_spec = int(cut)
        except ValueError:
            raise UsageError(f"--cut must be a number of cards or 'random', got {cut!r}") from None
    try:
        spec = ShoeSpec(
            decks=decks,
            cut_card=cut_card,
            burn=burn,
            cut=cut_spec,  # type: ignore[arg-type]
            extra_hands=extra_hands,
        )
    except RulesError as exc:  # "shoe.cut_card: must ...": name the option instead
        field, _, rest = str(exc).removeprefix("shoe.").partition(": ")
        raise UsageError(f"--{field.replace('_', '-')} {rest}") from None
    first = 0
    if session is not None:
        from backtest.run.config import MAX_SESSIONS
        from backtest.run.plan import SHOE_BITS

        if not 1 <= session <= MAX_SESSIONS:
            raise UsageError(
                f"--session must be from 1 to {MAX_SESSIONS:,}, got {shown_count(session)}"
            )
        if count > 1 << SHOE_BITS:
            raise UsageError(
                f"--count: a session deals at most {1 << SHOE_BITS:,} shoes, got {count:,}"
            )
        first = (session - 1) << SHOE_BITS  # a run numbers each session's shoes apart
    hands = generate_hands(spec, count, seed, first)
    header = (
        f"generated by backtest shoe generate: decks={decks} seed={seed} "
        f"{f'session={session} ' if session is not None else ''}"
        f"count={count} cut_card={cut_card} burn={'on' if burn else 'off'} "
        f"cut={cut if cut is not None else 'none'}; the cards as dealt into hands"
    )
    text = recorded.format_card_text(hands, header=header)
    if out is None:
        echo(text)
    else:
        try:
            recorded.write_atomic(out, text)
        except UsageError as exc:
            raise UsageError(f"--out {exc}") from None
        note(f"wrote {count} shoe(s), {len(hands)} hands, to {out}")


def roads_command(
    shoe_file: Annotated[
        Path, typer.Argument(help="A recorded or generated shoe file; - for standard input.")
    ],
    shoe: Annotated[
        int, typer.Option(help="Which shoe of the file by its place, counting from 1 (not its id).")
    ] = 1,
    color: Annotated[
        Optional[bool],
        typer.Option(
            "--color/--no-color", help="Colour the roads (default: when writing to a terminal)."
        ),
    ] = None,
    width: Annotated[
        Optional[int],
        typer.Option(
            help="Show the last N columns of each road (default: what fits the terminal)."
        ),
    ] = None,
    columns: ColumnsOption = None,
) -> None:
    """Draw a shoe's roads: bead plate, big road, big eye boy, small road, cockroach pig."""
    from backtest.shoes import recorded, road_text
    from backtest.shoes.recorded.text import HEAD_BYTES, is_piped

    if color is None:
        color = colour_wanted()
    # a large file is read only as far as the shoe (then how many it holds is not known)
    hands = recorded.read_shoes(
        shoe_file, columns=columns_option(columns), shoes=shoe if shoe >= 1 else None
    )
    whole = is_piped(shoe_file) or os.path.getsize(shoe_file) <= HEAD_BYTES
    text = road_text.render_shoe(
        hands,
        shoe,
        source=recorded.source_name(shoe_file),
        colour=color,
        width=width,
        all_shoes=whole,
    )
    typer.echo(text, nl=False, color=color)  # color=True: keep the codes even when piped


class AnalyzeFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


def analyze_command(
    shoe_file: Annotated[
        Path,
        typer.Argument(
            help="A recorded shoe file (any format `deal` reads); - for standard input."
        ),
    ],
    decks: Annotated[
        Optional[int],
        typer.Option(
            help="Decks in the shoes the records came from (default: what the file says, else 8)."
        ),
    ] = None,
    rules: Annotated[
        str,
        typer.Option(
            help="Rules preset name or YAML file: which side bets' frequencies are tested.",
            autocompletion=complete_rules,
        ),
    ] = "commission",
    fmt: Annotated[
        AnalyzeFormat, typer.Option("--format", "-f", help="Output format.")
    ] = AnalyzeFormat.TABLE,
    simulations: Annotated[
        int, typer.Option(help="Fair records simulated to calibrate every test.")
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the simulated fair records.")] = 1,
    burn: Annotated[
        bool,
        typer.Option(
            help="Apply the burn rule to card-level shoes (the burned cards count as seen)."
        ),
    ] = False,
    columns: ColumnsOption = None,
) -> None:
    """Test a record of shoes for patterns: is it consistent with fairly shuffled shoes?

    Outcome and side-bet frequencies against the exact odds, streak lengths, a
    runs test, the outcome after each pattern of the last 1-4 decisive results,
    and for card-level records each shoe's cards; every test calibrated by
    simulating fair shoes of the same decks and shape, and adjusted for the
    number of tests tried.
    """
    import json

    from backtest.core.rules import load_rules
    from backtest.present.analyze import analyze
    from backtest.shoes import recorded

    if not 1 <= simulations <= 1_000_000:
        raise UsageError(
            f"--simulations must be from 1 to 1,000,000, got {shown_count(simulations)}"
        )
    check_seed(seed)
    try:
        table_rules = load_rules(rules)
    except RulesError as exc:
        if Path(rules).is_file():
            raise
        raise UsageError(f"--rules: {exc}") from None
    mapping = columns_option(columns)
    decks = recorded.decks_option(shoe_file, decks)
    hands = recorded.read_shoes(shoe_file, decks=decks, burn=burn, columns=mapping)
    result = analyze(hands, decks=decks, rules=table_rules, simulations=simulations, seed=seed)
    if fmt is AnalyzeFormat.JSON:
        echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        echo(result.table())

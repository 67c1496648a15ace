"""The command line: parse, call one library function, render.

One error boundary (`main`) turns a `BacktestError` into a one-line message on
stderr and exit code 2 (usage) or 1 (everything else).
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from backtest import __version__
from backtest.core.errors import BacktestError, RulesError, UsageError, shown_count


def _conventional(params: list[Any]) -> list[Any]:
    """Help as command lines write it: arguments in capitals (`CONFIG`, not
    `{config}`) and no `<bool>` type beside a flag."""
    for param in params:
        if isinstance(param, TyperArgument) and param.metavar is None:
            param.metavar = (param.name or "").upper()
        elif getattr(param, "is_flag", False):
            param.metavar = ""
    return params


def _usage(command: Any, ctx: Any) -> list[str]:
    """The usage line's pieces: `[OPTIONS] CONFIG`, an optional argument in brackets."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if isinstance(param, TyperArgument):
            name = param.display_name_raw
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
        else:
            pieces.extend(param.get_usage_pieces(ctx))
    return pieces


class Command(TyperCommand):
    def get_params(self, ctx: Any) -> Any:
        return _conventional(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _usage(self, ctx)


class Group(TyperGroup):
    def get_params(self, ctx: Any) -> Any:
        return _conventional(super().get_params(ctx))


if TYPE_CHECKING:
    from backtest.core.rules import Rules


app = typer.Typer(
    name="backtest",
    help="Run baccarat betting strategies through an exact mini-baccarat rules core.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=Group,
)
shoe_app = typer.Typer(help="Generate shoes.", no_args_is_help=True, cls=Group)
app.add_typer(shoe_app, name="shoe")

#: -q/--quiet: no progress bar, no warnings, no notes on standard error (errors still)
_quiet = False

Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress, no warnings, no notes; errors only.")
]


def _be_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = _quiet or quiet


def _note(text: str) -> None:
    """A note on standard error (what was written, what is compiling), unless quiet."""
    if not _quiet:
        typer.echo(text, err=True)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"backtest {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_show_version, help="Show the version and exit."
        ),
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Run baccarat betting strategies through an exact mini-baccarat rules core."""
    global _quiet
    _quiet = quiet


class Executor(StrEnum):
    LOCAL = "local"
    DASK = "dask"


class Format(StrEnum):
    TABLE = "table"
    CSV = "csv"
    JSON = "json"


def _echo(text: str) -> None:
    typer.echo(text, nl=not text.endswith("\n"))


#: seconds the first run on a machine spends compiling (both cores; one core takes longer)
COMPILE_SECONDS = 20


def _say_if_compiling() -> None:
    """Say once, on stderr, that this run compiles the table (the session
    loop is not in numba's cache yet), rather than show a bar stuck at 0."""
    from backtest.loop import session_loop

    if not session_loop.loop_cached():
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        seconds = COMPILE_SECONDS if cores > 1 else 2 * COMPILE_SECONDS
        _note(f"compiling the table (first run only, about {seconds} s)")


#: --columns, for the commands that read a recorded CSV or Parquet file
ColumnsOption = Annotated[
    Optional[str],
    typer.Option(help="A CSV's or Parquet file's columns for ours, e.g. winner=Result,shoe=Shoe."),
]


def _columns(text: str | None) -> dict[str, str] | None:
    from backtest.shoes import recorded

    return recorded.parse_columns(text) if text is not None else None


@app.command(cls=Command)
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
    from functools import partial

    from backtest.core.hands import ALL_KNOWN
    from backtest.present import render
    from backtest.shoes import recorded
    from backtest.shoes.recorded import stream

    mapping = _columns(columns)
    decks = recorded.decks_option(shoe_file, decks)
    # a big record's text is never held whole, nor a big card-level file's hands
    if stream.streamable(shoe_file, None, mapping):
        index = stream.index_shoes(shoe_file, decks, burn)
        blocks = partial(stream.shoe_blocks, index, render.BLOCK_HANDS)
        pieces = render.block_pieces(blocks, ALL_KNOWN, fmt.value)
    else:
        hands = recorded.read_shoes(shoe_file, decks=decks, burn=burn, columns=mapping)
        pieces = render.pieces(hands, fmt.value)
    for piece in pieces:
        typer.echo(piece, nl=False)


# shoes one `shoe generate` writes at most (about 0.6 GB of text)
MAX_GENERATED_SHOES = 10**6


@shoe_app.command("generate", cls=Command)
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

    _be_quiet(quiet)
    if not 1 <= count <= MAX_GENERATED_SHOES:
        raise UsageError(
            f"--count must be from 1 to {MAX_GENERATED_SHOES:,}, got {shown_count(count)}"
        )
    _check_seed(seed)
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
    except RulesError as exc:  # "shoe: cut_card must ...": name the option instead
        field, _, rest = str(exc).removeprefix("shoe: ").partition(" ")
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
        _echo(text)
    else:
        try:
            recorded.write_atomic(out, text)
        except UsageError as exc:
            raise UsageError(f"--out {exc}") from None
        _note(f"wrote {count} shoe(s), {len(hands)} hands, to {out}")


@app.command(cls=Command, name="odds")
def odds_command(
    decks: Annotated[
        Optional[int],
        typer.Option(help="Decks in the shoe (default 8, or what the --shoe file says)."),
    ] = None,
    rules: Annotated[str, typer.Option(help="Rules preset name or YAML file.")] = "commission",
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
    table_rules = _rules_option(rules)
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
    _echo(odds.render(odds.exact_odds(counts, table_rules, decks), fmt.value))


def _rules_option(rules: str) -> Rules:
    """--rules of `odds` and `play`: no such preset or file is a usage error
    naming the option (exit 2); what a rules file says is the file's error."""
    from backtest.core.rules import load_rules

    try:
        return load_rules(rules)
    except RulesError as exc:
        if Path(rules).is_file():  # what the file says: exit 1
            raise
        raise UsageError(f"--rules: {exc}") from None  # no such preset or file


@app.command(cls=Command)
def run(
    config: Annotated[
        Path,
        typer.Argument(
            help="A run config (YAML), or the name of a ready one (see `backtest configs`)."
        ),
    ],
    sessions: Annotated[
        Optional[int], typer.Option(help="Number of sessions (overrides the config).")
    ] = None,
    seed: Annotated[Optional[int], typer.Option(help="Master seed (overrides the config).")] = None,
    shoes: Annotated[
        Optional[Path],
        typer.Option(
            help="Play these recorded shoes instead of the config's (in place of generated "
            "shoes: all of them, unless --sessions); - for standard input."
        ),
    ] = None,
    columns: ColumnsOption = None,
    out: Annotated[
        Optional[Path], typer.Option(help="Write summary/sessions (and ledger) Parquet files here.")
    ] = None,
    ledger: Annotated[
        bool, typer.Option(help="Keep a row per seat per hand (written with --out).")
    ] = False,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.TABLE,
    workers: Annotated[
        Optional[int],
        typer.Option(help="Processes or Dask workers (default: all cores for large runs)."),
    ] = None,
    executor: Annotated[Executor, typer.Option(help="Where the sessions run.")] = Executor.LOCAL,
    address: Annotated[
        Optional[str], typer.Option(help="A running Dask scheduler, HOST:PORT.")
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Run the seats of a config over its shoes and print the verdict."""
    from backtest.run.pool import check_workers
    from backtest.run.ready import resolve

    _be_quiet(quiet)
    config = resolve(config, "run")
    _check_sessions(sessions)
    if address is not None and executor is not Executor.DASK:
        raise UsageError("--address goes with --executor dask")
    if ledger and out is None:  # kept for the files alone: without them, lost work
        raise UsageError(
            "--ledger keeps a row per seat per hand for the files --out writes; "
            "give --out DIR as well"
        )
    if workers is not None:
        check_workers(workers, "--workers", UsageError)
    overrides: dict[str, object] = {}
    if seed is not None:
        _check_seed(seed)
        overrides["seed"] = seed
    mapping = _columns(columns)
    with tempfile.TemporaryDirectory(prefix="backtest-stdin-") as stdin_dir:
        if shoes is not None and str(shoes) == "-":
            # the sessions' workers read the file by its path: standard input goes to one
            from backtest.shoes.recorded import stdin_bytes

            shoes = Path(stdin_dir) / "standard-input"
            shoes.write_bytes(stdin_bytes())
        try:
            _run(
                config,
                sessions,
                shoes,
                mapping,
                out,
                ledger,
                fmt,
                workers,
                executor,
                address,
                overrides,
            )
        except BacktestError as exc:  # the file stands for standard input: say so
            exc.args = (
                str(exc)
                .replace(str(Path(stdin_dir).resolve() / "standard-input"), "standard input")
                .replace(str(Path(stdin_dir) / "standard-input"), "standard input"),
            )
            raise


def _run(
    config: Path,
    sessions: int | None,
    shoes: Path | None,
    mapping: dict[str, str] | None,
    out: Path | None,
    ledger: bool,
    fmt: Format,
    workers: int | None,
    executor: Executor,
    address: str | None,
    overrides: dict[str, object],
) -> None:
    from backtest.present import outputs, verdict
    from backtest.run import staging
    from backtest.run.config import load_config, with_line
    from backtest.run.engine import PATH_SESSIONS
    from backtest.run.engine import run as run_engine
    from backtest.run.plan import TooManySessions

    if shoes is not None:
        if shoes.is_dir():
            raise UsageError(f"--shoes: {shoes} is a directory, not a shoe file")
        if not shoes.is_file():
            raise UsageError(f"--shoes: file {shoes} does not exist")
        overrides["shoes"] = {"file": str(shoes.resolve())}
    if mapping is not None:
        if shoes is None:
            raise UsageError(
                "--columns maps the columns of the recorded shoes --shoes names; "
                "give --shoes FILE (or `columns:` under the config's `shoes:`)"
            )
        overrides["shoes"] = {**overrides["shoes"], "columns": mapping}  # type: ignore[dict-item]
    # --shoes names the file; the config's other `shoes` settings (decks, burn, loop)
    # stay, or for generated shoes their decks (and the file is played whole)
    cfg = load_config(
        config, overrides, remove=("shoe",) if shoes is not None else (), merge=("shoes",)
    )
    made = outputs.check_out_dir(out) if out is not None else []
    for stale in outputs.remove_stale_run_folders(out):
        _note(f"removed {stale}, left by a run that was killed")
    try:
        # the sessions frames go to disk chunk by chunk, so memory stays flat
        with staging.staging_dir(out, outputs.SPILLED) as spill:
            with outputs.progress_bar(shown=not _quiet) as progress:
                try:
                    result = run_engine(
                        cfg,
                        sessions=sessions,
                        workers=workers,
                        ledger=ledger,
                        progress=progress,
                        spill=spill,
                        executor=executor.value,
                        address=address,
                        paths=PATH_SESSIONS if out is not None else 0,
                        compiling=_say_if_compiling if executor is Executor.LOCAL else None,
                    )
                except TooManySessions as exc:
                    raise UsageError(f"--sessions: {exc.said}") from None
                except BacktestError as exc:  # found as the run began: with the key's line
                    raise with_line(exc, config, set(overrides)) from None
            if out is not None:
                from backtest.run.engine import bankroll_paths

                written = outputs.write_run(out, result, bankroll_paths(result))
                _note(f"wrote {', '.join(written)} to {out}")
    except BaseException:
        outputs.remove_made(made)  # a run that fails leaves no new, empty --out
        raise
    if fmt is Format.JSON:
        _echo(verdict.to_json(result.summary))
    elif fmt is Format.CSV:
        _echo(verdict.to_csv(result.summary))
    else:
        from backtest.core.tables import paragraphs, terminal_width

        width = terminal_width()
        _echo(
            paragraphs(
                [f"{cfg.name}: {result.hands:,} hands, seed {result.seed}, rules {cfg.rules.name}"],
                width,
            )
            + "\n"
        )
        _echo(verdict.table(result.summary, width) + "\n\n")
        _echo(verdict.verdict(result.summary, cfg.session.bankroll, width))
        paired = verdict.comparison_verdict(result.comparisons, width)
        if paired:
            _echo("\n" + paired)


def _check_seed(seed: int) -> None:
    """--seed: a usage error naming the option (the config's `seed` has its own)."""
    if seed < 0:
        raise UsageError(f"--seed must be a whole number of at least 0, got {seed}")


def _check_sessions(sessions: int | None) -> None:
    """--sessions, of `run` and `sweep`: a usage error naming the option."""
    from backtest.run.config import MAX_SESSIONS

    if sessions is not None and not 1 <= sessions <= MAX_SESSIONS:
        raise UsageError(
            f"--sessions must be from 1 to {MAX_SESSIONS:,}, got {shown_count(sessions)}"
        )


@app.command(cls=Command)
def sweep(
    sweep_file: Annotated[
        Path,
        typer.Argument(
            help="A sweep config (YAML), or the name of a ready one (see `backtest configs`)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Directory for the results (cells, summary.parquet).")],
    workers: Annotated[
        Optional[int], typer.Option(help="Processes or Dask workers (default: all cores).")
    ] = None,
    executor: Annotated[Executor, typer.Option(help="Where the cells run.")] = Executor.LOCAL,
    address: Annotated[
        Optional[str], typer.Option(help="A running Dask scheduler, HOST:PORT.")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Skip the cells already finished in --out.")] = False,
    sessions: Annotated[
        Optional[int], typer.Option(help="Sessions per cell (overrides the sweep).")
    ] = None,
    sort: Annotated[
        Optional[str], typer.Option(help="Metric to sort by (default: the sweep's `metric`).")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.TABLE,
    quiet: Quiet = False,
) -> None:
    """Run a run config over a grid of settings, on every core or a Dask cluster.

    A sweep whose cells are all in --out already is printed again, nothing run.
    """
    from backtest import sweep as sweeps
    from backtest.present import outputs
    from backtest.run.ready import resolve

    _be_quiet(quiet)
    sweep_file = resolve(sweep_file, "sweep")

    if address is not None and executor is not Executor.DASK:
        raise UsageError("--address goes with --executor dask")
    _check_sessions(sessions)
    if workers is not None:  # a usage error before anything the sweep file says
        from backtest.run.pool import check_workers

        check_workers(workers, "--workers", UsageError)
    with outputs.cells_checked(shown=not _quiet) as checking:
        spec = sweeps.load_sweep(sweep_file, sessions=sessions, progress=checking)
    metric = sort or spec.metric
    if metric not in ("edge",) and sort is not None:
        from backtest.run.metrics import metric_names

        names = metric_names()
        if metric not in names:
            raise UsageError(f"--sort: unknown metric {metric!r} (metrics: {', '.join(names)})")
    with outputs.sweep_progress(shown=not _quiet) as progress:
        # said once the checks pass and cells are to run (a finished sweep is printed again)
        summary = sweeps.run_sweep(
            spec,
            out,
            workers=workers,
            executor=executor.value,
            address=address,
            resume=resume,
            progress=progress,
            starting=_say_if_compiling if executor is Executor.LOCAL else None,
        )
    if fmt is Format.JSON:
        from backtest.present.verdict import to_json

        _echo(to_json(summary))
    elif fmt is Format.CSV:
        _echo(summary.write_csv())
    else:
        from backtest.core.tables import paragraphs, terminal_width

        width = terminal_width()
        _echo(
            paragraphs(
                [f"{spec.name}: {len(spec.cells)} cells, seed {spec.seed}; results in {out}"], width
            )
            + "\n"
        )
        _echo(sweeps.render_table(summary, spec.keys, metric, width) + "\n")
        lines = sweeps.trends(summary, spec.keys, metric) + sweeps.closing_lines(summary)
        if lines:
            _echo(paragraphs(lines, width))


def _as_yaml(value: object) -> str:
    """A parameter's default as a config writes it (`true`, `{banker: 10.0}`)."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    return text.removesuffix("...").strip()


@app.command(cls=Command, name="strategies")
def list_strategies(
    names: Annotated[
        Optional[list[str]],
        typer.Argument(help="Only these: names, module:Class or file.py:Class (your own)."),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.TABLE,
) -> None:
    """List every strategy with its parameters, defaults and description."""
    import dataclasses

    from strategies import registry
    from strategies.params import CommonParams

    if names:
        found = {}
        for name in names:
            try:
                cls = registry.get(name, Path.cwd())
            except BacktestError as exc:
                raise UsageError(str(exc)) from None
            found[registry.ALIASES.get(name, name)] = cls
    else:
        found = registry.available()
    if fmt is Format.JSON:
        import json

        _echo(
            json.dumps(
                {
                    name: {
                        "description": cls.description,
                        "parameters": [
                            {"name": n, "type": t, "default": d, "help": h}
                            for n, t, d, h in cls.parameters()
                        ],
                    }
                    for name, cls in found.items()
                },
                indent=2,
                default=str,
            )
        )
        return
    if fmt is Format.CSV:  # a row per parameter
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["strategy", "description", "parameter", "type", "default", "help"])
        for name, cls in found.items():
            for pname, ptype, default, help_text in cls.parameters():
                writer.writerow([name, cls.description, pname, ptype, _as_yaml(default), help_text])
        _echo(buf.getvalue().rstrip("\n"))
        return
    # the parameters every built-in shares (its edges), said once, above the rest
    common = [f.name for f in dataclasses.fields(CommonParams)]
    sharing = [
        name
        for name, cls in found.items()
        if isinstance(cls.Params, type) and issubclass(cls.Params, CommonParams)
    ]
    lines = []
    if sharing:
        lines.append("Every strategy below marked (+) also takes these, for the table's edges:")
        shared = dict((p[0], p) for p in found[sharing[0]].parameters())
        for pname in common:
            lines.append(_parameter_line(*shared[pname]))
        lines.append("")
    aliases: dict[str, list[str]] = {}
    for alias, target in registry.ALIASES.items():
        aliases.setdefault(target, []).append(alias)
    for name, cls in found.items():
        also = f" (also: {', '.join(aliases[name])})" if name in aliases else ""
        lines.append(
            _wrapped(
                f"{name}{' (+)' if name in sharing else ''}: {cls.description}{also}", "", "  "
            )
        )
        for row in cls.parameters():
            if name not in sharing or row[0] not in common:
                lines.append(_parameter_line(*row))
        lines.append("")
    _echo("\n".join(lines).rstrip("\n"))


@app.command(cls=Command, name="configs")
def configs_command(
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.TABLE,
) -> None:
    """List the ready configs that ship with the package: run configs, sweeps, rules.

    Name one in place of a file: `backtest run verdict`, `backtest sweep progressions`,
    `backtest odds --rules german`.
    """
    from backtest.core import tables
    from backtest.run import ready

    found = ready.ready_configs()
    rows = [(r.name, r.kind, r.description, str(r.path)) for r in found]
    if fmt is Format.JSON:
        import json

        _echo(
            json.dumps(
                [dict(zip(("name", "kind", "description", "path"), row)) for row in rows], indent=2
            )
        )
    elif fmt is Format.CSV:
        import polars as pl

        _echo(
            pl.DataFrame(
                rows, schema=["name", "kind", "description", "path"], orient="row"
            ).write_csv()
        )
    else:
        _echo(
            tables.render(
                ("name", "kind", "description"),
                [row[:3] for row in rows],
                right=(False, False, False),
                wrap=(2,),
            )
        )


def _parameter_line(name: str, kind: str, default: object, help_text: str) -> str:
    return _wrapped(f"{name} ({kind}, default {_as_yaml(default)}): {help_text}", " " * 4, " " * 8)


def _wrapped(text: str, indent: str, then: str) -> str:
    """`text` wrapped at word boundaries to the terminal's width."""
    import textwrap

    from backtest.core.tables import terminal_width

    return textwrap.fill(
        text,
        terminal_width(),
        initial_indent=indent,
        subsequent_indent=then,
        break_long_words=False,
        break_on_hyphens=False,
    )


def colour_wanted() -> bool:
    """Colour on a terminal, unless NO_COLOR is set to something (an empty
    NO_COLOR is as good as none: no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@app.command(cls=Command, name="roads")
def roads_command(
    shoe_file: Annotated[
        Path, typer.Argument(help="A recorded or generated shoe file; - for standard input.")
    ],
    shoe: Annotated[int, typer.Option(help="Which shoe of the file, counting from 1.")] = 1,
    color: Annotated[
        Optional[bool],
        typer.Option(
            "--color/--no-color", help="Colour the roads (default: when writing to a terminal)."
        ),
    ] = None,
    width: Annotated[
        Optional[int],
        typer.Option(
            help="Show the last N columns of each road (default: what fits in 80 characters)."
        ),
    ] = None,
    columns: ColumnsOption = None,
) -> None:
    """Draw a shoe's roads: bead plate, big road, big eye boy, small road, cockroach pig."""
    from backtest.shoes import recorded, roads
    from backtest.shoes.recorded.text import HEAD_BYTES, STDIN

    if color is None:
        color = colour_wanted()
    # a large file is read only as far as the shoe (then how many it holds is not known)
    hands = recorded.read_shoes(
        shoe_file, columns=_columns(columns), shoes=shoe if shoe >= 1 else None
    )
    whole = str(shoe_file) == STDIN or os.path.getsize(shoe_file) <= HEAD_BYTES
    text = roads.render_shoe(
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


@app.command(cls=Command, name="analyze")
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
            help="Rules preset name or YAML file: which side bets' frequencies are tested."
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
    _check_seed(seed)
    try:
        table_rules = load_rules(rules)
    except RulesError as exc:
        if Path(rules).is_file():
            raise
        raise UsageError(f"--rules: {exc}") from None
    mapping = _columns(columns)
    decks = recorded.decks_option(shoe_file, decks)
    hands = recorded.read_shoes(shoe_file, decks=decks, burn=burn, columns=mapping)
    result = analyze(hands, decks=decks, rules=table_rules, simulations=simulations, seed=seed)
    if fmt is AnalyzeFormat.JSON:
        _echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        _echo(result.table())


@app.command(cls=Command, name="play")
def play_command(
    rules: Annotated[str, typer.Option(help="Rules preset name or YAML file.")] = "commission",
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
) -> None:
    """Sit at a mini-baccarat table: cut, bet on up to three boxes, watch each hand dealt.

    Commands are read line by line from standard input (type help).
    """
    from backtest import play

    settings = play.open_table(
        rules=_rules_option(rules),
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
    play.PlaySession(settings, lines, sys.stdout, echo=not sys.stdin.isatty(), ask=ask).run()


def _read_line(prompt: str) -> str | None:
    """A line typed at the terminal (readline's editing, when loaded), None at the end."""
    try:
        return input(prompt)
    except EOFError:
        return None


@app.command(cls=Command, name="report")
def report_command(
    directory: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", help="What `backtest run --out DIR` or `backtest sweep --out DIR` wrote."
        ),
    ],
    out: Annotated[
        Optional[Path],
        typer.Option(
            help="The HTML file to write (default: DIR/report.html); the plots also go as PNG "
            "files in NAME-plots/ beside it."
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Write one self-contained HTML report of a run or a sweep: verdict, plots, summary.

    The plots are embedded. Needs matplotlib (the `plot` extra of the package).
    """
    from backtest.present import report

    _be_quiet(quiet)
    written = report.write_report(directory, out)
    _note(f"wrote {written.html} and {len(written.plots)} plot(s) in {written.plot_dir}")


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    _note(f"warning: {message}")


def _click_errors() -> tuple[type[Exception], type[Exception]]:
    """(usage error, exit) as the click inside typer raises them: the package
    `click` for older typer, a copy bundled in typer for newer ones."""
    usage = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    return usage, typer.Exit


def exit_now(code: int) -> None:
    """Exit an interrupted command at once: a worker pool stopped mid-task can
    leave its manager thread waiting on a result that never comes, which a
    normal exit would join. Files and pools were closed as the interrupt
    unwound."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main() -> None:
    """Entry point: run the app inside the one error boundary."""
    import warnings

    warnings.showwarning = _show_warning
    usage_error, exit_request = _click_errors()
    terminated = []

    def on_sigterm(signum: int, frame: object) -> None:
        # unwind as Ctrl-C does: worker pools stop, staged output is cleaned up
        terminated.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        code = app(standalone_mode=False, prog_name="backtest")
    except BacktestError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        code = 130
    except OSError as exc:  # e.g. the disk filled up while writing results
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
        sys.exit(1)
    except usage_error as exc:  # a bad option or argument: click's message, exit 2
        exc.show()  # type: ignore[attr-defined]
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except exit_request as exc:
        code = exc.exit_code  # type: ignore[attr-defined]
    finally:
        signal.signal(signal.SIGTERM, previous)
    # without standalone mode, typer returns (not raises) the exit code of an
    # interrupted command: 130 for Ctrl-C
    if code == 130:
        typer.echo("terminated" if terminated else "interrupted", err=True)
        exit_now(128 + signal.SIGTERM if terminated else 130)
    if isinstance(code, int) and code:
        sys.exit(code)

"""What the commands share: the app and its groups, help written as command
lines write it, the quiet flag, notes on standard error, and the options and
checks several commands take (--format, --columns, --rules, --set, --seed,
--sessions)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

try:  # the click typer uses: a copy bundled in newer typer
    from typer._click import HelpFormatter
except ImportError:  # older typer: the package
    from click import HelpFormatter  # type: ignore[assignment]

from backtest import __version__
from backtest.cli.completion import complete_rules
from backtest.core.errors import RulesError, UsageError, shown_count


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


#: the narrowest terminal whose help typer's panels lay out without cutting a word
PANEL_WIDTH = 80


def _fill(text: str, width: int, indent: int, then: int | None = None) -> str:
    """`text` wrapped at spaces only (never inside a word, nor at a hyphen)."""
    import textwrap

    return textwrap.fill(
        " ".join(text.split()),
        max(width, indent + 10),
        initial_indent=" " * indent,
        subsequent_indent=" " * (indent if then is None else then),
        break_long_words=False,
        break_on_hyphens=False,
    )


class PlainHelp(HelpFormatter):
    """click's plain help for a terminal narrower than PANEL_WIDTH: the text
    wrapped at spaces only, and an option's help below its name where beside
    it would leave the help too little room."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        self.write(_fill(f"{prefix or 'Usage: '}{prog} {args}", self.width, 0, 2) + "\n")

    def write_text(self, text: str) -> None:
        for i, paragraph in enumerate(p for p in text.split("\n\n") if p.strip()):
            self.write(
                ("\n" if i else "") + _fill(paragraph, self.width, self.current_indent) + "\n"
            )

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first = min(max((len(term) for term, _ in rows), default=0), col_max) + col_spacing
        beside = self.width - self.current_indent - first >= 28
        for term, text in rows:
            lead = " " * self.current_indent + term
            if not text:
                self.write(lead + "\n")
            elif beside and len(term) + col_spacing <= first:
                body = _fill(text, self.width, self.current_indent + first)
                self.write(lead + body[len(lead) :] + "\n")
            else:
                self.write(lead + "\n" + _fill(text, self.width, self.current_indent + 4) + "\n")


def _help(command: Any, ctx: Any, formatter: Any, panels: Any) -> None:
    """Typer's panels where the terminal is wide enough for them, else `PlainHelp`."""
    from backtest.core.tables import terminal_width

    width = terminal_width()
    if width >= PANEL_WIDTH:
        panels(ctx, formatter)
        return
    plain = PlainHelp(width=width)
    # click's own plain layout (below typer's class), with PlainHelp's wrapping
    if isinstance(command, TyperGroup):
        super(TyperGroup, command).format_help(ctx, plain)
    else:
        super(TyperCommand, command).format_help(ctx, plain)
    formatter.write(plain.getvalue())


class Command(TyperCommand):
    def get_params(self, ctx: Any) -> Any:
        return _conventional(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _usage(self, ctx)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _help(self, ctx, formatter, super().format_help)


class Group(TyperGroup):
    def get_params(self, ctx: Any) -> Any:
        return _conventional(super().get_params(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _help(self, ctx, formatter, super().format_help)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """Each command with the first sentence of its help, whole."""
        rows = [
            (name, command.get_short_help_str(10**4))
            for name in self.list_commands(ctx)
            if (command := self.get_command(ctx, name)) is not None and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


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
quiet_mode = False


Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress, no warnings, no notes; errors only.")
]


def be_quiet(quiet: bool) -> None:
    global quiet_mode
    quiet_mode = quiet_mode or quiet


def note(text: str) -> None:
    """A note on standard error (what was written, what is compiling), unless
    quiet; above a progress bar drawn there (which stands in for
    `sys.stderr` while it is drawn), not inside its line."""
    if not quiet_mode:
        print(text, file=sys.stderr, flush=True)


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
    global quiet_mode
    quiet_mode = quiet


class Executor(StrEnum):
    LOCAL = "local"
    DASK = "dask"


class Format(StrEnum):
    TABLE = "table"
    CSV = "csv"
    JSON = "json"


#: standard output while other prints go to standard error (`prints_to_stderr`)
_stdout: Any = None


def echo(text: str) -> None:
    """A command's output, on standard output."""
    typer.echo(text, nl=not text.endswith("\n"), file=_stdout)


@contextmanager
def prints_to_stderr(machine_output: bool) -> Iterator[None]:
    """While a command writes machine output (`-f json`, `-f csv`), whatever
    else prints to standard output (a user's strategy, as it is imported or
    plays, in this process or a worker forked from it) goes to standard
    error, and `echo` alone to standard output."""
    global _stdout
    if not machine_output:
        yield
        return
    _stdout = sys.stdout
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        _stdout = None


#: seconds the first run on a machine spends compiling the table, in its own
#: process (the compile is one thread's work)
COMPILE_SECONDS = 60


def say_if_compiling() -> None:
    """Say once, on stderr, that this run compiles the table (the session
    loop is not in numba's cache yet), and about how long that takes,
    rather than show a bar stuck at 0."""
    from backtest.loop import session_loop

    if not session_loop.loop_cached():
        note(f"compiling the table (first run only, about {COMPILE_SECONDS} s)")


def say_compiling_users() -> None:
    """Say once, on stderr, that this run compiles the loop's form for users'
    compiled classes (their first run on this machine)."""
    note(
        f"compiling the table for compiled strategies of your own (first run only, "
        f"about {COMPILE_SECONDS} s)"
    )


#: --columns, for the commands that read a recorded CSV or Parquet file
ColumnsOption = Annotated[
    Optional[str],
    typer.Option(help="A CSV's or Parquet file's columns for ours, e.g. winner=Result,shoe=Shoe."),
]


def columns_option(text: str | None) -> dict[str, str] | None:
    from backtest.shoes import recorded

    return recorded.parse_columns(text) if text is not None else None


#: --set, for `run` and `sweep`
SetOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set one key of the run config as its file would, by its key path (again for "
        "more): e.g. --set seats[1].params.base=20 --set session.bankroll=500; the value "
        "is read as YAML.",
    ),
]


#: --rules, the run config's `rules:` replaced, for `run` and `sweep`
RulesOverride = Annotated[
    Optional[str],
    typer.Option(
        "--rules",
        help="Rules preset name or YAML file, in place of the config's rules.",
        autocompletion=complete_rules,
    ),
]


def settings_option(given: list[str] | None, rules: str | None) -> list[tuple[str, Any]]:
    """--rules and each --set KEY=VALUE as (key path, value): the value read
    as YAML, a rules file by its full path. A key that is no key path, a
    value that is no YAML, or no such preset or file is a usage error."""
    import yaml

    from backtest.core import yamlfile
    from backtest.run.paths import parse_path

    settings: list[tuple[str, Any]] = []
    if rules is not None:
        rules_option(rules)
        settings.append(("rules", str(Path(rules).resolve()) if Path(rules).is_file() else rules))
    for text in given or ():
        key, equals, value = text.partition("=")
        key = key.strip()
        if not equals:
            raise UsageError(f"--set takes KEY=VALUE, e.g. session.bankroll=500; got {text!r}")
        try:
            parse_path(key)
        except ValueError:
            raise UsageError(
                f"--set {text}: {key!r} is not a key path (write e.g. session.bankroll "
                "or seats[0].params.base)"
            ) from None
        try:
            settings.append((key, yamlfile.load(value)))
        except yaml.YAMLError as exc:
            raise UsageError(f"--set {key}={value}:{yamlfile.describe(exc)}") from None
    return settings


def shown_settings(given: list[str] | None) -> str:
    """What --set changed, for a run's first line: ', with KEY=VALUE, ...'."""
    return f", with {', '.join(t.strip() for t in given)}" if given else ""


def rules_option(rules: str) -> Rules:
    """--rules of `odds` and `play`: no such preset or file is a usage error
    naming the option (exit 2); what a rules file says is the file's error."""
    from backtest.core.rules import load_rules

    try:
        return load_rules(rules)
    except RulesError as exc:
        if Path(rules).is_file():  # what the file says: exit 1
            raise
        raise UsageError(f"--rules: {exc}") from None  # no such preset or file


def check_seed(seed: int) -> None:
    """--seed: a usage error naming the option (the config's `seed` has its own)."""
    if seed < 0:
        raise UsageError(f"--seed must be a whole number of at least 0, got {seed}")


def check_sessions(sessions: int | None) -> None:
    """--sessions, of `run` and `sweep`: a usage error naming the option."""
    from backtest.run.config import MAX_SESSIONS

    if sessions is not None and not 1 <= sessions <= MAX_SESSIONS:
        raise UsageError(
            f"--sessions must be from 1 to {MAX_SESSIONS:,}, got {shown_count(sessions)}"
        )


def colour_wanted() -> bool:
    """Colour on a terminal, unless NO_COLOR is set to something (an empty
    NO_COLOR is as good as none: no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")

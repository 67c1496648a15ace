"""The entry point: every command registered on the app, in the order help lists
them, and the one error boundary (`main`) that turns a `BacktestError` into a
one-line message on stderr and exit code 2 (usage) or 1 (everything else)."""

from __future__ import annotations

import os
import signal
import sys
from contextlib import suppress

import typer

from backtest.cli import lists, runs, shoes, table
from backtest.cli.shell import Command, app, note, shoe_app
from backtest.core.errors import BacktestError

app.command(cls=Command)(shoes.deal)
shoe_app.command("generate", cls=Command)(shoes.shoe_generate)
app.command(cls=Command, name="odds")(table.odds_command)
app.command(cls=Command)(runs.run)
app.command(cls=Command)(runs.sweep)
app.command(cls=Command, name="strategies")(lists.list_strategies)
app.command(cls=Command, name="configs")(lists.configs_command)
app.command(cls=Command, name="roads")(shoes.roads_command)
app.command(cls=Command, name="analyze")(shoes.analyze_command)
app.command(cls=Command, name="play")(table.play_command)
app.command(cls=Command, name="report")(runs.report_command)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    note(f"warning: {message}")


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


def _closed_pipe() -> None:
    """The reader of standard output is gone (`backtest run ... | head -1`):
    end quietly, as a command killed by SIGPIPE does (exit 141), with
    standard output pointed at /dev/null so that nothing fails as the
    interpreter ends."""
    with suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    exit_now(128 + signal.SIGPIPE)


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

    if sys.stdout is None:  # started with it closed (`>&-`): what is printed would be lost
        typer.echo(
            "error: standard output is closed; send it somewhere (`> FILE`, `> /dev/null`)",
            err=True,
        )
        sys.exit(1)
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        code = app(standalone_mode=False, prog_name="backtest")
        sys.stdout.flush()  # (a closed pipe is found here, not as the interpreter ends)
    except BrokenPipeError:
        _closed_pipe()
    except SystemExit:
        # click answers a closed pipe with exit 1, its streams wrapped to stay quiet
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _closed_pipe()
        raise
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

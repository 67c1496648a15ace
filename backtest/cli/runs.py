"""The commands that run sessions and read what they wrote: `run`, `sweep`, and
`report` (the HTML report of a run's or a sweep's output)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from backtest.cli import shell
from backtest.cli.completion import complete_run_config, complete_sweep
from backtest.cli.shell import (
    ColumnsOption,
    Executor,
    Format,
    Quiet,
    RulesOverride,
    SetOption,
    be_quiet,
    check_seed,
    check_sessions,
    columns_option,
    echo,
    note,
    say_compiling_users,
    say_if_compiling,
    settings_option,
    shown_settings,
)
from backtest.core.errors import BacktestError, UsageError

if TYPE_CHECKING:
    from backtest.run.config import Setting


def run(
    config: Annotated[
        Path,
        typer.Argument(
            help="A run config (YAML), or the name of a ready one (see `backtest configs`).",
            autocompletion=complete_run_config,
        ),
    ],
    sessions: Annotated[
        Optional[int], typer.Option(help="Number of sessions (overrides the config).")
    ] = None,
    seed: Annotated[Optional[int], typer.Option(help="Master seed (overrides the config).")] = None,
    rules: RulesOverride = None,
    settings: SetOption = None,
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

    be_quiet(quiet)
    if address is not None and executor is not Executor.DASK:
        raise UsageError("--address goes with --executor dask")
    _probe(address)
    config = resolve(config, "run")
    check_sessions(sessions)
    if ledger and out is None:  # kept for the files alone: without them, lost work
        raise UsageError(
            "--ledger keeps a row per seat per hand for the files --out writes; "
            "give --out DIR as well"
        )
    if workers is not None:
        check_workers(workers, "--workers", UsageError)
    set_keys = settings_option(settings, rules)
    overrides: dict[str, object] = {}
    if seed is not None:
        check_seed(seed)
        overrides["seed"] = seed
    mapping = columns_option(columns)
    from backtest.run import staging

    # the folders of runs killed outright (`kill -9`) while they held standard input
    staging.remove_stale(None, STDIN_PREFIX, ("standard-input",))
    with staging.staging_dir(None, STDIN_PREFIX) as stdin_dir:
        if shoes is not None and str(shoes) == "-":
            # the sessions' workers read the file by its path: standard input goes to one
            from backtest.shoes.recorded import stdin_bytes

            shoes = Path(stdin_dir) / "standard-input"
            shoes.write_bytes(stdin_bytes())
        try:
            with shell.prints_to_stderr(fmt is not Format.TABLE):
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
                    set_keys,
                    shown_settings(settings),
                )
        except BacktestError as exc:  # the file stands for standard input: say so
            exc.args = (
                str(exc)
                .replace(str(Path(stdin_dir).resolve() / "standard-input"), "standard input")
                .replace(str(Path(stdin_dir) / "standard-input"), "standard input"),
            )
            raise


#: the folder in the temporary folder that holds what a run read from standard input
STDIN_PREFIX = "backtest-stdin-"


def _probe(address: str | None) -> None:
    """--address: a live Dask scheduler there, seen before any other work (and
    then again, with a wait for its workers, where the work goes to it)."""
    if address is not None:
        from backtest.run.cluster import probe

        probe(address)


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
    settings: Sequence[Setting] = (),
    shown: str = "",
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
        config,
        overrides,
        remove=("shoe",) if shoes is not None else (),
        merge=("shoes",),
        settings=settings,
    )
    made = outputs.check_out_dir(out) if out is not None else []
    for stale in outputs.remove_stale_run_folders(out):
        note(f"removed {stale}, left by a run that was killed")
    try:
        # the sessions frames go to disk chunk by chunk, so memory stays flat;
        # once the results start to go into place, they are reported whatever comes
        with staging.Commit() as commit, staging.staging_dir(out, outputs.SPILLED) as spill:
            with outputs.progress_bar(shown=not shell.quiet_mode) as progress:
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
                        compiling=say_if_compiling if executor is Executor.LOCAL else None,
                        compiling_users=say_compiling_users,
                    )
                except TooManySessions as exc:
                    raise UsageError(f"--sessions: {exc.said}") from None
                except BacktestError as exc:  # found as the run began: with the key's line
                    raise with_line(exc, config, {*overrides, *(k for k, _ in settings)}) from None
            if out is not None:
                from backtest.run.engine import bankroll_paths

                written = outputs.write_run(out, result, bankroll_paths(result), commit.start)
                note(f"wrote {', '.join(written)} to {out}")
    except BaseException:
        outputs.remove_made(made)  # a run that fails leaves no new, empty --out
        raise
    if fmt is Format.JSON:
        echo(verdict.to_json(result.summary))
    elif fmt is Format.CSV:
        echo(verdict.to_csv(result.summary))
    else:
        from backtest.core.tables import paragraphs, terminal_width

        width = terminal_width()
        echo(
            paragraphs(
                [
                    f"{cfg.name}: {result.hands:,} hands, seed {result.seed}, "
                    f"rules {cfg.rules.name}{shown}"
                ],
                width,
            )
            + "\n"
        )
        echo(verdict.table(result.summary, width) + "\n\n")
        echo(verdict.verdict(result.summary, cfg.session.bankroll, width))
        paired = verdict.comparison_verdict(result.comparisons, width)
        if paired:
            echo("\n" + paired)


def sweep(
    sweep_file: Annotated[
        Path,
        typer.Argument(
            help="A sweep config (YAML), or the name of a ready one (see `backtest configs`).",
            autocompletion=complete_sweep,
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
    rules: RulesOverride = None,
    settings: SetOption = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.TABLE,
    quiet: Quiet = False,
) -> None:
    """Run a run config over a grid of settings, on every core or a Dask cluster.

    A sweep whose cells are all in --out already is printed again, nothing run.
    """
    from backtest import sweep as sweeps
    from backtest.present import outputs
    from backtest.run.ready import resolve

    be_quiet(quiet)
    if address is not None and executor is not Executor.DASK:
        raise UsageError("--address goes with --executor dask")
    _probe(address)
    sweep_file = resolve(sweep_file, "sweep")
    check_sessions(sessions)
    if workers is not None:  # a usage error before anything the sweep file says
        from backtest.run.pool import check_workers

        check_workers(workers, "--workers", UsageError)
    set_keys = settings_option(settings, rules)
    # a user's strategy prints (as it is imported, or plays) to stderr, not into -f json
    with shell.prints_to_stderr(fmt is not Format.TABLE):
        with outputs.cells_checked(shown=not shell.quiet_mode) as checking:
            spec = sweeps.load_sweep(
                sweep_file, sessions=sessions, progress=checking, set_keys=set_keys
            )
        metric = sort or spec.metric
        if metric not in ("edge",) and sort is not None:
            from backtest.run.metrics import metric_names

            names = metric_names()
            if metric not in names:
                raise UsageError(f"--sort: unknown metric {metric!r} (metrics: {', '.join(names)})")
        with outputs.sweep_progress(shown=not shell.quiet_mode) as progress:
            # said once the checks pass and cells are to run (a finished sweep is printed again)
            summary = sweeps.run_sweep(
                spec,
                out,
                workers=workers,
                executor=executor.value,
                address=address,
                resume=resume,
                progress=progress,
                starting=say_if_compiling if executor is Executor.LOCAL else None,
            )
    if fmt is Format.JSON:
        from backtest.present.verdict import to_json

        echo(to_json(summary))
    elif fmt is Format.CSV:
        echo(summary.write_csv())
    else:
        from backtest.core.tables import paragraphs, terminal_width

        width = terminal_width()
        echo(
            paragraphs(
                [
                    f"{spec.name}: {len(spec.cells)} cells, seed {spec.seed}"
                    f"{f', rules {rules}' if rules is not None else ''}"
                    f"{shown_settings(settings)}; results in {out}"
                ],
                width,
            )
            + "\n"
        )
        echo(sweeps.render_table(summary, spec.keys, metric, width) + "\n")
        lines = sweeps.trends(summary, spec.keys, metric) + sweeps.closing_lines(summary)
        if lines:
            echo(paragraphs(lines, width))


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
    from backtest.present.report.write import write_report

    be_quiet(quiet)
    written = write_report(directory, out)
    note(f"wrote {written.html} and {len(written.plots)} plot(s) in {written.plot_dir}")

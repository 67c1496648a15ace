"""The commands that list what the package holds: `strategies` (with their
parameters) and `configs` (the ready configs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from backtest.cli.completion import complete_strategies
from backtest.cli.shell import (
    Format,
    echo,
)
from backtest.core.errors import BacktestError, UsageError


def _as_yaml(value: object) -> str:
    """A parameter's default as a config writes it (`true`, `{banker: 10.0}`)."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    return text.removesuffix("...").strip()


def list_strategies(
    names: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="Only these: names, module:Class or file.py:Class (your own).",
            autocompletion=complete_strategies,
        ),
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

        echo(
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
        echo(buf.getvalue().rstrip("\n"))
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
        lines.append(
            _wrapped(
                "Every strategy below marked (+) also takes these, for the table's edges:", "", ""
            )
        )
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
    echo("\n".join(lines).rstrip("\n"))


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

        echo(
            json.dumps(
                [dict(zip(("name", "kind", "description", "path"), row)) for row in rows], indent=2
            )
        )
    elif fmt is Format.CSV:
        import polars as pl

        echo(
            pl.DataFrame(
                rows, schema=["name", "kind", "description", "path"], orient="row"
            ).write_csv()
        )
    else:
        echo(
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

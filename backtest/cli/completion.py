"""Completion of names (typer's `autocompletion`): the rules presets, the ready
configs and the built-in strategies, each with its description, and beside a
preset or a ready config the YAML files and folders of the path begun.
`--format` and `--executor` complete from their choices (click's own).

Completion is switched on with `backtest --install-completion`."""

from __future__ import annotations

from pathlib import Path

#: what a completion function gives: a value, or (value, its description)
Completions = list[str | tuple[str, str]]


def _ready(kind: str, incomplete: str) -> Completions:
    """The ready configs of `kind` whose name begins with `incomplete`."""
    from backtest.run.ready import ready_configs

    return [
        (ready.name, ready.description)
        for ready in ready_configs()
        if ready.kind == kind and ready.name.startswith(incomplete)
    ]


def yaml_paths(incomplete: str) -> Completions:
    """The YAML files, and the folders, whose path begins with `incomplete`
    (a folder with its `/`); hidden ones only when `incomplete` names them."""
    head, slash, begun = incomplete.rpartition("/")
    prefix = head + slash
    try:
        entries = sorted(Path(prefix or ".").iterdir())
    except OSError:
        return []
    found: Completions = []
    for entry in entries:
        if not entry.name.startswith(begun) or (
            entry.name.startswith(".") and not begun.startswith(".")
        ):
            continue
        if entry.is_dir():
            found.append(prefix + entry.name + "/")
        elif entry.suffix.lower() in (".yaml", ".yml"):
            found.append(prefix + entry.name)
    return found


def complete_rules(incomplete: str) -> Completions:
    """--rules: the presets, then rules files."""
    return _ready("rules", incomplete) + yaml_paths(incomplete)


def complete_run_config(incomplete: str) -> Completions:
    """`run`'s CONFIG: the ready run configs, then run config files."""
    return _ready("run", incomplete) + yaml_paths(incomplete)


def complete_sweep(incomplete: str) -> Completions:
    """`sweep`'s SWEEP_FILE: the ready sweeps, then sweep files."""
    return _ready("sweep", incomplete) + yaml_paths(incomplete)


def complete_strategies(incomplete: str) -> Completions:
    """The built-in strategies by name."""
    from strategies.registry import BUILTIN_NAMES

    return [
        (name, cls.description)
        for name, cls in BUILTIN_NAMES.items()
        if name.startswith(incomplete)
    ]

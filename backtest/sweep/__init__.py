"""Sweeps: one run config over a grid of settings, on every core or a Dask cluster.

A sweep YAML names a base run config (`base: file.yaml`) or holds one inline
(`run: {...}`), and what varies::

    base: ../verdict.yaml
    sessions: 2000
    seed: 7
    metric: ruin_rate
    grid:                      # every combination
      session.bankroll: [500, 1000, 2000]
      table.max: [500, 1000]
    zip:                       # lists taken in step
      rules: [commission, no-commission, ez]
      shoe.decks: [8, 6, 1]

A key path is dotted, with list indices: `seats[0].params.base`. The cells
are the Cartesian product of the grid with the zipped lists; every cell is
validated before the first one runs, as `backtest run` validates a config.
Each cell's random streams derive from the master seed and the cell's own key
(its varied values), never from the order or the worker that runs it;
`common_shoes: true` deals every cell the same shoes instead, for paired
comparisons between cells. A cell that varies `seed` runs with that seed, as
`backtest run` would, either way (replications; cells of one seed share its
shoes). `sessions` is the sweep's, for every cell: it cannot vary.

Output in DIR: `cells/<id>.parquet` for each finished cell (written
atomically as it finishes), `summary.parquet` (every finished cell, one row
per cell and seat, a column per varied key, rebuilt atomically), and
`sweep.json` (its name, source file, seed, varied keys, metric, number of
cells, and a hash of everything that decides its numbers, which `--resume`
checks, with those settings, to say what another sweep changed). `--resume`
skips finished cells. Nothing is written before the executor is ready: a
scheduler that cannot be reached leaves DIR as it was.

The package, by job: `spec` (the sweep file read and its cells made), `paths`
(key paths into a run config), `cells` (a cell's key, label and seed),
`lines` (an error placed at its line), `digests` (the files and rules a
sweep's numbers depend on), `execute`
(running them, the output folder, resuming), `trends` (what each key does,
beyond the noise), `family` (which cells differ from the exact edge beyond
chance, corrected for how many were tried), `render` (the table).
"""

from __future__ import annotations

from backtest.run.paths import parse_path, set_path
from backtest.sweep.cells import Cell, Sweep, cell_key, cell_label
from backtest.sweep.execute import Task, run_sweep
from backtest.sweep.family import closing_lines
from backtest.sweep.render import render_table
from backtest.sweep.spec import MAX_CELLS, SWEEP_KEYS, load_sweep
from backtest.sweep.trends import SIGNIFICANCE, trends

__all__ = [
    "MAX_CELLS",
    "SIGNIFICANCE",
    "SWEEP_KEYS",
    "Cell",
    "Sweep",
    "Task",
    "cell_key",
    "cell_label",
    "closing_lines",
    "load_sweep",
    "parse_path",
    "render_table",
    "run_sweep",
    "set_path",
    "trends",
]

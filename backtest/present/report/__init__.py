"""The report of a run or a sweep: one self-contained HTML file, and its plots as PNG.

`write.write_report(DIR)` reads what `backtest run --out DIR` or `backtest sweep --out DIR`
wrote and writes `DIR/report.html` (or the file given as `out`): the verdict in
words, then the plots, embedded as base64 PNG data URIs (the file opens offline,
with no server and nothing beside it), then the summary table (its interval
and z from each hand's variance, as `backtest run` prints them) and, for a run
of two seats or more, the paired comparisons (comparisons.parquet: the command
line's sentences and a table of each seat against the baseline). The same plots
are written as PNG files in a folder named after the HTML file, beside it:
`report.html` -> `report-plots/`.

A run gets three plots, a panel per seat: bankroll paths (a sample of sessions,
the median and the 5%-95% band across sessions, from paths.parquet), the
distribution of the final bankroll (from sessions.parquet) and the measured
edge converging on the exact edge as hands accumulate. The seats' panels share
their axes, so systems compare by eye. A sweep gets its ruin rate and edge
against the varied keys, each with its 95% interval: a line plot for one key,
heatmaps for two (the edge coloured by its z-score against the exact edge),
and for more, a line plot per key averaged over the others. A plot whose values
are all the same is left out, and a line says so.

A run or a sweep written again into a directory removes the report there (it
told of the results replaced); a report written again replaces its plots.

matplotlib is an optional extra (`pip install 'baccarat-backtest[plot]'`): it
is imported only to draw, onto the Agg canvas (no pyplot, no window).

The modules, in the order the report is made: `results` (the directory read and
checked), `numbers` (the frames behind the plots), `canvas` (what every plot
shares), `run_plots` and `sweep_plots`, `page` (the words, the table, the HTML)
and `write` (the plots chosen and drawn, the files written).
"""

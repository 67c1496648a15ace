"""A run's plots, a panel per seat on shared axes: bankroll paths, the final
bankroll, ruin over time, the measured edge converging on the exact edge."""

from __future__ import annotations

import numpy as np
import polars as pl

from backtest.present.report.canvas import (
    Plot,
    money_axis,
    new_figure,
    percent_axis,
    png_bytes,
    seat_colour,
)
from backtest.present.report.numbers import (
    bins,
    edge_convergence,
    path_bands,
    ruin_curve,
    with_start,
)
from backtest.present.report.results import Results
from backtest.present.verdict import money

#: sample paths drawn thin per seat
SAMPLE_PATHS = 20


def _seats(results: Results) -> list[str]:
    return [str(s) for s in results.summary["seat"].to_list()]


def plot_paths(results: Results) -> Plot:
    assert results.paths is not None
    bankroll = results.bankroll
    full = with_start(results.paths, bankroll)
    bands = path_bands(results.paths, bankroll)
    n_sessions = results.paths["session"].n_unique()
    seats = _seats(results)
    fig, axes = new_figure(len(seats), share=True)
    title = "Bankroll through the session"
    for i, (ax, seat) in enumerate(zip(axes, seats)):
        colour = seat_colour(i)
        mine = full.filter(pl.col("seat") == seat)
        sample = mine["session"].unique(maintain_order=True).to_list()[:SAMPLE_PATHS]
        for j, session in enumerate(sample):
            one = mine.filter(pl.col("session") == session)
            ax.plot(
                one["hand"],
                one["bankroll"],
                color=colour,
                lw=0.6,
                alpha=0.35,
                label=f"{len(sample)} sample sessions" if j == 0 else None,
            )
        band = bands.filter(pl.col("seat") == seat)
        ax.fill_between(
            band["hand"],
            band["p5"],
            band["p95"],
            color=colour,
            alpha=0.18,
            lw=0,
            label="5%-95% of sessions",
        )
        ax.plot(band["hand"], band["p50"], color=colour, lw=2.2, label="median")
        ax.axhline(bankroll, color="0.3", ls=":", lw=1, label="starting bankroll")
        ax.set_title(seat)
        ax.set_xlabel("hand of the session")
        ax.set_ylabel("bankroll (currency units)")
        ax.set_xlim(left=0)
        money_axis(ax.yaxis)
        ax.tick_params(labelleft=True, labelbottom=True)
        ax.legend(fontsize="small", loc="best")
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title} ({results.name}; the seats share their axes)")
    caption = (
        f"Each seat's bankroll after every hand of the first {n_sessions} sessions: "
        f"{SAMPLE_PATHS} of them drawn thin, the median (thick) and the band holding "
        "90% of sessions (5% to 95%) at each hand. A session that ended (ruin, win "
        "goal, stop-loss) keeps its final bankroll for the later hands, so the median "
        "and the band flatten as sessions end. Every panel has the same scales."
    )
    return Plot("bankroll-paths", title, caption, png_bytes(fig))


def plot_final_bankroll(results: Results) -> Plot:
    assert results.sessions is not None
    bankroll = results.bankroll
    seats = _seats(results)
    fig, axes = new_figure(len(seats), share=True)
    title = "Final bankroll of each session"
    every = results.sessions["final_bankroll"].to_numpy().astype(float)
    span = (float(every.min()), float(every.max())) if every.size else None
    for i, (ax, seat) in enumerate(zip(axes, seats)):
        x = (
            results.sessions.filter(pl.col("seat") == seat)["final_bankroll"]
            .to_numpy()
            .astype(float)
        )
        # one set of bins for every seat: steps of the amounts all the seats end with
        ax.hist(
            x, bins=bins(every, span), color=seat_colour(i), alpha=0.85, edgecolor="white", lw=0.4
        )
        ax.axvline(
            bankroll, color="black", ls="--", lw=1.2, label=f"starting bankroll {money(bankroll)}"
        )
        if x.size:
            ax.axvline(
                float(np.median(x)),
                color="0.45",
                ls=":",
                lw=1.2,
                label=f"median {money(float(np.median(x)))}",
            )
        ax.set_title(seat)
        ax.set_xlabel("final bankroll (currency units)")
        ax.set_ylabel("sessions")
        money_axis(ax.xaxis)
        ax.tick_params(labelleft=True, labelbottom=True)
        ax.legend(fontsize="small", loc="best")
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(f"{title} ({results.name}; the seats share their axes)")
    caption = (
        f"How the bankroll stood at the end of each of the "
        f"{results.sessions['session'].n_unique():,} sessions, per seat; the dashed "
        "line is the starting bankroll: every session right of it won money. Each bar "
        "spans a whole number of the steps the amounts come in, and every panel has "
        "the same bars and scales."
    )
    return Plot("final-bankroll", title, caption, png_bytes(fig))


def plot_ruin(results: Results) -> Plot:
    assert results.sessions is not None
    curve = ruin_curve(results.sessions.with_columns(pl.col("seat").cast(pl.String)))
    seats = _seats(results)
    fig, axes = new_figure(len(seats), share=True)
    title = "Ruin over time"
    for i, (ax, seat) in enumerate(zip(axes, seats)):
        mine = curve.filter(pl.col("seat") == seat)
        x = mine["hand"].to_numpy()
        ax.fill_between(
            x,
            100 * mine["low"].to_numpy(),
            100 * mine["high"].to_numpy(),
            step="post",
            color=seat_colour(i),
            alpha=0.2,
            lw=0,
            label="95% interval",
        )
        final = float(mine["ruined"][-1]) if mine.height else 0.0
        ax.step(
            x,
            100 * mine["ruined"].to_numpy(),
            where="post",
            color=seat_colour(i),
            lw=1.6,
            label=f"ruined by then: {100 * final:.1f}% at the end",
        )
        ax.set_title(seat)
        ax.set_xlabel("hands into the session")
        ax.set_ylabel("sessions ruined (%)")
        ax.tick_params(labelleft=True, labelbottom=True)
        percent_axis(ax.yaxis)
        ax.legend(fontsize="small", loc="upper left")
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title} ({results.name}; the seats share their axes)")
    caption = (
        "The share of sessions ruined by each hand of the session (the bankroll left "
        "could not cover the next stake), with its 95% interval (Wilson's, over "
        "independent sessions). A session that ended otherwise, or ran out of hands, "
        "counts as not ruined throughout."
    )
    return Plot("ruin-over-time", title, caption, png_bytes(fig))


def plot_edge(results: Results) -> Plot:
    assert results.sessions is not None
    curve = edge_convergence(results.sessions)
    exact = dict(zip(results.summary["seat"].to_list(), results.summary["expected_edge"]))
    every = _seats(results)
    # a seat that placed no bets has no edge: no panel (the caption names it)
    seats = [
        seat
        for i, seat in enumerate(every)
        if exact.get(seat) is not None and not curve.filter(pl.col("seat") == seat).is_empty()
    ]
    idle = [seat for seat in every if seat not in seats]
    fig, axes = new_figure(max(len(seats), 1))
    title = "Measured edge converging on the exact edge"
    for ax, seat in zip(axes, seats):
        i = every.index(seat)
        mine = curve.filter(pl.col("seat") == seat)
        ax.set_title(seat)
        ax.set_xlabel("hands played, cumulative over sessions (log scale)")
        ax.set_ylabel("edge (% of amount wagered)")
        x = mine["cum_hands"].to_numpy()
        edge = 100 * mine["edge"].to_numpy()
        half = 100 * mine["half_width"].to_numpy()
        e = 100 * float(exact[seat])
        ax.fill_between(
            x,
            e - half,
            e + half,
            color="0.5",
            alpha=0.2,
            lw=0,
            label="95% band if the exact edge is true",
        )
        ax.plot(
            x, edge, color=seat_colour(i), lw=1.6, label=f"measured: {edge[-1]:+.2f}% at the end"
        )
        ax.axhline(e, color="black", ls="--", lw=1.2, label=f"exact edge {e:+.2f}%")
        # the whole measured curve, from the first session on (the band may run out of
        # the frame at the start, where it is widest)
        reach = max(float(np.nanmax(np.abs(edge - e))), float(half[-1]), 0.05)
        ax.set_ylim(e - 1.15 * reach, e + 1.15 * reach)
        ax.plot(x[:1], edge[:1], marker="o", color=seat_colour(i), ms=4)
        if x[-1] > x[0]:
            ax.set_xscale("log")
        percent_axis(ax.yaxis)
        ax.legend(fontsize="small", loc="best")
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title} ({results.name})")
    caption = (
        "Cumulative net / cumulative amount wagered, adding the sessions in order "
        "(x: hands played so far). The dashed line is the exact edge of the bets "
        "placed (from the odds engine); the grey band, exact edge \u00b1 1.96 \u00d7 "
        "s\u221ak / W (s: standard deviation of a session's net around its exact "
        "expected net, k: sessions so far, W: amount wagered so far), narrows as 1/\u221ak "
        "and holds the measured edge 95% of the time if the exact edge is the truth. "
        "The dot is the first session. Negative: the house wins."
        + (f" No panel for {', '.join(idle)}: placed no bets." if idle else "")
    )
    return Plot("edge-convergence", title, caption, png_bytes(fig))

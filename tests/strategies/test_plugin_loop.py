"""The one session loop: compiled once, every strategy plugged in.

Every built-in runs through the compiled loop (reached by its kind) and
through its plain-Python form; a user's `Compiled` class through the loop
(reached through first-class functions) and in Python: identical ledgers
and sessions, to the cent, over generated shoes, limits and bankrolls.
"""

from __future__ import annotations

import re
import tempfile
import textwrap
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backtest.core.errors import StrategyError
from backtest.loop import inputs, session_loop
from backtest.run import engine
from backtest.run.chunks import run_chunk
from backtest.run.config import build_strategies, parse_config
from strategies import compiled, registry
from strategies.registry import BUILTIN_NAMES

README = Path(__file__).resolve().parents[2] / "docs" / "strategies.md"


def _readme_compiled() -> type:
    """docs/strategies.md's compiled strategy, as written, loaded from a file as a
    config names it (`file.py:Class`)."""
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n", text.index("## Your own strategy, compiled")) + 10
    folder = Path(tempfile.mkdtemp(prefix="readme-compiled-"))
    (folder / "readme_compiled.py").write_text(
        text[start : text.index("```", start)], encoding="utf-8"
    )
    return registry.get(f"{folder / 'readme_compiled.py'}:BankerAfterTwoPlayersDoubling")


README_CLASS = _readme_compiled()


def ledger_of(result: engine.RunResult) -> pl.DataFrame:
    assert result.ledger is not None
    return result.ledger


def _config(
    seats: list[dict[str, Any]],
    seed: int,
    bankroll: int,
    table_min: int,
    table_max: int,
    session: dict[str, Any],
    sessions: int = 6,
    decks: int = 8,
) -> Any:
    return parse_config(
        {
            "seed": seed,
            "sessions": sessions,
            "shoe": {"decks": decks},
            "session": {"bankroll": bankroll, "max_shoes": 1, **session},
            "table": {"min": table_min, "max": table_max},
            "seats": seats,
        },
        source="plug.yaml",
    )


def _same(cfg: Any) -> None:
    """The strategies' compiled functions and the same asked through the
    Strategy API (`Compiled.stakes`, `update`, as plain Python) give the same
    ledger and sessions."""
    fast = engine.run(cfg, ledger=True, workers=1)
    for slow in [engine.run(cfg, ledger=True, workers=1, force_python=True)]:
        for seat in fast.summary["seat"]:
            assert (
                ledger_of(fast)
                .filter(pl.col("seat") == seat)
                .equals(ledger_of(slow).filter(pl.col("seat") == seat))
            ), seat
        assert fast.sessions.equals(slow.sessions)


edges = st.fixed_dictionaries(
    {
        "on_max": st.sampled_from(["reset", "cap"]),
        "on_bankroll": st.sampled_from(["stop", "all-in"]),
        "on_push": st.sampled_from(["stand", "reset"]),
    }
)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.integers(0, 2**32 - 1),
    bankroll=st.integers(20, 3000),
    table_min=st.integers(1, 20),
    span=st.integers(1, 60),
    edge=edges,
    win_goal=st.one_of(st.none(), st.integers(10, 500)),
    stop_loss=st.one_of(st.none(), st.integers(10, 500)),
    max_hands=st.one_of(st.none(), st.integers(1, 150)),
    max_shoes=st.integers(1, 2),
    decks=st.sampled_from([1, 2, 8]),
)
def test_every_built_in_matches_its_python_form(
    seed: int,
    bankroll: int,
    table_min: int,
    span: int,
    edge: dict[str, str],
    win_goal: int | None,
    stop_loss: int | None,
    max_hands: int | None,
    max_shoes: int,
    decks: int,
) -> None:
    session = {
        "win_goal": win_goal,
        "stop_loss": stop_loss,
        "max_hands": max_hands,
        "max_shoes": max_shoes,
    }
    seats = [{"strategy": name, "params": dict(edge)} for name in BUILTIN_NAMES]
    with _quiet():
        _same(_config(seats, seed, bankroll, table_min, table_min * span, session, decks=decks))


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.integers(0, 2**32 - 1),
    bankroll=st.integers(20, 3000),
    base=st.integers(1, 50),
    table_max=st.integers(20, 400),
    edge=edges,
)
def test_a_users_compiled_strategy_matches_the_same_class_in_python(
    seed: int, bankroll: int, base: int, table_max: int, edge: dict[str, str]
) -> None:
    registry.BUILTIN_NAMES.setdefault(README_CLASS.name, README_CLASS)
    try:
        seats = [
            {"strategy": README_CLASS.name, "params": {"base": base, **edge}},
            {"strategy": "martingale", "params": dict(edge)},
        ]
        with _quiet():
            _same(_config(seats, seed, bankroll, 1, table_max, {}, sessions=8))
    finally:
        registry.BUILTIN_NAMES.pop(README_CLASS.name, None)


def _file_config(seat: str, source: str, bankroll: int = 1000, table_max: int = 100) -> Any:
    """Two sessions of one seat, `seat` (a user's FILE:CLASS), as config `source`."""
    return parse_config(
        {
            "seed": 1,
            "sessions": 2,
            "shoe": {"decks": 8},
            "session": {"bankroll": bankroll},
            "table": {"min": 1, "max": table_max},
            "seats": [{"strategy": seat}],
        },
        source=source,
    )


@contextmanager
def _quiet() -> Iterator[None]:
    """Warnings of stakes off the table's limits: what these tables are for."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_the_readme_strategy_bets_banker_after_two_players_and_doubles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Read off its ledger: a Banker stake exactly when the shoe's last two
    decisive winners were Player, the base after a win, double after a loss."""
    monkeypatch.setitem(registry.BUILTIN_NAMES, README_CLASS.name, README_CLASS)
    cfg = _config(
        [{"strategy": README_CLASS.name, "params": {"base": 5}}],
        3,
        100_000,
        1,
        100_000,
        {},
        sessions=4,
    )
    led = ledger_of(engine.run(cfg, ledger=True, workers=1))
    assert led.height > 200
    stake = 5.0
    decisive: list[int] = []
    last = (None, None)
    for row in led.iter_rows(named=True):
        key = (row["session"], row["shoe"])
        if key != last:
            decisive = []
            last = key
        wanted = len(decisive) >= 2 and decisive[-2:] == [0, 0]
        assert row["stake_banker"] == (stake if wanted else 0.0), row
        assert row["stake_player"] == 0.0
        winner = {"player": 0, "banker": 1, "tie": 2}[str(row["winner"])]
        if wanted and winner == 1:
            stake = 5.0
        elif wanted and winner == 0:
            stake *= 2
        if winner != 2:
            decisive.append(winner)
    assert led["stake_banker"].max() > 5.0  # it doubled


def test_the_loop_is_compiled_once_for_the_built_ins_and_once_for_users(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every built-in and two users' classes: one signature of the loop for
    the built-ins, one for the users' classes; the signature the loop is
    compiled for ahead of a run (`compile_loop`) is a run's."""
    other = type("Other", (README_CLASS,), {"name": "other-user"})
    for cls in (README_CLASS, other):
        monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    seats = [{"strategy": name} for name in BUILTIN_NAMES]
    cfg = _config(seats, 1, 1000, 1, 500, {}, sessions=2)
    with _quiet():  # in this process (a run plays users' classes in a worker's)
        run_chunk(cfg, build_strategies(cfg), 0, 2)
    builtin = session_loop._compiled_loop("shared")
    assert len(builtin.signatures) == 1
    from numba import typeof

    assert builtin.signatures[0] == tuple(typeof(a) for a in session_loop.example_args())
    assert session_loop.loop_cached()
    user = session_loop._compiled_loop("user")
    assert len(user.signatures) == 1
    assert compiled.kind_of(README_CLASS()) == compiled.USER
    assert compiled.kind_of(BUILTIN_NAMES["martingale"]()) == 1


def test_a_user_function_numba_cannot_compile_names_its_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "mine.py"
    source.write_text(
        textwrap.dedent("""
        from strategies.base import Compiled
        from strategies._common import stateless_reset, stateless_update

        def decide(p, s, si, ctx, hist, evs, out):
            names = {"banker": 1}
            out[names["banker"] + "x"] = 10.0

        class Broken(Compiled):
            name = "broken"
            k_reset = staticmethod(stateless_reset)
            k_decide = staticmethod(decide)
            k_update = staticmethod(stateless_update)
    """),
        encoding="utf-8",
    )
    cfg = _file_config(f"{source}:Broken", "b.yaml", 100, 10)
    with pytest.raises(StrategyError) as info:
        engine.run(cfg, workers=1)
    message = str(info.value)
    assert "\n" not in message
    assert f"{source}:7" in message and "Broken.k_decide cannot be compiled" in message
    assert "plain-Python Strategy" in message


@pytest.mark.parametrize(
    ("body", "said"),
    [
        # an index out of its array: checked, never a write over the loop's memory
        (
            "out[7] = 10.0",
            r"raised IndexError: index 7 is out of bounds .*, line 6, in decide\), "
            r"on hand 1 of shoe 1 in session 1",
        ),
        (
            "if hist.shape[0] > 5:\n        raise ValueError('boom')",
            r"raised ValueError: boom \(.*, line 7, in decide\), on hand 7 of shoe 1 in session 1",
        ),
        # compiled, an error; as Python, numpy's integers divide by zero with a warning
        (
            "out[1] = 10.0 + hist.shape[0] // (si[0] - si[0])",
            r"raised ZeroDivisionError: integer division by zero \(in .*mine\.py\), compiled, in "
            r"sessions 1-2 \(played as plain Python, they raise nothing\)",
        ),
        # the table's rules refuse the stake: the Python loop's words name it
        ("out[1] = np.nan", r"the stake on banker must be 0 or more, got nan, on hand 1 of shoe 1"),
        ("out[1] = -5.0", r"the stake on banker must be 0 or more, got -5.0, on hand 1 of shoe 1"),
    ],
    ids=["out-of-bounds", "raises", "divides-by-zero", "nan-stake", "negative-stake"],
)
def test_an_error_a_users_compiled_function_raises_is_one_line_naming_it(
    tmp_path: Path, body: str, said: str
) -> None:
    source = tmp_path / "mine.py"
    source.write_text(
        "import numpy as np\n"
        "from strategies.base import Compiled\n"
        "from strategies._common import stateless_reset, stateless_update\n"
        "def decide(p, s, si, ctx, hist, evs, out):\n"
        "    out[1] = 10.0\n"
        f"    {body}\n"
        "\n"
        "class Faulty(Compiled):\n"
        "    name = 'faulty'\n"
        "    k_reset = staticmethod(stateless_reset)\n"
        "    k_decide = staticmethod(decide)\n"
        "    k_update = staticmethod(stateless_update)\n",
        encoding="utf-8",
    )
    cfg = _file_config(f"{source}:Faulty", "f.yaml", 1000, 100)
    with pytest.raises(StrategyError) as info:
        engine.run(cfg, workers=1)
    message = str(info.value)
    assert "\n" not in message and message.startswith("f.yaml: seats[0] (faulty): ")
    assert re.search(said, message), message


def test_a_user_staking_a_bet_it_does_not_declare_is_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def tie_too(p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
        out[1] = 10.0
        out[2] = 1.0

    cls = type("TieToo", (README_CLASS,), {"name": "tie-too", "k_decide": staticmethod(tie_too)})
    monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    with pytest.raises(
        StrategyError,
        match=r"seats\[0\] \(tie-too\) staked a bet it does not "
        r"declare .* on hand 1 of shoe 1",
    ):
        engine.run(_config([{"strategy": "tie-too"}], 1, 1000, 1, 100, {}), workers=1)


def test_a_users_parameters_are_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session cannot change what the next one plays: writing `p` does not compile."""

    def grows(p, s, si, ctx, stakes, unit, net):  # type: ignore[no-untyped-def]
        p[11] *= 2.0

    cls = type("Grows", (README_CLASS,), {"name": "grows", "k_update": staticmethod(grows)})
    monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    with pytest.raises(StrategyError, match="Grows.k_update cannot be compiled"):
        engine.run(_config([{"strategy": "grows"}], 1, 1000, 1, 100, {}), workers=1)
    with pytest.raises(StrategyError, match="read-only"):
        engine.run(
            _config([{"strategy": "grows"}], 1, 1000, 1, 100, {}), workers=1, force_python=True
        )


def test_dispatch_covers_every_built_in() -> None:
    """Each built-in's kind is its position in BUILTINS, and its facts say how
    the loop reads its decide."""
    for kind, cls in enumerate(compiled.BUILTINS):
        assert cls.kind == kind
        facts = compiled.facts(cls)
        assert facts.writes_out == (cls.bet_slot < 0 and not cls.picks_one)
        assert facts.cards_seen == cls.uses_cards
    example = session_loop.example_args()
    assert np.array_equal(inputs.work_for(example[0], example[2]).allowed, [True] + [False] * 6)


def test_the_first_run_says_it_compiles_the_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once, on stderr, while the loop is not in numba's cache; nothing after."""
    from backtest.cli import shell

    monkeypatch.setattr(session_loop, "loop_cached", lambda: False)
    shell.say_if_compiling()
    err = capsys.readouterr().err
    assert err.startswith("compiling the table (first run only, about ") and err.endswith(" s)\n")
    monkeypatch.setattr(session_loop, "loop_cached", lambda: True)
    shell.say_if_compiling()
    assert capsys.readouterr().err == ""


def test_a_note_is_printed_above_a_progress_bar_not_inside_its_line() -> None:
    """A note while the run's bar is drawn (the first run's, say) goes to
    the stream the bar stands in for standard error with, which prints it
    above the bar."""
    import io

    from rich.console import Console
    from rich.progress import Progress

    from backtest.cli import shell

    drawn = io.StringIO()
    with Progress(console=Console(file=drawn, force_terminal=True, width=80), transient=True):
        shell.note("compiling the table")
    assert "compiling the table" in drawn.getvalue()


@pytest.mark.slow
def test_importing_the_package_leaves_numba_and_warnings_as_they_were(tmp_path: Path) -> None:
    """Its functions cache in its own keyed folder; a user's own numba code
    caches where numba puts it; no environment variable, numba setting or
    filter of numba's warnings changes."""
    import os
    import subprocess
    import sys

    script = tmp_path / "users_code.py"
    script.write_text(
        textwrap.dedent("""
        import os, warnings
        before = list(warnings.filters)
        import backtest.run.engine
        from backtest.shoes import kernels
        from numba import njit
        from numba.core import config
        assert "NUMBA_CACHE_DIR" not in os.environ and not config.CACHE_DIR
        # (numpy's own imports add filters of their own)
        added = [f for f in warnings.filters if f not in before]
        assert not [f for f in added if "numba" in f[2].__module__], added

        @njit(cache=True)
        def mine(x):
            return x + 1

        print(mine._cache._impl.locator.get_cache_path())
        print(kernels.deal_shoes.dispatcher._cache._impl.locator.get_cache_path())
    """),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    users, ours = done.stdout.split()
    assert Path(users) == tmp_path / "__pycache__"
    assert Path(ours).is_relative_to(tmp_path / "xdg" / "baccarat-backtest")
    assert (
        Path(ours).relative_to(tmp_path / "xdg" / "baccarat-backtest").parts[0].startswith("numba-")
    )


def _counting_decide(p, s, si, ctx, hist, evs, out):  # type: ignore[no-untyped-def]
    if evs[1] > -0.01:  # Banker, when its exact EV for the cards left is above -1%
        out[1] = p[11]
    if evs[2] > 0.0:  # Tie, when it is favourable
        out[2] = p[11]


def test_a_users_compiled_counter_reads_the_exact_evs_as_in_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A user's `Compiled` class with `uses_cards` reads the EVs of the cards
    left, alone at its table and beside the built-in counter (the table's
    shared EV rows): the same ledger as the same class run in Python."""
    from backtest.core.rules import Bet
    from strategies._common import stateless_reset, stateless_update

    cls = type(
        "MyCounter",
        (README_CLASS,),
        {
            "name": "my-counter",
            "uses_cards": True,
            "k_reset": staticmethod(stateless_reset),
            "k_decide": staticmethod(_counting_decide),
            "k_update": staticmethod(stateless_update),
            "main_bets": lambda self: {Bet.BANKER, Bet.TIE},
        },
    )
    monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    for seats in (
        [{"strategy": "my-counter"}],
        [{"strategy": "my-counter"}, {"strategy": "counter"}],
    ):
        cfg = parse_config(
            {
                "seed": 3,
                "sessions": 12,
                "shoe": {"decks": 6},
                "session": {"bankroll": 100_000},
                "table": {"min": 1, "max": 5000},
                "seats": seats,
            },
            source="count.yaml",
        )
        with _quiet():
            _same(cfg)
            bets = engine.run(cfg, workers=1).summary["bets"][0]
        assert 0 < bets  # it bets on some hands: the EVs decide


def test_a_run_says_it_compiles_the_loop_for_users_classes_only_when_it_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`compiling_users` (the command line's note) is called as a run of a
    user's compiled class starts where the loop's form for them is not
    compiled; not where it is, nor for a run of built-ins alone."""
    monkeypatch.setitem(registry.BUILTIN_NAMES, README_CLASS.name, README_CLASS)
    said: list[str] = []
    users = _config([{"strategy": README_CLASS.name}], 1, 1000, 1, 100, {})
    builtins = _config([{"strategy": "flat"}], 1, 1000, 1, 100, {})
    with _quiet():
        engine.run(users, workers=1)  # (the loop's form for users: compiled, or loaded)
        engine.run(users, workers=1, compiling_users=lambda: said.append("users"))
        assert said == []
        monkeypatch.setattr(session_loop, "loop_cached", lambda form="shared": form == "shared")
        engine.run(users, workers=1, compiling_users=lambda: said.append("users"))
        assert said == ["users"]
        engine.run(builtins, workers=1, compiling_users=lambda: said.append("builtins"))
        assert said == ["users"]
    monkeypatch.undo()
    marker = session_loop._marker("user")
    assert marker is not None and marker.exists()  # it says: in numba's cache on disk


@pytest.mark.parametrize(
    ("attrs", "said"),
    [
        (
            {"k_update": None},
            r"k_update must be a function of \(p, s, si, ctx, stakes, unit, net\)",
        ),
        ({"k_decide": 3}, r"k_decide must be a function of .*; it is 3$"),
        (
            {"encode_own": lambda self: "x"},
            r"encode_own\(\) must return a list of numbers, got 'x'",
        ),
    ],
    ids=["no-update", "decide-not-a-function", "encode-own-not-numbers"],
)
def test_a_users_class_that_is_not_a_strategy_is_one_line_before_any_hand(
    monkeypatch: pytest.MonkeyPatch, attrs: dict[str, Any], said: str
) -> None:
    cls = type("Odd", (README_CLASS,), {"name": "odd", **attrs})
    monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
    with pytest.raises(StrategyError) as info:
        engine.run(_config([{"strategy": "odd"}], 1, 1000, 1, 100, {}), workers=1)
    message = str(info.value)
    assert "\n" not in message and "seats[0] (odd): Odd." in message
    assert re.search(said, message), message


def test_a_users_class_unchecked_plays_as_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """`bounds_checked = False` compiles a user's functions without index
    checks: the same numbers, for a class whose indices are right."""
    unchecked = type("Unchecked", (README_CLASS,), {"name": "unchecked", "bounds_checked": False})
    frames = []
    for cls in (README_CLASS, unchecked):
        monkeypatch.setitem(registry.BUILTIN_NAMES, cls.name, cls)
        with _quiet():
            result = engine.run(_config([{"strategy": cls.name}], 3, 1000, 1, 100, {}), workers=1)
        frames.append(result.sessions.drop("seat", "strategy"))
    assert frames[0].equals(frames[1]) and frames[0]["bets"].sum() > 0


def test_a_users_decide_returning_a_bet_that_is_not_a_whole_number_is_refused(
    tmp_path: Path,
) -> None:
    source = tmp_path / "mine.py"
    source.write_text(
        "from strategies.base import Compiled\n"
        "from strategies._common import stateless_reset, stateless_update\n"
        "\n"
        "def decide(p, s, si, ctx, hist, evs, out):\n"
        "    return 1.5, 10.0\n"
        "\n"
        "class Halves(Compiled):\n"
        "    name = 'halves'\n"
        "    k_reset = staticmethod(stateless_reset)\n"
        "    k_decide = staticmethod(decide)\n"
        "    k_update = staticmethod(stateless_update)\n",
        encoding="utf-8",
    )
    cfg = _file_config(f"{source}:Halves", "h.yaml", 1000, 100)
    with pytest.raises(StrategyError, match=r"the bet of \(bet, stake\) must be a whole number"):
        engine.run(cfg, workers=1)

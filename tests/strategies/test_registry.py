"""Strategies from installed packages, through the entry-point group."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from backtest.core.errors import ConfigError, StrategyError
from backtest.run import engine
from backtest.run.config import parse_config
from strategies import registry
from strategies.base import Strategy, View
from strategies.params import Money


class PluginBanker(Strategy):
    name = "plugin-banker"
    description = "Bets Banker every hand (from a plug-in package)."

    def stakes(self, view: View) -> dict[str, float]:
        return {"banker": 10.0}


class NotAStrategy:
    pass


def _fake_entry_points(monkeypatch: pytest.MonkeyPatch, targets: dict[str, str]) -> None:
    eps = [
        EntryPoint(name=name, value=value, group=registry.ENTRY_POINT_GROUP)
        for name, value in targets.items()
    ]

    def entry_points(**kwargs: Any) -> list[EntryPoint]:
        assert kwargs == {"group": registry.ENTRY_POINT_GROUP}
        return eps

    monkeypatch.setattr(registry, "entry_points", entry_points)


def test_an_installed_plugin_is_found_listed_and_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_entry_points(monkeypatch, {"plugin-banker": f"{__name__}:PluginBanker"})
    assert registry.get("plugin-banker") is PluginBanker
    assert "plugin-banker" in registry.available()
    cfg = parse_config(
        {"sessions": 5, "shoe": {"decks": 8}, "seats": [{"strategy": "plugin-banker"}]}
    )
    result = engine.run(cfg, workers=1)
    assert result.summary["bets"].item() == result.summary["hands"].item() > 0


def test_a_broken_plugin_fails_clearly_and_does_not_hide_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_entry_points(
        monkeypatch, {"broken": f"{__name__}:NotAStrategy", "missing": "no_such_module_xyz:Thing"}
    )
    with pytest.raises(StrategyError, match="is not a Strategy class"):
        registry.get("broken")
    with pytest.raises(StrategyError, match="an installed plug-in"):
        registry.get("missing")
    names = registry.available()
    assert "martingale" in names and "broken" not in names and "missing" not in names


def test_an_unknown_name_suggests_plugins_too(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_entry_points(monkeypatch, {"plugin-banker": f"{__name__}:PluginBanker"})
    with pytest.raises(StrategyError, match="did you mean 'plugin-banker'"):
        registry.get("plugin-bankr")


def test_a_strategy_file_is_found_beside_its_config_and_imports_its_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`file.py:Class` relative to the config's folder (as rules and shoe files
    are), run from elsewhere; the file imports a module beside it."""
    strats = tmp_path / "project" / "strats"
    strats.mkdir(parents=True)
    (strats / "sidekick_helpers_for_tests.py").write_text("SIDE = 'banker'\n", encoding="utf-8")
    (strats / "mine.py").write_text(
        "from sidekick_helpers_for_tests import SIDE\n"
        "from strategies.base import Strategy\n\n\n"
        "class Mine(Strategy):\n"
        "    def stakes(self, view):\n"
        "        return {SIDE: 10}\n",
        encoding="utf-8",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(sys, "path", list(sys.path))
    cfg = parse_config(
        {
            "seed": 1,
            "sessions": 2,
            "shoe": {"decks": 8},
            "seats": [{"strategy": "strats/mine.py:Mine"}],
        },
        base_dir=tmp_path / "project",
        source="project.yaml",
    )
    result = engine.run(cfg, ledger=True, workers=1)
    assert result.ledger is not None and set(result.ledger["stake_banker"]) == {10.0}
    with pytest.raises(
        StrategyError,
        match=rf"file strats/none.py does not exist \(looked in "
        rf"{elsewhere} and {tmp_path / 'project'}\)",
    ):
        registry.get("strats/none.py:X", tmp_path / "project")
    with pytest.raises(StrategyError, match=r"is a directory; name a \.py file"):
        registry.get(f"{strats}/:X")


def test_a_module_in_the_current_folder_is_found_as_python_m_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `backtest` command does not put the current folder on the path;
    `module:Class` finds a module there all the same."""
    (tmp_path / "cwd_module_for_tests.py").write_text(
        "from strategies.base import Strategy\n\n\n"
        "class Here(Strategy):\n"
        "    def stakes(self, view):\n"
        "        return {}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert registry.get("cwd_module_for_tests:Here").__name__ == "Here"


def test_a_strategy_file_edited_since_it_was_loaded_is_loaded_again(tmp_path: Path) -> None:
    import os

    path = tmp_path / "edited_strategy_for_tests.py"
    text = (
        "from strategies.base import Strategy\n\n\n"
        "class Edited(Strategy):\n"
        "    def stakes(self, view):\n"
        "        return {%r: 10}\n"
    )
    path.write_text(text % "banker", encoding="utf-8")
    first = registry.get(f"{path}:Edited")
    assert registry.get(f"{path}:Edited") is first  # unchanged: the same class
    path.write_text(text % "player", encoding="utf-8")
    os.utime(path, ns=(1, 10**18))  # a time of its own, whatever the clock's resolution
    again = registry.get(f"{path}:Edited")
    assert again is not first and again().stakes(None) == {"player": 10}


def test_user_code_that_exits_is_an_error_not_a_silent_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sys.exit()` in a user's module, or in its class, ends nothing: it is
    reported like any other error of the user's code."""
    (tmp_path / "exits_on_import.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    with pytest.raises(StrategyError, match=r"exits_on_import.py failed to import: SystemExit: 3"):
        registry.get(f"{tmp_path / 'exits_on_import.py'}:Anything")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "exits_module_for_tests.py").write_text(
        "import sys\nsys.exit(4)\n", encoding="utf-8"
    )
    with pytest.raises(
        StrategyError,
        match=r"cannot import module 'exits_module_for_tests': "
        r"SystemExit: 4",
    ):
        registry.get("exits_module_for_tests:Anything")
    (tmp_path / "exits_in_init.py").write_text(
        "from strategies.base import Strategy\n\n\n"
        "class Quits(Strategy):\n"
        "    def __init__(self, params=None):\n"
        "        raise SystemExit(5)\n\n"
        "    def stakes(self, view):\n"
        "        return {}\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError,
        match=r"seats\[0\].params: making the strategy raised "
        r"SystemExit: 5",
    ):
        parse_config({"seats": [{"strategy": f"{tmp_path / 'exits_in_init.py'}:Quits"}]})


def test_a_strategy_s_params_must_be_frozen(tmp_path: Path) -> None:
    """Parameters a strategy could change would make it play another system
    than the config says: a user's Params that are not frozen are refused."""
    text = (
        "from dataclasses import dataclass\n"
        "from strategies.base import Strategy\n\n\n"
        "@dataclass(frozen=%s)\n"
        "class Params:\n"
        "    base: float = 10.0\n\n\n"
        "class Flat(Strategy):\n"
        "    Params = Params\n\n"
        "    def stakes(self, view):\n"
        "        return {'banker': self.params.base}\n"
    )
    for frozen in (False, True):
        path = tmp_path / f"params_frozen_{frozen}.py"
        path.write_text(text % frozen, encoding="utf-8")
        config = {"seats": [{"strategy": f"{path}:Flat", "params": {"base": 5}}], "sessions": 2}
        if frozen:
            assert engine.run(parse_config(config)).summary["wagered"][0] > 0
        else:
            with pytest.raises(
                ConfigError,
                match=r"seats\[0\].params: the strategy's Params, "
                r"Params, must be a frozen dataclass",
            ):
                parse_config(config)


def test_every_built_in_s_params_are_frozen_all_the_way_down() -> None:
    """Every seat and session shares one Params: its lists and mappings cannot
    be changed either. They still compare, serialise and pickle as the lists
    and dicts a config gives, and a whole Params hashes."""
    import copy
    import dataclasses
    import json
    import pickle

    from strategies.params import FrozenDict, build_params

    seen_list = seen_dict = False
    for name in registry.BUILTIN_NAMES:
        cls = registry.get(name)
        params = build_params(cls.Params, {})
        hash(params)
        assert pickle.loads(pickle.dumps(params)) == params
        assert copy.deepcopy(params) == params
        for field in dataclasses.fields(params):
            value = getattr(params, field.name)
            assert not isinstance(value, (list, set)), (name, field.name)
            if isinstance(value, dict):
                seen_dict = True
                assert type(value) is FrozenDict, (name, field.name)
                assert value == dict(value) and json.loads(json.dumps(value)) == dict(value)
                for change in (
                    lambda v: v.__setitem__("x", 1),
                    lambda v: v.pop("x", None),
                    lambda v: v.update(x=1),
                    lambda v: v.clear(),
                    lambda v: v.setdefault("x", 1),
                    lambda v: v.popitem(),
                ):
                    with pytest.raises(TypeError, match="parameters cannot be changed"):
                        change(value)
            if isinstance(value, tuple):
                seen_list = True
                assert list(value) == list(field.default_factory())  # type: ignore[misc]
    assert seen_list and seen_dict
    # a mapping given in a config arrives frozen too, and prints as the dict it is
    flat = build_params(registry.get("flat").Params, {"bets": {"player": 5}})
    assert flat.bets == {"player": 5.0} and repr(flat.bets) == "{'player': 5.0}"
    with pytest.raises(TypeError):
        flat.bets["banker"] = 10.0  # type: ignore[index]
    assert flat.bets == {"player": 5.0}


def test_a_user_s_params_are_frozen_whatever_their_annotation() -> None:
    """A plain `list` or `dict` annotation, `Any`, a Sequence or no element
    types: every list in a Params (at any depth, from a config or a default)
    is a tuple and every mapping a FrozenDict, so what one session does to
    them cannot reach the next."""
    from dataclasses import dataclass

    from strategies.params import FrozenDict, build_params, param

    @dataclass(frozen=True)
    class Params:
        plain_list: list = param([10], "a list without element types")  # type: ignore[type-arg]
        plain_dict: dict = param({"a": [1, 2]}, "a mapping without types")  # type: ignore[type-arg]
        anything: Any = param({"deep": [{"x": [1]}], "set": {1, 2}}, "anything at all")
        seq: Sequence[float] = param([1.0], "a sequence")
        untyped_items: list[Any] = param([[1, 2], {"k": []}], "a list of anything")

    for given in (
        {},
        {
            "plain_list": [1, [2, 3]],
            "plain_dict": {"b": {"c": [4]}},
            "anything": [[5]],
            "seq": [6.0],
            "untyped_items": [[7]],
        },
    ):
        p = build_params(Params, given)

        def walk(v: object, where: str) -> None:
            assert not isinstance(v, (list, set)), where
            if isinstance(v, dict):
                assert type(v) is FrozenDict, where
                for k, x in v.items():
                    walk(x, f"{where}.{k}")
            elif isinstance(v, (tuple, frozenset)):
                for i, x in enumerate(v):
                    walk(x, f"{where}[{i}]")

        for name in ("plain_list", "plain_dict", "anything", "seq", "untyped_items"):
            walk(getattr(p, name), name)
        with pytest.raises(AttributeError):
            p.plain_list.append(10)  # type: ignore[attr-defined]
        with pytest.raises(TypeError, match="parameters cannot be changed"):
            p.plain_dict["z"] = 1
    # the values are the config's, as tuples
    p = build_params(Params, {"plain_list": [1, [2, 3]]})
    assert p.plain_list == (1, (2, 3))
    assert build_params(Params, {}).anything == {"deep": ({"x": (1,)},), "set": frozenset({1, 2})}


def test_money_parameters_refuse_an_amount_under_a_cent() -> None:
    """A `Money` field, or the amounts of a `dict[str, Money]`, is 0 or at
    least a cent, and never negative; a plain float is left as given."""
    from dataclasses import dataclass

    from strategies.params import build_params, param

    @dataclass(frozen=True)
    class Params:
        stake: Money = param(10.0, "stake per bet")
        by_bet: dict[str, Money] = param({"banker": 10.0}, "stakes by bet")
        ratio: float = param(0.5, "a plain number")

    assert build_params(Params, {"stake": 0, "by_bet": {"tie": 0.01}}).stake == 0.0
    assert build_params(Params, {"stake": 7}).stake == 7.0
    assert build_params(Params, {"ratio": 0.001}).ratio == 0.001
    for given, message in (
        (
            {"stake": 0.001},
            r"params.stake: must be at least 0.01 \(or 0\): money is counted in whole "
            r"cents, got 0.001",
        ),
        ({"stake": -5}, r"params.stake: an amount cannot be negative, got -5"),
        ({"stake": "ten"}, r"params.stake: expected a number, got 'ten'"),
        ({"by_bet": {"tie": 0.004}}, r"params.by_bet.tie: must be at least 0.01"),
        ({"by_bet": {"tie": -1}}, r"params.by_bet.tie: an amount cannot be negative"),
    ):
        with pytest.raises(StrategyError, match=message):
            build_params(Params, given)
    assert registry.get("flat").Params.__annotations__["bets"] == "dict[str, Money]"


def test_a_user_s_seat_is_called_by_its_class_s_name(tmp_path: Path) -> None:
    """A seat of a class of one's own, unnamed, is labelled by the class's
    `name` (numbered when taken), not by the `file.py:Class` that found it; a
    seat's own name must be one printable line (it labels the printed table)."""
    path = tmp_path / "mine.py"
    path.write_text(
        "from strategies.base import Strategy\n\n"
        "class Mine(Strategy):\n    name = 'my-system'\n\n"
        "    def stakes(self, view):\n        return {'banker': 10}\n\n"
        "class Nameless(Strategy):\n"
        "    def stakes(self, view):\n        return {'player': 10}\n",
        encoding="utf-8",
    )
    seats = [
        {"strategy": f"{path}:Mine"},
        {"strategy": f"{path}:Mine"},
        {"strategy": f"{path}:Nameless"},
        {"strategy": "flat", "name": "my-system #4"},
    ]
    cfg = parse_config({"sessions": 2, "seats": seats}, source="mine.yaml")
    assert [s.label for s in cfg.seats] == [
        "my-system",
        "my-system #2",
        f"{path}:Nameless",
        "my-system #4",
    ]
    summary = engine.run(cfg, workers=1).summary
    assert summary["strategy"].to_list()[:3] == [f"{path}:Mine"] * 2 + [f"{path}:Nameless"]
    with pytest.raises(
        ConfigError,
        match=r"mine.yaml: seats\[0\].name: must be one line of "
        r"printable text, got 'a\\nb'",
    ):
        parse_config({"seats": [{"strategy": "flat", "name": "a\nb"}]}, source="mine.yaml")


def test_the_counter_s_bets_are_each_named_once() -> None:
    from strategies.params import build_params

    params = registry.get("counter").Params
    assert build_params(params, {"bets": ["banker", "tie"]}).bets == ("banker", "tie")
    with pytest.raises(
        StrategyError,
        match=r"params.bets\[2\]: 'banker' is given twice \(first "
        r"as bets\[0\]\); name each bet once",
    ):
        build_params(params, {"bets": ["banker", "tie", "banker"]})
    with pytest.raises(StrategyError, match=r"params.bets\[1\]: unknown bet 'bnker'"):
        build_params(params, {"bets": ["banker", "bnker"]})

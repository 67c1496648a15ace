"""Names to strategy classes.

`get("martingale")` finds a built-in; `get("mypkg.mod:MyStrategy")` imports
a user's class; `get("path/to/file.py:MyStrategy")` loads one from a file;
installed packages add names through the `baccarat_backtest.strategies`
entry-point group. An unknown name fails with close matches and says how
to list them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from importlib.metadata import entry_points
from pathlib import Path

from backtest.core.errors import StrategyError
from backtest.core.fields import did_you_mean
from strategies.base import Strategy
from strategies.compiled import BUILTINS

ENTRY_POINT_GROUP = "baccarat_backtest.strategies"

BUILTIN_NAMES: dict[str, type[Strategy]] = {cls.name: cls for cls in BUILTINS}
#: other spellings people use
ALIASES = {
    "reverse-martingale": "paroli",
    "follow": "follow-the-shoe",
    "follow-the-last-winner": "follow-the-shoe",
    "oscar": "oscars-grind",
    "d-alembert": "dalembert",
    "1326": "1-3-2-6",
    "patterns": "pattern",
    "control": "random",
    "card-counter": "counter",
}


def _entry_point_strategies() -> dict[str, object]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available() -> dict[str, type[Strategy]]:
    """Every strategy known by name: the built-ins, then installed plug-ins."""
    found: dict[str, type[Strategy]] = dict(BUILTIN_NAMES)
    for name, ep in _entry_point_strategies().items():
        if name not in found:
            try:
                found[name] = _checked(ep.load(), f"entry point {name!r}")  # type: ignore[attr-defined]
            except StrategyError:
                continue
            except (Exception, SystemExit):  # a broken plug-in must not hide the others
                continue
    return found


def get(name: str, base_dir: Path | None = None) -> type[Strategy]:
    """The strategy class for a name, `module:Class`, or `file.py:Class` (a
    relative file is looked for in the current folder, then in `base_dir`:
    the folder of the config that names it)."""
    if not isinstance(name, str) or not name:
        raise StrategyError(f"a strategy is named by text, got {name!r}")
    key = ALIASES.get(name, name)
    if key in BUILTIN_NAMES:
        return BUILTIN_NAMES[key]
    if ":" in name:
        return _import(name, base_dir)
    eps = _entry_point_strategies()
    if name in eps:
        try:
            return _checked(eps[name].load(), f"entry point {name!r}")  # type: ignore[attr-defined]
        except StrategyError:
            raise
        except (Exception, SystemExit) as exc:
            raise StrategyError(
                f"strategy {name!r} (an installed plug-in) failed to load: {exc}"
            ) from None
    choices = sorted(set(BUILTIN_NAMES) | set(eps) | set(ALIASES))
    hint = did_you_mean(name, choices, 3)
    raise StrategyError(
        f"unknown strategy {name!r}{hint} "
        "(run `backtest strategies` to list them, or name your own class as "
        "`module:Class` or `file.py:Class`)"
    )


def _import(spec: str, base_dir: Path | None = None) -> type[Strategy]:
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise StrategyError(f"strategy {spec!r}: expected `module:Class` or `file.py:Class`")
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target)
        if (
            not path.is_file()
            and base_dir is not None
            and not path.is_absolute()
            and (base_dir / path).is_file()
        ):
            path = base_dir / path
        if path.is_dir():
            raise StrategyError(f"strategy {spec!r}: {target} is a directory; name a .py file")
        if not path.is_file():
            folders = dict.fromkeys([Path.cwd(), *([base_dir.resolve()] if base_dir else [])])
            looked = f" (looked in {' and '.join(map(str, folders))})"
            raise StrategyError(f"strategy {spec!r}: file {target} does not exist{looked}")
        _on_path(path.resolve().parent)  # so that it can import its neighbours
        # keyed by the file's time too: a file edited since is imported again
        resolved = path.resolve()
        stat = resolved.stat()
        key = (str(resolved), stat.st_mtime_ns, stat.st_size)
        # the same name in every process (numba's cache finds a user's compiled
        # functions' module by it)
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
        mod_name = f"backtest_user_strategy_{digest}"
        module = sys.modules.get(mod_name)
        if module is None:
            loader_spec = importlib.util.spec_from_file_location(mod_name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise StrategyError(f"strategy {spec!r}: cannot load {target} as Python")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[mod_name] = module
            try:
                loader_spec.loader.exec_module(module)
            except (Exception, SystemExit) as exc:
                del sys.modules[mod_name]
                raise StrategyError(
                    f"strategy {spec!r}: {target} failed to import: {type(exc).__name__}: {exc}"
                ) from None
    else:
        # a module in the current folder, as `python -m backtest` would find it
        if "" not in sys.path:
            _on_path(Path.cwd())
        try:
            module = importlib.import_module(target)
        except (Exception, SystemExit) as exc:
            raise StrategyError(
                f"strategy {spec!r}: cannot import module {target!r}: {type(exc).__name__}: {exc}"
            ) from None
    if not hasattr(module, attr):
        names = [
            n
            for n, v in vars(module).items()
            if inspect.isclass(v) and issubclass(v, Strategy) and v.__module__ == module.__name__
        ]
        hint = did_you_mean(attr, names, 3)
        raise StrategyError(f"strategy {spec!r}: {target} has no {attr!r}{hint}")
    return _checked(getattr(module, attr), f"strategy {spec!r}")


def _on_path(folder: Path) -> None:
    """Let modules in `folder` be imported (after the installed ones)."""
    if str(folder) not in sys.path:
        sys.path.append(str(folder))


def _checked(obj: object, what: str) -> type[Strategy]:
    if not (inspect.isclass(obj) and issubclass(obj, Strategy)):
        raise StrategyError(f"{what} is not a Strategy class (subclass strategies.base.Strategy)")
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
        raise StrategyError(f"{what} does not define {missing}")
    return obj

"""Strategies as plug-ins of the one compiled session loop: which they are.

The session loop (`backtest.loop.session_loop`) is compiled once, for every
strategy. It reaches a strategy's four functions (`k_reset`, `k_init`,
`k_decide`, `k_update`: see `strategies.base.Compiled`) in one of two ways
(`strategies.dispatch` builds both; this module, which does not load numba,
says which a strategy takes, and what the loop prepares for it):

- a built-in by its `kind`, its position in `BUILTINS`: `reset_any`,
  `init_any`, `decide_any` and `update_any` branch on the kind, and each
  branch is that strategy's own function, inlined. The kind does not change
  within a run, so the processor predicts the branch; the sixteen branches
  share the loop's registers, and the loop runs at 65-85 % of the speed of
  one compiled for a single strategy (`docs/DESIGN.md`);
- any other `Compiled` class (a user's own, or a subclass of a built-in) as
  first-class functions (`user_functions`): four small functions compiled
  for it with fixed signatures (each array passed as the address of its
  data) and passed to the loop as values, called through a pointer. The
  loop is compiled once for such classes too, apart from the built-ins'
  (a call through a pointer anywhere in a loop slows its progressions).

A strategy's `decide` returns its stakes in one of three ways (a `bet_slot`
strategy its stake on one bet, a `picks_one` one (bet, stake), any other
writes `out`); `decide_any` turns each into (bet, stake), with the bet
`SEVERAL` when the stakes are in `out`.

A built-in is found, not listed: every module of this package and its subpackages but the
API's and the loop's (`_NOT_BUILTINS`) is imported, and each class in it
that declares its own `kind` (its branch in the dispatch, from 0 up, never
renumbered) is a built-in, in the order of the kinds. Adding a built-in is
its module (or a class in one) with the next free kind, and its ready config
in `configs/strategies/`. A kind given twice, or a gap, fails on import
with the kind to give.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import NamedTuple, TypeGuard

from strategies._common import stateless_update
from strategies.base import Compiled

#: this package's modules that hold no built-in: the API, the loop's
#: dispatch (which loads numba) and the names' registry
_NOT_BUILTINS = frozenset({"base", "params", "slots", "view", "compiled", "dispatch", "registry"})


def _discover() -> tuple[type[Compiled], ...]:
    """Every built-in strategy class, by kind: the classes of this package's
    modules that declare their own `kind`."""
    import strategies

    found: dict[int, type[Compiled]] = {}
    modules = sorted(
        m.name
        for m in pkgutil.walk_packages(strategies.__path__, "strategies.")
        if not m.name.rpartition(".")[2].startswith("_")
        and m.name.removeprefix("strategies.") not in _NOT_BUILTINS
    )
    for module in modules:
        for obj in vars(importlib.import_module(module)).values():
            if not (
                isinstance(obj, type)
                and issubclass(obj, Compiled)
                and obj.__module__ == module
                and "kind" in vars(obj)
            ):
                continue
            kind = obj.kind
            if kind in found:
                raise TypeError(
                    f"built-in strategies {found[kind].__qualname__} and "
                    f"{obj.__qualname__} both declare kind = {kind}; give "
                    f"{obj.__qualname__} kind = {_next_free(found)}"
                )
            found[kind] = obj
    if sorted(found) != list(range(len(found))):
        gap = _next_free(found)
        raise TypeError(
            f"the built-in strategies' kinds run from 0 without a gap, and none "
            f"declares kind = {gap}: renumber the last one to {gap}"
        )
    return tuple(found[k] for k in range(len(found)))


def _next_free(found: dict[int, type[Compiled]]) -> int:
    return next(k for k in range(len(found) + 1) if k not in found)


#: the built-in strategies, each at its kind
BUILTINS: tuple[type[Compiled], ...] = _discover()

#: the kind of a strategy the loop reaches through `user_functions`
USER = -1


def runs_compiled(strategy: object) -> TypeGuard[Compiled]:
    """Whether `strategy` runs in the compiled loop: any `Compiled` strategy
    (a built-in, a subclass of one, a user's own)."""
    return isinstance(strategy, Compiled)


def kind_of(strategy: Compiled) -> int:
    """The strategy's kind in the loop: a built-in's class exactly has its
    own; any other class (a user's subclass of a built-in included, whose
    functions may differ) is USER."""
    kind = getattr(type(strategy), "kind", USER)
    if isinstance(kind, int) and 0 <= kind < len(BUILTINS) and BUILTINS[kind] is type(strategy):
        return kind
    return USER


class Facts(NamedTuple):
    """What the loop prepares for a strategy, and how it reads its decide."""

    slot: int  # the parameter slot of its one bet (`bet_slot`), or -1
    picks: bool  # its decide returns (bet, stake)
    writes_out: bool  # its decide writes `out` (neither of the above)
    learns: bool  # its update does something
    reads_ctx: bool  # it reads the context array (bankroll, hand numbers, last net)
    cards_seen: bool  # it reads the exact EVs of the cards not yet seen


@cache
def facts(cls: type[Compiled]) -> Facts:
    """The loop's `Facts` for a Compiled class."""
    slot = int(cls.bet_slot)
    picks = bool(cls.picks_one) and slot < 0
    builtin = cls in BUILTINS
    # a user's class always has the context filled: it says nothing of what it reads
    return Facts(
        slot,
        picks,
        slot < 0 and not picks,
        cls.k_update is not stateless_update,
        bool(cls.reads_context) if builtin else True,
        bool(cls.uses_cards),
    )


def learns(kind: int) -> bool:
    """Whether the built-in `kind`'s update does anything."""
    return facts(BUILTINS[kind]).learns

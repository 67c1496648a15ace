"""Which built-ins of a run are given the session loop's form of their own.

Every strategy runs in the one shared loop, compiled once (about 20 s on a
fresh machine, then any built-in starts at once). A built-in may also run a
form of the loop compiled for it alone, its kind and facts constants: 5-50 %
more hands a second, for about 10 s of compiling, once per machine (numba
caches it). A run uses a built-in's own form wherever it is compiled; it
compiles the form first when asked (`--own-loops`), or when it plays so many
hands of that strategy (`OWN_LOOP_HANDS`) that the compile pays for itself.
The numbers are the same in either form, to the bit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from backtest.jit import lazy_jit
from backtest.run.config import RunConfig
from strategies.compiled import BUILTINS

#: a run of at least this many hands of one built-in (summed over its seats)
#: compiles its own form first: saving 1-5 ns a hand, it repays the ~10 s
OWN_LOOP_HANDS = 5_000_000_000


def builtin_kinds(config: RunConfig) -> list[int]:
    """The kinds of a config's seats that are built-ins (by name: a class
    from a file is a user's, run through its functions)."""
    from strategies.registry import BUILTIN_NAMES

    classes = [BUILTIN_NAMES.get(seat.strategy) for seat in config.seats]
    return [BUILTINS.index(cls) for cls in classes if cls in BUILTINS]


def kinds_to_compile(runs: Iterable[tuple[RunConfig, int]], asked: bool) -> list[int]:
    """The built-ins whose own form a run (or a sweep's cells) should compile
    first: `runs` holds each run's config and its hands. Every built-in
    there if `asked`, else those played for `OWN_LOOP_HANDS` hands or more;
    none whose form is compiled already."""
    hands: Counter[int] = Counter()
    for config, n in runs:
        for kind in builtin_kinds(config):
            hands[kind] += n
    wanted = [k for k, n in sorted(hands.items()) if asked or n >= OWN_LOOP_HANDS]
    if not wanted or lazy_jit.JIT_DISABLED:  # (numba's compiler off: nothing compiles)
        return []
    from backtest.loop import session_loop  # (loads numba: only when there is a choice)

    return [k for k in wanted if not session_loop.own_ready(k)]


def compile_own(kinds: Sequence[int], compiling: Callable[[list[str]], None] | None) -> None:
    """Compile the built-ins' own forms `kinds` (saying so through
    `compiling`, with their names, first)."""
    if not kinds:
        return
    if compiling is not None:
        compiling([BUILTINS[k].name for k in kinds])
    from backtest.loop import session_loop

    session_loop.compile_own(kinds)

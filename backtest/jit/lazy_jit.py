"""Functions for the compiled loop, compiled only when first needed.

A module of strategies or kernels marks its functions for numba with
`jit` (or `kernel`) without importing numba: listing the strategies,
reading a config or pricing a shoe never loads the compiler (numba's import
and start-up cost about half a second). A marked function is a `Kernel`:
called from Python it compiles (or loads from numba's cache) and runs as
numba compiled it; compiled code that calls it, as a global of its module,
inlines it as numba inlines a dispatcher marked `inline="always"` (numba
reads the same `targetoptions` and `py_func`), or else calls the same
compiled function (`register_with_numba` teaches numba's typing to see
through the wrapper).

>>> @kernel(inline=True)
... def twice(x):
...     return 2 * x
>>> twice.py_func(21), twice.__name__
(42, 'twice')
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")


class Kernel(Generic[_P, _R]):
    """A plain function and the numba dispatcher made from it on first use."""

    def __init__(self, fn: Callable[_P, _R], options: dict[str, Any]) -> None:
        functools.update_wrapper(self, fn)
        self.py_func = fn
        self.options = options
        self._dispatcher: Any = None

    @property
    def dispatcher(self) -> Any:
        """The numba dispatcher of the function (made on first use)."""
        if self._dispatcher is None:
            from numba import njit

            from backtest.jit import numba_cache

            register_with_numba()
            numba_cache.install()  # before the function is decorated for numba's cache
            options = {k: v for k, v in self.options.items() if k != "cache"}
            self._dispatcher = njit(cache=self.options.get("cache", True), **options)(self.py_func)
        return self._dispatcher

    @property
    def targetoptions(self) -> dict[str, Any]:
        """The options numba reads of a function it may inline where it is
        called (`inline`), as of a dispatcher, without compiling it."""
        return self.options

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return self.dispatcher(*args, **kwargs)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<compiled-on-use {self.py_func.__module__}.{self.py_func.__qualname__}>"


def kernel(
    *, inline: bool = False, nrt: bool = True, cache: bool = True
) -> Callable[[Callable[_P, _R]], Kernel[_P, _R]]:
    """Mark a function for numba: `njit(cache=cache)`, inlined where it is
    called if `inline`, compiled without reference counting unless `nrt`
    (such a function must not allocate arrays)."""
    options: dict[str, Any] = {} if cache else {"cache": False}
    if inline:
        options["inline"] = "always"
    if not nrt:
        options["_nrt"] = False  # a private numba option
    return lambda fn: Kernel(fn, options)


def jit(fn: Callable[_P, _R]) -> Kernel[_P, _R]:
    """Compile `fn` for the session loop (cached on disk). Strategies use this.

    Compiled without reference counting: the session loop calls these small
    functions once or twice a hand with several arrays each, and counting
    references to those arrays cost more than the functions' own work. So a
    function compiled here must not allocate arrays (it works in the arrays it
    is given). Inlined where it is called, so that the session loop compiled
    for one strategy holds all of that strategy's code."""
    return kernel(inline=True, nrt=False)(fn)


@functools.cache
def register_with_numba() -> None:
    """Teach numba that a `Kernel` global is its dispatcher (once, when numba
    is first needed)."""
    from numba.extending import typeof_impl

    @typeof_impl.register(Kernel)
    def _typeof_kernel(value: Kernel[Any, Any], context: Any) -> Any:
        return typeof_impl(value.dispatcher, context)

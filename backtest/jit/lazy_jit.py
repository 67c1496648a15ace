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

Inside `interpreted()`, a `Kernel` runs as the plain Python it is written
in, and so does every `Kernel` it calls: the same code, in numpy scalars,
without loading numba at all. A run too small for compiling (or loading
compiled code) to pay for itself deals its shoes that way.

>>> @kernel(inline=True)
... def twice(x):
...     return 2 * x
>>> twice.py_func(21), twice.__name__
(42, 'twice')
>>> with interpreted():
...     twice(21)
42
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: whether this thread runs kernels as plain Python (`interpreted`)
_MODE = threading.local()


def _jit_disabled() -> bool:
    """Whether numba's compiler is turned off (NUMBA_DISABLE_JIT, a number,
    read as numba reads it when loaded)."""
    try:
        return int(os.environ.get("NUMBA_DISABLE_JIT", "0") or "0") != 0
    except ValueError:
        return False


#: numba's compiler is off (NUMBA_DISABLE_JIT): every `Kernel` then runs in its
#: plain-Python form, as in `interpreted`, the session loop's own code included
JIT_DISABLED = _jit_disabled()


def interpreting() -> bool:
    """Whether this thread is inside `interpreted()`."""
    return bool(getattr(_MODE, "on", False))


def _in_python() -> bool:
    """Whether a `Kernel` called here and now runs as plain Python."""
    return JIT_DISABLED or interpreting()


@contextmanager
def interpreted() -> Iterator[None]:
    """Run every `Kernel` called in this block, in this thread, as plain Python.

    numpy's fixed-width scalars wrap around as compiled integers do (the
    warning numpy gives for it is silenced here), so the results are the
    compiled code's, bit for bit: tests hold the deal to that."""
    import numpy as np

    before = getattr(_MODE, "on", False)
    _MODE.on = True
    try:
        with np.errstate(over="ignore"):
            yield
    finally:
        _MODE.on = before


class Kernel(Generic[_P, _R]):
    """A plain function and the numba dispatcher made from it on first use."""

    def __init__(self, fn: Callable[_P, _R], options: dict[str, Any]) -> None:
        functools.update_wrapper(self, fn)
        self.py_func = fn
        self.options = options
        self._dispatcher: Any = None
        self._python: Callable[_P, _R] | None = None

    def python_form(self) -> Callable[_P, _R]:
        """The function as plain Python that calls the other kernels it names
        as plain Python too, directly (not through their `Kernel`, whose call
        costs more than a small kernel's work): `interpreted` runs this."""
        if self._python is None:
            self._python = _with_python_globals(self.py_func)
        return self._python

    def in_python(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        """Decorate the same work written for plain Python (whole-array numpy
        operations, say, where the compiled form loops element by element):
        `interpreted` runs it instead. Tests hold the two to the same results."""
        self._python = fn
        return fn

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
    def loaded(self) -> bool:
        """Whether the compiled form was asked for in this process (numba is
        then loaded, and the kernel compiled or loaded from its cache)."""
        return self._dispatcher is not None

    @property
    def targetoptions(self) -> dict[str, Any]:
        """The options numba reads of a function it may inline where it is
        called (`inline`), as of a dispatcher, without compiling it."""
        return self.options

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        if _in_python():
            return self.python_form()(*args, **kwargs)
        return self.dispatcher(*args, **kwargs)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<compiled-on-use {self.py_func.__module__}.{self.py_func.__qualname__}>"


def as_called(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """What calling `fn` runs here and now, for a caller that calls it many
    times: inside `interpreted()`, its plain-Python form calling the kernels
    it names directly (a `Kernel`'s, or a plain function's calling kernels
    such as a built-in strategy's); else `fn` itself."""
    if not _in_python():
        return fn
    if isinstance(fn, Kernel):
        return fn.python_form()
    plain = _PLAIN.get(fn)
    if plain is None:
        plain = _PLAIN[fn] = _with_python_globals(fn)
    return plain


def _with_python_globals(fn: Any) -> Any:
    """`fn` with its module's globals as its kernels' plain-Python forms see them."""
    return types.FunctionType(
        fn.__code__, _python_globals(fn.__module__), fn.__name__, fn.__defaults__, fn.__closure__
    )


#: plain functions' forms made by `as_called`
_PLAIN: dict[Any, Any] = {}


#: each module's globals for its kernels' plain-Python forms: its own, with
#: every `Kernel` replaced by that kernel's plain-Python form
_GLOBALS: dict[str, dict[str, Any]] = {}


def _python_globals(module: str) -> dict[str, Any]:
    names = _GLOBALS.get(module)
    if names is None:
        names = _GLOBALS[module] = dict(vars(sys.modules[module]))  # before filling: kernels
        for name, value in list(names.items()):  # of one module may call each other
            if isinstance(value, Kernel):
                names[name] = value.python_form()
    return names


def cores() -> int:
    """The cores this process may run on (all the machine's where the system
    does not say): where compiling, and a run's workers, are spread."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


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
        options["_nrt"] = False  # numba's private option (see `numba_cache.njit_plain`)
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

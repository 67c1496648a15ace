"""Where numba caches this package's compiled code, and nothing else's.

numba checks a cached function against its own source file only, but the
session loop compiles in the strategies' code from other files. So this
package's functions are cached in a folder keyed by a hash of every source
file of its two packages (`~/.cache/baccarat-backtest/numba-<hash>/`), and
no stale compiled code can ever be loaded after a change. That is done by a
cache locator of numba's (the class numba asks where a function's cache
lives) that answers for this package's files alone: a user's own numba code,
and numba's settings, are left as they are. A folder the user chose for
numba's cache (NUMBA_CACHE_DIR) is used as numba uses it. Folders of this
package's earlier sources left unused for a day are removed when the cache
is first used.

numba has no public way to do either thing this module does: key its cache
folder for this package's code alone (the locator subclasses numba's
private `_CacheLocator`), and compile without reference counting
(`njit_plain`, numba's private `_nrt` option). Every other module uses
numba's public API (`backtest/jit/lanes.py` aside: its vector code is
written in LLVM IR, with numba's `cgutils`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from functools import cache
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[2]
_PACKAGES = ("backtest", "strategies")


@cache
def cache_folder() -> Path | None:
    """This package's cache folder for its sources as they are (made, and
    older ones cleared, on the first call); None where none can be made."""
    from backtest import __version__

    digest = hashlib.sha256(__version__.encode())
    for package in _PACKAGES:
        for file in sorted((_ROOT / package).rglob("*.py")):
            digest.update(file.relative_to(_ROOT).as_posix().encode())
            digest.update(file.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "baccarat-backtest"
    target = base / f"numba-{digest.hexdigest()[:16]}"
    try:
        target.mkdir(parents=True, exist_ok=True)
        os.utime(target)
    except OSError:
        return None
    for old in base.glob("numba-*"):
        try:
            stale = old != target and time.time() - old.stat().st_mtime > 86400
        except OSError:
            continue
        if stale:
            shutil.rmtree(old, ignore_errors=True)
    return target


def _ours(py_file: str) -> bool:
    """Whether `py_file` is a source file of this package's (any folder of it)."""
    try:
        parts = Path(py_file).resolve().relative_to(_ROOT).parts
    except (OSError, ValueError):
        return False
    return len(parts) > 1 and parts[0] in _PACKAGES


@cache
def install() -> None:
    """Put this package's locator first in numba's list (once; before any of
    its functions is decorated: numba picks a function's locator then)."""
    from numba.core import caching, config

    class PackageLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """This package's files, cached in `cache_folder()`."""

        def __init__(self, py_func, py_file, folder):  # type: ignore[no-untyped-def]
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(folder / self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self) -> str:
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):  # type: ignore[no-untyped-def]
            if config.CACHE_DIR or not _ours(py_file):
                return None  # the user's folder, or not this package's code: numba's own way
            folder = cache_folder()
            if folder is None:
                return None
            self = cls(py_func, py_file, folder)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    caching.CacheImpl._locator_classes.insert(0, PackageLocator)  # type: ignore[arg-type]


def njit_plain(**options: Any) -> Any:
    """numba's `njit`, cached, and compiled without reference counting (a
    function so compiled must not allocate arrays). numba names that option
    `_nrt`, a private one: this is the one place the package names it."""
    from numba import njit

    install()  # before the function is decorated for numba's cache
    return njit(cache=True, _nrt=False, **options)  # type: ignore[call-overload]

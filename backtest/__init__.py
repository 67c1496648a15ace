"""baccarat-backtest: betting strategies through an exact mini-baccarat rules core."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

__version__ = "0.1.0"


def _numba_cache_dir() -> None:
    """Point numba's on-disk cache at a folder keyed by this package's source.

    numba checks a cached function against its own file only, but the
    session loop compiles in the strategies' code from other files; keying the
    whole cache by every source file means no stale compiled code can ever be
    loaded after a change. Caches of this package left unused for a day are removed. A cache
    folder the user chose (NUMBA_CACHE_DIR) is left alone.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(__version__.encode())
    for package in ("backtest", "strategies"):
        for file in sorted((root / package).glob("*.py")):
            digest.update(file.name.encode())
            digest.update(file.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "baccarat-backtest"
    target = base / f"numba-{digest.hexdigest()[:16]}"
    try:
        target.mkdir(parents=True, exist_ok=True)
        os.utime(target)
    except OSError:
        return
    import time

    for old in base.glob("numba-*"):
        try:
            stale = old != target and time.time() - old.stat().st_mtime > 86400
        except OSError:
            continue
        if stale:
            shutil.rmtree(old, ignore_errors=True)
    os.environ["NUMBA_CACHE_DIR"] = str(target)
    if "numba" in sys.modules:
        sys.modules["numba"].config.CACHE_DIR = str(target)


_numba_cache_dir()

"""Writing a file so that it is whole or not there: a temporary file beside
it, renamed onto it only when every byte is written. No game in it; every
layer that writes a file uses it."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path`, renamed onto it only when the block succeeds,
    with the permissions of the file it replaces (or of a new file).

    A symbolic link is written through: its target is replaced, not the link.
    A path that is no regular file nor folder (a device such as /dev/null or
    /dev/stdout, a named pipe) has nothing to replace and is written directly."""
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()
    if path.exists() and not path.is_file() and not path.is_dir():
        yield path
        return
    mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def configs_folder() -> Path | None:
    """The folder of the ready configs (run configs, sweeps, rules files):
    inside the installed package, which holds the checkout's `configs/` as
    `backtest/configs/`, else the checkout's `configs/` beside the package."""
    here = Path(__file__).resolve().parents[1]  # the package
    for candidate in (here / "configs", here.parent / "configs"):
        if (candidate / "rules").is_dir():
            return candidate
    return None

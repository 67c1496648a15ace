"""Hidden working folders (a run's staged results, its spilled sessions) that
a killed process cannot clean up, and their removal by a later run.

A folder made by `staging_dir` holds a lock file that its process keeps
locked (`fcntl.flock`) for as long as it lives; the kernel drops the lock
when the process ends, however it ends (`kill -9` too). A later run removes
such a folder only when it can take that lock, that is when no live process
owns it, and only when it holds nothing but what these folders hold: it
never deletes a folder it cannot prove is a dead run's.

>>> import tempfile
>>> parent = Path(tempfile.mkdtemp())
>>> with staging_dir(parent, ".run-") as stage:
...     remove_stale(parent, ".run-")      # its owner (this process) is alive
...     stage.exists()
[]
True
>>> sorted(parent.iterdir())
[]
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

try:
    import fcntl
except ImportError:  # no flock (Windows): folders are made, never proved stale
    fcntl = None  # type: ignore[assignment]

#: the lock file inside each folder, and what it says (before the owner's pid)
LOCK_NAME = ".owner.lock"
LOCK_TEXT = "baccarat-backtest staging folder; its owner holds this lock; pid "


@contextmanager
def staging_dir(parent: Path | None, prefix: str) -> Iterator[Path]:
    """A new hidden folder in `parent` (None: the system's temporary folder),
    locked by this process, removed with its contents when the block ends."""
    path = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    fd = -1
    try:
        fd = os.open(path / LOCK_NAME, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        if fcntl is not None:  # (waits while a later run looks at the folder, briefly)
            fcntl.flock(fd, fcntl.LOCK_EX)
        # written once locked: a folder whose lock file says this is locked or dead
        os.write(fd, f"{LOCK_TEXT}{os.getpid()}\n".encode())
        yield path
    finally:
        with signals_held():  # a Ctrl-C meanwhile is answered once the folder is gone
            shutil.rmtree(path, ignore_errors=True)
            if fd >= 0:
                os.close(fd)  # the lock goes only once the folder has


#: the signals that stop a command (SIGTERM unwinds as Ctrl-C does: `cli.entry`)
STOPPING = (signal.SIGINT, signal.SIGTERM)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM noted while the block runs, and answered (by the
    handlers from before) once it has ended, so that it ends whole. In the
    main thread only (signals go there); elsewhere, nothing is done."""
    if not _in_main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        noted.append(signum)

    previous: dict[int, Any] = {sig: signal.signal(sig, note) for sig in STOPPING}
    try:
        yield
    finally:
        restore_signals(previous)
    for sig in noted[:1]:
        handler = signal.getsignal(sig)  # (as restored)
        if callable(handler):
            handler(sig, None)


class Commit:
    """For a `with` block that puts finished results in place: from `start()`
    (the first file renamed into place) to the block's end, Ctrl-C and
    SIGTERM are ignored, so the command goes on to report the results, whole
    by then, rather than an interruption after the fact."""

    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}

    def start(self) -> None:
        if _in_main_thread() and not self._previous:
            self._previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOPPING}

    def __enter__(self) -> Commit:
        return self

    def __exit__(self, *exc: object) -> None:
        restore_signals(self._previous)
        self._previous = {}


def restore_signals(handlers: dict[int, Any]) -> None:
    """Put the handlers from before back. One set outside Python (None: polars
    sets its own for Ctrl-C) cannot be: Python's default takes its place,
    never the ignoring one the block set."""
    for sig, handler in handlers.items():
        if handler is None:
            handler = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        signal.signal(sig, handler)


def remove_stale(parent: Path | None, prefix: str, allowed: tuple[str, ...] = ("*",)) -> list[Path]:
    """Remove the folders `prefix*` in `parent` (None: the temporary folder)
    that `staging_dir` made for a process now dead; returns them. A folder is
    left as it is unless its lock file is ours, no process holds its lock,
    and every file in it matches one of the `allowed` patterns."""
    if fcntl is None:
        return []
    folder = Path(tempfile.gettempdir()) if parent is None else parent
    removed = []
    try:
        candidates = sorted(folder.glob(f"{prefix}*"))
    except OSError:
        return []
    for path in candidates:
        if _remove_if_stale(path, allowed):
            removed.append(path)
    return removed


def _remove_if_stale(path: Path, allowed: tuple[str, ...]) -> bool:
    if path.is_symlink() or not path.is_dir():
        return False
    lock = path / LOCK_NAME
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False  # no lock file: not a folder of ours, or one being made
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its owner is alive
        if not os.read(fd, 200).decode(errors="replace").startswith(LOCK_TEXT):
            return False  # not ours, or not yet written
        for item in path.rglob("*"):
            if item.name != LOCK_NAME and (
                item.is_symlink() or not item.is_file() or not any(item.match(p) for p in allowed)
            ):
                return False
        shutil.rmtree(path, ignore_errors=True)
        return not path.exists()
    finally:
        os.close(fd)

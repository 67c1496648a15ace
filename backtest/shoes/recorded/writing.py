"""Writing shoes: the card-level text format, atomically."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from backtest.core.cards import card_token
from backtest.core.errors import UsageError
from backtest.core.hands import Hands
from backtest.shoes.recorded.text import StrPath


def format_card_text(hands: Hands, header: str | None = None) -> str:
    """The card-level text of `hands`: `# header` lines, then one line per shoe
    with the cards as dealt into hands (what `read_shoes` reads back to the same
    hands). Needs card-level hands (MissingDataError otherwise)."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()] if header else []
    order = hands.dealt_cards()  # refuses outcome-level hands
    if len(hands):
        per_hand = hands.cards[:, [0, 3, 1, 4, 2, 5]]
        codes = np.unique(order)
        lut = np.empty(256, dtype=object)
        lut[codes] = [card_token(int(c)) for c in codes]
        starts = np.flatnonzero(np.diff(hands.shoe)) + 1
        for rows in np.split(per_hand, starts):
            seq = rows.reshape(-1)
            lines.append(" ".join(lut[seq[seq != 0]].tolist()))
    return "\n".join(lines) + "\n"


def write_atomic(path: StrPath, text: str) -> None:
    """Write `text` (UTF-8) to `path` through `core.files.atomic_path`: never seen
    half-written, through a symbolic link, and straight to a device or pipe."""
    from backtest.core.files import atomic_path

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{target}: cannot write: it is a directory; give a file name")
    try:
        with atomic_path(target) as tmp:
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                if tmp.is_file():
                    os.fsync(fh.fileno())
    except FileNotFoundError as exc:
        if not target.parent.is_dir():
            raise UsageError(f"{target}: cannot write: no directory {target.parent}") from None
        # the folder is there but makes no new files: a filesystem of the kernel's (/proc, /sys)
        raise UsageError(
            f"{target}: cannot write: {target.parent} takes no new files "
            f"({exc.strerror}; a filesystem of the kernel's, say); give a path "
            "on a disk"
        ) from None
    except OSError as exc:
        raise UsageError(f"{target}: cannot write: {exc.strerror}") from None

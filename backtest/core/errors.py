"""The one error family the library raises for bad input.

The CLI catches `BacktestError` at its edge and prints `str(error)` as a single
line; `exit_code` says which code the process ends with (2 for usage errors,
1 for everything else).
"""

from __future__ import annotations


class BacktestError(Exception):
    """Base of every error a user can cause; the message says what and where."""

    exit_code = 1


class UsageError(BacktestError):
    """The command line itself is wrong (bad option value, missing file)."""

    exit_code = 2


class ConfigError(BacktestError):
    """A YAML config or a key in it is invalid."""


class RulesError(BacktestError):
    """Invalid rules settings, or a bet the rules do not allow."""


class ShoeFormatError(BacktestError):
    """A recorded shoe file cannot be read as what it claims to be."""


class StrategyError(BacktestError):
    """A strategy is unknown, badly parameterised, or misbehaved."""


class OutputError(BacktestError):
    """Results cannot be written where they were asked for (a full disk, say)."""


class MissingDataError(BacktestError):
    """A recorded shoe lacks a column a bet needs to be settled."""


def describe_raised(error: BaseException, nowhere: str | None = None) -> str:
    """An error a strategy's own code raised, in one line: what, and the
    innermost line of the strategy's own code (not the engine's, nor, if it
    can tell, a library's it called: numpy, the standard library), or where
    none is, `nowhere` (by default, a hint at the methods' signatures). Our
    own errors are their message."""
    if isinstance(error, BacktestError):
        return str(error)
    # worked out here, on an error, not when every command starts
    import sysconfig
    import traceback
    from pathlib import Path

    # where code that is not a strategy's own lives: this package's, and (an
    # installed strategy aside) the standard library's and installed packages'
    engine_code = tuple(
        str(Path(__file__).resolve().parents[2] / d) for d in ("backtest", "strategies")
    )
    library_code = tuple(
        sorted(
            {
                *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
                "<",
            }
        )
    )
    frames = [
        f
        for f in traceback.extract_tb(error.__traceback__)
        if not f.filename.startswith(engine_code)
    ]
    own = [f for f in frames if not f.filename.startswith(library_code)] or frames
    if own:
        where = f" ({own[-1].filename}, line {own[-1].lineno}, in {own[-1].name})"
    elif nowhere is not None:
        where = nowhere
    else:
        where = (
            " (when the engine called it: check the methods' signatures, stakes(self, view), "
            "update(self, view, result), start_session(self, seed), __init__(self, params))"
        )
    message = " ".join(str(error).split())  # one line
    return f"raised {type(error).__name__}: {message}{where}"


def shown_count(n: int) -> str:
    """A count for a message: with thousands separators, or by its size when huge."""
    return f"{n:,}" if abs(n) < 10**30 else shown(n)


def shown(value: object, limit: int = 40) -> str:
    """`repr(value)` for an error message, cut to about `limit` characters
    (with the length of a longer text): a message is one line, whatever the
    input held."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        # by its size (a number past 4,300 digits has no repr)
        sign = "a negative" if value < 0 else "a"
        bits = abs(value).bit_length()
        if bits < 14_000:  # within what str() converts
            return f"{sign} number of {len(str(abs(value)))} digits"
        return f"{sign} number of about {int(bits * 0.30103) + 1:,} digits"
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    return f"{text[: limit - 1]}…{size}"

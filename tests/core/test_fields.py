"""The one declaration of how a field is checked: what each kind takes and
what it says when it refuses, as a config, a strategy's parameters and the
rules all say it."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from backtest.core.errors import ConfigError
from backtest.core.fields import MONEY_MAX, Check, Section, did_you_mean, payout


def refusal(check: Check, value: Any) -> str:
    with pytest.raises(ConfigError) as info:
        check.read(value, "k", ConfigError)
    return str(info.value)


@pytest.mark.parametrize(
    ("check", "value", "want"),
    [
        (Check("whole", minimum=1), 2.0, 2),
        (Check("number"), 3, 3.0),
        (Check("money"), 0, 0.0),
        (Check("money"), 0.01, 0.01),
        (Check("flag"), False, False),
        (Check("choice", choices=("a", "b")), "b", "b"),
        (Check("whole", None, optional=True), None, None),
        (payout(None), 0.95, Fraction(19, 20)),
        (payout(None), "3/2", Fraction(3, 2)),
    ],
)
def test_a_value_is_taken_in_its_one_form(check: Check, value: Any, want: Any) -> None:
    got = check.read(value, "k", ConfigError)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(
    ("check", "value", "says"),
    [
        (Check("whole"), 2.5, "k: expected a whole number, got 2.5"),
        (Check("whole"), True, "k: expected a whole number, got True"),
        (Check("number"), "1e6", "k: expected a number, got '1e6' (YAML reads 1e6 as text"),
        (Check("number"), float("nan"), "k: expected a finite number, got nan"),
        (Check("number"), 10**400, "k: expected a finite number, got a number of 401 digits"),
        (Check("whole", minimum=1, maximum=64), 65, "k: must be from 1 to 64, got 65"),
        (Check("whole", minimum=1), 0, "k: must be at least 1, got 0"),
        (Check("number", minimum=1, exclusive=True), 1, "k: must be more than 1, got 1"),
        (Check("whole", maximum=10**9), 10**10, "k: must be at most 1,000,000,000, got"),
        (Check("whole", limit=2**53), 2**53 + 1, "k: expected a whole number of at most 9,007"),
        (Check("money"), -1, "k: an amount cannot be negative, got -1"),
        (Check("money"), 0.001, "k: must be at least 0.01 (or 0): money is counted in whole"),
        (Check("money", minimum=0, exclusive=True), 0, "k: must be at least 0.01: money is"),
        (Check("money", minimum=0, exclusive=True), -5, "k: must be more than 0, got -5"),
        (Check("money", bounded=True), 1e300, f"k: must be below {MONEY_MAX:.3g}: money"),
        (Check("money", bounded=True), 10**400, f"k: must be below {MONEY_MAX:.3g}: money"),
        (Check("flag"), "yes", "k: expected true or false, got 'yes'"),
        (Check("text"), 5, "k: expected text, got 5"),
        (Check("text", nonempty=True), "", "k: must not be empty, got ''"),
        (Check("text", one_line=True), "a\nb", "k: must be one line of printable text"),
        (Check("whole"), None, "k: is required"),
        (Check("whole", required_hint=" (say how many)"), None, "k: is required (say how many)"),
        (
            Check("choice", choices=("reset", "cap")),
            "rest",
            "k: 'rest' is not allowed; expected 'reset' or 'cap'; did you mean 'reset'?",
        ),
        (payout(None), 0, "k: must be more than 0, got 0"),
        (payout(None), 1001, "k: must be at most 1000 (to 1), got 1001"),
        (payout(None), 0.9999, "k: must be a whole number of thousandths of the stake"),
        (payout(None), "lots", "k: expected a number, got 'lots'"),
        (payout(Fraction(8), offered=True), None, "k: is required"),
        (
            Check("whole", minimum=1, maximum=14, about="a table's boxes"),
            15,
            "k: must be from 1 to 14 (a table's boxes), got 15",
        ),
    ],
)
def test_a_refusal_names_the_key_what_is_wrong_and_the_value(
    check: Check, value: Any, says: str
) -> None:
    assert refusal(check, value).startswith(says)


def test_a_long_value_is_cut_to_one_short_line() -> None:
    message = refusal(Check("whole"), "x" * 500)
    assert "\n" not in message and len(message) < 120 and "(500 characters)" in message


def test_a_section_names_the_file_and_key_path_and_refuses_unknown_keys() -> None:
    declared = {"bankroll": Check("money", 1000.0), "max_shoes": Check("whole", 1, minimum=1)}
    sec = Section({"bankroll": 50}, "session", "c.yaml", ConfigError)
    assert sec.read_all(declared) == {"bankroll": 50.0, "max_shoes": 1}
    with pytest.raises(ConfigError, match=r"^c\.yaml: session\.max_shoes: must be at least 1"):
        Section({"max_shoes": 0}, "session", "c.yaml", ConfigError).read_all(declared)
    with pytest.raises(
        ConfigError,
        match=r"^c\.yaml: session\.bankrol: unknown key; did you mean 'bankroll'\? "
        r"\(allowed: bankroll, max_shoes\)",
    ):
        Section({"bankrol": 5}, "session", "c.yaml", ConfigError).read_all(declared)
    with pytest.raises(ConfigError, match=r"^c\.yaml: session: expected a mapping, got 5"):
        Section(5, "session", "c.yaml", ConfigError)


def test_close_matches_are_offered_in_one_form() -> None:
    assert did_you_mean("sesions", ["seed", "sessions", "session"]) == (
        "; did you mean 'sessions' or 'session'?"
    )
    assert did_you_mean("zzz", ["seed"]) == ""

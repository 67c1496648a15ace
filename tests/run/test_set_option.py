"""`--set KEY=VALUE` and `--rules PRESET` on `run` and `sweep`: a key of the
run config set from the command line, checked as the file's own keys are,
and named on the run's first line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_helpers import backtest_here

REPO = Path(__file__).resolve().parents[2]
VERDICT = REPO / "configs" / "verdict.yaml"
SMALL = ["--sessions", "40", "--workers", "1", "-q"]


def edited_verdict(tmp_path: Path, edit: dict[str, object]) -> Path:
    """configs/verdict.yaml with `edit`'s settings written into the file."""
    data = yaml.safe_load(VERDICT.read_text())
    for key, value in edit.items():
        if key == "seats[1].params.base":
            data["seats"][1]["params"]["base"] = value
        elif key == "session.bankroll":
            data["session"]["bankroll"] = value
        else:
            data[key] = value
    path = tmp_path / "verdict.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def summary(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> list[dict[str, object]]:
    code, out, err = backtest_here(monkeypatch, capsys, "run", *args, *SMALL, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_set_runs_as_the_same_line_in_the_file_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = edited_verdict(tmp_path, {"seats[1].params.base": 20, "session.bankroll": 500})
    from_file = summary(monkeypatch, capsys, str(edited))
    given = summary(
        monkeypatch,
        capsys,
        "verdict",
        "--set",
        "seats[1].params.base=20",
        "--set",
        "session.bankroll=500",
    )
    assert given == from_file
    assert given != summary(monkeypatch, capsys, "verdict")  # the settings changed the numbers


def test_rules_replaces_the_config_s_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from_file = summary(monkeypatch, capsys, str(edited_verdict(tmp_path, {"rules": "ez"})))
    assert summary(monkeypatch, capsys, "verdict", "--rules", "ez") == from_file
    assert summary(monkeypatch, capsys, "verdict", "--set", "rules=ez") == from_file
    # a rules file named from here, not from the config's folder
    rules = tmp_path / "mine.yaml"
    rules.write_text("base: ez\n")
    monkeypatch.chdir(tmp_path)
    assert summary(monkeypatch, capsys, str(VERDICT), "--rules", "mine.yaml") == from_file


def test_the_first_line_names_what_was_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = backtest_here(
        monkeypatch,
        capsys,
        "run",
        "verdict",
        *SMALL,
        "--rules",
        "no-commission",
        "--set",
        "seats[1].params.base=20",
        "--set",
        "session.bankroll=500",
    )
    assert code == 0, err
    assert out.splitlines()[0].endswith(
        "rules no-commission, with seats[1].params.base=20, session.bankroll=500"
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--set", "session.bankrol=500"],
            "error: --set session.bankrol: unknown key; did you mean 'bankroll'?",
        ),
        (
            ["--set", "sesion.bankroll=500"],
            "error: --set sesion: unknown key; did you mean 'session' or 'sessions'?",
        ),
        (
            ["--set", "seats[1].params.bse=20"],
            "error: --set seats[1].params: unknown parameter 'bse'; did you mean 'base'",
        ),
        (
            ["--set", "seats[1].params.base=twenty"],
            "error: --set seats[1].params.base: expected a number, got 'twenty'",
        ),
        (
            ["--set", "seats[3].params.base=20"],
            "error: --set seats[3].params.base: seats[3] does not exist (the list has 3 item(s))",
        ),
        (["--set", "session.bankroll"], "error: --set takes KEY=VALUE"),
        (["--set", "seats[x]=1"], "error: --set seats[x]=1: 'seats[x]' is not a key path"),
        (["--set", "seed=[1"], "error: --set seed=[1: line 1, column 3: not valid YAML"),
        (
            ["--rules", "no-comission"],
            "error: --rules: unknown rules preset 'no-comission'; did you mean 'no-commission'",
        ),
    ],
)
def test_a_bad_setting_is_a_usage_error_naming_it(
    args: list[str],
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = backtest_here(monkeypatch, capsys, "run", "verdict", *SMALL, *args)
    assert code == 2 and out == ""
    assert err.startswith(said), err
    assert len(err.strip().splitlines()) == 1


def test_a_file_s_own_error_keeps_its_line_beside_a_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(VERDICT.read_text().replace("win_goal: 200", "win_gaol: 200"))
    code, _, err = backtest_here(
        monkeypatch, capsys, "run", str(bad), *SMALL, "--set", "seats[1].params.base=20"
    )
    assert code == 1
    assert err.startswith(f"error: {bad}: line 8: session.win_gaol: unknown key"), err

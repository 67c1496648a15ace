"""Big card-level shoe files are read as a stream: a command that needs the
first shoes (a run of N sessions, `roads --shoe K`, `odds --shoe-number K`)
reads no further than them, and a whole file gives the same hands as the
same text read at once.

A file past `HEAD_BYTES` (a megabyte) is streamed; to show that a command
stopped early, the file ends in a line that is no shoe at all, which a
command reading that far refuses.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import backtest_here

from backtest.core.errors import ShoeFormatError
from backtest.shoes.recorded import cache, format_card_text, read_shoes
from backtest.shoes.recorded.text import HEAD_BYTES
from backtest.shoes.shoe import ShoeSpec, generate_hands

BAD_TAIL = "KS 9H ZZ 7D\n"


@pytest.fixture(scope="module")
def big_text() -> str:
    """Card-level text of a little over HEAD_BYTES: 1,000 generated 1-deck shoes."""
    text = format_card_text(
        generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), 1000, 5, 0),
        header="decks=1, for the tests",
    )
    reps = HEAD_BYTES // len(text.encode()) + 1
    return "".join([text] + [text.split("\n", 1)[1]] * (reps - 1))


def columns(hands: object) -> dict[str, list[object]]:
    names = ("shoe", "hand", "cards", "winner", "player_total", "banker_total", "natural")
    return {n: np.asarray(getattr(hands, n)).tolist() for n in names}


def test_a_big_file_gives_the_hands_of_its_text_read_at_once(
    big_text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(big_text.encode()) > HEAD_BYTES
    path = tmp_path / "big.txt"
    # CR LF line ends and a byte-order mark read as the text's own
    path.write_bytes(b"\xef\xbb\xbf" + big_text.replace("\n", "\r\n").encode())
    streamed = read_shoes(path, decks=1)
    monkeypatch.setattr(cache, "BIG_BYTES", 1 << 40)
    assert columns(streamed) == columns(read_shoes(path, decks=1))
    monkeypatch.setattr(cache, "BIG_BYTES", HEAD_BYTES)
    first = read_shoes(path, decks=1, shoes=3)
    assert first.n_shoes == 3
    assert columns(first) == columns(streamed.select(streamed.shoe < 3))


def test_only_the_shoes_asked_for_are_read(big_text: str, tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text(big_text + BAD_TAIL, encoding="utf-8")
    lines = big_text.count("\n")
    with pytest.raises(ShoeFormatError, match=rf"big.txt, line {lines + 1}, column 7 .*'ZZ'"):
        read_shoes(path, decks=1)
    assert read_shoes(path, decks=1, shoes=2).n_shoes == 2


def test_a_line_not_utf8_deep_in_a_big_file_is_named(big_text: str, tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    data = big_text.encode()
    path.write_bytes(data + b"KS \xff 9H\n")
    with pytest.raises(
        ShoeFormatError,
        match=rf"line {big_text.count(chr(10)) + 1}: not UTF-8 "
        rf"text \(invalid start byte at byte {len(data) + 3}\)",
    ):
        read_shoes(path, decks=1)


def test_commands_that_need_the_first_shoes_stop_there(
    big_text: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # the roads' header on one line, whatever the path
    good = tmp_path / "good.txt"
    good.write_text(big_text, encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_text(big_text + BAD_TAIL, encoding="utf-8")
    config = tmp_path / "flat.yaml"
    config.write_text("seats: [{strategy: flat}, {strategy: martingale}]\n", encoding="utf-8")
    runs = {}
    for path in (good, bad):
        code, out, err = backtest_here(
            monkeypatch,
            capsys,
            "run",
            str(config),
            "--shoes",
            str(path),
            "--sessions",
            "40",
            "-f",
            "json",
            "--workers",
            "1",
        )
        assert code == 0, err
        runs[path.name] = json.loads(out)
    assert runs["good.txt"] == runs["bad.txt"]  # the same sessions, on the same first shoes
    assert runs["bad.txt"][0]["sessions"] == 40
    code, _, err = backtest_here(monkeypatch, capsys, "run", str(config), "--shoes", str(bad))
    assert code == 1 and "bad.txt, line" in err and "'ZZ'" in err  # the whole file: refused
    code, out, err = backtest_here(
        monkeypatch, capsys, "roads", str(bad), "--shoe", "2", "--no-color"
    )
    assert code == 0, err
    assert out.startswith(f"{bad}, shoe 2: ")  # how many shoes it holds is not read
    code, out, err = backtest_here(
        monkeypatch, capsys, "odds", "--shoe", str(bad), "--shoe-number", "3", "--after-hands", "2"
    )
    assert code == 0, err

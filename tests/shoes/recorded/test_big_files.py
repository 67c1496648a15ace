"""Big shoe files of every format read a shoe at a time (`recorded.cache`):
all of a file once into Parquet in the cache, any of whose shoes read again
are those of the file read whole; its first shoes read no further than
they need; a run and `deal` over it give what the file read whole gives,
and an error is the one a whole read gives.

Files here are small: `BIG_BYTES` and `BIG_PARQUET_BYTES` are set to 0 so
that they are read as a big file is (to 1 << 40: read whole)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from cli_helpers import backtest_here
from hand_columns import columns
from run_config import recorded_run, runs_alike

from backtest.core.cards import card_token
from backtest.core.errors import ShoeFormatError
from backtest.present import render
from backtest.run import engine, recorded_plan
from backtest.shoes.recorded import cache, read_shoes
from backtest.shoes.shoe import ShoeSpec, generate_hands

SHOES = 30
WHOLE, BIG = 1 << 40, 0


@pytest.fixture(scope="module")
def hands() -> Any:
    return generate_hands(ShoeSpec(decks=1, cut_card=0, burn=False), SHOES, 7, 0)


def awkward(lines: list[str]) -> bytes:
    """Lines with what a reader must get right: a byte-order mark, CR LF and
    lone CR line ends, and a blank line."""
    lines = [*lines[:9], "", *lines[9:]]
    body = "\r\n".join(lines[:40]) + "\r\n" + "\r".join(lines[40:70]) + "\n" + "\n".join(lines[70:])
    return ("\ufeff" + body + "\n").encode()


def shoe_rows(hands: Any) -> list[Any]:
    return [hands.select(hands.shoe == s) for s in range(SHOES)]


def card_text(hands: Any) -> list[str]:
    lines = ["# decks=1, for the tests"]
    for shoe in shoe_rows(hands):
        lines.append(" ".join(card_token(int(c)) for c in shoe.dealt_cards() if c))
    lines.insert(12, "A 9 5   # too few cards for a hand")
    return lines


def card_csv(hands: Any) -> list[str]:
    rows = ["# recorded at the table", "shoe,card"]
    for k, shoe in enumerate(shoe_rows(hands)):
        rows += [f"S{k},{card_token(int(c))}" for c in shoe.dealt_cards() if c]
        if k == 5:
            rows += ["short,AS", "short,9H", "short,2C"]  # too few cards for a hand
    return rows


def outcome_csv(hands: Any, cards: bool = True) -> list[str]:
    frame = pl.read_csv(render.hands(hands, "csv").encode(), infer_schema=False)
    if not cards:
        frame = frame.drop("player_cards", "banker_cards")
    return ["# a comment", *frame.write_csv().splitlines()]


def roads(hands: Any) -> list[str]:
    lines = ["".join("PBT"[w] for w in shoe.winner) for shoe in shoe_rows(hands)]
    lines[1] = ",".join(lines[1])
    lines[2] = " ".join({"B": "Banker", "P": "player", "T": "TIE"}[c] for c in lines[2])
    lines[3] = lines[3].replace("B", "庄").replace("P", "闲").replace("T", "和") + "  # 和"
    return lines


def rounds(hands: Any, cards: bool = True) -> list[str]:
    """A JSON line a hand, as a live table publishes each round's result,
    some recorded twice (next to each other, and far apart), heartbeats, time
    stamps."""
    lines = []
    for i in range(len(hands)):
        r = hands.record(i)
        rec: dict[str, Any] = {
            "shoeId": str(r.shoe + 1),
            "gameId": f"{r.shoe + 1}-{r.hand}",
            "winner": r.winner.name,
            "player": r.player_total,
            "banker": r.banker_total,
        }
        if cards:
            rec["playerCards"] = [card_token(c) for c in r.player_cards]
            rec["bankerCards"] = [card_token(c) for c in r.banker_cards]
        else:
            rec |= {"playerPair": r.player_pair, "bankerPair": r.banker_pair}
        lines.append(json.dumps(rec))
    lines[3:3] = [lines[2]]
    lines[100:100] = [lines[20], '{"type": "heartbeat"}']
    return ['{"type": "heartbeat"}'] + [f"[08:46:{i % 60:02d}] {x}" for i, x in enumerate(lines)]


def snapshot(entries: list[dict[str, Any]], shoe: str | None = None) -> str:
    args: dict[str, Any] = {"history_v2": entries}
    if shoe is not None:
        args["shoeId"] = shoe
    return json.dumps({"type": "baccarat.encodedShoeState", "args": args})


def snapshots(hands: Any) -> list[str]:
    """The shoes as a live table's snapshots, a shoe starting in each of
    four ways in turn: a new shoe id; a shorter snapshot; an empty snapshot,
    then growing ones; one snapshot of the whole shoe under a new id, after
    an empty snapshot of yet another id (no shoe). Snapshots repeated,
    heartbeats, time stamps."""
    lines = ['{"type": "connection.heartbeat"}']
    for k, shoe in enumerate(shoe_rows(hands)):
        entries = [
            {
                "winner": r.winner.name.title(),
                "playerScore": r.player_total,
                "bankerScore": r.banker_total,
                "natural": r.natural,
                "playerPair": r.player_pair,
                "bankerPair": r.banker_pair,
            }
            for r in map(shoe.record, range(len(shoe)))
        ]
        if k % 4 == 3:
            lines += [snapshot([], f"none-{k}"), snapshot(entries, f"shoe-{k}")]
            continue
        for size in range(0 if k % 4 == 2 else 1, len(entries) + 1):
            lines.append(snapshot(entries[:size], f"shoe-{k}" if k % 4 == 0 else None))
            if size in (2, 5):
                lines.append(lines[-1])  # (a snapshot published twice)
    return [f"[08:{i // 60 % 60:02d}:{i % 60:02d}] {x}" for i, x in enumerate(lines)]


#: the big files' formats: a name, and their lines of the shoes
FILES: dict[str, Callable[[Any], list[str]]] = {
    "cards.txt": card_text,
    "cards.csv": card_csv,
    "outcomes.csv": outcome_csv,
    "bare-outcomes.csv": lambda hands: outcome_csv(hands, cards=False),
    "roads.txt": roads,
    "rounds.jsonl": rounds,
    "bare-rounds.jsonl": lambda hands: rounds(hands, cards=False),
    "snapshots.jsonl": snapshots,
    "outcomes.parquet": outcome_csv,
    "cards.parquet": card_csv,
}


def write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    if name.endswith(".parquet"):
        text = "\n".join(x for x in lines if not x.startswith("#")) + "\n"
        pl.read_csv(text.encode(), infer_schema=False).write_parquet(path)
    else:
        path.write_bytes(awkward(lines))
    return path


def big(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """Files past `size` bytes read as big files are."""
    monkeypatch.setattr(cache, "BIG_BYTES", size)
    monkeypatch.setattr(cache, "BIG_PARQUET_BYTES", size)
    recorded_plan.READS.clear()


def read(
    path: Path, monkeypatch: pytest.MonkeyPatch, size: int, **kw: Any
) -> tuple[Any, list[str]]:
    """The file read (whole or big), and the warnings the read gave."""
    big(monkeypatch, size)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hands = read_shoes(path, decks=1, **kw)
    return hands, [str(w.message) for w in caught]


def converted(
    path: Path, monkeypatch: pytest.MonkeyPatch, burn: bool = False
) -> tuple[Any, list[str]]:
    """The file as Parquet in the cache, and the warnings its conversion gave."""
    big(monkeypatch, BIG)
    kind = cache.big_kind(path)
    assert kind is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shoes = cache.columnar(path, 1, burn, kind)
    return shoes, [str(w.message) for w in caught]


@pytest.mark.parametrize("burn", [False, True])
@pytest.mark.parametrize("name", FILES)
def test_shoes_read_again_of_the_cache_are_those_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hands: Any, name: str, burn: bool
) -> None:
    if burn and not name.startswith("cards"):
        pytest.skip("the burn rule is for card-level shoes")
    path = write(tmp_path, name, FILES[name](hands))
    whole, whole_warned = read(path, monkeypatch, WHOLE, burn=burn)
    shoes, warned = converted(path, monkeypatch, burn)
    assert warned == whole_warned
    assert len(shoes) == whole.n_shoes == SHOES
    assert shoes.lengths.tolist() == np.bincount(whole.shoe).tolist()
    if not burn and "cards" in whole.known:
        assert whole.winner.tolist() == hands.winner.tolist()
    for some in ([0], [2, 3], [3, 4, 5, 6], [0, 2, 11, 12, 13, 25, SHOES - 1], range(SHOES)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (given by the conversion only)
            again = shoes.hands(np.array(some))
        assert columns(again) == columns(whole.select(np.isin(whole.shoe, some))), some
        if burn:
            assert again.burned == tuple(whole.burned[k] for k in some)
    blocks = list(shoes.blocks(40))
    assert len(blocks) > 3
    joined = {k: sum((columns(b)[k] for b in blocks), []) for k in columns(whole)}
    assert columns(whole) == joined | {"known": sorted(whole.known)}
    first, _ = read(path, monkeypatch, BIG, burn=burn, shoes=3)
    assert columns(first) == columns(whole.select(whole.shoe < 3))


@pytest.mark.parametrize("name", FILES)
def test_a_run_of_the_cache_gives_the_numbers_of_the_file_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hands: Any, name: str
) -> None:
    path = write(tmp_path, name, FILES[name](hands))
    runs_alike(monkeypatch, path, lambda p: recorded_run(p, None, max_shoes=1))


@pytest.mark.parametrize(
    ("sessions", "session"),
    [
        (None, {"max_hands": 40}),  # every shoe, sessions of 40 hands
        (25, {"max_shoes": 3}),  # the shoes played again (loop)
        (9, {"max_hands": 150}),  # sessions of hands, round the file again
    ],
)
def test_runs_of_sessions_of_the_cache_give_the_same_numbers(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hands: Any,
    sessions: int | None,
    session: dict[str, int],
) -> None:
    path = write(tmp_path, "cards.txt", card_text(hands))
    whole, cached = runs_alike(
        monkeypatch, path, lambda p: recorded_run(p, sessions, follow=True, **session)
    )
    assert isinstance(whole.sessions, pl.DataFrame) and whole.sessions.equals(cached.sessions)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [(name, "csv") for name in FILES] + [("cards.txt", "table"), ("rounds.jsonl", "json")],
)
def test_deal_prints_the_cache_as_the_file_read_whole(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    hands: Any,
    name: str,
    fmt: str,
) -> None:
    path = write(tmp_path, name, FILES[name](hands))
    monkeypatch.setattr(render, "BLOCK_HANDS", 40)  # (blocks of a few shoes)
    printed = []
    for size in (WHOLE, BIG):
        big(monkeypatch, size)
        code, out, err = backtest_here(
            monkeypatch, capsys, "deal", "--decks", "1", str(path), "-f", fmt
        )
        assert code == 0, err
        printed.append(out)
    assert printed[0] == printed[1]
    code, _, err = backtest_here(monkeypatch, capsys, "deal", str(path), "--burn")
    assert (code == 2) != name.startswith("cards"), err
    if not name.startswith(("cards", "outcomes", "bare-outcomes")):
        code, _, err = backtest_here(
            monkeypatch, capsys, "deal", str(path), "--columns", "winner=R"
        )
        assert code == 2 and "a column mapping is for CSV and Parquet files" in err


#: a last line that no reader of the format reads
BAD_TAILS = {
    "cards.txt": "KS 9H ZZ 7D",
    "outcomes.csv": "99,1,KS 2S,6C 2C,2,8,dragon,,,,,",
    "roads.txt": "BPX",
    "rounds.jsonl": "not json at all",
}


@pytest.mark.parametrize("name", BAD_TAILS)
def test_the_first_shoes_are_read_no_further(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hands: Any, name: str
) -> None:
    good = write(tmp_path, name, FILES[name](hands))
    (tmp_path / "bad").mkdir()
    bad = write(tmp_path / "bad", name, [*FILES[name](hands), BAD_TAILS[name]])
    big(monkeypatch, BIG)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert columns(read_shoes(bad, decks=1, shoes=3)) == columns(
            read_shoes(good, decks=1, shoes=3)
        )
        with pytest.raises(ShoeFormatError):
            read_shoes(bad, decks=1)
        for session in ({"max_shoes": 2}, {"max_hands": 30}):
            runs = [
                engine.run(recorded_run(path, None, **session), sessions=3, workers=1)
                for path in (good, bad)
            ]
            assert runs[0].n_sessions == 3 and runs[0].summary.equals(runs[1].summary)
        read_, n = recorded_plan.read_recorded(recorded_run(bad, None, max_hands=30), (3, 30))
        assert not read_.whole and 3 <= n <= len(read_.lengths) < SHOES
        with pytest.raises(ShoeFormatError):  # the whole file: refused
            engine.run(recorded_run(bad, None, max_shoes=1), workers=1)


def changed(lines: list[str], k: int, change: Callable[[dict[str, Any]], Any]) -> list[str]:
    """`lines` with the JSON of line `k` (after its time stamp) changed."""
    stamp, _, text = lines[k].rpartition("] ")
    value = json.loads(text)
    change(value)
    return [
        *lines[:k],
        f"{stamp}] {json.dumps(value)}" if stamp else json.dumps(value),
        *lines[k + 1 :],
    ]


def field(lines: list[str], k: int, column: str, value: str) -> list[str]:
    """CSV `lines` (a comment, the header, rows) with a field of line `k` set."""
    cells = lines[k].split(",")
    cells[lines[1].split(",").index(column)] = value
    return [*lines[:k], ",".join(cells), *lines[k + 1 :]]


def again(lines: list[str]) -> list[str]:
    """Rounds with the first round recorded again, with another winner."""
    other = changed(
        lines, 1, lambda v: v.update(winner="TIE" if v["winner"] != "TIE" else "PLAYER")
    )
    return [*lines, other[1]]


ENTRY = {"winner": "Banker", "playerScore": 3, "bankerScore": 7}
TIE = {"winner": "Tie", "playerScore": 1, "bankerScore": 1}

#: (file, how its lines are changed, what the error says)
ERRORS: list[tuple[str, Callable[[list[str]], list[str]], str]] = [
    (
        "rounds.jsonl",
        lambda x: changed(x, 150, lambda v: v.update(banker=12)),
        "line 152.banker: impossible total 12",
    ),
    ("rounds.jsonl", again, "gameId '1-1' appears again (line 2) with a different result"),
    ("rounds.jsonl", lambda x: [*x, snapshot([])], "the file mixes shoe-state snapshots"),
    ("rounds.jsonl", lambda x: [*x[:30], x[30][:-10], *x[31:]], "line 32, column"),
    (
        "rounds.jsonl",
        lambda x: changed(x, 40, lambda v: v.pop("shoeId")),
        "line 42: the record has no shoeId",
    ),
    (
        "snapshots.jsonl",
        lambda x: changed(x, 160, lambda v: v["args"]["history_v2"][0].update(bankerScore=12)),
        "args.history_v2[0].bankerScore: impossible total 12",
    ),
    (
        "snapshots.jsonl",
        lambda x: changed(x, 160, lambda v: v["args"]["history_v2"].insert(0, TIE)),
        "this snapshot contradicts the one before it",
    ),
    (
        "snapshots.jsonl",
        lambda x: [*x, json.dumps({"winner": "banker", "gameId": "g"})],
        "the file mixes shoe-state snapshots",
    ),
    (
        "snapshots.jsonl",
        lambda x: [*x, snapshot([ENTRY] * 30, "long")],
        f"shoe {SHOES + 1}: 30 hands in one shoe",
    ),
    ("outcomes.csv", lambda x: [*x, x[5]], "appears again after other shoes"),
    (
        "outcomes.csv",
        lambda x: field(x, 50, "player_cards", "KS 2S 3S"),
        "but the cards give",
    ),
    (
        "bare-outcomes.csv",
        lambda x: [*x, *[f"99,{h},8,9,banker,true,false,false,2,2" for h in range(1, 15)]],
        f"shoe {SHOES + 1}: 14 hands in one shoe",
    ),
    (
        "roads.txt",
        lambda x: [*x[:3], "B" * 14, *x[3:]],
        "line 4: 14 hands in one shoe, more than 1 deck can deal",
    ),
    (
        "outcomes.parquet",
        lambda x: field(x, 101, "winner", "dragon"),
        "outcomes.parquet, row 100, field winner",
    ),
]


@pytest.mark.parametrize(
    ("name", "change", "said"), ERRORS, ids=[f"{e[0]}-{e[2][:30]}" for e in ERRORS]
)
def test_an_error_of_the_cache_is_that_of_the_file_read_whole(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hands: Any,
    name: str,
    change: Callable[[list[str]], list[str]],
    said: str,
) -> None:
    path = write(tmp_path, name, change(FILES[name](hands)))
    errors = []
    for size in (WHOLE, BIG):
        big(monkeypatch, size)
        with pytest.raises(ShoeFormatError) as caught, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if size:
                read_shoes(path, decks=1)
            else:
                cache.columnar(path, 1, False, str(cache.big_kind(path)))
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert said in errors[0]
    assert not any(cache._cache_base().iterdir())  # (nothing half-made left)


def test_a_big_json_document_is_refused_with_what_to_write_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = tmp_path / "shoe.json"
    entries = [ENTRY] * 5
    document.write_text(json.dumps({"args": {"history_v2": entries}}, indent=2), encoding="utf-8")
    monkeypatch.setattr(cache, "JSON_DOCUMENT_BYTES", 100)
    big(monkeypatch, BIG)
    with pytest.raises(ShoeFormatError) as exc:
        read_shoes(document)
    said = str(exc.value)
    assert said.startswith(f"{document}: 0 MB of JSON that is not JSON Lines")
    assert "read whole only up to 0 MB" in said and "write it as JSON Lines" in said
    big(monkeypatch, WHOLE)  # (small: read whole)
    assert len(read_shoes(document)) == 5


def test_a_column_of_results_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "column.txt"
    path.write_text("B\nP\nP\n\nT\nB\n", encoding="utf-8")
    big(monkeypatch, BIG)
    assert cache.big_kind(path) is None
    hands = read_shoes(path)
    assert hands.shoe.tolist() == [0, 0, 0, 1, 1] and hands.hand.tolist() == [1, 2, 3, 1, 2]

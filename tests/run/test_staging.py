"""What a run killed outright (`kill -9`) leaves behind, and its removal.

A run works in hidden folders (its staged results `.run-*` and spilled
sessions `.sessions-*` in --out, or its spilled sessions in the temporary
folder). A killed run cannot remove them; the next run does, but only those
it can prove are a dead run's: a live run's folders, and folders it did not
make, are left as they are.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from cli_helpers import backtest_here

from backtest.present import outputs
from backtest.run import staging

REPO = Path(__file__).resolve().parents[2]
SMALL = "seed: 1\nsessions: 5\nseats: [{strategy: flat}]\n"


def killed_owner(parent: Path, prefix: str, files: dict[str, bytes]) -> Path:
    """A staging folder whose process died holding it (SIGKILL, no clean-up)."""
    code = (
        "import os, sys\nfrom pathlib import Path\nfrom backtest.run import staging\n"
        f"with staging.staging_dir(Path({str(parent)!r}), {prefix!r}) as p:\n"
        f"    for name, data in {files!r}.items():\n"
        "        (p / name).write_bytes(data)\n"
        "    print(p, flush=True)\n"
        "    os.kill(os.getpid(), 9)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    left = Path(proc.stdout.strip())
    assert left.is_dir() and left.name.startswith(prefix)
    return left


def test_a_dead_runs_folders_are_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    staged = killed_owner(out, ".run-", {"summary.parquet": b"half", ".run.json.x1.tmp": b""})
    spilled = killed_owner(out, ".sessions-", {"sessions-0000-000000000000.arrow": b"x"})
    # not provably a dead run's: no lock file, a file no run writes, a live owner
    foreign = out / ".run-mine"
    foreign.mkdir()
    (foreign / "summary.parquet").write_bytes(b"")
    odd = killed_owner(out, ".run-", {"notes.txt": b"mine"})
    with staging.staging_dir(out, ".run-") as live:
        removed = outputs.remove_stale_run_folders(out)
        assert live.is_dir()
    assert sorted(removed) == sorted([staged, spilled])
    assert not staged.exists() and not spilled.exists()
    assert foreign.is_dir() and odd.is_dir()


def test_the_next_run_clears_a_killed_runs_leftovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "small.yaml"
    config.write_text(SMALL, encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = backtest_here(monkeypatch, capsys, "run", str(config), "--out", str(out))
    assert code == 0, err
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    temp = tmp_path / "tmp"  # the temporary folder of both runs
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    staged = killed_owner(out, ".run-", {"summary.parquet": b"half"})
    spilled = killed_owner(temp, ".sessions-", {"sessions-0000-000000000000.arrow": b"x"})
    assert {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()} == before
    code, _, err = backtest_here(monkeypatch, capsys, "run", str(config), "--out", str(out))
    assert code == 0, err
    assert f"removed {staged}, left by a run that was killed" in err
    assert f"removed {spilled}, left by a run that was killed" in err
    assert sorted(f.name for f in out.iterdir()) == sorted(before)
    assert list(temp.iterdir()) == []


@pytest.mark.slow
def test_a_run_killed_while_running_leaves_what_the_next_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real thing: `backtest run --out` killed with SIGKILL as it plays."""
    config = tmp_path / "long.yaml"
    config.write_text(SMALL.replace("sessions: 5", "sessions: 1000000000"), encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "backtest", "run", str(config), "--out", str(out), "--workers", "1"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob(".sessions-*/sessions-*.arrow")):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    left = list(out.glob(".sessions-*"))
    assert len(left) == 1
    short = tmp_path / "short.yaml"
    short.write_text(SMALL, encoding="utf-8")
    code, _, err = backtest_here(monkeypatch, capsys, "run", str(short), "--out", str(out))
    assert code == 0, err
    assert f"removed {left[0]}" in err
    assert sorted(f.name for f in out.iterdir()) == [
        "paths.parquet",
        "run.json",
        "sessions.parquet",
        "summary.parquet",
    ]

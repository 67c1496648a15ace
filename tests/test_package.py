"""The package as `pip install .` makes it: a wheel that holds every module,
the ready configs and the licence, installed in a new environment, runs the
ready verdict config by name from another directory."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _setuptools_builds_it() -> bool:
    """The build backend the project asks for, here (the test reaches no index)."""
    try:
        from importlib.metadata import version

        return int(version("setuptools").split(".")[0]) >= 77
    except Exception:
        return False


def _see_running_packages(python: Path) -> None:
    """Put this interpreter's site-packages on the path of the environment of
    `python` (a `.pth` file of their folders, after its own site-packages)."""
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and site.getusersitepackages() in sys.path:
        folders.append(site.getusersitepackages())
    (Path(own) / "running-environment.pth").write_text("\n".join(folders) + "\n")


@pytest.mark.slow
@pytest.mark.skipif(not _setuptools_builds_it(), reason="needs setuptools>=77 (the test extra)")
def test_the_wheel_installs_and_runs_a_ready_config_from_anywhere(tmp_path: Path) -> None:
    # a clean checkout: the files git knows, nothing built or cached
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    source = tmp_path / "source"
    for name in files:
        if name.startswith(("tests/", "benchmarks/", "data/")) or not (REPO / name).is_file():
            continue
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes((REPO / name).read_bytes())
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next((tmp_path / "dist").glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    # every module of the checkout, every ready config, and the licence
    for package in ("backtest", "strategies"):
        for module in (REPO / package).rglob("*.py"):
            assert module.relative_to(REPO).as_posix() in names, module
    for config in (REPO / "configs").rglob("*.yaml"):
        assert "backtest/" + config.relative_to(REPO).as_posix() in names, config
    assert any(n.endswith("licenses/LICENSE") for n in names)

    # a new environment that sees the packages of the one running the tests
    # (numpy, numba, typer, ...), a virtual environment or not: no index needed.
    # Its own site-packages comes first, so the wheel's copy is the one imported.
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    _see_running_packages(python)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"COLUMNS": "80"}
    run = subprocess.run(
        [str(env_dir / "bin" / "backtest"), "run", "verdict", "--sessions", "50", "--workers", "1"],
        cwd=elsewhere,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("verdict: ") and "Flat Banker: won money in" in run.stdout
    where = subprocess.run(
        [str(python), "-c", "import backtest; print(backtest.__file__)"],
        cwd=elsewhere,
        env=environ,
        capture_output=True,
        text=True,
    )
    assert str(env_dir) in where.stdout  # the installed copy ran, not the checkout
    listed = subprocess.run(
        [str(env_dir / "bin" / "backtest"), "configs"],
        cwd=elsewhere,
        env=environ,
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0 and "progressions" in listed.stdout


def test_ci_runs_the_readme_s_commands_in_a_new_virtual_environment() -> None:
    """`.ci/run` makes a virtual environment, then runs each step of the
    README's two commands in it, in their order (with its checks between)."""
    block = (REPO / "README.md").read_text(encoding="utf-8").split("```sh\n", 1)[1]
    readme = [step for line in block.split("```", 1)[0].splitlines() for step in line.split(" && ")]
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [step for line in script if not line.startswith("#") for step in line.split(" && ")]
    at = [steps.index(step) for step in readme]
    assert at == sorted(at)
    assert steps.index("python -m venv .venv") < steps.index("source .venv/bin/activate") < at[0]

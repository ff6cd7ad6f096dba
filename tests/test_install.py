"""mca installed from its wheel into a fresh virtual environment works from any directory: the
self-test, the lab kit (init, selftest --lab, grade) and the ledger's lab report read the lab
from the package, never from the directory they run in (which here holds a decoy lab whose
script would leave a marker if anything ran it)."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST

pytestmark = pytest.mark.e2e
SOURCES = ("mca", "skills", "fixtures", "pyproject.toml", "README.md")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".mca", "recorded")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a fresh venv with only the built wheel (and its dependencies) installed."""
    root = tmp_path_factory.mktemp("install")
    src = root / "src"
    for name in SOURCES:  # a copy: building writes build/ and *.egg-info beside the sources
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, symlinks=True, ignore=SKIP)
        else:
            shutil.copy2(REPO / name, src / name)
    wheels = root / "wheels"
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(src)], check=True)
    (wheel,) = wheels.glob("mca-*.whl")
    env_dir = root / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "-q", "install", str(wheel)],
        check=True,
        timeout=600,
    )
    return bin_dir


def decoy(where: Path) -> Path:
    """skills/ and fixtures/ a hand-in folder could ship; running its script leaves a marker."""
    marker = where / "decoy-ran"
    script = where / "skills" / "release-notes" / "scripts" / "bump-version.mjs"
    shutil.copytree(REPO / "skills", where / "skills")
    shutil.copytree(REPO / "fixtures" / "workspace", where / "fixtures" / "workspace")
    shutil.copytree(REPO / "fixtures" / "broken-packs", where / "fixtures" / "broken-packs")
    script.write_text(f"require('fs').writeFileSync({str(marker)!r}, 'ran');\n")
    (where / "skills" / "calc-conventions" / "SKILL.md").write_text("---\nname: x\n---\n")
    return marker


def test_the_wheel_works_from_an_unrelated_directory(installed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    marker = decoy(elsewhere)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    mca = str(installed / "mca")

    def run(*args: str, cwd: Path = elsewhere, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [mca, *args], cwd=cwd, env={**env, **extra}, capture_output=True, text=True, timeout=600
        )

    selftest = run("selftest")
    assert selftest.returncode == 0 and selftest.stdout.rstrip().endswith("14/14 passed"), (
        selftest.stdout + selftest.stderr
    )
    assert run(MOCK="1", SELFTEST="1").stdout.rstrip().endswith("14/14 passed")
    assert "976+0=976" in run("ledger", "compare", "--lab").stdout
    assert run("lab", "init", "kit").returncode == 0
    kit = elsewhere / "kit"
    student = run("selftest", "--lab", "exercises.py", cwd=kit)
    assert student.returncode == 1 and student.stdout.rstrip().endswith("7/14 passed")
    for name, text in {"ada": ALL_HONEST, "bo": ""}.items():
        (elsewhere / "class" / name).mkdir(parents=True)
        (elsewhere / "class" / name / "exercises.py").write_text(
            (kit / "exercises.py").read_text() + text
        )
    graded = run("lab", "grade", "class", "--out", "grades.csv")
    assert graded.returncode == 0, graded.stderr
    with (elsewhere / "grades.csv").open() as f:
        rows = {r["student"]: (r["status"], r["total"]) for r in csv.DictReader(f)}
    assert rows == {"ada": ("ok", "10"), "bo": ("ok", "2")}
    assert not marker.exists()

"""mca installed from its wheel into a fresh virtual environment works from any directory: the
self-test, the lab kit (init, selftest --lab, grade) and the ledger's lab report read the lab
from the package, never from the directory they run in (which here holds a decoy lab whose
script would leave a marker if anything ran it). A Python older than the package supports is
turned away by pip itself, before anything imports mca."""

from __future__ import annotations

import csv
import glob
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST

pytestmark = [
    pytest.mark.xdist_group("install"),  # its session fixture: built on one worker
    pytest.mark.e2e,
    pytest.mark.slow,  # builds and installs the wheel
]
SOURCES = ("mca", "skills", "fixtures", "pyproject.toml", "README.md")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".mca", "recorded")
OLDER = "3.10"  # the newest Python that requires-python excludes


def copy_sources(dest: Path) -> Path:
    """What a build reads, copied (building writes build/ and *.egg-info beside the sources)."""
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, dest / name, symlinks=True, ignore=SKIP)
        else:
            shutil.copy2(REPO / name, dest / name)
    return dest


@pytest.fixture(scope="session")  # once a run: xdist may put other tests between its own
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a fresh venv with only the built wheel (and its dependencies) installed."""
    root = tmp_path_factory.mktemp("install")
    src = copy_sources(root / "src")
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
    assert selftest.returncode == 0 and selftest.stdout.rstrip().endswith(
        "14/14 passed · 10/10 points"
    ), selftest.stdout + selftest.stderr
    assert run(MOCK="1", SELFTEST="1").stdout.rstrip().endswith("14/14 passed · 10/10 points")
    assert "976+0=976" in run("ledger", "compare", "--lab").stdout
    assert run("lab", "init", "kit").returncode == 0
    kit = elsewhere / "kit"
    assert run("lab", "gradescope", "gs").returncode == 0  # the kit, from the wheel
    assert sorted(p.name for p in (elsewhere / "gs").iterdir()) == [
        "README.md",
        "run_autograder",
        "setup.sh",
    ]
    student = run("selftest", "--lab", "exercises.py", cwd=kit)
    assert student.returncode == 1 and student.stdout.rstrip().endswith("7/14 passed · 2/10 points")
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


def interpreter(version: str) -> str | None:
    """A runnable `python<version>`: on PATH, or one pyenv installed (its shims may not run)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = [
        shutil.which(f"python{version}"),
        *sorted(glob.glob(f"{pyenv}/versions/{version}.*/bin/python{version}")),
    ]
    for python in filter(None, found):
        ran = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if ran.returncode == 0 and ran.stdout.strip() == version:
            return python
    return None


def test_pip_on_an_older_python_refuses_with_its_own_message(tmp_path: Path) -> None:
    python = interpreter(OLDER)
    if python is None:
        pytest.skip(f"no Python {OLDER} here (looked on PATH and in pyenv)")
    src = copy_sources(tmp_path / "src")
    # Were the build to import mca to read its version, this would be the error pip shows.
    init = src / "mca" / "__init__.py"
    init.write_text(init.read_text() + '\nraise SystemExit("mca was imported by the build")\n')
    ran = subprocess.run(  # --dry-run: nothing is installed into that Python, whatever happens
        [
            python,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--no-deps",
            "--disable-pip-version-check",
            ".",
        ],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = ran.stdout + ran.stderr
    assert ran.returncode != 0, out
    assert f"ERROR: Package 'mca' requires a different Python: {OLDER}." in out, out
    assert "not in '>=3.11'" in out and "imported by the build" not in out, out


def test_the_supported_pythons_are_one_list() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    classified = [
        c.rsplit(" :: ", 1)[1]
        for c in config["project"]["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"^Python ((?:3\.\d+, )*3\.\d+ or 3\.\d+):", readme, re.M)
    assert stated is not None, "the README's opening says which Pythons mca supports"
    assert re.split(r", | or ", stated[1]) == classified
    oldest = classified[0]
    assert config["project"]["requires-python"] == f">={oldest}"
    assert config["tool"]["mypy"]["python_version"] == oldest
    assert config["tool"]["ruff"]["target-version"] == "py" + oldest.replace(".", "")
    assert f"3.{int(oldest.split('.')[1]) - 1}" == OLDER  # the one just below

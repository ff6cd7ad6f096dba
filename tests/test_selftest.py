"""The lab's self-test: 14/14 on a clean checkout; the starter fails exactly its traps' checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mca.lab.exercises import TRAPS
from mca.lab.suite import trapped
from tests.conftest import REPO

MCA = Path(sys.executable).parent / "mca"
TRAP_CHECKS = {  # as the design notes tie them: 1 + 1 + 1 + 2 + 2, so the starter passes 7
    "split": {1},
    "validate": {3},
    "script": {6},
    "judge": {7, 8},
    "gates": {9, 10},
}


def selftest(lab: str = "", *, via_env: bool = False) -> tuple[int, dict[str, Any]]:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "MOCK": "1"}
    if lab:
        env["MCA_LAB"] = lab
    argv = [str(MCA), "--json"] if via_env else [str(MCA), "selftest", "--json"]
    if via_env:
        env["SELFTEST"] = "1"
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, json.loads(proc.stdout)


def failed(report: dict[str, Any]) -> set[int]:
    return {c["id"] for c in report["checks"] if not c["passed"]}


pytestmark = pytest.mark.skipif(not MCA.exists(), reason="mca is not installed")


def test_the_table_ties_each_trap_to_the_checks_the_notes_name() -> None:
    assert {trap: set(ids) for trap, ids in trapped().items()} == TRAP_CHECKS


@pytest.mark.slow
def test_all_fourteen_pass() -> None:
    code, report = selftest(via_env=True)
    assert report["passed"] == report["total"] == 14 and code == 0, report


@pytest.mark.slow
def test_starter_fails_exactly_the_trapped_checks() -> None:
    code, report = selftest("starter")
    assert code == 1
    assert failed(report) == set().union(*TRAP_CHECKS.values())
    exercises = {c["id"]: c["exercise"] for c in report["checks"]}
    assert exercises[1].startswith("1 ") and exercises[10].startswith("5 ")


@pytest.mark.slow
@pytest.mark.parametrize("trap", TRAPS)
def test_each_trap_breaks_only_its_checks(trap: str) -> None:
    code, report = selftest(f"starter:{trap}")
    assert code == 1 and failed(report) == TRAP_CHECKS[trap]


@pytest.mark.slow
def test_output_is_identical_across_runs() -> None:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    runs = [
        subprocess.run(
            [str(MCA), "selftest"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[0].rstrip().endswith("14/14 passed · 10/10 points")


def test_unknown_lab_mode_is_a_clear_error() -> None:
    proc = subprocess.run(
        [str(MCA), "selftest"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "MCA_LAB": "starter:nope"},
        timeout=60,
    )
    assert proc.returncode == 2 and "unknown trap(s) nope" in proc.stderr


@pytest.mark.slow
def test_demo_runs_end_to_end() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mca.cli.demo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HOME": "/tmp"},
    )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "skills: 4 loaded, 1 skipped, 0 shadowed" in out
    assert "skill bodies (stage two): none injected" in out
    assert "same calc domain as calc-conventions, which won" in out
    assert "→ edit_file(path=src/calc.js" in out and "tests pass" in out
    assert "restored src/calc.js" in out and out.rstrip().endswith("original bytes: yes")

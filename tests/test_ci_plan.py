"""CI covers every (cell, user, sandbox) it must, each once: the plan, the check that proves a
run followed it, and the sandboxes the tests choose (tests/ci_plan.py,
tests/sandbox/mechanisms.py)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mca.sandbox.probe import Mechanisms
from tests.ci_plan import CELLS, NONE, USERS, Triple, differences, main, mode
from tests.sandbox.mechanisms import NAMES, key, simulated

REPO = Path(__file__).resolve().parent.parent
FULL = Mechanisms(7, True, None)
LANDLOCK = Mechanisms(7, False, None)


def _complete() -> set[Triple]:
    """A run that did what the plan says on a machine with everything."""
    out: set[Triple] = set()
    for cell in CELLS:
        for user in USERS:
            if mode(cell.name, user) == "all":
                out |= {(cell.name, user, key(m)) for m in simulated(FULL, LANDLOCK).values()}
            else:
                out.add((cell.name, user, key(LANDLOCK if user == "user" else FULL)))
    return out


def test_a_run_that_followed_the_plan_passes() -> None:
    run = _complete()
    assert differences(run, run, USERS) == []


def test_a_dropped_sandbox_a_dropped_cell_and_an_extra_run_are_each_found() -> None:
    expected = _complete()
    one = sorted(expected)[0]
    assert differences(expected, expected - {one}, USERS) == [
        f"{one[0]} as {one[1]}: {one[2]}: required, never run"
    ]
    cell = {t for t in expected if t[:2] == ("no-mount", "user")}
    problems = differences(expected - cell, expected - cell, USERS)
    assert problems == ["no-mount as user: no step ran there"]
    extra = ("no-userns", "root", key(dataclasses.replace(FULL, landlock_abi=1)))
    assert differences(expected, expected | {extra}, USERS) == [
        f"no-userns as root: {extra[2]}: run, not required"
    ]


def test_a_cell_with_no_sandbox_is_planned_and_runs_nothing() -> None:
    expected = _complete() | {("neither", "user", NONE)}
    ran = {t for t in expected if t[2] != NONE}
    assert differences(expected, ran, USERS) == []


def test_every_cell_runs_as_root_and_the_user_and_only_the_host_s_root_runs_all() -> None:
    assert CELLS[0].name == "host" and len({c.name for c in CELLS}) == len(CELLS)
    assert {(c.name, u) for c in CELLS for u in USERS if mode(c.name, u) == "all"} == {
        ("host", "root")
    }
    confine = (REPO / "tests" / "confine.py").read_text()
    flags = {f for c in CELLS for f in c.flags if f.startswith("--")}
    assert flags and all(f'"{f}"' in confine for f in flags), flags


def test_equal_sandboxes_run_once_and_missing_ones_not_at_all() -> None:
    everything = simulated(FULL, LANDLOCK)
    assert list(everything) == list(NAMES)  # a kernel with all of it: six distinct
    no_landlock = simulated(dataclasses.replace(FULL, landlock_abi=0), Mechanisms(0, False, None))
    assert list(no_landlock) == ["namespaces"]  # namespaces-only is the same sandbox
    no_userns = simulated(LANDLOCK, LANDLOCK)
    assert list(no_userns) == ["landlock", "landlock-abi1", "landlock-abi3", "landlock-abi5"]
    old = simulated(
        dataclasses.replace(FULL, landlock_abi=3), dataclasses.replace(LANDLOCK, landlock_abi=3)
    )
    assert list(old) == ["namespaces", "namespaces-only", "landlock", "landlock-abi1"]


def test_ci_takes_its_cells_from_the_plan_and_checks_the_run() -> None:
    script = (REPO / ".ci" / "run").read_text()
    assert "tests.ci_plan cells" in script and "tests.ci_plan check" in script
    assert script.count("tests.ci_plan expect") >= 3  # part 1, part 3, the matrix
    assert not re.search(r"--no-userns|--no-landlock", script)  # no cell of its own


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cells"]) == 0
    assert capsys.readouterr().out.count("\n") == len(CELLS)
    expected, ran = tmp_path / "expected", tmp_path / "ran"
    lines = "".join("\t".join(t) + "\n" for t in sorted(_complete()))
    expected.write_text(lines)
    ran.write_text(lines)
    assert main(["check", str(expected), str(ran)]) == 0
    ran.write_text("".join(lines.splitlines(keepends=True)[1:]))
    assert main(["check", str(expected), str(ran)]) == 1
    assert "required, never run" in capsys.readouterr().err
    out = subprocess.run(
        [sys.executable, "-m", "tests.ci_plan", "expect", str(tmp_path / "here")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "MCA_TEST_CELL": "no-mount"},
    )
    assert out.returncode == 0
    (line, *_) = (tmp_path / "here").read_text().splitlines()
    assert line.startswith("no-mount\t")

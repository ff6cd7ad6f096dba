"""Before the first hand-in, the grader starts the starter in a child made as every hand-in's
will be: where that child cannot start (its sandbox or its view cannot be made here), the run
stops with one line instead of scoring every student 0 for the grader's failure. The starter is
mca's own file: a student's code can never cause the refusal (a hand-in that exits 126 and
prints "mca: sandbox" is that hand-in's crash, not the run's)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import IO

import pytest

from mca.errors import McaError
from mca.lab.grade import Plan, grade, trial
from mca.lab.launch import Isolation, Launcher, Limits, Unsandboxed
from mca.lab.outputs import Status
from mca.lab.variant import Variants
from mca.sandbox.spawning.client import Process
from tests.conftest import REPO

LIMITS = Limits(seconds=30, check_seconds=10, memory_mb=1024)
FAILED_SET_UP = 'echo "mca: sandbox: the view\'s root: No such file or directory" >&2; exit 126'


class CannotStart(Unsandboxed):
    """A launcher whose child fails before its program runs, as a sandbox set-up does."""

    def start(self, fds: tuple[int, int], output: int | IO[bytes]) -> Process:
        return subprocess.Popen(
            ["sh", "-c", FAILED_SET_UP],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )


class Broken(Isolation):
    def launcher(self, limits: Limits) -> Launcher:
        return CannotStart(limits, self.kit)


def test_a_child_that_cannot_start_stops_the_run_before_any_hand_in(tmp_path: Path) -> None:
    with Variants(REPO) as variants:
        broken = Broken(None, variants.root, tmp_path / "mca", tmp_path)
        with pytest.raises(McaError) as caught:
            trial(variants, broken, LIMITS)
    message = str(caught.value)
    assert "cannot start here" in message and "No hand-in was graded" in message
    assert "the view's root" in message and str(Status.CRASHED) in message


def test_a_child_that_starts_lets_the_run_go_on(tmp_path: Path) -> None:
    with Variants(REPO) as variants:
        trial(variants, Isolation(None, variants.root, tmp_path / "mca", tmp_path), LIMITS)


class BrokenPlan(Plan):
    def isolation(self, workspace: Path) -> Isolation:
        return Broken(None, workspace, Path(self.env["HOME"]) / ".mca", Path(self.env["HOME"]))


def test_grading_a_class_where_no_child_can_start_grades_no_one(tmp_path: Path) -> None:
    """The run ends with the one line, and nobody gets a row saying they crashed."""
    (tmp_path / "class" / "alice").mkdir(parents=True)
    (tmp_path / "class" / "alice" / "exercises.py").write_text("x = 1\n")
    plan = BrokenPlan(REPO, tmp_path / "class", jobs=1, seeds=0, env={"HOME": str(tmp_path)})
    seen: list[object] = []
    with pytest.raises(McaError, match="No hand-in was graded"):
        grade(plan, seen.append)
    assert seen == []

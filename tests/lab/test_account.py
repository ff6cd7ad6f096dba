"""No route grades with the answers readable: unsandboxed, a hand-in runs as another account
that reads neither mca's package nor the grader's files, or grading refuses and says why. The
oracle is a planted file only root can read, and what the hand-in says it got."""

from __future__ import annotations

import os
import pwd
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from mca.cli.args import parse_command
from mca.errors import McaError
from mca.lab.account import accounted
from mca.lab.childkit import MCA_DIR
from mca.lab.cli import run
from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import gradescope, row
from mca.sandbox.probe import Mechanisms
from tests.conftest import REPO

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
USER = "mcaci"  # the suite's ordinary account


def _has_user() -> bool:
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return False
    return True


def _user_runs_this_python() -> bool:
    """Can USER run this Python (CI's 3.12 and 3.13 live where only root may go)?"""
    from mca.lab.account import runnable_python

    entry = pwd.getpwnam(USER)
    return runnable_python(USER, entry.pw_uid, entry.pw_gid) is not None


needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not _has_user() or not _user_runs_this_python(),
    reason=f"switching to {USER} needs root, {USER}, and a Python {USER} may run",
)
NONE = Mechanisms(0, False, None)


def test_only_root_can_grade_unsandboxed() -> None:
    with pytest.raises(McaError, match="only root can start a process as another account"):
        accounted(USER, [], euid=1000)


@needs_root
def test_a_missing_or_seeing_account_is_refused_saying_why(tmp_path: Path) -> None:
    with pytest.raises(McaError, match="there is no such account here: make it"):
        accounted("mca-no-such-account", [])
    with pytest.raises(McaError, match="which is root's"):
        accounted("root", [])
    # this checkout is readable by everyone: its answers would be the hand-in's
    with pytest.raises(McaError, match=f"which can read {MCA_DIR}"):
        accounted(USER, [MCA_DIR, tmp_path])
    (tmp_path / "class" / "bob").mkdir(parents=True)
    (tmp_path / "class" / "bob" / "exercises.py").write_text(STARTER)
    args = parse_command(["lab", "grade", str(tmp_path / "class"), "--unsandboxed"])
    assert args is not None
    with pytest.raises(McaError, match="mca-student"):  # the default account, not made here
        run(args, {"HOME": str(tmp_path)}, NONE)
    args = parse_command(["lab", "grade", str(tmp_path / "class"), "--unsandboxed"])
    assert args is not None
    args.as_user = USER
    with pytest.raises(McaError, match="can read"):
        run(args, {"HOME": str(tmp_path)}, NONE)


@needs_root
def test_a_hand_in_run_as_the_account_reads_and_writes_nothing_of_the_grader(
    tmp_path: Path,
) -> None:
    private = tmp_path / "instructor"
    private.mkdir(mode=0o700)
    answer = private / "answers.py"
    key = "sk-" + secrets.token_hex(16)
    answer.write_text(f"KEY = {key!r}\n")
    grades = tmp_path / "grades.csv"
    grades.write_text("bob,10\n")
    grades.chmod(0o644)  # readable, as outputs often are; never writable by the hand-in
    spy = f"""
def _try(what):
    try:
        return str(what())
    except OSError as e:
        return type(e).__name__
_read = _try(lambda: open({str(answer)!r}).read())
_wrote = _try(lambda: open({str(grades)!r}, "a").write("eve,10"))
_who = _try(lambda: __import__("os").getuid())
def validate_metadata(path, parsed, root):
    raise ValueError(f"read={{_read}} wrote={{_wrote}} uid={{_who}}")
"""
    subs = tmp_path / "class"
    (subs / "eve").mkdir(parents=True)
    (subs / "eve" / "exercises.py").write_text(STARTER + spy)
    account = accounted(USER, [private, subs])
    limits = Limits(seconds=120, check_seconds=10, memory_mb=1024)
    plan = Plan(REPO, subs, 1, 0, limits, None, account=account, secrets=())
    (graded,) = grade(plan)
    saw = next(c["saw"] for c in graded.checks if c["id"] == 3)
    uid = pwd.getpwnam(USER).pw_uid
    assert f"read=PermissionError wrote=PermissionError uid={uid}" in saw, saw
    assert key not in str(graded) and grades.read_text() == "bob,10\n"
    assert row(graded)["route"] == f"unsandboxed as {USER} (uid {uid})"
    assert f"unsandboxed as {USER}" in gradescope(graded)["output"]
    assert row(graded)["total"] == 1  # the starter's points for exercise 1... and no more


def test_a_sandboxed_grade_says_so(tmp_path: Path) -> None:
    from mca.lab.launch import Isolation

    iso = Isolation(Mechanisms(7, False, None), tmp_path, tmp_path, tmp_path)
    assert iso.route.startswith("sandboxed (")
    assert Isolation(None, tmp_path, tmp_path, tmp_path).route.startswith("unsandboxed")


@needs_root
def test_the_account_s_other_tasks_leave_the_hand_in_its_room(tmp_path: Path) -> None:
    """RLIMIT_NPROC counts all of an account's tasks: a hand-in graded while the account runs
    other processes (a shared machine, or this suite's own runs as it) still starts."""
    from mca.lab.account import account_tasks

    uid = pwd.getpwnam(USER).pw_uid
    before = account_tasks(uid)
    others = [subprocess.Popen(["sleep", "60"], user=uid, group=USER) for _ in range(6)]
    try:
        deadline = time.monotonic() + 10
        while account_tasks(uid) < before + 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        subs = tmp_path / "class"
        (subs / "bob").mkdir(parents=True)
        (subs / "bob" / "exercises.py").write_text(STARTER)
        account = accounted(USER, [tmp_path / "nothing"])
        limits = Limits(seconds=120, check_seconds=10, memory_mb=1024)
        plan = Plan(REPO, subs, 1, 0, limits, None, account=account, secrets=())
        (graded,) = grade(plan)
        assert row(graded)["status"] == "ok", graded  # the starter graded, not "crashed"
        assert row(graded)["total"] > 0
    finally:
        for p in others:
            p.kill()
            p.wait()

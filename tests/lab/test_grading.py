"""Grading never loses a run: every folder gets a row, rows reach the files as they finish, a bad
--out fails before anything is graded, Ctrl-C keeps what was graded; and the files are what
graders upload (CSV with numbers, Gradescope's results.json, one JUnit report)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from mca.cli.args import parse_command
from mca.errors import ConfigError
from mca.lab.cli import run
from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import COLUMNS, Writer
from mca.lab.progress import Progress
from mca.sandbox.check import check_system, refusal
from mca.sandbox.probe import Mechanisms, probe
from mca.sandbox.properties import LAB_NEEDS
from mca.sandbox.rights import Mode
from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST
from tests.ptyscreen import as_a_terminal

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
MCA = Path(sys.executable).parent / "mca"
MECH = probe()
LIMITS = Limits(seconds=60, check_seconds=10, memory_mb=1024)


def lab(argv: list[str], env: dict[str, str], mechanisms: Mechanisms | None = None) -> int:
    """`mca lab ARGV` with the sandbox's mechanisms given (not probed)."""
    args = parse_command(["lab", *argv])
    assert args is not None
    return run(args, env, mechanisms)


@cache
def grade_flags() -> tuple[str, ...]:
    """What `mca lab grade` needs here to grade at all: nothing where the sandbox contains
    student code (what the grader checks first), else --unsandboxed (these tests are about
    the outputs, Ctrl-C and the progress bar; tests/lab/test_isolation.py is the sandbox's)."""
    if MECH.available:
        home = Path(tempfile.mkdtemp(prefix="mca-grade-check-"))
        found = check_system(MECH, home, home / "mca", Mode.READ_ONLY)
        shutil.rmtree(home, ignore_errors=True)
        if not refusal(found, LAB_NEEDS):
            return ()
    pytest.skip("no sandbox here, and --unsandboxed grades only as an account made for it")


def hand_in(root: Path, name: str, text: str | bytes | None, file: str = "exercises.py") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if isinstance(text, bytes):
        (folder / file).write_bytes(text)
    elif text is not None:
        (folder / file).write_text(text)
    return folder


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        return {r["student"]: r for r in reader}


@pytest.mark.slow
def test_every_folder_gets_a_row_saying_why(tmp_path: Path) -> None:
    subs = tmp_path / "class"
    hand_in(subs, "ada", STARTER + ALL_HONEST)
    hand_in(subs, "bo", None)
    hand_in(subs, "cy", STARTER, file="Exercises.py")
    hand_in(subs, "di", "# caf\xe9\n".encode("latin-1"))
    hand_in(subs, "ed", "x = 1\n" * 300_000)
    (hand_in(subs, "fi", None) / "exercises.py").symlink_to(subs / "ada" / "exercises.py")
    (subs / "gus").symlink_to(subs / "ada", target_is_directory=True)
    os.mkfifo(hand_in(subs, "hal", None) / "exercises.py")
    hand_in(subs, ".git", STARTER)  # not a hand-in
    (subs / "notes.txt").write_text("not a folder\n")
    graded = {g.student: g.text for g in grade(Plan(REPO, subs, limits=LIMITS, mechanisms=MECH))}
    assert graded == {
        "ada": "ok",
        "bo": "missing exercises.py",
        "cy": "missing exercises.py (found Exercises.py)",
        "di": "not UTF-8 (byte 0xe9 at offset 5)",
        "ed": "unreadable: exercises.py is over 1024 KiB",
        "fi": "unreadable: exercises.py is a symbolic link or not a regular file",
        "gus": "unreadable: the folder is a symbolic link",
        "hal": "unreadable: exercises.py is a symbolic link or not a regular file",
    }


@pytest.mark.slow
def test_rows_reach_every_output_as_each_hand_in_finishes(tmp_path: Path) -> None:
    subs = tmp_path / "class"
    for name in ("a", "b", "c"):
        hand_in(subs, name, STARTER)
    out = tmp_path / "out"
    writer = Writer(out / "grades.csv", out / "gradescope", out / "class.xml")
    out.mkdir()
    writer.check()
    assert read_csv(out / "grades.csv") == {}
    seen: list[tuple[int, int, int]] = []

    def on_graded(g: Any) -> None:
        writer.add(g)
        junit = ET.parse(out / "class.xml").getroot()
        seen.append(
            (len(read_csv(out / "grades.csv")), len(junit), len(list(out.glob("gradescope/*"))))
        )

    grade(
        Plan(REPO, subs, jobs=1, limits=LIMITS, mechanisms=MECH, deny=tuple(writer.paths)),
        on_graded,
    )
    assert seen == [(1, 1, 1), (2, 2, 2), (3, 3, 3)]


@pytest.mark.slow
def test_outputs_validate(tmp_path: Path) -> None:
    subs = tmp_path / "class"
    hand_in(subs, "ada", STARTER + ALL_HONEST)
    hand_in(
        subs,
        "bo",
        STARTER + "\ndef judge_triggers(s, t, p):\n    raise KeyError('\\x1b[2J\\ud800')\n",
    )
    hand_in(subs, "cy", None)
    out, junit = tmp_path / "gs", tmp_path / "class.xml"
    argv = ["grade", str(subs), "--format", "gradescope", "--out", str(out), "--junit", str(junit)]
    argv += grade_flags()
    assert lab(argv, {"HOME": str(tmp_path)}, MECH) == 0
    results = {
        p.parent.parent.name: json.loads(p.read_text()) for p in out.glob("*/results/results.json")
    }
    assert set(results) == {"ada", "bo", "cy"}
    for r in results.values():
        assert isinstance(r["score"], float) and isinstance(r["tests"], list)
        for t in r["tests"]:
            assert set(t) >= {"name", "score", "max_score", "output", "visibility", "status"}
            assert isinstance(t["score"], float) and 0 <= t["score"] <= t["max_score"]
            assert t["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
        assert r["score"] == sum(t["score"] for t in r["tests"])
        assert sum(t["max_score"] for t in r["tests"]) == 10.0
    why = {
        n: [t["output"] for t in r["tests"] if t["score"] < t["max_score"]]
        for n, r in results.items()
    }
    assert (results["ada"]["score"], results["bo"]["score"], results["cy"]["score"]) == (
        10.0,
        2.0,
        0.0,
    ), (why, results["ada"].get("output"))
    failed = [t for t in results["bo"]["tests"] if t["number"] in ("7", "8")]
    assert all("KeyError" in t["output"] and "\x1b" not in t["output"] for t in failed)
    assert results["cy"]["output"] == "missing exercises.py"
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and [s.get("name") for s in root] == ["ada", "bo", "cy"]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("21", "7", "1")


def test_a_bad_out_fails_before_anything_is_graded(tmp_path: Path) -> None:
    subs = tmp_path / "class"
    marker = tmp_path / "imported"
    hand_in(subs, "ada", STARTER + f"\nopen({str(marker)!r}, 'w').close()\n")
    for bad in (
        ["--out", str(tmp_path / "no" / "such" / "g.csv")],
        ["--junit", str(tmp_path / "nope" / "j.xml")],
    ):
        with pytest.raises(ConfigError, match="cannot write"):
            lab(["grade", str(subs), *grade_flags(), *bad], {})
    assert not marker.exists()
    assert lab(["grade", str(subs), *grade_flags(), "--out", str(tmp_path / "g.csv")], {}) == 0
    assert "\nada," in (tmp_path / "g.csv").read_text()  # graded (sandboxed: no marker)


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed")
def test_ctrl_c_keeps_the_rows_already_graded(tmp_path: Path) -> None:
    subs = tmp_path / "class"
    for name in ("a", "b"):
        hand_in(subs, name, STARTER)
    hand_in(subs, "c", "while True:\n    pass\n")
    hand_in(subs, "d", STARTER)
    out = tmp_path / "g.csv"
    argv = [str(MCA), "lab", "grade", str(subs), "--out", str(out), "--jobs", "1", *grade_flags()]
    # Ctrl-C as on a terminal: a suite started in the background runs with SIGINT ignored,
    # and the grader would inherit that (and rightly keep ignoring it)
    proc = subprocess.Popen(
        [*argv, "--check-seconds", "120"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_terminal,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or len(read_csv(out)) < 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert set(read_csv(out)) == {"a", "b"}
    assert "interrupted; graded 2 of 4 hand-ins" in err


def test_the_progress_line() -> None:
    now = [100.0]
    buf = io.StringIO()
    p = Progress(40, buf, clock=lambda: now[0])
    p.start("alice")
    now[0] += 3
    p.start("bob")
    for _ in range(12):
        p.finish("x")
    now[0] += 20
    assert p.line() == "[#######.................]  12/40  0:23  slowest running: alice (23 s)"
    p.draw()
    assert buf.getvalue().startswith("\r\x1b[K[#######")


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed")
def test_the_progress_bar_shows_on_a_terminal_only(tmp_path: Path) -> None:
    import pexpect

    subs = tmp_path / "class"
    hand_in(subs, "ada", STARTER)
    hand_in(subs, "bo", STARTER)
    argv = ["lab", "grade", str(subs), "--out", str(tmp_path / "g.csv"), *grade_flags()]
    child = pexpect.spawn(str(MCA), argv, env={**os.environ, "TERM": "dumb"}, timeout=120)
    child.expect(r"\]   2/2  0:\d\d")
    child.expect("graded 2 of 2 hand-ins")
    child.expect(pexpect.EOF)
    piped = subprocess.run([str(MCA), *argv], capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and "/2" not in piped.stderr


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed")
def test_the_gradescope_example_writes_the_result_gradescope_reads(tmp_path: Path) -> None:
    ag = tmp_path / "autograder"
    hand_in(ag, "submission", STARTER + ALL_HONEST)
    env = {**os.environ, "AUTOGRADER": str(ag), "MCA_VENV": str(Path(sys.executable).parent.parent)}
    kit = tmp_path / "kit"  # as an instructor gets it: from the installed package
    subprocess.run([str(MCA), "lab", "gradescope", str(kit)], check=True, capture_output=True)
    script = kit / "run_autograder"
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((ag / "results" / "results.json").read_text())
    assert result["score"] == 10.0 and len(result["tests"]) == 10
    assert "sandboxed (" in result["output"]  # the route the grade took

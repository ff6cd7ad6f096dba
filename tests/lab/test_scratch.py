"""Bounded disk: a hand-in's private /tmp has a total (bytes and files), a tmpfs of that size
where there are namespaces, else measured while the grader waits on it; going over is the
hand-in's failure, said so, and costs it its own checks only (main: 1 MiB a file, any number
of files)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import MAX_POINTS, row
from mca.lab.scratch import Scratch, usage
from mca.sandbox.probe import Mechanisms, probe
from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
MECH = probe()
FILLER = """
import os, tempfile, time
def judge_triggers(skills, sentence, paths):
    where = tempfile.gettempdir()
    for i in range(@N@):
        try:
            with open(os.path.join(where, f"fill-{i}"), "wb") as f:
                f.write(b"x" * (@SIZE@))
        except OSError:
            break
    time.sleep(8)  # still holding it while the grader waits
    return []
"""


def test_the_total_counts_bytes_on_disk_and_entries(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"f{i}").write_bytes(b"x" * 300_000)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "hidden").write_bytes(b"x" * 300_000)
    (tmp_path / "d").chmod(0)  # out of sight: still counted
    used, files = usage(tmp_path, 1 << 40, 1 << 40)
    assert used >= 1_800_000 and files == 7
    assert Scratch(tmp_path, 1, 100)() == "its /tmp went over its total of 1 MiB"
    assert Scratch(tmp_path, 10, 3)() == "its /tmp went over its total of 3 files"
    (tmp_path / "d").chmod(0o700)
    assert Scratch(tmp_path, 10, 100)() == "" and Scratch(None, 0, 0)() == ""


def _modes() -> list[object]:
    out: list[object] = [pytest.param(None, id="unsandboxed")]
    if MECH.available:
        out.append(pytest.param(MECH, id="sandboxed"))
    if MECH.landlock_abi and MECH.user_namespaces:  # Landlock alone: the running total
        out.append(pytest.param(dataclasses.replace(MECH, user_namespaces=False), id="landlock"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("mech", _modes())
def test_filling_its_tmp_is_the_hand_ins_failure_and_no_one_elses(
    tmp_path: Path, mech: Mechanisms | None
) -> None:
    subs = tmp_path / "class"
    fills = {
        "big": FILLER.replace("@N@", "40").replace("@SIZE@", "512 * 1024"),  # 20 MiB
        "many": FILLER.replace("@N@", "400").replace("@SIZE@", "1"),  # 400 files
    }
    for name, code in {"honest": "", **fills}.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "exercises.py").write_text(STARTER + ALL_HONEST + code)
    limits = Limits(seconds=120, check_seconds=15, memory_mb=1024, tmp_mb=8, tmp_files=100)
    rows = {g.student: row(g) for g in grade(Plan(REPO, subs, 2, 0, limits, mech, secrets=()))}
    assert rows["honest"]["total"] == MAX_POINTS and rows["honest"]["status"] == "ok"
    # with namespaces the kernel holds the total (a sized tmpfs): the hand-in filled it
    sized = mech is not None and mech.user_namespaces
    for name, what in (("big", "8 MiB"), ("many", "100 files")):
        assert rows[name]["ex4"] == 0 and rows[name]["total"] == MAX_POINTS - 2, rows[name]
        said = f"its /tmp went over its total of {what} while judge_triggers ran"
        if sized:
            said = f"its /tmp filled its total of {what} (the kernel refused more) while"
        assert said in rows[name]["failures"], rows[name]["failures"]

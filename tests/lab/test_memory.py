"""Memory shared fairly: --jobs x --memory-mb is checked against what the grader can use (the
machine's MemAvailable, or what its cgroup's limit leaves), and lowered or refused, saying so.
The places are passed in: a test never reads the host's /proc for its verdict."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from mca.errors import McaError
from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.memory import fit_jobs, per_handin, usable_mib
from mca.lab.outputs import MAX_POINTS, row
from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST

GIB = 1 << 30
STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")


def _world(tmp: Path, available_kib: int, cgroup: str, files: dict[str, str]) -> Path:
    tmp.mkdir()
    (tmp / "meminfo").write_text(f"MemTotal: 99999999 kB\nMemAvailable: {available_kib} kB\n")
    (tmp / "self-cgroup").write_text(cgroup)
    for rel, text in files.items():
        (tmp / "cg" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "cg" / rel).write_text(text)
    return tmp


def _usable(tmp: Path) -> int | None:
    return usable_mib(tmp / "meminfo", tmp / "cg", tmp / "self-cgroup")


def test_the_tightest_of_the_machine_and_its_cgroups_is_what_the_grader_can_use(
    tmp_path: Path,
) -> None:
    v2 = _world(
        tmp_path / "v2",
        8 << 20,  # 8 GiB free on the machine
        "0::/grader/job\n",
        {
            "grader/memory.max": str(3 * GIB),  # the grader's cgroup: 3 GiB, 1 GiB used
            "grader/memory.current": str(GIB),
            "grader/job/memory.max": "max",
            "grader/job/memory.current": str(GIB),
        },
    )
    assert _usable(v2) == 2048
    v1 = _world(
        tmp_path / "v1",
        1 << 20,  # 1 GiB free on the machine: less than the cgroup leaves
        "4:memory:/box\n1:cpu:/\n",
        {"memory/box/memory.limit_in_bytes": str(4 * GIB), "memory/box/memory.usage_in_bytes": "0"},
    )
    assert _usable(v1) == 1024
    unlimited = _world(tmp_path / "none", 5 << 20, "0::/\n", {"memory.max": "max"})
    assert _usable(unlimited) == 5120
    assert usable_mib(tmp_path / "no", tmp_path / "no", tmp_path / "no") is None


def test_jobs_are_lowered_to_fit_or_grading_is_refused() -> None:
    assert fit_jobs(2, 2048, 8192) == (2, "")
    assert fit_jobs(2, 2048, None) == (2, "")  # nothing known: as asked
    jobs, said = fit_jobs(2, 2048, 3072)  # the 3 GiB grader
    assert jobs == 1 and "grading 1 at a time" in said and "3072 MiB" in said
    with pytest.raises(McaError, match="--memory-mb 2048 is more than the 1000 MiB"):
        fit_jobs(1, 2048, 1000)


def _class(tmp: Path, marker: Path) -> Path:
    subs = tmp / "class"
    codes = {
        "honest": "",
        # killed from outside (as the OOM killer does: `_killer`) the first time only
        "victim": (
            "\nimport os, time\n_judge = judge_triggers\n"
            "def judge_triggers(skills, sentence, paths):\n"
            f"    if not os.path.exists({str(marker)!r}):\n"
            f"        with open({str(marker)!r}, 'w') as f:\n"
            "            f.write(str(os.getpid()))\n"
            "        time.sleep(60)\n"
            "    return _judge(skills, sentence, paths)\n"
        ),
        "hog": (  # over its own limit: MemoryError, its own failure
            "\ndef judge_triggers(skills, sentence, paths):\n    return bytearray(4 << 30)\n"
        ),
    }
    for name, code in codes.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "exercises.py").write_text(STARTER + ALL_HONEST + code)
    return subs


def _killer(marker: Path, done: threading.Event) -> threading.Thread:
    """Kills the process whose pid the victim writes in `marker`, once."""

    def kill() -> None:
        while not done.is_set():
            text = marker.read_text() if marker.exists() else ""
            if text.isdigit():
                os.kill(int(text), signal.SIGKILL)
                return
            done.wait(0.02)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_a_child_killed_by_the_system_is_graded_again_alone_never_scored_0(
    tmp_path: Path,
) -> None:
    limits = Limits(seconds=120, check_seconds=10, memory_mb=512)
    marker = tmp_path / "killed-once"
    subs = _class(tmp_path, marker)
    done = threading.Event()
    _killer(marker, done)
    rows = {g.student: row(g) for g in grade(Plan(REPO, subs, 2, 0, limits, None, secrets=()))}
    done.set()
    assert marker.exists()
    assert rows["victim"]["total"] == MAX_POINTS == rows["honest"]["total"]
    assert rows["victim"]["status"] == (
        "ok (graded again alone: the system killed it while others were graded)"
    )
    assert rows["honest"]["status"] == "ok"
    assert rows["hog"]["ex4"] == 0 and rows["hog"]["total"] == MAX_POINTS - 2
    assert "over its memory limit of 512 MiB" in rows["hog"]["failures"]
    # graded alone from the start, it is not graded again: the row says what happened
    marker.unlink()
    done = threading.Event()
    _killer(marker, done)
    alone = {g.student: row(g) for g in grade(Plan(REPO, subs, 1, 0, limits, None, secrets=()))}
    done.set()
    assert "killed by the system, not by its own limits" in alone["victim"]["failures"]


def test_the_default_memory_fits_a_small_grader_and_a_given_one_is_kept() -> None:
    """Not given, the default is lowered to what is free (a 768 MiB Gradescope container grades
    its class, one at a time, each hand-in held to what is there), said so; given, it stays,
    and fit_jobs refuses it where it cannot fit."""
    assert per_handin(None, 2048, 8000) == (2048, "")
    assert per_handin(None, 2048, None) == (2048, "")
    lowered, said = per_handin(None, 2048, 700)
    assert lowered == 700 and "each may use 700 MiB, not the default 2048" in said
    assert per_handin(None, 2048, 100)[0] == 256
    assert per_handin(1024, 2048, 700) == (1024, "")
    assert fit_jobs(2, 700, 700)[0] == 1
    with pytest.raises(McaError, match="--memory-mb 1024 is more than the 700 MiB"):
        fit_jobs(1, 1024, 700)

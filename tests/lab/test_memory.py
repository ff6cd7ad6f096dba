"""Memory shared fairly: --jobs x --memory-mb is checked against what the grader can use (the
machine's MemAvailable, or what its cgroup's limit leaves), and lowered or refused, saying so.
The places are passed in: a test never reads the host's /proc for its verdict."""

from __future__ import annotations

import contextlib
import dataclasses
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
from mca.sandbox.probe import Mechanisms, probe
from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST

GIB = 1 << 30
MECH = probe()
HELD_MB = 200  # what the victim holds, under its 512 MiB
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
    # a /tmp in memory (a sized tmpfs, with namespaces) is part of what each hand-in takes
    jobs, said = fit_jobs(2, 1000, 2048, tmp_mb=64)
    assert jobs == 1 and "--jobs 2 x (--memory-mb 1000 + its /tmp's 64 MiB)" in said
    assert fit_jobs(2, 1000, 2048) == (2, "")


def _class(tmp: Path) -> Path:
    subs = tmp / "class"
    codes = {
        "honest": "",
        # the largest of the run's children for a few seconds once per start (what the OOM
        # killer picks: `_killer` finds it by its size, in any PID namespace), then honest
        "victim": (
            "\nimport time\n_judge, _held = judge_triggers, []\n"
            "def judge_triggers(skills, sentence, paths):\n"
            "    if not _held:\n"
            "        _held.append(b'x' * (HELD << 20))\n"
            "        time.sleep(3)\n"
            "        _held[0] = b''\n"
            "    return _judge(skills, sentence, paths)\n"
        ).replace("HELD", str(HELD_MB)),
        "hog": (  # over its own limit: MemoryError, its own failure
            "\ndef judge_triggers(skills, sentence, paths):\n    return bytearray(4 << 30)\n"
        ),
    }
    for student, code in codes.items():
        (subs / student).mkdir(parents=True)
        (subs / student / "exercises.py").write_text(STARTER + ALL_HONEST + code)
    return subs


def _descendants(top: int) -> set[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    out, todo = set(), [top]
    while todo:
        pid = todo.pop()
        kids = [p for p, parent in parents.items() if parent == pid and p not in out]
        out.update(kids)
        todo += kids
    return out


def _rss_mb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _killer(done: threading.Event, killed: list[int]) -> threading.Thread:
    """Kills, once, the first of this process's descendants (the run's children, started by its
    spawner) that holds the victim's memory: the OOM killer's choice, made from outside."""

    def kill() -> None:
        while not done.is_set():
            for pid in _descendants(os.getpid()):
                if _rss_mb(pid) >= HELD_MB * 3 // 4:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                        return
            done.wait(0.05)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def _modes() -> list[object]:
    out: list[object] = [pytest.param(None, id="unsandboxed")]
    if MECH.available:
        out.append(pytest.param(MECH, id="sandboxed"))
    if MECH.landlock_abi and MECH.user_namespaces:
        out.append(pytest.param(dataclasses.replace(MECH, user_namespaces=False), id="landlock"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("mech", _modes())
def test_a_child_killed_by_the_system_is_graded_again_alone_never_scored_0(
    tmp_path: Path, mech: Mechanisms | None
) -> None:
    limits = Limits(seconds=120, check_seconds=10, memory_mb=512)
    subs = _class(tmp_path)
    done, killed = threading.Event(), list[int]()
    _killer(done, killed)
    rows = {g.student: row(g) for g in grade(Plan(REPO, subs, 2, 0, limits, mech, secrets=()))}
    done.set()
    assert len(killed) == 1, rows
    assert rows["victim"]["total"] == MAX_POINTS == rows["honest"]["total"], rows["victim"]
    assert rows["victim"]["status"] == (
        "ok (graded again alone: the system killed it while others were graded)"
    )
    assert rows["honest"]["status"] == "ok"
    assert rows["hog"]["ex4"] == 0 and rows["hog"]["total"] == MAX_POINTS - 2
    assert "over its memory limit of 512 MiB" in rows["hog"]["failures"]
    # graded alone from the start, it is not graded again: the row says what happened
    done, killed = threading.Event(), []
    _killer(done, killed)
    alone = {g.student: row(g) for g in grade(Plan(REPO, subs, 1, 0, limits, mech, secrets=()))}
    done.set()
    assert len(killed) == 1
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

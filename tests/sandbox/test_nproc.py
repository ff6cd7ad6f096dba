"""This user's tasks, counted as RLIMIT_NPROC counts them (what a command's room is added to):
from /proc where it can be read, and where not by asking the kernel, as the spawner does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mca.sandbox.nproc import user_tasks

PROC = os.access(f"/proc/{os.getpid()}/status", os.R_OK)


def _by_status(uid: int) -> int:
    """The oracle: every process's status, its real uid and its thread count."""
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                status = Path(f"/proc/{name}/status").read_bytes()
            except OSError:
                continue
            if b"Uid:\t%d\t" % uid in status:
                at = status.find(b"\nThreads:")
                n += int(status[at + 9 : status.index(b"\n", at + 1)])
    return n


SLEEPERS = {  # as root: a user's processes whose /proc folders are the user's, and root's
    "threads": "import threading, time; [threading.Thread(target=time.sleep, args=(60,),"
    " daemon=True).start() for _ in range(4)]",
    "not dumpable": "import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)",  # as ssh-agent
    "set-uid root": "import os; os.setresuid(65534, 0, 0)",  # as sudo: real uid the user's
}


@pytest.mark.skipif(not PROC, reason="/proc cannot be read here (the count by spawning is)")
def test_a_users_tasks_are_counted_as_the_processes_statuses_count_them() -> None:
    """What RLIMIT_NPROC's room is added to: processes with threads, a non-dumpable one and
    (as root) one whose effective uid is root's and real uid the user's, all counted, as
    every status says. As root the user is `nobody`; otherwise this user."""
    root = os.geteuid() == 0
    uid = 65534 if root else os.getuid()
    kids = []
    for name, setup in SLEEPERS.items():
        if name == "set-uid root" and not root:
            continue
        # everything imported first: the interpreter may be under root's home (pyenv)
        drop = "import ctypes, os, threading, time; "
        drop += "os.setresgid(65534, 65534, 65534); " if root else ""
        drop += "" if name == "set-uid root" or not root else "os.setresuid(65534, 65534, 65534); "
        code = f"{drop}{setup}; print(flush=True); import time; time.sleep(60)"
        kids.append(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE))
    try:
        for k in kids:
            assert k.stdout is not None and k.stdout.readline() == b"\n"  # set up
        if root:  # the case the status is read for
            assert os.stat(f"/proc/{kids[-1].pid}").st_uid == 0
        for _ in range(50):  # the user's other processes (a parallel suite's) come and go
            a, b, c = _by_status(uid), user_tasks(uid), _by_status(uid)
            if a == b == c:  # a quiet moment: a miscount shows in every try, churn in some
                break
        assert a == b == c
        assert b >= 5 + (2 if root else 0)  # the four threads and their process, at least
    finally:
        for k in kids:
            k.kill()
            k.wait()
            if k.stdout is not None:
                k.stdout.close()


# Run in a process of its own (single-threaded: the count lowers its own limit meanwhile), as
# `nobody` when the test runs as root (root is exempt from RLIMIT_NPROC): five sleepers started
# between two counts are five tasks more, and a count from the last one takes two starts.
COUNT = """
import json, os, sys, time
from mca.sandbox import nproc as tasks
if os.geteuid() == 0:
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
starts = []
real = os.posix_spawn
def spy(*a, **k):
    starts.append(1)
    return real(*a, **k)
os.posix_spawn = spy
out = []
for _ in range(20):  # the user's other processes may come and go meanwhile
    before = tasks._count_by_spawning()
    kids = []
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        kids.append(pid)
    del starts[:]
    after = tasks._count_by_spawning(before + 5)
    guessed = len(starts)
    again = tasks._count_by_spawning()
    for pid in kids:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    out = [before, after, again, guessed]
    if after == again:
        break
print(json.dumps(out))
"""


def test_the_count_without_proc_is_the_kernels_and_two_starts_when_it_held() -> None:
    repo = str(Path(__file__).resolve().parent.parent.parent)
    for _ in range(10):  # the user's other tasks (a parallel suite's) may start meanwhile
        done = subprocess.run(
            [sys.executable, "-c", COUNT],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": repo},
            check=False,
        )
        assert done.returncode == 0, done.stderr
        before, after, again, guessed = json.loads(done.stdout)
        # a quiet moment (no task of the user's started or ended during the counts, which
        # would also cost the guessed count its two starts): a miscount shows in every try
        if after == again == before + 5 and guessed == 2:
            break
    assert after == again == before + 5, (before, after, again)
    assert guessed == 2  # the guess was right: one start at it plus one, one at it
    if PROC:  # (the count by spawning lowers its caller's limit: not in this threaded process)
        assert user_tasks(os.getuid()) > 0  # this process counts itself

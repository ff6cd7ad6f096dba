"""mca's children, found without reading every process on the system: the threads' `children`
lists agree with the full /proc walk, from any thread, and an orphan is still found and killed."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mca.sandbox.tasks import (
    children,
    children_of,
    kill_orphans,
    own_children,
    set_subreaper,
    user_tasks,
)

pytestmark = pytest.mark.skipif(own_children() is None, reason="no /proc children lists here")


def _start(started: list[subprocess.Popen[bytes]]) -> None:
    started.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]))


def test_the_children_lists_agree_with_the_full_walk_for_children_of_every_thread() -> None:
    started: list[subprocess.Popen[bytes]] = []
    try:
        _start(started)
        worker = threading.Thread(target=_start, args=(started,))  # a child of another thread
        worker.start()
        worker.join()
        mine = {p.pid for p in started}
        assert mine <= set(own_children() or [])
        assert set(own_children() or []) == set(children_of().get(os.getpid(), []))
        assert children(os.getpid()) == frozenset(children_of().get(os.getpid(), []))
    finally:
        for p in started:
            p.kill()
            p.wait()


def test_an_orphan_is_found_through_the_lists_and_killed() -> None:
    """A command's daemonised grandchild becomes mca's child (mca is the subreaper); with
    nothing else new, kill_orphans must still find it, and it must end."""
    if not set_subreaper():
        pytest.skip("cannot become a subreaper here")
    before = children(os.getpid())
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\n"
    subprocess.run([sys.executable, "-c", code], check=True)  # its parent ends: an orphan
    deadline = time.monotonic() + 10
    orphans: set[int] = set()
    while not orphans and time.monotonic() < deadline:
        orphans = set(own_children() or []) - before
        time.sleep(0.01)
    assert orphans, "the grandchild never became this process's child"
    kill_orphans(before, set(), threading.Lock())
    assert not set(own_children() or []) - before
    for pid in orphans:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


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
        for _ in range(50):  # the user's other processes may come and go meanwhile
            a, b, c = _by_status(uid), user_tasks(uid), _by_status(uid)
            if a == c:
                break
        assert a == b == c
        assert b >= 5 + (2 if root else 0)  # the four threads and their process, at least
    finally:
        for k in kids:
            k.kill()
            k.wait()
            if k.stdout is not None:
                k.stdout.close()

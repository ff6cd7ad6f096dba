"""For root, a pids cgroup of a sandbox's own: it holds every process of its commands, and
kills them (RLIMIT_NPROC does not bind root). Split from box.py (the session's Sandbox), which
uses it; nproc.py counts the tasks an ordinary user's RLIMIT_NPROC counts."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

__all__ = ["kill_cgroup", "make_cgroup", "reap", "remove_cgroup"]

_counter = itertools.count(1)
_swept = iter((True,))  # make_cgroup sweeps once per process


def make_cgroup(parent: Path, max_processes: int) -> Path | None:
    """A new pids cgroup under `parent` holding at most `max_processes` tasks (None: none could
    be made). Its name is new even where an earlier process of the same pid left one behind (a
    name taken made this return None: no process limit at all for root, whom RLIMIT_NPROC
    exempts); the first call of a process sweeps the empty ones whose process is gone."""
    if next(_swept, None) is not None:
        sweep_cgroups(parent)
    for _ in range(3):
        path = parent / f"mca-{os.getpid()}-{next(_counter)}-{os.urandom(3).hex()}"
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        except OSError:
            return None
        try:
            (path / "pids.max").write_text(str(max_processes))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return path
    return None


def sweep_cgroups(parent: Path) -> None:
    """rmdir each `mca-PID-...` cgroup under `parent` whose process no longer exists (one
    killed before it could remove its own); the kernel refuses a cgroup that still has tasks."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            pid = entry.name.split("-")[1] if entry.name.startswith("mca-") else ""
            if pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_cgroup(cgroup: Path) -> None:
    """rmdir the emptied cgroup, retried: the kernel refuses it (EBUSY) until the last killed
    task has finished exiting, which can take a moment after cgroup.procs reads empty."""
    for _ in range(200):
        try:
            cgroup.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.005)


def kill_cgroup(cgroup: Path) -> None:
    killed: set[int] = set()
    try:
        for _ in range(50):  # each round kills what is there; a fork in between is the next's
            try:
                pids = [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]
            except OSError:
                return
            if not pids:
                return
            for p in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p, signal.SIGKILL)
            killed.update(pids)
    finally:
        reap(sorted(killed))


def reap(pids: list[int], seconds: float = 2.0) -> None:
    """Reap those of these SIGKILLed processes that are or become mca's children (orphans a
    subreaper adopted, some only once their killed parent has ended). Reaped at once, before
    they were dead, they stayed zombies for the rest of the session (two per command that left
    something running), and every later scan of /proc read them too."""
    left, deadline = set(pids), time.monotonic() + seconds
    while left:
        for p in list(left):
            if _reaped_or_not_ours(p):
                left.discard(p)
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.001)


def _reaped_or_not_ours(pid: int) -> bool:
    """False while `pid` may still end as mca's child to reap (alive, or dead and ours)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        pass
    except OSError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True  # gone (reaped by its parent), or not ours to see
    state = stat[stat.rfind(b")") + 2 :].split()[0]
    return state in (b"Z", b"X")  # dead with a parent of its own, which reaps it

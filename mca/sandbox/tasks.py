"""A command's processes, seen from mca's side: this user's tasks counted (what RLIMIT_NPROC
counts), mca made the subreaper of what a command leaves, and what it left found (/proc) and
killed (a pids cgroup of its own, for root). Split from linux.py (what the child does before
exec) and box.py (the session's Sandbox), which use these."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import itertools
import os
import resource
import signal
import threading
import time
from collections.abc import Collection
from pathlib import Path

__all__ = [
    "children",
    "children_of",
    "kill_cgroup",
    "kill_orphans",
    "make_cgroup",
    "own_children",
    "reap",
    "remove_cgroup",
    "set_subreaper",
    "user_tasks",
]

PR_SET_CHILD_SUBREAPER = 36
_counter = itertools.count(1)
_swept = iter((True,))  # make_cgroup sweeps once per process


class _SysInfo(ctypes.Structure):
    _fields_ = [
        ("uptime", ctypes.c_long),
        ("loads", ctypes.c_ulong * 3),
        ("ram", ctypes.c_ulong * 6),  # total, free, shared, buffer, total swap, free swap
        ("procs", ctypes.c_ushort),
        ("pad", ctypes.c_ushort),
        ("high", ctypes.c_ulong * 2),
        ("mem_unit", ctypes.c_uint),
        ("_f", ctypes.c_char * 8),
    ]


def user_tasks(uid: int) -> int:
    """This user's tasks (processes and threads, by real uid: what RLIMIT_NPROC counts), from
    /proc; where it cannot be read (hidden, or some entries refused), by asking the kernel
    itself (see _count_by_spawning).

    A process's /proc folder belongs to its effective uid, or to root when it is not dumpable
    (ssh-agent, setuid programs): one stat sorts most processes. Ours: the thread count is the
    link count of its `task` folder, less two. Root's: the status says the real uid. Another
    user's: not counted (a program set-uid to a third user that this user started is missed)."""
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return _count_by_spawning()
    if str(os.getpid()) not in names:  # a /proc that does not show this process shows nothing
        return _count_by_spawning()
    mine = b"Uid:\t%d\t" % uid
    n = 0
    for name in names:
        try:
            owner = os.stat(f"/proc/{name}").st_uid
            if owner == uid and uid != 0:
                n += max(os.stat(f"/proc/{name}/task").st_nlink - 2, 1)
                continue
            if owner != 0:
                continue
            with open(f"/proc/{name}/status", "rb") as f:
                status = f.read()
        except FileNotFoundError:
            continue  # it ended
        except OSError:
            return _count_by_spawning()
        if mine in status:
            at = status.find(b"\nThreads:")
            n += int(status[at + 9 : status.index(b"\n", at + 1)]) if at >= 0 else 1
    return n


def _count_by_spawning() -> int:
    """The kernel's own count of this user's tasks, found without /proc: a start under a soft
    RLIMIT_NPROC of n fails exactly when n tasks already run, so the smallest n at which
    /bin/true starts is the count plus one (a binary search: about 20 starts)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    lo, hi = 1, hard if hard != resource.RLIM_INFINITY else 1 << 22
    try:
        while lo < hi:
            mid = (lo + hi) // 2
            resource.setrlimit(resource.RLIMIT_NPROC, (mid, hard))
            try:
                pid = os.posix_spawn("/bin/true", ["true"], {})
            except OSError as e:
                if e.errno != errno.EAGAIN:
                    return _all_tasks()
                lo = mid + 1
                continue
            os.waitpid(pid, 0)
            hi = mid
    finally:
        resource.setrlimit(resource.RLIMIT_NPROC, (soft, hard))
    return lo - 1


def _all_tasks() -> int:
    """Every task on the system (a bound of any user's): /proc/loadavg's count, or
    sysinfo(2)'s (16 bits) where /proc is hidden."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[1])
    except (OSError, ValueError, IndexError):
        pass
    info = _SysInfo()
    if ctypes.CDLL(None, use_errno=True).sysinfo(ctypes.byref(info)) != 0:
        return 0xFFFF
    return int(info.procs)


def set_subreaper() -> bool:
    """Make mca the parent of orphaned descendants (so a daemonised one can be found)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0


def children_of() -> dict[int, list[int]]:
    """ppid -> pids, for every process (read from /proc; empty where /proc cannot be read)."""
    tree: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return tree
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        tree.setdefault(int(fields[1]), []).append(int(name))
    return tree


def own_children() -> list[int] | None:
    """This process's children, from each of its threads' `children` list (a few small reads,
    where children_of reads every process's stat); None where the kernel keeps no such list
    (built without CONFIG_PROC_CHILDREN) or /proc cannot be read."""
    me = os.getpid()
    try:
        tids = os.listdir(f"/proc/{me}/task")
    except OSError:
        return None
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{me}/task/{tid}/children", "rb") as f:
                out += [int(x) for x in f.read().split()]
        except FileNotFoundError:
            if tid == str(me):  # the main thread lives as long as the process: no such list
                return None
        except (OSError, ValueError):
            return None
    return out


def children(pid: int) -> frozenset[int]:
    if pid == os.getpid():
        own = own_children()
        if own is not None:
            return frozenset(own)
    return frozenset(children_of().get(pid, []))


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


def kill_orphans(
    before: frozenset[int],
    launched: set[int],
    lock: threading.Lock,
    spawners: Collection[int] = (),
) -> None:
    """mca is a subreaper: what a command left running became mca's children. Kill each new
    child's whole tree and reap it (commands run one at a time, so a child mca did not have
    before the command is the command's; those in `launched`, and the spawners, mca started on
    purpose)."""
    me, deadline = os.getpid(), time.monotonic() + 2.0
    for _ in range(50):
        with lock:
            own = own_children()
            if own is not None and all(p in before or p in spawners or p in launched for p in own):
                return  # no orphan: the whole tree is not needed
            tree = children_of()
            new = [p for p in tree.get(me, []) if p not in before and p not in spawners]
            orphans = [p for p in new if p not in launched]
        if not orphans:
            return
        todo, seen = list(orphans), set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            todo += tree.get(p, [])
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)
        reap(orphans, max(deadline - time.monotonic(), 0.0))

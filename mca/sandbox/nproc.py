"""RLIMIT_NPROC for a command without a user namespace of its own: it counts every task of this
user (processes and threads, by real uid), so a command's room is added on top of what runs
already (a browser and an editor are often past a thousand threads). The spawner counts them
right before each start: from /proc, or where /proc is hidden by asking the kernel, which takes
lowering the counting process's own limit, something only a single-threaded process may do.
Only the standard library's ctypes, errno, os and resource: the spawner imports this."""

from __future__ import annotations

import ctypes
import errno
import os
import resource

__all__ = ["nproc_limit", "nproc_room", "user_tasks"]


def nproc_room(max_processes: int, in_user_ns: bool) -> int:
    """The room the spawner adds on top of this user's tasks (0: none to add: a user namespace
    of the command's own counts only its tasks (limits.rlimits), and root is exempt)."""
    return 0 if in_user_ns or os.geteuid() == 0 else max_processes


def nproc_limit(tasks: int, room: int) -> int:
    """RLIMIT_NPROC for a command: this user's tasks now and the room, under the hard limit
    (a process may lower its hard limit, never raise it)."""
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    return tasks + room if hard == resource.RLIM_INFINITY else min(tasks + room, hard)


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


def user_tasks(uid: int, guess: int = 0) -> int:
    """This user's tasks (processes and threads, by real uid: what RLIMIT_NPROC counts), from
    /proc; where it cannot be read (hidden, or some entries refused), by asking the kernel
    itself (see _count_by_spawning: a single-threaded process only; `guess`, the last count,
    makes it two starts when nothing changed).

    A process's /proc folder belongs to its effective uid, or to root when it is not dumpable
    (ssh-agent, setuid programs): one stat sorts most processes. Ours: the thread count is the
    link count of its `task` folder, less two. Root's: the status says the real uid. Another
    user's: not counted (a program set-uid to a third user that this user started is missed)."""
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return _count_by_spawning(guess)
    if str(os.getpid()) not in names:  # a /proc that does not show this process shows nothing
        return _count_by_spawning(guess)
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
            return _count_by_spawning(guess)
        if mine in status:
            at = status.find(b"\nThreads:")
            n += int(status[at + 9 : status.index(b"\n", at + 1)]) if at >= 0 else 1
    return n


def _count_by_spawning(guess: int = 0) -> int:
    """The kernel's own count of this user's tasks, found without /proc: a start under a soft
    RLIMIT_NPROC of n fails exactly when n tasks already run, so the smallest n at which
    /bin/true starts is the count plus one: two starts when it is still `guess`, else a binary
    search (about 22). It lowers this process's
    own limit meanwhile: another thread's start would fail, so only the single-threaded
    spawner calls it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    top = hard if hard != resource.RLIM_INFINITY else 1 << 22

    def starts(n: int) -> bool | None:  # None: the start failed for another reason
        resource.setrlimit(resource.RLIMIT_NPROC, (n, hard))
        try:
            pid = os.posix_spawn("/bin/true", ["true"], {})
        except OSError as e:
            return False if e.errno == errno.EAGAIN else None
        os.waitpid(pid, 0)
        return True

    try:
        if 0 < guess < top:  # still the last count: n = guess + 1 starts, n = guess does not
            at_guess = starts(guess + 1)
            if at_guess and starts(guess) is False:
                return guess
        lo, hi = 1, top  # the smallest n that starts is in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            ok = starts(mid)
            if ok is None:
                return _all_tasks()
            if ok:
                hi = mid
            else:
                lo = mid + 1
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

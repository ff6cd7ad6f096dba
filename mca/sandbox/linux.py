"""The Linux calls a sandboxed child makes between fork and exec (namespaces, mounts, limits).

Everything here runs in the forked child, so it only makes system calls on values prepared in
mca: no imports, no lookups, nothing that could wait on a lock another thread held at fork.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
# Flags a bind mount in a user namespace must keep when it is made read-only (the kernel locks
# them): nosuid, nodev, noexec, and the access-time flags (statvfs reports them as these bits).
ST_LOCKED = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: 1024, 2048: 2048, 4096: 1 << 21}
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
SYS_MOUNT_SETATTR = 442  # Linux 5.12
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
SYS_CLOSE_RANGE = 436
# Capabilities root keeps inside the sandbox: those about files only (Landlock bounds where).
KEEP_CAPS = {0, 1, 2, 3, 4, 6, 7}  # chown, dac_override, dac_read_search, fowner, fsetid, set[ug]id


class SetupError(OSError):
    """A step of the child's set-up failed (reported to mca as the command's error)."""


@dataclass(frozen=True)
class ChildPlan:
    """Everything the child does, decided in mca."""

    namespaces: int  # CLONE_* flags to unshare (0: none)
    uid: int
    gid: int
    loopback_up: bool  # a new network namespace: bring its own `lo` up
    binds: tuple[tuple[bytes, bytes], ...]  # (source, target) bind mounts, read-write
    writable: tuple[bytes, ...]  # mount points left writable when everything else is not
    read_only: tuple[tuple[bytes, int], ...]  # (path, flags to keep) made read-only in place
    mount_proc: bool
    rlimits: tuple[tuple[int, int], ...]
    cgroup_procs: bytes  # a pids cgroup's cgroup.procs to join ('' none)
    drop_caps: tuple[int, ...]
    ruleset_fd: int


def locked_flags(path: str) -> int:
    """The mount flags a read-only remount of `path` must keep."""
    f = os.statvfs(path).f_flag
    return sum(ms for st, ms in ST_LOCKED.items() if f & st)


def last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 40


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class Child:
    """The child's side, with libc resolved before fork."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.syscall.restype = ctypes.c_long
        self._ro = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
        self._rw = _MountAttr(0, MOUNT_ATTR_RDONLY, 0, 0)

    def _ok(self, result: int, what: str) -> None:
        if result != 0:
            err = ctypes.get_errno()
            raise SetupError(err, f"sandbox: {what}: {os.strerror(err)}")

    @staticmethod
    def _write(path: str | bytes, text: bytes) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, text)
        finally:
            os.close(fd)

    def setup(self, plan: ChildPlan, enforce: Callable[[int], None]) -> None:
        """Run in the child before exec: enter namespaces, mount, limit, then restrict."""
        if plan.cgroup_procs:
            self._write(plan.cgroup_procs, str(os.getpid()).encode())
        if plan.namespaces:
            self._namespaces(plan)
        for kind, limit in plan.rlimits:
            resource.setrlimit(kind, (limit, limit))
        for cap in plan.drop_caps:
            self.libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # best effort: not every cap exists
        enforce(plan.ruleset_fd)

    def _namespaces(self, plan: ChildPlan) -> None:
        self._ok(self.libc.unshare(plan.namespaces), "unshare")
        self._write("/proc/self/setgroups", b"deny")
        self._write("/proc/self/uid_map", b"%d %d 1" % (plan.uid, plan.uid))
        self._write("/proc/self/gid_map", b"%d %d 1" % (plan.gid, plan.gid))
        self._ok(self.libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private /")
        for source, target in plan.binds:
            self._ok(self.libc.mount(source, target, None, MS_BIND | MS_REC, None), "bind")
        if plan.writable:
            self._read_only_root(plan.writable)
        for path, keep in plan.read_only:
            self._ok(self.libc.mount(path, path, None, MS_BIND | MS_REC, None), "bind")
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | keep
            self._ok(self.libc.mount(path, path, None, flags, None), "read-only")
        if plan.loopback_up:
            _loopback_up()
        if plan.namespaces & CLONE_NEWPID:
            self._become_init_child()
        if plan.mount_proc:
            # best effort: where /proc is partly hidden (some containers) the kernel refuses
            self.libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)

    def _read_only_root(self, writable: tuple[bytes, ...]) -> None:
        """Every mount read-only but the writable ones (which were bound onto themselves, so
        each is a mount of its own): chmod, utime and the like outside are refused too, which
        Landlock alone does not cover. Kernels before 5.12 lack the call; Landlock still holds."""
        size = ctypes.sizeof(_MountAttr)
        call = self.libc.syscall
        if call(SYS_MOUNT_SETATTR, -100, b"/", AT_RECURSIVE, ctypes.byref(self._ro), size):
            return
        for path in writable:
            result = call(SYS_MOUNT_SETATTR, -100, path, AT_RECURSIVE, ctypes.byref(self._rw), size)
            self._ok(int(result), "writable mount")

    def _become_init_child(self) -> None:
        """Fork: the child goes on to exec as the first process of the new PID namespace (when
        it ends, the kernel kills everything left in it); this process only waits for it and
        ends the same way, so mca sees the command's own status."""
        pid = os.fork()
        if pid == 0:
            return
        self.libc.syscall(SYS_CLOSE_RANGE, 0, 0xFFFFFFFF, 0)  # hold no pipe of mca's open

        def stop(signum: int, frame: object) -> None:
            os.kill(pid, signal.SIGKILL)  # the namespace's first process ignores the rest

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, stop)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except ChildProcessError:
                os._exit(127)
        if os.WIFSIGNALED(status):
            died = os.WTERMSIG(status)
            signal.signal(died, signal.SIG_DFL)
            os.kill(os.getpid(), died)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _loopback_up() -> None:
    """`ip link set lo up` in the new network namespace (two ioctls on a throwaway socket)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | IFF_UP))


def drop_list() -> tuple[int, ...]:
    """Capabilities to drop from the bounding set when mca runs as root."""
    if os.geteuid() != 0:
        return ()
    return tuple(c for c in range(last_cap() + 1) if c not in KEEP_CAPS)


def rlimits(
    max_processes: int,
    max_file_bytes: int,
    in_user_ns: bool,
    memory_bytes: int = 0,
    cpu_seconds: int = 0,
) -> list[tuple[int, int]]:
    """Limits for the command. RLIMIT_NPROC counts a user's tasks (processes and threads):
    inside a new user namespace that is the sandbox's own count; without one, every task of this
    user, so the room is added on top of a bound of what runs already (a browser and an editor
    are often past a thousand threads). Root is exempt from it (a pids cgroup stands in). Memory
    (address space) and CPU time are per process, when asked for (0: none)."""
    out = [(resource.RLIMIT_FSIZE, max_file_bytes), (resource.RLIMIT_CORE, 0)]
    out += [(resource.RLIMIT_AS, memory_bytes)] if memory_bytes > 0 else []
    out += [(resource.RLIMIT_CPU, cpu_seconds)] if cpu_seconds > 0 else []
    if os.geteuid() != 0:
        room = max_processes if in_user_ns else user_tasks(os.getuid()) + max_processes
        _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        cap = hard if hard != resource.RLIM_INFINITY else room
        out.append((resource.RLIMIT_NPROC, min(room, cap)))
    return [(kind, _under_hard(kind, value)) for kind, value in out]


def _under_hard(kind: int, value: int) -> int:
    """A process may lower its hard limit, never raise it: ask no more than it has."""
    hard = resource.getrlimit(kind)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


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
    each process's status. Where /proc cannot be read (hidden, or some entries refused), a
    bound that needs no walk: every task on the system."""
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return _all_tasks()
    if str(os.getpid()) not in names:  # a /proc that does not show this process shows nothing
        return _all_tasks()
    mine = b"Uid:\t%d\t" % uid
    n = 0
    for name in names:
        try:
            with open(f"/proc/{name}/status", "rb") as f:
                status = f.read()
        except FileNotFoundError:
            continue  # it ended
        except OSError:
            return _all_tasks()
        if mine in status:
            at = status.find(b"\nThreads:")
            n += int(status[at + 9 : status.index(b"\n", at + 1)]) if at >= 0 else 1
    return n


def _all_tasks() -> int:
    """Every task on the system: /proc/loadavg's count, or sysinfo(2)'s (16 bits) where /proc
    is hidden."""
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

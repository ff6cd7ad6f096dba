"""The Linux calls a sandboxed child makes between fork and exec (namespaces, mounts, limits).

Everything here runs in the forked child, so it only makes system calls on values prepared in
mca: no imports, no lookups, nothing that could wait on a lock another thread held at fork.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import platform
import resource
import signal
import socket
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
SYS_MOUNT_SETATTR = 442  # Linux 5.12
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
PR_CAPBSET_DROP = 24
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
MNT_DETACH = 2
SYS_CLOSE_RANGE = 436
SYS_LANDLOCK_ADD_RULE = 445  # the same on every architecture (asm-generic)
STATUS = struct.Struct("i")  # a command's exit code, as its PID namespace's waiter reports it
# Capabilities root keeps inside the sandbox: those about files only (Landlock bounds where).
KEEP_DIR, KEEP_LINK, KEEP_FILE, KEEP_TREE = 0, 1, 2, 3  # what is made again in a hidden folder
VIEW_WRITABLE, VIEW_MASK = 4, 5  # a view's entry bound writable, or covered (mca/sandbox/view.py)
VIEW_TMPFS = 6  # a writable entry made a tmpfs of its own (target: its mount options)
# pivot_root(2) has no libc wrapper: its number per machine, for a 64-bit interpreter (a 32-bit
# one on a 64-bit kernel calls the 32-bit table); -1: unknown here, so no view
SYS_PIVOT_ROOT = (
    {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}.get(
        platform.machine(), -1
    )
    if sys.maxsize > 2**32
    else -1
)


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
    ruleset_fd: int  # -1: no Landlock here
    masks: tuple[tuple[bytes, bool], ...] = ()  # secrets covered: (path, is a directory)
    mask_dir: bytes = b""  # a directory of mca's own to make the cover for secret files in
    remount: tuple[tuple[bytes, int], ...] | None = None  # read-only one by one (no setattr)
    strict: bool = False  # no Landlock: the mounts are the only wall, so each must hold
    hide: tuple[bytes, ...] = ()  # folders where sockets live, each covered by an empty tmpfs
    keep: tuple[tuple[int, bytes, bytes, int], ...] = ()  # made again in them (sockets.py)
    # An allow-list's view (mca/sandbox/view.py): an empty directory of mca's own where a tmpfs
    # becomes the child's root, with only these entries made in it (b'': the whole system)
    view: bytes = b""
    view_entries: tuple[tuple[int, bytes, bytes, int], ...] = ()
    # RLIMIT_NPROC's room on top of this user's tasks, which the spawner counts (a single
    # thread may lower its own limit to ask the kernel); 0: the rlimits say it all
    nproc_room: int = 0


class MountAttr(ctypes.Structure):
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
        self._ro = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
        self._rw = MountAttr(0, MOUNT_ATTR_RDONLY, 0, 0)

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

    def setup(self, plan: ChildPlan, enforce: Callable[[int], None], report: int = -1) -> None:
        """Run in the child before exec: enter namespaces, mount, limit, then restrict.
        `report`: where the PID namespace's waiter writes the command's status (-1: nowhere)."""
        if plan.cgroup_procs:
            self._write(plan.cgroup_procs, str(os.getpid()).encode())
        if plan.namespaces:
            self._namespaces(plan, report)
        for kind, limit in plan.rlimits:
            resource.setrlimit(kind, (limit, limit))
        for cap in plan.drop_caps:
            self.libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # best effort: not every cap exists
        enforce(plan.ruleset_fd)

    def _namespaces(self, plan: ChildPlan, report: int) -> None:
        self._ok(self.libc.unshare(plan.namespaces), "unshare")
        if plan.namespaces & CLONE_NEWUSER:  # else joined, made and mapped already (spawner)
            self.map_ids(plan.uid, plan.gid)
            self._no_nested_user_namespaces(plan.strict)
        self._ok(self.libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private /")
        if plan.view:
            self._build_view(plan.view, plan.view_entries, plan.ruleset_fd)
        else:
            self._whole_system(plan)
        if plan.loopback_up:
            _loopback_up()
        if plan.namespaces & CLONE_NEWPID:
            self._become_init_child(report)
        if plan.mount_proc:
            self._proc(plan.strict, plan.view + b"/proc")
        if plan.view:
            self._pivot(plan.view)

    def _whole_system(self, plan: ChildPlan) -> None:
        """The system as it is, secrets covered, sockets hidden, read-only but the writable."""
        self._mask(plan.masks, plan.mask_dir)
        for source, target in plan.binds:
            self._ok(self.libc.mount(source, target, None, MS_BIND | MS_REC, None), "bind")
        self._hide(plan.hide, plan.keep)
        if plan.writable:
            self._read_only_root(plan)
        for path, keep in plan.read_only:
            self._ok(self.libc.mount(path, path, None, MS_BIND | MS_REC, None), "bind")
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | keep
            self._ok(self.libc.mount(path, path, None, flags, None), "read-only")

    def _build_view(
        self, root: bytes, entries: tuple[tuple[int, bytes, bytes, int], ...], ruleset: int
    ) -> None:
        """An empty tmpfs at `root` with only `entries` in it: directories on the way, links
        made again, files and trees bound read-only from the same path outside (writable ones
        bound as they are, a sized one a tmpfs of its own, which `ruleset` is told of); then
        the tmpfs itself made read-only. It becomes `/` once the child's /proc is mounted in
        it (`_pivot`)."""
        quiet = MS_NOSUID | MS_NODEV
        made = self.libc.mount(b"none", root, b"tmpfs", quiet, b"mode=755,size=64k")
        self._ok(made, "the view's root")
        for kind, path, target, keep in entries:
            inside = root + path
            if kind == VIEW_MASK:  # a directory by an empty one nobody may open, a file by null
                made = self._cover(inside, bool(target), b"/dev/null")
                self._ok(made, f"cover {os.fsdecode(path)}")
                continue
            if kind == KEEP_LINK:
                os.symlink(target, inside)
                continue
            if kind == KEEP_FILE:
                made = os.open(inside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
                os.close(made)
            else:
                os.mkdir(inside, 0o755)
            if kind == KEEP_DIR:
                continue
            if kind == VIEW_TMPFS:  # sized: writing past it is the kernel's ENOSPC
                self._ok(self.libc.mount(b"none", inside, b"tmpfs", quiet, target), "sized /tmp")
                self._grant(ruleset, inside, keep)
                continue
            bound = self.libc.mount(path, inside, None, MS_BIND | MS_REC, None)
            self._ok(bound, f"bind {os.fsdecode(path)}")
            if kind != VIEW_WRITABLE:
                ro = MS_BIND | MS_REMOUNT | MS_RDONLY | keep
                self._ok(self.libc.mount(None, inside, None, ro, None), "read-only")
        ro_root = MS_REMOUNT | MS_RDONLY | quiet
        self._ok(self.libc.mount(None, root, None, ro_root, None), "the view read-only")

    def _grant(self, ruleset: int, path: bytes, rights: int) -> None:
        """Landlock's `rights` on a tmpfs made here (a new inode: no rule of mca's names it),
        added to this child's ruleset before it restricts itself (a lab child's own)."""
        if ruleset < 0 or not rights:
            return
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY)
        attr = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr (packed)
        added = int(self.libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, 1, attr, 0))
        os.close(fd)
        self._ok(added, "Landlock's rule for the sized tmpfs")

    def _pivot(self, root: bytes) -> None:
        """The view becomes `/`; the old root is let go, so nothing else is left to reach."""
        os.chdir(root)
        self._ok(int(self.libc.syscall(SYS_PIVOT_ROOT, b".", b".")), "pivot_root")
        self._ok(self.libc.umount2(b".", MNT_DETACH), "let the old root go")
        os.chdir("/")

    def map_ids(self, uid: int, gid: int) -> None:
        """Map this user in the new user namespace. mca is non-dumpable (its memory holds the
        keys), and a non-dumpable process's /proc/self files belong to root: an ordinary user
        could not write its own maps. The child becomes dumpable for the few system calls left
        before exec, which makes every process dumpable again anyway."""
        self.libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
        self._write("/proc/self/setgroups", b"deny")
        self._write("/proc/self/uid_map", b"%d %d 1" % (uid, uid))
        self._write("/proc/self/gid_map", b"%d %d 1" % (gid, gid))

    def _no_nested_user_namespaces(self, strict: bool) -> None:
        """No user namespace inside this one (where a command would have every capability
        again, and could mount over what it sees): the limit is this namespace's own."""
        try:
            self._write("/proc/sys/user/max_user_namespaces", b"0")
        except OSError as e:
            if strict:
                raise SetupError(e.errno, "sandbox: cannot forbid nested user namespaces") from e

    def _mask(self, masks: tuple[tuple[bytes, bool], ...], mask_dir: bytes) -> None:
        """Each secret covered by something empty that nobody may open: a directory by a
        read-only tmpfs of mode 000, a file by an empty file of mode 000 made here, in a tmpfs
        over `mask_dir` that is let go once bound (nothing of it is left on any disk, and the
        cover's path is under $MCA_HOME, which no Landlock rule grants)."""
        files = [path for path, is_dir in masks if not is_dir]
        if files and mask_dir:  # first: the directories covered next may hold mask_dir
            quiet = MS_NOSUID | MS_NODEV | MS_NOEXEC
            made = self.libc.mount(b"none", mask_dir, b"tmpfs", quiet, b"mode=700,size=4k")
            self._ok(made, "a place for the covers")
            cover = mask_dir + b"/cover"
            os.close(os.open(cover, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0))
            for path in files:
                self._ok(self._cover(path, False, cover), f"cover {os.fsdecode(path)}")
            self._ok(self.libc.umount2(mask_dir, MNT_DETACH), "let the covers' place go")
        for path in (path for path, is_dir in masks if is_dir):
            self._ok(self._cover(path, True, b""), f"cover {os.fsdecode(path)}")

    def _hide(
        self, places: tuple[bytes, ...], keep: tuple[tuple[int, bytes, bytes, int], ...]
    ) -> None:
        """Each folder where sockets live covered by an empty tmpfs, read-only once what is
        kept in it is made again: links and folders, and files and folders bound back from
        where they were (opened before they are covered, bound through /proc/self/fd). What
        is kept is a convenience: one that fails is left out."""
        if not places:
            return
        quiet = MS_NOSUID | MS_NODEV | MS_NOEXEC
        sources: dict[bytes, int] = {}
        for kind, path, source, _ in keep:
            if kind in (KEEP_FILE, KEEP_TREE):
                try:
                    sources[path] = os.open(source, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
        try:
            covered = []
            for place in places:
                made = self.libc.mount(b"none", place, b"tmpfs", quiet, b"mode=755,size=64k")
                if made != 0 and ctypes.get_errno() == errno.ENOENT and not os.path.lexists(place):
                    continue  # gone since mca looked: no socket left there
                self._ok(made, f"hide the sockets in {os.fsdecode(place)}")
                covered.append(place)
            for kind, path, target, flags in keep:
                try:
                    self._uncover(kind, path, target, flags, sources.get(path, -1))
                except OSError:
                    continue
            for place in covered:
                ro = MS_BIND | MS_REMOUNT | MS_RDONLY | quiet
                self._ok(self.libc.mount(None, place, None, ro, None), "read-only cover")
        finally:
            for fd in sources.values():
                os.close(fd)

    def _uncover(self, kind: int, path: bytes, target: bytes, flags: int, fd: int) -> None:
        if kind == KEEP_DIR:
            os.mkdir(path, 0o755)
        elif kind == KEEP_LINK:
            os.symlink(target, path)
        elif fd >= 0:
            if kind == KEEP_TREE:
                os.mkdir(path, 0o755)
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644))
            if self.libc.mount(b"/proc/self/fd/%d" % fd, path, None, MS_BIND, None) == 0:
                ro = MS_BIND | MS_REMOUNT | MS_RDONLY | flags
                self.libc.mount(None, path, None, ro, None)

    def _cover(self, path: bytes, is_dir: bool, cover: bytes) -> int:
        """One mount over a secret. A file replaced while the kernel mounts on it (renamed
        over, as atomic writes do) makes the mount fail with ENOENT: it is tried again; a
        secret gone since mca looked has nothing left to cover."""
        quiet = MS_NOSUID | MS_NODEV | MS_NOEXEC
        for _ in range(5):
            if is_dir:
                made = self.libc.mount(b"none", path, b"tmpfs", quiet | MS_RDONLY, b"mode=000")
            else:
                made = self.libc.mount(cover, path, None, MS_BIND, None)
            if made == 0 or ctypes.get_errno() != errno.ENOENT:
                return int(made)
            if not os.path.lexists(path):
                return 0
        return int(made)

    def _proc(self, strict: bool, where: bytes = b"/proc") -> None:
        """The new PID namespace's own /proc. Where the kernel refuses it (a /proc partly
        hidden, as in some containers) the old one would show every process outside: without
        Landlock to hold that, an empty /proc instead."""
        flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
        if self.libc.mount(b"proc", where, b"proc", flags, None) == 0 or not strict:
            return
        empty = self.libc.mount(b"none", where, b"tmpfs", flags | MS_RDONLY, b"mode=000")
        self._ok(empty, "hide /proc")

    def _read_only_root(self, plan: ChildPlan) -> None:
        """Every mount read-only but the writable ones (which were bound onto themselves, so
        each is a mount of its own): chmod, utime and the like outside are refused too, which
        Landlock alone does not cover. Kernels before 5.12 lack the call: with Landlock, it
        still holds the writes; without, each mount point is remounted read-only."""
        size = ctypes.sizeof(MountAttr)
        call = self.libc.syscall
        if call(SYS_MOUNT_SETATTR, -100, b"/", AT_RECURSIVE, ctypes.byref(self._ro), size) == 0:
            for path in plan.writable:
                rw = call(SYS_MOUNT_SETATTR, -100, path, AT_RECURSIVE, ctypes.byref(self._rw), size)
                self._ok(int(rw), "writable mount")
            return
        if not plan.strict:
            return
        if plan.remount is None:
            raise SetupError(38, "sandbox: cannot make the file system read-only here")
        for path, keep in plan.remount:
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | keep
            self._ok(self.libc.mount(None, path, None, flags, None), "read-only")

    def _become_init_child(self, report: int) -> None:
        """Fork: the child goes on to exec as the first process of the new PID namespace (when
        it ends, the kernel kills everything left in it); this process only waits for it and
        ends the same way, so mca sees the command's own status. It writes that status to
        `report` first: its own end frees the command's namespaces (unmounting their mounts
        waits on the kernel's RCU: milliseconds), and the spawner need not wait for that."""
        pid = os.fork()
        if pid == 0:  # ends with this waiter, killed whole, so with the spawner that made it
            self.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            return
        last = report - 1 if report > 2 else 0xFFFFFFFF  # hold no pipe of mca's open
        self.libc.syscall(SYS_CLOSE_RANGE, 0, last, 0)
        if report > 2:
            self.libc.syscall(SYS_CLOSE_RANGE, report + 1, 0xFFFFFFFF, 0)

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
        if report > 2:  # every process of the namespace has ended: the command's status
            with contextlib.suppress(OSError):
                os.write(report, STATUS.pack(os.waitstatus_to_exitcode(status)))
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

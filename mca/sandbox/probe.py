"""What this system offers for a sandbox: Landlock's ABI, user namespaces, a pids cgroup."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from mca.sandbox import landlock
from mca.sandbox.linux import (
    AT_RECURSIVE,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    MOUNT_ATTR_RDONLY,
    MS_PRIVATE,
    MS_REC,
    SYS_MOUNT_SETATTR,
    Child,
    MountAttr,
)
from mca.sandbox.mounts import mount_points

__all__ = ["NAMESPACES", "Mechanisms", "probe", "try_namespaces"]


@dataclass(frozen=True)
class Mechanisms:
    """The mechanisms available here (each may be switched off for tests)."""

    landlock_abi: int
    user_namespaces: bool
    pids_cgroup: Path | None  # a directory in which mca (as root) may create pids cgroups
    proc: bool = True  # mca can see processes in /proc (to find what a command left running)

    @property
    def available(self) -> bool:
        """Landlock, or user namespaces (read-only mounts, secrets covered, no network): with
        neither, mca does not call anything a sandbox."""
        return self.landlock_abi >= 1 or self.user_namespaces

    def describe(self) -> str:
        if not self.available:
            return (
                "no sandbox mechanism here (needs Linux with Landlock, kernel 5.13 or newer,"
                " or unprivileged user namespaces)"
            )
        parts = [f"Landlock ABI {self.landlock_abi}" if self.landlock_abi else "no Landlock"]
        parts.append(
            "user namespaces (mount, PID, network)"
            if self.user_namespaces
            else "no user namespaces (protected paths checked and restored after each command)"
        )
        if self.pids_cgroup is not None:
            parts.append("a pids cgroup")
        return ", ".join(parts)


NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET


def try_namespaces(child: Child) -> int:
    """In a forked child: enter new user, mount, PID and network namespaces and make the view
    read-only. 0, or which step failed: 3 unshare, 4 the id maps, 5 mounting, 6 mount_setattr."""
    uid, gid = os.getuid(), os.getgid()  # before: in the new namespace they are unmapped
    if child.libc.unshare(NAMESPACES) != 0:
        return 3
    try:
        child.map_ids(uid, gid)
    except OSError:
        return 4
    # inside another Landlock sandbox (mca run by mca) mounting is refused: no namespaces
    if child.libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return 5
    attr = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    size = ctypes.sizeof(attr)
    if child.libc.syscall(SYS_MOUNT_SETATTR, -100, b"/", AT_RECURSIVE, ctypes.byref(attr), size):
        return 6
    return 0


def _threaded() -> bool:
    """Whether this process runs more than one thread (the kernel's count: C libraries' too)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Threads:"):
                    return int(line.split()[1]) > 1
    except (OSError, ValueError, IndexError):
        pass
    return threading.active_count() > 1


def _user_namespaces(landlock_abi: int) -> bool:
    """Whether a child can enter new user, mount, PID and network namespaces and make its view
    read-only (tried once). Without Landlock the read-only mounts are the only write wall:
    mount_setattr, or a list of mount points to remount one by one. A threaded mca (the REPL
    builds its session in a thread) asks the spawner, which forks for it: no fork of a threaded
    process runs code before exec; a single-threaded one (-p) forks itself, which is cheaper
    than starting the spawner for a session that may run no command."""
    if _threaded():
        from mca.sandbox.spawning.client import SpawnError, shared

        try:
            code = shared().probe(landlock_abi)
        except SpawnError:
            return False
    else:
        child = Child()

        def try_it() -> None:
            failed = try_namespaces(child)
            if failed:
                os._exit(failed)

        try:
            code = subprocess.run(["/bin/true"], preexec_fn=try_it, check=False).returncode
        except (OSError, subprocess.SubprocessError):
            return False
    return code == 0 or (code == 6 and (landlock_abi >= 1 or mount_points(()) is not None))


def _pids_cgroup() -> Path | None:
    """Root only (RLIMIT_NPROC does not bind root): a writable pids controller, v1 or v2."""
    if os.geteuid() != 0:
        return None
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, where = line.split(":", 2)
        if "pids" in controllers.split(","):
            base = Path("/sys/fs/cgroup/pids") / where.lstrip("/")
            if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
                return base
    return None


def _proc_readable() -> bool:
    """Whether /proc shows this process (hidepid, a hidden /proc and the like do not)."""
    try:
        return str(os.getpid()) in os.listdir("/proc")
    except OSError:
        return False


def probe(*, namespaces: bool = True) -> Mechanisms:
    """Look once (a fork for the namespaces); `namespaces=False` leaves them out."""
    if not sys.platform.startswith("linux"):
        return Mechanisms(0, False, None, False)
    abi = landlock.abi_version()
    userns = namespaces and _user_namespaces(abi)
    cgroup = _pids_cgroup() if abi >= 1 or userns else None
    return Mechanisms(abi, userns, cgroup, _proc_readable())

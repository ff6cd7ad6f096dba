"""What this system offers for a sandbox: Landlock's ABI, user namespaces, a pids cgroup."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
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

__all__ = ["NAMESPACES", "Mechanisms", "probe"]


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


def _user_namespaces(landlock_abi: int) -> bool:
    """Whether a child can enter new user, mount, PID and network namespaces and make its view
    read-only (tried once). Without Landlock the read-only mounts are the only write wall:
    mount_setattr, or a list of mount points to remount one by one."""
    child = Child()
    uid, gid = os.getuid(), os.getgid()

    def try_it() -> None:
        if child.libc.unshare(NAMESPACES) != 0:
            os._exit(3)
        try:
            child.map_ids(uid, gid)
        except OSError:
            os._exit(4)
        # inside another Landlock sandbox (mca run by mca) mounting is refused: no namespaces
        if child.libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            os._exit(5)
        size = ctypes.sizeof(attr)
        if child.libc.syscall(SYS_MOUNT_SETATTR, -100, b"/", AT_RECURSIVE, ref, size) != 0:
            os._exit(6)

    attr = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    ref = ctypes.byref(attr)
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

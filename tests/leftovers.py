"""Oracles for what a test leaves running, that read no process table (/proc may be hidden):

- a marker file every process of a command holds open (the command opens it first; all it
  starts inherit it): the kernel gives its owner a write lease on it only while no other open
  file holds it, so `held(marker)` says whether anything of the command still runs;
- this process's own children, asked of the kernel (`waitid`): a zombie nobody reaped, or a
  child still running.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path


def marker(path: Path) -> Path:
    """Make an empty marker file (this process owns it) and return it."""
    path.write_bytes(b"")
    return path


def opening(path: Path, command: str) -> str:
    """The shell command, opening the marker first so that all it starts hold it."""
    return f"exec 9<{path}; {command}"


def held(path: Path) -> bool:
    """Whether another open file holds the marker (a process of the command still runs)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # the lease goes with the only descriptor that had it
    return False


def released(path: Path, seconds: float = 10.0) -> bool:
    """Wait for the marker to be let go (the kernel may take a moment to finish a kill):
    True as soon as nothing holds it, False if something still does after `seconds`."""
    deadline = time.monotonic() + seconds
    while held(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def zombie_child() -> int | None:
    """A child of this process that ended and was never reaped (its pid), or None. Looks,
    takes nothing: the child stays for whoever waits for it."""
    try:
        found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return None
    return found.si_pid if found is not None else None


def reap_zombies() -> list[int]:
    """Reap every child of this process that has ended; their pids."""
    out = []
    while (pid := zombie_child()) is not None:
        os.waitpid(pid, 0)
        out.append(pid)
    return out


def has_children() -> bool:
    """Whether this process has any child at all (running or not)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True

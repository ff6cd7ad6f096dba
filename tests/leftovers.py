"""Oracles for what a test leaves running, that read no process table (/proc may be hidden):

- mca's spawner, which adopts whatever a sandboxed command without a PID namespace leaves
  (nothing leaves its group): `commands_left()` is how many ended commands still have a
  process running, asked of it (a command in a PID namespace ends whole with it);

- a marker file every process of a command holds open (the command opens it first; all it
  starts inherit it): the kernel gives its owner a write lease on it only while no other open
  file holds it, so `held(marker)` says whether anything of the command still runs;
- this process's own children, asked of the kernel (`waitid`): a zombie nobody reaped, or a
  child still running.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
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


def running(pid: int) -> bool:
    """Whether the process still runs, asked of the kernel: a child of this process that ended
    is reaped here (it runs no more); another's zombie counts until its parent reaps it."""
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def commands_left(seconds: float = 10.0) -> int:
    """How many ended commands of this process's spawner still have a process running, after
    giving the kernel `seconds` to finish the kills (0 as soon as none has)."""
    from mca.sandbox.spawning.client import shared

    deadline = time.monotonic() + seconds
    while (left := shared().left()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


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


def running_children() -> list[str]:
    """This process's children still running, after reaping those that ended: empty when
    there are none (the verdict: waitid). Each is named (its pid, and its command line where
    /proc can be read: for the message only) and killed."""
    out: list[str] = []
    while True:
        reap_zombies()
        if not has_children():
            return out
        pid = _some_child()
        if pid is None:  # /proc hidden: running, but which cannot be said
            return [*out, "a child of this process (its pid cannot be read: /proc is hidden)"]
        out.append(f"{pid} {_cmdline(pid)}".strip())
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _some_child() -> int | None:
    """A running child's pid, from /proc's children lists (None where they cannot be read)."""
    me = os.getpid()
    try:
        for tid in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{tid}/children", "rb") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
    except (OSError, ValueError):
        pass
    return None


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""

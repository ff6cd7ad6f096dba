"""The account a hand-in runs as where there is no sandbox (`--unsandboxed`, the Gradescope
fallback): another, unprivileged one that cannot read mca's installed package (the answers), the
grader's files or home. Gradescope's own practice; the kit's setup.sh makes it.

Only root can start a process as another account, and an account that can read what it must
not is no wall: in either case `accounted` refuses, saying why, and nothing is graded. The
child drops to the account in a small trampoline (setgroups, setresgid, setresuid, exec) run
after the spawner set the limits, so the limits hold for it too.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mca.errors import McaError

__all__ = [
    "Account",
    "account_tasks",
    "accounted",
    "as_account",
    "readable_by",
    "runnable_python",
]

MAKE = "useradd --system --no-create-home --shell /usr/sbin/nologin"

# Runs as root for a moment: drop every group and id, then become the child.
_DROP = (
    "import os, sys; u, g = int(sys.argv[1]), int(sys.argv[2]); os.setgroups([]);"
    " os.setresgid(g, g, g); os.setresuid(u, u, u); os.execv(sys.argv[3], sys.argv[3:])"
)
# Runs as the account: the paths it can read, one a line.
_PROBE = (
    "import os, sys\n"
    "for p in sys.argv[1:]:\n"
    "    try:\n"
    "        os.listdir(p) if os.path.isdir(p) else open(p, 'rb').close()\n"
    "        print(p)\n"
    "    except OSError:\n"
    "        pass\n"
)


@dataclass(frozen=True)
class Account:
    """Who an unsandboxed hand-in runs as, and the interpreter that account can run."""

    name: str
    uid: int
    gid: int
    python: str

    @property
    def route(self) -> str:
        return f"unsandboxed as {self.name} (uid {self.uid})"


def as_account(account: Account, argv: Sequence[str]) -> list[str]:
    """The command line that runs `argv` (its interpreter replaced) as the account."""
    head = [sys.executable, "-I", "-S", "-c", _DROP, str(account.uid), str(account.gid)]
    return [*head, account.python, *argv[1:]]


def _run_as(name: str, uid: int, gid: int, python: str, args: Sequence[str]) -> str | None:
    """What the probe printed as the account under `python` (None: it did not run)."""
    argv = as_account(Account(name, uid, gid, python), [python, "-I", "-S", "-c", _PROBE, *args])
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return None
    return run.stdout if run.returncode == 0 else None


def runnable_python(name: str, uid: int, gid: int) -> str | None:
    """An interpreter of this version the account can run (its packages are not needed: the
    child runs from the kit with `-I -S`), or None."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    base = getattr(sys, "_base_executable", sys.executable)
    for python in (base, os.path.realpath(sys.executable), f"/usr/bin/python{version}"):
        if os.path.exists(python) and _run_as(name, uid, gid, python, []) is not None:
            return python
    return None


def readable_by(account: Account, paths: Sequence[Path]) -> list[Path]:
    """Which of these paths the account can read (a directory: list)."""
    out = _run_as(account.name, account.uid, account.gid, account.python, [str(p) for p in paths])
    if out is None:
        raise McaError(f"mca lab grade: cannot run a probe as {account.name}")
    return [Path(line) for line in out.splitlines() if line]


def accounted(name: str, secret: Sequence[Path], euid: int | None = None) -> Account:
    """The account to grade unsandboxed as, checked: root can switch to it, it exists, is not
    root, runs Python, and reads none of `secret`. Else McaError saying why and what to do."""
    why = f"mca lab grade: --unsandboxed runs each hand-in as the account {name}"
    if (os.geteuid() if euid is None else euid) != 0:
        raise McaError(
            f"{why}, and only root can start a process as another account: grade as root (the"
            " Gradescope image does), or in mca's sandbox (without --unsandboxed)"
        )
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise McaError(
            f"{why}, and there is no such account here: make it ({MAKE} {name};"
            " the Gradescope kit's setup.sh does)"
        ) from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise McaError(f"{why}, which is root's (uid or gid 0): use an unprivileged account")
    python = runnable_python(name, entry.pw_uid, entry.pw_gid)
    if python is None:
        raise McaError(
            f"{why}, which can run no Python {sys.version_info.major}."
            f"{sys.version_info.minor} here (install python3 for all users)"
        )
    account = Account(name, entry.pw_uid, entry.pw_gid, python)
    leaks = readable_by(account, secret)
    if leaks:
        shown = ", ".join(map(str, leaks[:4]))
        raise McaError(
            f"{why}, which can read {shown}: a hand-in could read the answers or the grader's"
            f" files. Make them unreadable to it (chmod -R o-rwx; the Gradescope kit's setup.sh"
            " does for /opt/mca and /autograder/source), or grade in mca's sandbox"
        )
    return account


def account_tasks(uid: int) -> int:
    """The account's tasks now (processes and threads, what RLIMIT_NPROC counts), read from
    /proc as root reads it; 0 where /proc is not there to read (never counted by spawning:
    that lowers the grader's own limit while it has threads)."""
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return 0
    n = 0
    for name in names:
        try:
            with open(f"/proc/{name}/status", "rb") as f:
                status = f.read()
        except OSError:
            continue  # it ended, or is not ours to read
        if f"\nUid:\t{uid}\t".encode() in status:
            at = status.find(b"\nThreads:")
            n += int(status[at + 9 : status.index(b"\n", at + 1)]) if at >= 0 else 1
    return n

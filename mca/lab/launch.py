"""Starting and stopping a student's child process: the limits, and who enforces them.

A Launcher starts mca/lab/serve.py for one hand-in from the run's child kit
(mca/lab/childkit.py: `python -I -S`, only the kit and the standard library on its path, so
mca's answers are nowhere it can import or read) and, when asked, leaves nothing of it
running. Without a sandbox the child gets resource limits and a session of its own, and, when
graded (`--unsandboxed`, the Gradescope fallback), runs as another account that cannot read
mca's package or the grader's files (mca/lab/account.py); only a student's own self-test on a
machine with no sandbox runs as the student.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Protocol

from mca.lab.account import Account, account_tasks, as_account
from mca.lab.childkit import KIT_NAME, MCA_DIR, ensure_kit
from mca.lab.scratch import Scratch, Sized
from mca.sandbox.box import Launch, Sandbox
from mca.sandbox.probe import Mechanisms
from mca.sandbox.rights import Grant, Mode, build_policy
from mca.sandbox.spawning.client import Process, limits_only, shared

__all__ = [
    "BOOT",
    "Isolation",
    "Launcher",
    "Limits",
    "Sandboxed",
    "Unsandboxed",
    "child_argv",
    "child_env",
    "child_read_paths",
    "rlimits",
]

# The child's first code: the kit (argv[1]) is all of mca it can import.
BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); from mca.lab.serve import main; "
    "sys.exit(main(sys.argv[2:]))"
)


@dataclass(frozen=True)
class Limits:
    """Per hand-in: wall time for all of it and per check; memory, CPU, file size, processes."""

    seconds: float = 180.0
    check_seconds: float = 30.0
    memory_mb: int = 2048
    file_bytes: int = 1024 * 1024
    tmp_mb: int = 64  # all of its private /tmp together (mca/lab/scratch.py)
    tmp_files: int = 4096
    processes: int = 3  # tasks of the child, threads included (the sandbox's own two among them)
    # CPU seconds for all of a hand-in's checks (None: no budget): past it, each check still
    # runs but with GRACE seconds, so a looper gives its slot back and an honest answer passes.
    cpu_budget: float | None = None

    @property
    def cpu_seconds(self) -> int:
        return int(self.seconds) + 1


class Launcher(Protocol):
    """Starts one hand-in's child and stops all of it."""

    sandboxed: bool

    def start(self, fds: tuple[int, int], output: int | IO[bytes]) -> Process:
        """The child, its stdout and stderr to `output` (the grader drains a pipe)."""
        ...

    def stop(self, proc: Process) -> None: ...

    def total(self, proc: Process) -> Callable[[], str]:
        """The guard of the child's private /tmp (mca/lab/scratch.py): '' while within its
        total, else why not."""
        ...

    def close(self) -> None: ...


def child_argv(kit: Path, fds: tuple[int, int]) -> list[str]:
    """The child's command line: isolated (no environment, no site-packages, no current
    directory), the kit first on its path, then the standard library."""
    return [sys.executable, "-I", "-S", "-c", BOOT, str(kit), str(fds[0]), str(fds[1])]


def child_read_paths(kit: Path) -> list[Path]:
    """What the child must be able to read besides the Python runtime: the kit, nothing of
    mca's own tree (the seam for a read allow-list)."""
    return [kit]


def child_env(home: str) -> dict[str, str]:
    """Nothing of the grader's environment (no keys, no tokens): only what Python needs."""
    return {
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONHASHSEED": "0",
        "LC_ALL": "C.UTF-8",
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
    }


def rlimits(limits: Limits) -> list[tuple[int, int]]:
    """What the unsandboxed child gets (the sandbox sets its own from its policy)."""
    return [
        (resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_CORE, 0),
    ]


class Unsandboxed:
    """Limits and a session of its own; the process group is killed at the end. A process that
    leaves the group can outlive the hand-in. With an `account` the child runs as it (its own
    home, the kit reachable, nothing else of the run's directory); without one, with the
    grader's rights: for code you would run yourself. Started by the spawner, as the sandboxed
    ones are (the limits are set in its child, not in a fork of the grader's threads)."""

    sandboxed = False

    def __init__(self, limits: Limits, kit: Path, account: Account | None = None) -> None:
        self.limits, self.kit, self.account = limits, kit, account
        self.home = tempfile.mkdtemp(prefix="mca-lab-")
        if account is not None:
            os.chown(self.home, account.uid, account.gid)
            os.chmod(kit.parent, 0o711)  # the kit by its name; the seeds' variants stay 0o700

    def start(self, fds: tuple[int, int], output: int | IO[bytes]) -> Process:
        limits = rlimits(self.limits)
        argv = child_argv(self.kit, fds)
        if self.account is not None:
            argv = as_account(self.account, argv)
            # RLIMIT_NPROC counts the account's every task: room on top of what it runs now
            # (the sandbox's rule, mca/sandbox/nproc.py), else another of its processes, not
            # the hand-in, would use the hand-in's room
            room = self.limits.processes + 2 + account_tasks(self.account.uid)
            limits.append((resource.RLIMIT_NPROC, room))
        if sys.platform.startswith("linux"):
            return shared().spawn(
                argv,
                child_env(self.home),
                limits_only(limits),
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                pass_fds=fds,
            )

        def preexec() -> None:  # elsewhere (macOS) there is no spawner: setrlimit only
            for kind, value in limits:
                resource.setrlimit(kind, (value, value))

        return subprocess.Popen(
            argv,
            env=child_env(self.home),
            cwd=self.home,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            pass_fds=fds,
            preexec_fn=preexec,
            start_new_session=True,
        )

    def stop(self, proc: Process) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for left in Path(self.home).iterdir():  # the next child starts with an empty /tmp
            if left.is_dir() and not left.is_symlink():
                shutil.rmtree(left, ignore_errors=True)
            else:
                left.unlink(missing_ok=True)

    def total(self, proc: Process) -> Callable[[], str]:
        return Scratch(Path(self.home), self.limits.tmp_mb, self.limits.tmp_files)

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)


class Sandboxed:
    """mca's sandbox (mca/sandbox), read-only: the child writes nothing but its private /tmp,
    reads nothing but what it runs on (the Python runtime, the run's child kit, the lab's
    content: `workspace` and `reads`; with namespaces the rest is absent from its view), has no
    network, no room for more processes than `limits.processes`, and leaves nothing running
    (it is the first process of its own PID namespace, or its cgroup is emptied). `deny` (the
    class, the grader's outputs, mca's own tree) stays on the secret list as well.
    Each start gets a Sandbox of its own, closed at stop: a restarted child never shares a
    process count or a /tmp with the one before."""

    sandboxed = True

    def __init__(
        self,
        limits: Limits,
        mechanisms: Mechanisms,
        workspace: Path,
        deny: Sequence[Path],
        mca_home: Path,
        user_home: Path,
        command: Callable[[tuple[int, int]], list[str]],
        reads: Sequence[Path] = (),
    ) -> None:
        from mca.sandbox.view import not_runtime, python_runtime

        self.command = command  # what runs (the kit's serve; tests run other code in it)
        readable = (*map(str, python_runtime()), str(workspace))
        policy = build_policy(
            Mode.READ_ONLY,
            workspace=workspace,
            user_home=user_home,
            mca_home=mca_home,
            deny_read=tuple(str(p) for p in (*deny, *not_runtime())),
            read_only_from=(*readable, *map(str, reads)),
        )
        policy = replace(
            policy,
            max_processes=limits.processes,
            max_file_bytes=limits.file_bytes,
            max_memory_bytes=limits.memory_mb * 1024 * 1024,
            max_cpu_seconds=limits.cpu_seconds,
            tmp_size=(limits.tmp_mb * 1024 * 1024, limits.tmp_files),
        )
        self.policy, self.mechanisms, self.limits = policy, mechanisms, limits
        self.running: dict[int, tuple[Sandbox, Launch]] = {}

    def start(self, fds: tuple[int, int], output: int | IO[bytes]) -> Process:
        box = Sandbox(self.policy, self.mechanisms, reuse=False)  # one child: nothing to share
        try:
            launch = box.prepare(Grant(), {})
            proc = box.popen(
                self.command(fds),
                replace(launch, env=child_env(launch.env["TMPDIR"])),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                pass_fds=fds,
                cwd=str(self.policy.workspace),
            )
        except BaseException:
            box.close()
            raise
        self.running[proc.pid] = (box, launch)
        return proc

    def stop(self, proc: Process) -> None:
        """Kill the child's group, then what the sandbox knows of (its cgroup, its orphans);
        remove its private /tmp. Nothing of it runs when this returns."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        box, launch = self.running.pop(proc.pid)
        box.finish(launch, proc.pid)
        box.close()

    def total(self, proc: Process) -> Callable[[], str]:
        """With a view of its own, the child's /tmp is a tmpfs of its total, seen through its
        root; else the running total of the private directory (Landlock alone)."""
        mb, files = self.limits.tmp_mb, self.limits.tmp_files
        running = self.running.get(proc.pid)
        if running is None:
            return Scratch(None, mb, files)
        box = running[0]
        if box.namespaces and box.viewed:
            return Sized(Path(f"/proc/{proc.pid}/root{box.tmp()}"), mb, files)
        return Scratch(box.tmp(), mb, files)

    def close(self) -> None:
        for pid in list(self.running):
            box, _ = self.running.pop(pid)
            box.close()


@dataclass(frozen=True)
class Isolation:
    """How a run starts each hand-in's child: in mca's sandbox (`mechanisms`), or with
    limits only (None: --unsandboxed, or a student's own machine without a sandbox)."""

    mechanisms: Mechanisms | None
    workspace: Path  # the run's private copy of the lab (the child reads it, writes nothing)
    mca_home: Path
    user_home: Path
    deny: tuple[Path, ...] = ()  # the class, the grader's outputs (and, sandboxed, mca's tree)
    reads: tuple[Path, ...] = ()  # the lab's content the child reads besides the workspace
    account: Account | None = None  # unsandboxed: who the child runs as (None: the grader)

    @property
    def kit(self) -> Path:
        """The run's child kit: in the workspace (the run's private directory, which the
        sandboxed child reads and the run removes)."""
        return self.workspace / KIT_NAME

    def launcher(self, limits: Limits) -> Launcher:
        """A fresh launcher for one hand-in (its own private /tmp, its own cgroup); the
        run's kit is written by the first."""
        kit = ensure_kit(self.kit)
        if self.mechanisms is None:
            return Unsandboxed(limits, kit, self.account)
        return Sandboxed(
            limits,
            self.mechanisms,
            self.workspace,
            (*self.deny, MCA_DIR),  # mca's own tree: the child has the kit
            self.mca_home,
            self.user_home,
            lambda fds: child_argv(kit, fds),
            reads=(*self.reads, *child_read_paths(kit)),
        )

    @property
    def route(self) -> str:
        """How a grade's hand-in ran, as its results say."""
        if self.mechanisms is not None:
            return f"sandboxed ({self.mechanisms.describe()})"
        if self.account is not None:
            return self.account.route
        return "unsandboxed, with the grader's rights"

    def describe(self) -> str:
        if self.account is not None:
            return f"no sandbox: student code runs as {self.account.name} (limits only)"
        if self.mechanisms is None:
            return "no sandbox: student code runs with your rights (limits only)"
        return (
            f"sandboxed, read-only, no network, reads only the runtime and the lab"
            f" ({self.mechanisms.describe()})"
        )

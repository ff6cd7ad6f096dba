"""What the spawner's children do (mca/sandbox/spawning/spawner.py forks them): a command's
child, from fork to exec; and the child that makes a sandbox's shared namespaces."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import signal
from collections.abc import Callable
from typing import Any

from mca.sandbox.linux import CLONE_NEWNET, CLONE_NEWUSER, Child, ChildPlan, _loopback_up

__all__ = [
    "NOT_FOUND",
    "SETUP_FAILED",
    "SHARED",
    "above_targets",
    "make_namespaces",
    "probe_child",
    "run_child",
]

SETUP_FAILED = 126  # as box.SETUP_FAILED: the set-up failed, the command never ran
NOT_FOUND = 127  # the program could not be executed (as a shell says)
PR_SET_PDEATHSIG = 1
# Made once per sandbox (a session's; "share" names it) and joined by each of its commands:
# making a user and a network namespace is most of a namespace sandbox's start. The mount, PID
# and IPC namespaces stay each command's own (nothing of one command outlives it).
SHARED = ((CLONE_NEWUSER, "user"), (CLONE_NEWNET, "net"))


def run_child(
    spec: dict[str, Any],
    fds: list[int],
    plan: ChildPlan | None,
    child: Child,
    enforce: Callable[[int], None],
    parent: int,
    ready: int,
    joined: list[tuple[int, int]] = [],  # noqa: B006 (never changed)
    rest: ChildPlan | None = None,
    report: int = -1,
) -> None:
    """In the forked child (one thread, the spawner's): never returns. `joined`: namespaces
    to enter first (the user namespace first), after which `rest` is what is left to do;
    `report`: where a PID namespace's waiter writes the command's status."""
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.setsid()
        os.close(ready)
        child.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the spawner died before the line above
            os._exit(SETUP_FAILED)
        floor = max([*spec["targets"], 2]) + 1  # what _place puts in place must not close these
        joined = [(flag, _dup_above(fd, floor)) for flag, fd in joined]
        report = _dup_above(report, floor) if report >= 0 else -1
        _place(spec["targets"], fds)
        os.chdir(spec["cwd"])
        for flag, fd in joined:
            if child.libc.setns(fd, flag) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"sandbox: setns: {os.strerror(err)}")
        if plan is not None:
            child.setup(rest if joined and rest is not None else plan, enforce, report)
            if plan.namespaces and spec["workdir"]:
                os.chdir(spec["workdir"])  # through the new mounts, so the read-only ones apply
        else:
            enforce(-1)
    except OSError as e:  # the command's own error, said on its stderr: never run it
        _say(f"mca: {e.strerror or e}")
        os._exit(SETUP_FAILED)
    except BaseException as e:
        _say(f"mca: sandbox set-up: {type(e).__name__}: {e}")
        os._exit(SETUP_FAILED)
    argv: list[bytes] = spec["argv"]
    env: dict[bytes, bytes] = spec["env"]
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        _say(f"mca: cannot run {os.fsdecode(argv[0])}: {e.strerror or e}")
    os._exit(NOT_FOUND)


def _place(targets: list[int], fds: list[int]) -> None:
    """Each descriptor mca passed at the number the command expects (0, 1, 2, pass_fds),
    inheritable; everything else the spawner holds is close-on-exec. First moved above every
    target, so that putting one in place never overwrites another."""
    if not targets:
        return
    floor = max(max(targets) + 1, 3)
    moved = [_dup_above(fd, floor) for fd in fds[: len(targets)]]
    for fd, target in zip(moved, targets, strict=True):
        os.dup2(fd, target, inheritable=True)


def above_targets(fds: list[int], targets: list[int]) -> None:
    """The descriptors that come along unplaced (the Landlock ruleset, after the placed ones)
    moved above every number a placed one goes to: the child's dup2 of stdio and pass_fds into
    place must not close them. In place: the caller closes what the list holds."""
    floor = max([*targets, 2]) + 1
    for i in range(len(targets), len(fds)):
        if fds[i] < floor:
            moved = _dup_above(fds[i], floor)
            os.close(fds[i])
            fds[i] = moved


def _dup_above(fd: int, floor: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)


def _say(line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, (line + "\n").encode(errors="replace"))


def make_namespaces(child: Child, flags: int, plan: ChildPlan) -> list[tuple[int, int]]:
    """A child makes the namespaces (mapped, no nested user namespaces, `lo` up) and waits
    while this process opens them; then it ends, and they live on in those descriptors."""
    said_r, said_w = os.pipe2(os.O_CLOEXEC)
    hold_r, hold_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # pragma: no cover
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            os.close(said_r)
            os.close(hold_w)
            child.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if child.libc.unshare(flags) == 0:
                child.map_ids(plan.uid, plan.gid)
                child._no_nested_user_namespaces(plan.strict)
                if plan.loopback_up:
                    _loopback_up()
                os.write(said_w, b"k")
                os.read(hold_r, 1)
                code = 0
        finally:
            os._exit(code)
    os.close(said_w)
    os.close(hold_r)
    out: list[tuple[int, int]] = []
    try:
        if os.read(said_r, 1) == b"k":
            for flag, name in SHARED:
                if flags & flag:
                    path = f"/proc/{pid}/ns/{name}"
                    out.append((flag, os.open(path, os.O_RDONLY | os.O_CLOEXEC)))
    except OSError:
        for _, fd in out:
            _close(fd)
        out = []
    finally:
        os.close(said_r)
        os.close(hold_w)
        os.waitpid(pid, 0)
    return out


def probe_child(child: Child) -> int:
    """probe.try_namespaces in a child of this process: its exit code."""
    from mca.sandbox.probe import try_namespaces

    pid = os.fork()
    if pid == 0:  # pragma: no cover
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            code = try_namespaces(child)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)

"""What the spawner knows of the commands it started: which still run, each one's process group
(nothing leaves it without a PID namespace: seccomp), their ends, and this user's tasks for
RLIMIT_NPROC. The spawner is their parent and the subreaper of what they leave, so every process
of a command is, or ends up, its child: reaped here, found by group, never read from /proc.
Only the standard library and nproc: the helper runs as python -I -S."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
from collections.abc import Callable
from typing import Any

from mca.sandbox.linux import ChildPlan
from mca.sandbox.nproc import nproc_limit, user_tasks

Send = Callable[[tuple[Any, ...]], None]


class Commands:
    def __init__(self, send: Send) -> None:
        self.send = send  # to mca: ("exit", pid, code) when a command ended
        self.running: set[int] = set()
        self.reported: set[int] = set()  # commands whose status was sent before their reaping
        self.groups: set[int] = set()  # the groups of commands without a PID namespace
        self.tasks = 0  # this user's tasks at the last count (the next one starts there)

    def started(self, pid: int, own_group: bool) -> None:
        self.running.add(pid)
        if own_group:
            self.groups.add(pid)

    def said(self, pid: int, code: int) -> None:
        """A PID namespace's waiter said its command's end before its reaping: sent now."""
        if pid in self.running and pid not in self.reported:
            self.reported.add(pid)
            self.send(("exit", pid, code))

    def reap(self) -> None:
        """Every child that ended: the commands (their status said), and what they left running,
        adopted here when its parent ended. A command's group is killed as its first process
        ends, before that one is reaped: its zombie keeps the group's id taken meanwhile, so the
        kill reaches only what the command started (once reaped, the id may be another's)."""
        while True:
            try:
                found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if found is None:
                return
            pid = found.si_pid
            if pid in self.running and pid in self.groups:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            if pid in self.running:
                self.running.discard(pid)
                if pid in self.reported:
                    self.reported.discard(pid)
                else:
                    self.send(("exit", pid, os.waitstatus_to_exitcode(status)))

    def left(self) -> int:
        """How many commands that ended still have a process running."""
        return len(self.held() - self.running)

    def held(self) -> set[int]:
        """The commands' groups that still hold a process: a group holds one exactly when this
        process has a child in it (waitid by group). An empty one is forgotten: its id may be
        another process's from then on."""
        self.reap()
        for group in sorted(self.groups):
            try:
                os.waitid(os.P_PGID, group, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                self.groups.discard(group)
        return set(self.groups)

    def kill_groups(self) -> None:
        """Every group that still holds a process, killed (only by group: its id is theirs
        while one of them runs)."""
        for group in self.held():
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)

    def with_nproc(self, plan: ChildPlan, fields: dict[str, Any]) -> ChildPlan:
        """The plan (its `fields`) with RLIMIT_NPROC: this user's tasks now, counted here (a
        single thread, which may lower its own limit to ask the kernel where /proc is hidden),
        and the room."""
        self.tasks = user_tasks(os.getuid(), self.tasks)
        limit = (resource.RLIMIT_NPROC, nproc_limit(self.tasks, plan.nproc_room))
        return ChildPlan(**{**fields, "rlimits": (*plan.rlimits, limit), "nproc_room": 0})

"""The grader's end of the pipe to one student child: JSON lines out, JSON lines back, every
read and write bounded by a deadline, every answer bounded in size. Nothing the child sends is
executed or unpickled; a line that is not the awaited answer is dropped. Whenever it waits on
the child it also drains the child's output (mca/lab/drain.py), so printing never blocks it."""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mca.lab.drain import Drained

if TYPE_CHECKING:
    from mca.sandbox.spawning.client import Process

MAX_ANSWER = 64 * 1024 * 1024
CHUNK = 1 << 16
POLL = 0.25  # how often a wait looks at the run's cancel flag
# A child the machine starves of CPU (a loaded grader) is waited for up to this many times its
# time: grades must not depend on what else the machine is doing.
STARVED = 10.0
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def late(waited: float, allowed: float, cpu: float, runnable: bool) -> bool:
    """Whether a child is out of time: it used its time on the CPU, or it is not even trying
    (sleeping, blocked, stopped), or the machine starved it for STARVED times its time."""
    if waited < allowed:
        return False
    return cpu >= allowed or not runnable or waited >= allowed * STARVED


def tree_usage(pid: int) -> tuple[float, bool]:
    """(CPU seconds of the process and everything below it, whether any of them is runnable),
    from /proc; (0.0, False) where it cannot be read (then time alone decides)."""
    cpu, runnable, todo, seen = 0.0, False, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            children = []
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children", "rb") as f:
                    children += [int(c) for c in f.read().split()]
        except (OSError, ValueError, IndexError):
            continue
        runnable = runnable or fields[0] == b"R"
        cpu += sum(int(x) for x in fields[11:15]) / TICK  # utime stime cutime cstime
        todo += children
    return cpu, runnable


class Gone(Exception):
    """The child closed its end: it exited, crashed or was killed."""


class Slow(Exception):
    """The deadline passed before the child answered."""


class Cancelled(Exception):
    """The run was interrupted (Ctrl-C) while waiting on the child."""


class TooBig(Exception):
    """The child sent more than MAX_ANSWER bytes without finishing an answer."""


class Over(Exception):
    """The child went over a limit the grader measures while it waits (its /tmp's total)."""


class Channel:
    """One running child: its process, the pipe we write to, the pipe we read from, and its
    output (stdout and stderr), drained."""

    def __init__(
        self,
        proc: Process,
        send_fd: int,
        read_fd: int,
        output: Drained,
        cancel: threading.Event | None = None,
        guard: Callable[[], str] = lambda: "",
    ):
        self.proc = proc
        self.cancel = cancel
        self.guard = guard  # why the child is over a limit ('' while it is not)
        self.send_fd = send_fd
        self.read_fd = read_fd
        self.output = output
        self.buffer = b""
        self._armed: tuple[float, float, float] | None = None  # deadline, its start, CPU then
        os.set_blocking(send_fd, False)
        os.set_blocking(read_fd, False)

    def send(self, obj: Any, deadline: float) -> None:
        data = json.dumps(obj).encode("utf-8") + b"\n"
        view = memoryview(data)
        while view:
            left = max(deadline - time.monotonic(), POLL)
            if self._late(deadline):
                raise Slow
            readable, ready, _ = select.select(self._output(), [self.send_fd], [], left)
            if readable:
                self.output.read()
            if not ready:
                continue
            try:
                view = view[os.write(self.send_fd, view) :]
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise Gone from None

    def receive(self, wanted: Callable[[dict[str, Any]], bool], deadline: float) -> dict[str, Any]:
        """The first line that is a JSON object `wanted` accepts; others are dropped."""
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                obj = _parse(line)
                if obj is not None and wanted(obj):
                    return obj
            if len(self.buffer) > MAX_ANSWER:
                raise TooBig
            self._fill(deadline)

    def _late(self, deadline: float) -> bool:
        """Past `deadline` and really out of time (see `late`). The window starts the first
        time a deadline is seen: a check's calls share one."""
        now = time.monotonic()
        if self._armed is None or self._armed[0] != deadline:
            self._armed = (deadline, now, tree_usage(self.proc.pid)[0])
        if now < deadline:
            return False
        _, start, cpu0 = self._armed
        cpu, runnable = tree_usage(self.proc.pid)
        return late(now - start, deadline - start, cpu - cpu0, runnable)

    def _fill(self, deadline: float) -> None:
        left = max(deadline - time.monotonic(), POLL)
        if self._late(deadline):
            raise Slow
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled
        over = self.guard()
        if over:
            raise Over(over)
        ready, _, _ = select.select([self.read_fd, *self._output()], [], [], min(left, POLL))
        if self.output.fd in ready:
            self.output.read()
        if self.read_fd not in ready:
            return
        try:
            chunk = os.read(self.read_fd, CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            raise Gone
        self.buffer += chunk

    def _output(self) -> list[int]:
        return [] if self.output.ended else [self.output.fd]

    def settle(self, timeout: float) -> None:
        """Let a child that closed its end finish exiting, draining what it still prints."""
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            select.select(self._output(), [], [], min(POLL / 5, max(end - time.monotonic(), 0)))
            self.output.read()

    def stderr_tail(self) -> str:
        """The last line the child printed (why Python itself gave up, say)."""
        self.output.read()
        return self.output.last_line()

    def close(self) -> None:
        for fd in (self.send_fd, self.read_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.output.close()


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None

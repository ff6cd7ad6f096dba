"""A command the spawner started, and what it is told to do before exec: the data mca sends
(mca/sandbox/spawning/client.py sends it, mca/sandbox/spawning/spawner.py acts on it)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import IO, Any, TypeAlias

from mca.sandbox.linux import ChildPlan

__all__ = [
    "Process",
    "Setup",
    "SpawnError",
    "Spawned",
    "Stdio",
    "limits_only",
    "plan_to_wire",
    "request",
]


class SpawnError(OSError):
    """The spawner could not start a command (said in one line; the command did not run)."""


@dataclasses.dataclass(frozen=True)
class Setup:
    """What the child does between fork and exec, as data: the ChildPlan's calls (None: none),
    then no_new_privs, the plan's Landlock ruleset and the seccomp program (`confine`), then a
    chdir to `workdir` through the new mounts (with namespaces). Commands of one `share` (a
    session's sandbox) join the user and network namespaces its first command's spawner made,
    instead of making their own (the mount, PID and IPC namespaces are each command's)."""

    plan: ChildPlan | None = None
    seccomp: bytes | None = None
    confine: bool = True
    workdir: str = ""
    share: str = ""


def limits_only(limits: Sequence[tuple[int, int]]) -> Setup:
    """Resource limits and nothing else (the lab's unsandboxed hand-ins)."""
    plan = ChildPlan(
        namespaces=0,
        uid=os.getuid(),
        gid=os.getgid(),
        loopback_up=False,
        binds=(),
        writable=(),
        read_only=(),
        mount_proc=False,
        rlimits=tuple(limits),
        cgroup_procs=b"",
        drop_caps=(),
        ruleset_fd=-1,
    )
    return Setup(plan, confine=False)


def _wire(value: Any) -> Any:
    """A value marshal can carry: paths as bytes, lists and tuples element by element."""
    if isinstance(value, PurePath):
        return os.fsencode(value)
    if isinstance(value, tuple | list):
        return tuple(_wire(v) for v in value)
    if isinstance(value, dict):
        return {_wire(k): _wire(v) for k, v in value.items()}
    return value


def plan_to_wire(plan: ChildPlan) -> dict[str, Any]:
    """The plan as data (every field, whatever fields it has): the spawner rebuilds it with
    ChildPlan(**fields)."""
    return {f.name: _wire(getattr(plan, f.name)) for f in dataclasses.fields(plan)}


class Spawned:
    """A command the spawner started: what subprocess.Popen offered mca."""

    def __init__(
        self,
        args: Sequence[str],
        stdin: IO[bytes] | None,
        stdout: IO[bytes] | None,
        stderr: IO[bytes] | None,
    ) -> None:
        self.args = list(args)
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.pid = 0
        self.returncode: int | Any = None  # as Popen's: None while it runs
        self.lost = False  # the spawner died while it ran: killed, its own status unknown
        self._done = threading.Event()
        self._out: dict[int, list[bytes]] = {}

    def _finish(self, code: int, lost: bool = False) -> None:
        self.lost = lost
        self.returncode = code
        self._done.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None and self.pid > 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def communicate(
        self, input: bytes | None = None, timeout: float | None = None
    ) -> tuple[Any, Any]:
        """Read stdout and stderr (the pipes there are) to their ends, then wait. Called again
        after a TimeoutExpired, it goes on where it stopped."""
        if input:
            raise ValueError("communicate: no input to a spawned command")
        if self.stdin is not None:
            with contextlib.suppress(OSError):
                self.stdin.close()
        deadline = None if timeout is None else time.monotonic() + timeout
        pipes = [p for p in (self.stdout, self.stderr) if p is not None and not p.closed]
        with selectors.DefaultSelector() as sel:
            for p in pipes:
                self._out.setdefault(p.fileno(), [])
                sel.register(p.fileno(), selectors.EVENT_READ, p)
            while sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if chunk:
                        self._out[key.fd].append(chunk)
                    else:
                        sel.unregister(key.fd)
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        self.wait(left)
        out = self._collect(self.stdout)
        err = self._collect(self.stderr)
        return out, err

    def _collect(self, pipe: IO[bytes] | None) -> bytes | None:
        if pipe is None:
            return None
        data = b"" if pipe.closed else b"".join(self._out.pop(pipe.fileno(), []))
        pipe.close()
        return data

    def close_pipes(self) -> None:
        for f in (self.stdin, self.stdout, self.stderr):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()

    def __enter__(self) -> Spawned:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_pipes()
        self.wait()


Process: TypeAlias = "subprocess.Popen[bytes] | Spawned"  # what starts a command gives back


def request(
    argv: Sequence[str],
    env: Mapping[str, str],
    setup: Setup,
    cwd: str | os.PathLike[str] | None,
    targets: Sequence[int],
) -> dict[str, Any]:
    """A spawn request's body, all bytes (the spawner's locale is not mca's)."""
    return {
        "argv": [os.fsencode(a) for a in argv],
        "env": {os.fsencode(k): os.fsencode(v) for k, v in env.items()},
        "cwd": os.fsencode(cwd if cwd is not None else os.getcwd()),
        "workdir": os.fsencode(setup.workdir),
        "targets": list(targets),
        "plan": plan_to_wire(setup.plan) if setup.plan is not None else None,
        "seccomp": setup.seccomp,
        "confine": setup.confine,
        "share": setup.share,
    }


@dataclasses.dataclass
class Stdio:
    """The descriptors a command gets (`fds`, at the numbers in `targets`) from what
    subprocess.Popen's stdin, stdout, stderr and pass_fds take, and mca's ends of its pipes."""

    targets: list[int]
    fds: list[int]
    mine: list[int | None]  # mca's ends for stdin, stdout, stderr (None: no pipe)
    opened: list[int]  # made here for the child (closed once sent)

    @classmethod
    def make(cls, stdin: Any, stdout: Any, stderr: Any, pass_fds: Iterable[int]) -> Stdio:
        made = cls([], [], [], [])
        try:
            child_in = made._one(stdin, 0, write=False)
            child_out = made._one(stdout, 1, write=True)
            if stderr == subprocess.STDOUT:
                made.mine.append(None)
                child_err = child_out
            else:
                child_err = made._one(stderr, 2, write=True)
        except BaseException:
            made.close()
            for fd in made.mine:
                if fd is not None:
                    os.close(fd)
            raise
        for target, fd in ((0, child_in), (1, child_out), (2, child_err), *_same(pass_fds)):
            if fd is not None:
                made.targets.append(target)
                made.fds.append(fd)
        return made

    def _one(self, how: Any, own: int, *, write: bool) -> int | None:
        """The child's descriptor for stdin (0), stdout (1) or stderr (2); a pipe's other end
        goes to `mine`."""
        mine: int | None = None
        if how is None:  # inherited: mca's own, when it has one
            try:
                os.fstat(own)
                child: int | None = own
            except OSError:
                child = None
        elif how == subprocess.PIPE:
            r, w = os.pipe()
            child, mine = (w, r) if write else (r, w)
            self.opened.append(child)
        elif how == subprocess.DEVNULL:
            child = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            self.opened.append(child)
        else:
            child = how if isinstance(how, int) else int(how.fileno())
        self.mine.append(mine)
        return child

    def files(self) -> tuple[IO[bytes] | None, IO[bytes] | None, IO[bytes] | None]:
        """mca's ends as the buffered files Popen gives (they own the descriptors)."""
        modes = ("wb", "rb", "rb")
        out = [_wrap(fd, mode) for fd, mode in zip(self.mine, modes, strict=True)]
        return out[0], out[1], out[2]

    def close(self) -> None:
        for fd in self.opened:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.opened = []


def _same(fds: Iterable[int]) -> list[tuple[int, int | None]]:
    return [(fd, fd) for fd in fds]


def _wrap(fd: int | None, mode: str) -> IO[bytes] | None:
    if fd is None:
        return None
    f: IO[bytes] = io.open(fd, mode)  # noqa: SIM115, UP020 (the buffered file Popen gives)
    return f

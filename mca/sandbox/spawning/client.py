"""mca's side of the spawner (mca/sandbox/spawning/spawner.py): the helper started once per
process, the requests sent to it, and a handle on each command it started.

`spawn(argv, env, setup, ...)` returns a `Spawned`, which answers like the subprocess.Popen it
replaces (pid, stdout, wait with a timeout, poll, communicate, returncode); the exit status
comes from the spawner, the command's parent. mca still kills a command's group itself
(os.killpg on its pid: each command leads a session of its own), so Ctrl-C, time limits and
stop_leftovers work as before. If the spawner dies, the commands it ran are killed and
reported as killed (returncode -9, `lost`), and the next request starts a new one; a request
that finds it dead twice in a row fails with one line (SpawnError).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import itertools
import marshal
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from mca.sandbox.spawning.spawned import (
    Process,
    Setup,
    Spawned,
    SpawnError,
    Stdio,
    limits_only,
    plan_to_wire,
    request,
)

__all__ = [
    "MCA_PARENT",
    "Process",
    "Setup",
    "SpawnError",
    "Spawned",
    "Spawner",
    "limits_only",
    "plan_to_wire",
    "shared",
]

MCA_PARENT = str(Path(__file__).resolve().parents[3])  # where `import mca` finds it
HEADER_SIZE = 8
BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]);"
    " from mca.sandbox.spawning.spawner import main; main()"
)
KILLED = -signal.SIGKILL


@dataclasses.dataclass
class _Pending:
    spawned: Spawned | None
    event: threading.Event = dataclasses.field(default_factory=threading.Event)
    value: int = 0
    error: str = ""
    gone: bool = False  # the spawner died before it answered
    abandoned: bool = False  # the caller stopped waiting (Ctrl-C): kill what it started


class _Link:
    """One spawner process: its socket, its reader thread, what is waiting on it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pending: dict[int, _Pending] = {}
        self.running: dict[int, Spawned] = {}
        self.dead = ""
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 (its stderr, for the one line)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        pdeath = "1" if threading.current_thread() is threading.main_thread() else "0"
        argv = [sys.executable, "-I", "-S", "-c", BOOT, MCA_PARENT, str(theirs.fileno())]
        argv += [str(os.getpid()), pdeath]
        try:
            self.proc = subprocess.Popen(
                argv,
                env={},
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self.errors,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,  # no Ctrl-C from the terminal: mca decides
            )
        except (OSError, subprocess.SubprocessError) as e:
            ours.close()
            self.errors.close()
            raise SpawnError(f"the sandbox's spawner could not start: {e}") from None
        finally:
            theirs.close()
        self.pid = self.proc.pid
        self.owner = os.getpid()
        self.reader = threading.Thread(target=self._read, name="mca-spawner", daemon=True)
        self.reader.start()

    # -- requests ----------------------------------------------------------------------------
    def send(self, message: tuple[Any, ...], fds: Sequence[int], pending: _Pending) -> bool:
        """False when the spawner is dead (the request was not sent)."""
        payload = marshal.dumps(message)
        data = len(payload).to_bytes(4, "big") + len(fds).to_bytes(4, "big") + payload
        with self.lock:
            if self.dead:
                return False
            self.pending[message[1]] = pending
            try:
                rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _ints(fds))] if fds else []
                sent = self.sock.sendmsg([data], rights)
                if sent < len(data):
                    self.sock.sendall(data[sent:])
            except OSError:
                self.pending.pop(message[1], None)
                return False
        return True

    def abandon(self, rid: int, pending: _Pending) -> None:
        with self.lock:
            pending.abandoned = True
            spawned = pending.spawned
            started = pending.event.is_set() and spawned is not None and spawned.pid > 0
        if started and spawned is not None:
            _kill_group(spawned.pid)

    # -- answers -----------------------------------------------------------------------------
    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            buffer += data
            while len(buffer) >= HEADER_SIZE:
                size = int.from_bytes(buffer[:4], "big")
                if len(buffer) < HEADER_SIZE + size:
                    break
                message = marshal.loads(buffer[HEADER_SIZE : HEADER_SIZE + size])
                buffer = buffer[HEADER_SIZE + size :]
                self._dispatch(message)
        self._lost()

    def _dispatch(self, message: tuple[Any, ...]) -> None:
        op, key, value = message
        kill = 0
        with self.lock:
            if op == "exit":
                spawned = self.running.pop(key, None)
                if spawned is not None:
                    spawned._finish(value)
                return
            pending = self.pending.pop(key, None)
            if pending is None:
                return
            if op == "error":
                pending.error = str(value)
            else:
                pending.value = int(value)
                if op == "pid" and pending.spawned is not None:
                    pending.spawned.pid = pending.value
                    self.running[pending.value] = pending.spawned
                    kill = pending.value if pending.abandoned else 0
            pending.event.set()
        if kill:
            _kill_group(kill)

    def _lost(self) -> None:
        """The spawner ended (EOF): whatever it ran is killed (it died with it anyway), every
        waiter is told."""
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            self.proc.wait(timeout=5)
        why = _why(self.proc.returncode, self.errors)
        with self.lock:
            self.dead = why
            pending, self.pending = list(self.pending.values()), {}
            running, self.running = list(self.running.values()), {}
        for p in pending:
            p.gone = True
            p.event.set()
        for spawned in running:
            _kill_group(spawned.pid)
            spawned._finish(KILLED, lost=True)
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):
            self.errors.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # EOF: the spawner kills its commands, ends
        if self.reader is not threading.current_thread():
            self.reader.join(timeout=5)


class Spawner:
    """The process's spawner, started at the first request and again (once per request) if it
    died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._link: _Link | None = None
        self._ids = itertools.count(1)
        self._closed = False

    def pids(self) -> frozenset[int]:
        """The spawner's own pid while it runs (never a command's leftover)."""
        link = self._link
        return frozenset({link.pid}) if link is not None and not link.dead else frozenset()

    def _current(self) -> _Link:
        with self._lock:
            if self._closed:
                raise SpawnError("the sandbox's spawner was closed (mca is ending)")
            link = self._link
            if link is None or link.dead or link.owner != os.getpid():  # forked: not ours
                link = self._link = _Link()
            return link

    def _request(self, op: str, body: Any, fds: Sequence[int], spawned: Spawned | None) -> int:
        why = ""
        for _ in range(2):  # a dead spawner is started again, once
            link = self._current()
            rid = next(self._ids)
            pending = _Pending(spawned)
            if not link.send((op, rid, body), fds, pending):
                link.reader.join(timeout=5)  # it ended: how (its status, its last words)
                why = link.dead or "its socket is closed"
                continue
            try:
                pending.event.wait()
            except BaseException:
                link.abandon(rid, pending)
                raise
            if pending.gone:
                why = link.dead
                continue
            if pending.error:
                raise SpawnError(f"the sandbox's spawner could not start it: {pending.error}")
            return pending.value
        raise SpawnError(f"the sandbox's spawner ended, and again once restarted ({why})")

    def spawn(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        setup: Setup,
        *,
        cwd: str | os.PathLike[str] | None = None,
        stdin: Any = None,
        stdout: Any = None,
        stderr: Any = None,
        pass_fds: Iterable[int] = (),
    ) -> Spawned:
        """Start `argv` from the spawner with `setup` before exec (the child leads a session of
        its own). stdin, stdout and stderr take what subprocess.Popen's do."""
        stdio = Stdio.make(stdin, stdout, stderr, pass_fds)
        try:
            spawned = Spawned(argv, *stdio.files())
            fds = list(stdio.fds)
            if setup.plan is not None and setup.plan.ruleset_fd >= 0:
                fds.append(setup.plan.ruleset_fd)
            body = request(argv, env, setup, cwd, stdio.targets)
            try:
                self._request("spawn", body, fds, spawned)
            except BaseException:
                spawned.close_pipes()
                raise
            return spawned
        finally:
            stdio.close()  # the child's ends: the spawner has its copies

    def release(self, share: str) -> None:
        """A sandbox closed: the spawner lets its namespaces go (nothing to wait for)."""
        link = self._link
        if share and link is not None and not link.dead:
            link.send(("release", 0, share), (), _Pending(None))

    def probe(self, landlock_abi: int) -> int:
        """The exit code of probe.try_namespaces, run in a child of the spawner."""
        return self._request("probe", (landlock_abi,), (), None)

    def left(self) -> int:
        """How many commands that ended (without a PID namespace) still have a process running:
        asked of the spawner, which holds every such process (no /proc read). 0 where no
        spawner runs (none is started to ask: what one held was killed when it ended)."""
        link = self._link
        if link is None or link.dead or link.owner != os.getpid():
            return 0
        return int(self._request("left", None, (), None))

    def close(self) -> None:
        with self._lock:
            link, self._link = self._link, None
        if link is not None:
            link.close()

    def close_for_good(self) -> None:
        self._closed = True
        self.close()


def _ints(fds: Sequence[int]) -> bytes:
    import array

    return array.array("i", fds).tobytes()


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)


def _why(code: int | None, errors: IO[bytes]) -> str:
    """Why the spawner ended, in a few words: its status, and its last line on stderr."""
    if code is None:
        said = "it stopped answering"
    elif code < 0:
        said = f"killed by {signal.Signals(-code).name}" if -code in signal.valid_signals() else ""
        said = said or f"signal {-code}"
    else:
        said = f"exit code {code}"
    with contextlib.suppress(OSError, ValueError):
        errors.seek(0)
        lines = errors.read()[-2048:].decode(errors="replace").strip().splitlines()
        if lines:
            said += f": {lines[-1][:200]}"
    return said


_shared: Spawner | None = None
_shared_lock = threading.Lock()


def shared() -> Spawner:
    """This process's spawner (one per session, or per grading run)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Spawner()
            atexit.register(_shared.close_for_good)
        return _shared

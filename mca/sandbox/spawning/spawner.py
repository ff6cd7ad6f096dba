"""The spawner: the small helper process that starts mca's sandboxed commands.

mca is threaded and large; a child forked from it copies all of it (the cost grows with mca's
memory) and may run set-up code while another thread held a lock at fork (Python documents
`preexec_fn` as unsafe with threads). So mca starts this program once per process (a session,
a grading run), and the set-up between fork and exec runs in a fork of *this* one: a single
thread, a few megabytes, nothing of mca's (an empty environment, no descriptor but its socket,
non-dumpable like mca, the same user). It imports only what the set-up needs (linux, landlock,
seccomp) and talks to mca over a Unix stream socket: frames of `!II` (payload length,
descriptors carried) and a marshal'd tuple; descriptors travel with SCM_RIGHTS.

    mca -> spawner  ("spawn", id, request) + [stdio, pass_fds..., the Landlock ruleset]
                    ("probe", id, (landlock_abi,)) | ("release", 0, share)
                    ("left", id, None): how many ended commands' groups still hold a process
    spawner -> mca  ("pid", id, pid) | ("ok", id, exit code) | ("error", id, text)
                    ("exit", pid, returncode): a command ended (Popen's returncode)

Per spawn it forks; the child leads a session of its own (mca kills the command's group, as
before), dies with the spawner (PR_SET_PDEATHSIG), puts the descriptors in place, makes the
ChildPlan's calls (linux.Child.setup, the code preexec_fn ran) and execs. The spawner is the
command's parent: it reaps it and reports its status, and the subreaper of what the command
leaves. At EOF on its socket, or at the SIGTERM mca's death sends it (mca ended, even killed
-9), it kills every command it started, the whole group of each, and exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import marshal
import os
import select
import signal
import socket
import struct
import sys
from collections.abc import Callable
from typing import Any

from mca.sandbox import landlock, seccomp
from mca.sandbox.linux import CLONE_NEWPID, CLONE_NEWUSER, STATUS, Child, ChildPlan
from mca.sandbox.spawning.child import (
    SHARED,
    above_targets,
    make_namespaces,
    probe_child,
    run_child,
)
from mca.sandbox.spawning.frames import HEADER, MAX_FDS, frame, plan_fields, plan_from_wire
from mca.sandbox.spawning.frames import close_quietly as _close
from mca.sandbox.spawning.frames import drain as _drain
from mca.sandbox.spawning.frames import kill_group as _kill_group
from mca.sandbox.spawning.frames import send_to as _send_to
from mca.sandbox.spawning.started import Commands

__all__ = ["HEADER", "frame", "main"]

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36


class _Forker:
    """A child of the spawner living in one sandbox's pids cgroup, which forks that sandbox's
    commands there: joining a cgroup costs the kernel an RCU grace period (7 to 16 ms here),
    a fork into it nothing. The spawner passes the requests on and the answers back."""

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid, self.sock = pid, sock
        self.buffer = b""
        self.asked: set[int] = set()  # requests not answered yet
        self.pids: set[int] = set()  # commands running


class _Helper:
    def __init__(self, sock: socket.socket, forks: bool = True) -> None:
        self.sock = sock
        self.forks = forks  # may start forkers (the spawner; a forker itself does not)
        self.forkers: dict[bytes, _Forker] = {}  # by the cgroup's cgroup.procs
        self.poller = select.poll()
        self.wake: tuple[int, int] = (-1, -1)
        self.child = Child()
        self.enforcer = landlock.Enforcer()
        self.filters: dict[bytes, seccomp.Installer] = {}
        self.commands = Commands(self._send)
        self.buffer = b""
        self.fds: list[int] = []  # received, not yet taken by a message
        self.me = os.getpid()
        self.namespaces: dict[tuple[Any, ...], list[tuple[int, int]]] = {}  # (flag, fd) each
        self.reports: dict[int, int] = {}  # a PID namespace's waiter's status pipe: its pid

    # -- the loop ----------------------------------------------------------------------------
    def serve(self) -> None:
        wake_r, wake_w = self.wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGTERM, _end)  # mca's death (PR_SET_PDEATHSIG): clean up first
        self.poller.register(self.sock.fileno(), select.POLLIN)
        self.poller.register(wake_r, select.POLLIN)
        try:
            while True:
                for fd, _ in self.poller.poll():
                    if fd == wake_r:
                        while _drain(wake_r):
                            pass
                    elif fd == self.sock.fileno():
                        if not self._receive():
                            return
                    elif fd in self.reports:
                        self._report(fd)
                    else:
                        self._from_forker(fd)
                self.commands.reap()
        finally:  # mca is gone: nothing it started outlives it (what an ended command left too)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut this short
            forked = {p for f in self.forkers.values() for p in f.pids}
            for pid in self.commands.running | forked:
                _kill_group(pid)
            self.commands.kill_groups()

    def _receive(self) -> bool:
        """Read what is there; handle each whole message. False at EOF."""
        try:
            data, ancdata, _, _ = self.sock.recvmsg(
                1 << 16, socket.CMSG_SPACE(MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC
            )
        except InterruptedError:
            return True
        except OSError:
            return False
        for level, kind, raw in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                usable = len(raw) - len(raw) % 4
                self.fds += list(struct.unpack(f"{usable // 4}i", raw[:usable]))
        if not data:
            return False
        self.buffer += data
        while len(self.buffer) >= HEADER.size:
            size, nfds = HEADER.unpack_from(self.buffer)
            if len(self.buffer) < HEADER.size + size or len(self.fds) < nfds:
                break
            payload = self.buffer[HEADER.size : HEADER.size + size]
            self.buffer = self.buffer[HEADER.size + size :]
            fds, self.fds = self.fds[:nfds], self.fds[nfds:]
            try:
                message = marshal.loads(payload)
                if not self._forward(message, fds):
                    self._handle(message, fds)
            finally:
                for fd in fds:
                    _close(fd)
        return True

    # -- forkers -----------------------------------------------------------------------------
    def _forward(self, message: tuple[Any, ...], fds: list[int]) -> bool:
        """A sandbox's command (one with namespaces, sharing them, in a pids cgroup) goes to
        its forker, started at its first; False where this process starts it itself."""
        op, rid, body = message
        if op == "release":
            for forker in self.forkers.values():
                _send_to(forker.sock, message, [])
        plan = body.get("plan") if op == "spawn" else None
        if not (self.forks and plan and body["share"] and plan["cgroup_procs"]):
            return False
        if not plan["namespaces"] & CLONE_NEWUSER:
            return False
        key = plan["cgroup_procs"]
        forker = self.forkers.get(key) or self._start_forker(key, fds)
        body = {**body, "plan": {**plan, "cgroup_procs": b""}}  # in it already
        if not _send_to(forker.sock, (op, rid, body), fds):
            return False
        forker.asked.add(rid)
        return True

    def _start_forker(self, cgroup_procs: bytes, fds: list[int]) -> _Forker:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the forker: it holds nothing of the spawner's)
            code = 1
            try:
                signal.set_wakeup_fd(-1)
                for fd in [*self.wake, *fds, *self.fds, *self.reports, ours.fileno()]:
                    _close(fd)
                for f in self.forkers.values():
                    _close(f.sock.fileno())
                _close(self.sock.fileno())
                for joined in self.namespaces.values():
                    for _, fd in joined:
                        _close(fd)
                self.child.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                if os.getppid() == self.me:
                    fd = os.open(cgroup_procs, os.O_WRONLY | os.O_CLOEXEC)
                    os.write(fd, str(os.getpid()).encode())
                    os.close(fd)
                    _Helper(theirs, forks=False).serve()
                    code = 0
            finally:
                os._exit(code)
        theirs.close()
        forker = self.forkers[cgroup_procs] = _Forker(pid, ours)
        self.poller.register(ours.fileno(), select.POLLIN)
        return forker

    def _from_forker(self, fd: int) -> None:
        """A forker's answers, passed on to mca; at its end, what it had not answered fails
        and what it ran is said killed."""
        forker = next((f for f in self.forkers.values() if f.sock.fileno() == fd), None)
        if forker is None:
            self.poller.unregister(fd)
            return
        try:
            data = forker.sock.recv(1 << 16)
        except OSError:
            data = b""
        forker.buffer += data
        while len(forker.buffer) >= HEADER.size:
            size, _ = HEADER.unpack_from(forker.buffer)
            if len(forker.buffer) < HEADER.size + size:
                break
            message = marshal.loads(forker.buffer[HEADER.size : HEADER.size + size])
            forker.buffer = forker.buffer[HEADER.size + size :]
            op, key, value = message
            if op == "exit":
                forker.pids.discard(key)
            else:
                forker.asked.discard(key)
                if op == "pid":
                    forker.pids.add(value)
            self._send(message)
        if data:
            return
        self.poller.unregister(fd)
        forker.sock.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(forker.pid, 0)  # ending (its socket closed with it), or reaped already
        self.forkers = {k: f for k, f in self.forkers.items() if f is not forker}
        for rid in forker.asked:
            self._send(("error", rid, "the sandbox's forker ended"))
        for pid in forker.pids:
            _kill_group(pid)
            self._send(("exit", pid, -signal.SIGKILL))

    def _send(self, message: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError):  # mca is gone: the loop sees EOF next
            self.sock.sendall(frame(message))

    def _handle(self, message: tuple[Any, ...], fds: list[int]) -> None:
        op, rid, body = message
        try:
            if op == "spawn":
                try:
                    pid = self._spawn(body, fds)
                finally:  # the child has its copies: none stays here (nor in later children)
                    for fd in fds:
                        _close(fd)
                    fds.clear()
                self._send(("pid", rid, pid))
            elif op == "probe":
                self._send(("ok", rid, self._probe(*body)))
            elif op == "left":
                self._send(("ok", rid, self.commands.left()))
            elif op == "release":  # a sandbox closed: its namespaces go (no answer)
                for key in [k for k in self.namespaces if k[0] == body]:
                    for _, fd in self.namespaces.pop(key):
                        _close(fd)
            else:
                self._send(("error", rid, f"unknown request {op!r}"))
        except Exception as e:  # said to mca as this request's error; the spawner goes on
            self._send(("error", rid, f"{type(e).__name__}: {e}"))

    def _report(self, fd: int) -> None:
        """A PID namespace's waiter said its command's status (every process of it has ended):
        sent now, while the waiter's own end frees the namespaces. Nothing said (the waiter was
        killed): its reaping says it."""
        pid = self.reports.pop(fd)
        self.poller.unregister(fd)
        try:
            said = os.read(fd, STATUS.size)
        except OSError:
            said = b""
        _close(fd)
        if len(said) == STATUS.size:
            self.commands.said(pid, STATUS.unpack(said)[0])

    # -- a command ---------------------------------------------------------------------------
    def _spawn(self, spec: dict[str, Any], fds: list[int]) -> int:
        above_targets(fds, spec["targets"])
        plan = plan_from_wire(spec["plan"], fds) if spec["plan"] is not None else None
        if plan is not None and plan.nproc_room:
            plan = self.commands.with_nproc(plan, plan_fields(plan))
        enforce = self._enforce(spec) if spec["confine"] else _nothing
        joined, rest = self._joined(spec.get("share", ""), plan)
        ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
        pid_ns = plan is not None and plan.namespaces & CLONE_NEWPID
        report_r, report_w = os.pipe2(os.O_CLOEXEC) if pid_ns else (-1, -1)
        # mca's death (SIGTERM) waits until the command is on the books: its clean-up kills it
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            pid = os.fork()
            if pid == 0:  # pragma: no cover (the child; its outcome is the command's)
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
                os.close(ready_r)
                run_child(
                    spec, fds, plan, self.child, enforce, self.me, ready_w, joined, rest, report_w
                )
            os.close(ready_w)
            self.commands.started(pid, own_group=not pid_ns)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if pid_ns:
            os.close(report_w)
            self.reports[report_r] = pid
            self.poller.register(report_r, select.POLLIN)
        try:  # until the child has its own session: mca kills the command by its group
            os.read(ready_r, 1)
        finally:
            os.close(ready_r)
        return pid

    def _joined(
        self, share: str, plan: ChildPlan | None
    ) -> tuple[list[tuple[int, int]], ChildPlan | None]:
        """The sandbox's user (and network) namespaces to join, made at its first command, and
        the plan left for the child: the same, less what joining did. Where they cannot be
        made here, none: the child makes its own, and says why it could not."""
        if not share or plan is None or not plan.namespaces & CLONE_NEWUSER:
            return [], plan
        flags = sum(flag for flag, _ in SHARED if plan.namespaces & flag)
        key = (share, flags, plan.uid, plan.gid, plan.loopback_up, plan.strict)
        joined = self.namespaces.get(key)
        if joined is None:
            joined = make_namespaces(self.child, flags, plan)
            if not joined:
                return [], plan
            self.namespaces[key] = joined
        rest = ChildPlan(
            **{**plan_fields(plan), "namespaces": plan.namespaces & ~flags, "loopback_up": False}
        )
        return joined, rest

    def _enforce(self, spec: dict[str, Any]) -> Callable[[int], None]:
        program: bytes | None = spec["seccomp"]
        no_metadata = None
        if program is not None:
            no_metadata = self.filters.get(program)
            if no_metadata is None:
                no_metadata = self.filters[program] = seccomp.Installer(program)
        enforcer = self.enforcer

        def enforce(fd: int) -> None:
            enforcer.no_new_privs()
            if fd >= 0:
                enforcer.restrict(fd)
            if no_metadata is not None:
                no_metadata.install()

        return enforce

    def _probe(self, landlock_abi: int) -> int:
        """Whether a child can enter the sandbox's namespaces here (probe.py's question, asked
        from this process: mca forks nothing for it). The child's exit code."""
        return probe_child(self.child)


def _nothing(fd: int) -> None:
    pass


def _end(signum: int, frame: object) -> None:
    """The spawner's end by a signal (mca died): out of the loop through its clean-up, which
    kills every command's group (killed at once by SIGKILL, it would leave what they started
    running, adopted by whoever reaps orphans)."""
    raise SystemExit(0)


def main() -> None:
    fd, parent, pdeath = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    libc = ctypes.CDLL(None, use_errno=True)
    if pdeath:  # a signal it can catch: it kills what it started before it ends
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # mca ended before the line above
        return
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # as mca: other processes of the user see nothing
    # what a command leaves running is adopted here, not by init: reaped, and ended with it
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    sock = socket.socket(fileno=fd)
    os.set_inheritable(fd, False)
    _Helper(sock).serve()


if __name__ == "__main__":
    main()

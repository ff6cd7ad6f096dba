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
    spawner -> mca  ("pid", id, pid) | ("ok", id, exit code) | ("error", id, text)
                    ("exit", pid, returncode): a command ended (Popen's returncode)

Per spawn it forks; the child leads a session of its own (mca kills the command's group, as
before), dies with the spawner (PR_SET_PDEATHSIG), puts the descriptors in place, makes the
ChildPlan's calls (linux.Child.setup, the code preexec_fn ran) and execs. The spawner is the
command's parent: it reaps it and reports its status. At EOF on its socket (mca ended, even
killed -9) it kills every command it started and exits.
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
from mca.sandbox.linux import CLONE_NEWNET, CLONE_NEWUSER, Child, ChildPlan, _loopback_up

__all__ = ["HEADER", "SETUP_FAILED", "frame", "main", "run_child"]

HEADER = struct.Struct("!II")  # payload length, descriptors carried
SETUP_FAILED = 126  # as box.SETUP_FAILED: the set-up failed, the command never ran
NOT_FOUND = 127  # the program could not be executed (as a shell says)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
MAX_FDS = 64
# Made once per sandbox (a session's; "share" names it) and joined by each of its commands:
# making a user and a network namespace is most of a namespace sandbox's start. The mount, PID
# and IPC namespaces stay each command's own (nothing of one command outlives it).
SHARED = ((CLONE_NEWUSER, "user"), (CLONE_NEWNET, "net"))


def frame(message: tuple[Any, ...], nfds: int = 0) -> bytes:
    payload = marshal.dumps(message)
    return HEADER.pack(len(payload), nfds) + payload


class _Helper:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.child = Child()
        self.enforcer = landlock.Enforcer()
        self.filters: dict[bytes, seccomp.Installer] = {}
        self.running: set[int] = set()
        self.buffer = b""
        self.fds: list[int] = []  # received, not yet taken by a message
        self.me = os.getpid()
        self.namespaces: dict[tuple[Any, ...], list[tuple[int, int]]] = {}  # (flag, fd) each

    # -- the loop ----------------------------------------------------------------------------
    def serve(self) -> None:
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN)
        poller.register(wake_r, select.POLLIN)
        try:
            while True:
                for fd, _ in poller.poll():
                    if fd == wake_r:
                        while _drain(wake_r):
                            pass
                    elif not self._receive():
                        return
                self._reap()
        finally:
            for pid in self.running:  # mca is gone: nothing it started outlives it
                _kill_group(pid)

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
                self._handle(marshal.loads(payload), fds)
            finally:
                for fd in fds:
                    _close(fd)
        return True

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
                self.running.add(pid)
                self._send(("pid", rid, pid))
            elif op == "probe":
                self._send(("ok", rid, self._probe(*body)))
            elif op == "release":  # a sandbox closed: its namespaces go (no answer)
                for key in [k for k in self.namespaces if k[0] == body]:
                    for _, fd in self.namespaces.pop(key):
                        _close(fd)
            else:
                self._send(("error", rid, f"unknown request {op!r}"))
        except Exception as e:  # said to mca as this request's error; the spawner goes on
            self._send(("error", rid, f"{type(e).__name__}: {e}"))

    def _reap(self) -> None:
        while self.running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.running:
                self.running.discard(pid)
                self._send(("exit", pid, os.waitstatus_to_exitcode(status)))

    # -- a command ---------------------------------------------------------------------------
    def _spawn(self, spec: dict[str, Any], fds: list[int]) -> int:
        plan = _plan(spec["plan"], fds) if spec["plan"] is not None else None
        enforce = self._enforce(spec) if spec["confine"] else _nothing
        joined, rest = self._joined(spec.get("share", ""), plan)
        ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child; its outcome is the command's)
            os.close(ready_r)
            run_child(spec, fds, plan, self.child, enforce, self.me, ready_w, joined, rest)
        os.close(ready_w)
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
            joined = self._make_namespaces(flags, plan)
            if not joined:
                return [], plan
            self.namespaces[key] = joined
        rest = ChildPlan(
            **{**_fields(plan), "namespaces": plan.namespaces & ~flags, "loopback_up": False}
        )
        return joined, rest

    def _make_namespaces(self, flags: int, plan: ChildPlan) -> list[tuple[int, int]]:
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
                self.child.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                if self.child.libc.unshare(flags) == 0:
                    self.child.map_ids(plan.uid, plan.gid)
                    self.child._no_nested_user_namespaces(plan.strict)
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
        from mca.sandbox.probe import try_namespaces

        pid = os.fork()
        if pid == 0:  # pragma: no cover
            code = 1
            try:
                signal.set_wakeup_fd(-1)
                code = try_namespaces(self.child)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)


def _nothing(fd: int) -> None:
    pass


def _fields(plan: ChildPlan) -> dict[str, Any]:
    return {name: getattr(plan, name) for name in plan.__dataclass_fields__}


def _plan(wire: dict[str, Any], fds: list[int]) -> ChildPlan:
    """The ChildPlan as mca made it, its Landlock ruleset the descriptor that came along."""
    fields = dict(wire)
    if fields.get("ruleset_fd", -1) >= 0:
        fields["ruleset_fd"] = fds[-1]
    return ChildPlan(**fields)


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
) -> None:
    """In the forked child (one thread, the spawner's): never returns. `joined`: namespaces
    to enter first (the user namespace first), after which `rest` is what is left to do."""
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
        _place(spec["targets"], fds)
        os.chdir(spec["cwd"])
        for flag, fd in joined:
            if child.libc.setns(fd, flag) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"sandbox: setns: {os.strerror(err)}")
        if plan is not None:
            child.setup(rest if joined and rest is not None else plan, enforce)
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


def _dup_above(fd: int, floor: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)


def _say(line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, (line + "\n").encode(errors="replace"))


def _drain(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except (BlockingIOError, InterruptedError):
        return False


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)


def main() -> None:
    fd, parent, pdeath = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    libc = ctypes.CDLL(None, use_errno=True)
    if pdeath:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # mca ended before the line above
        return
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # as mca: other processes of the user see nothing
    sock = socket.socket(fileno=fd)
    os.set_inheritable(fd, False)
    _Helper(sock).serve()


if __name__ == "__main__":
    main()

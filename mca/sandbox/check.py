"""`mca sandbox check`: each property tried in a real sandboxed child, on this system, as this
user, through the same path the model's commands take.

A throwaway world is made in a private temporary directory: a workspace with a `.git/` and a
repository inside it, a folder beside it, a planted secret file and folder (added to the secret
list), a TCP and a UDP listener on 127.0.0.1, and listening unix sockets outside the workspace
(in a folder added to the places sockets live, one that $SSH_AUTH_SOCK names, and in /run or
your $XDG_RUNTIME_DIR where you may make one). One command per property tries to get out; the
verdict is read from the world afterwards (a file that must not exist, a listener that must
hear nothing, a lock a survivor would still hold), never from what the command printed about
itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import secrets
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mca.sandbox import sockets
from mca.sandbox.box import Sandbox
from mca.sandbox.probe import Mechanisms
from mca.sandbox.properties import Expected, Prop, expected
from mca.sandbox.rights import Grant, Mode, Policy, build_policy

__all__ = [
    "CHECK_PROCESSES",
    "TRIALS",
    "Finding",
    "Run",
    "check",
    "check_system",
    "lines",
    "refusal",
]

# The process limit the trials use, and the fork bomb's size. Without a user namespace
# RLIMIT_NPROC counts every task of the user, counted when the command starts: the user's other
# tasks that end (or start) meanwhile move the limit by as many, so the bomb is held when it
# stops well short of all it tried (and the other trials keep some room).
CHECK_PROCESSES = 16
BOMB = 64


@dataclass(frozen=True)
class Finding:
    """One property, tried: held or not, what holds it, and what the trial saw."""

    prop: Prop
    held: bool
    by: str
    saw: str

    def as_dict(self) -> dict[str, object]:
        return {"property": str(self.prop), "held": self.held, "by": self.by, "saw": self.saw}


@dataclass
class _World:
    root: Path
    ws: Path
    outside: Path
    secret_file: Path
    secret_dir: Path
    token: str
    tcp: socket.socket
    udp: socket.socket
    tmp: Path = Path()  # the trial sandbox's private /tmp, as mca sees it
    unix: dict[str, socket.socket] = dataclasses.field(default_factory=dict)  # path -> listener
    env: dict[str, str] = dataclasses.field(default_factory=dict)  # for the trial's commands

    def heard(self) -> list[str]:
        """What reached the listeners (they never block)."""
        got = [f"a connection to {path}" for path in self.unix_heard()]
        with contextlib.suppress(BlockingIOError, OSError):
            conn, _ = self.tcp.accept()
            got.append("a TCP connection")
            conn.close()
        with contextlib.suppress(BlockingIOError, OSError):
            self.udp.recv(100)
            got.append("a UDP datagram")
        return got

    def unix_heard(self) -> list[str]:
        out = []
        for path, listener in self.unix.items():
            with contextlib.suppress(BlockingIOError, OSError):
                listener.accept()[0].close()
                out.append(path)
        return out

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()
        for path, listener in self.unix.items():
            listener.close()
            with contextlib.suppress(OSError):
                os.unlink(path)


def _listen(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.listen(4)
    s.setblocking(False)
    return s


def _unix(w: _World) -> None:
    """Listening sockets where a command must not reach them: a folder added to the places
    sockets live, one $SSH_AUTH_SOCK names, and /run itself (root) or $XDG_RUNTIME_DIR."""
    (w.root / "run").mkdir()
    (w.root / "agent").mkdir()
    places = [w.root / "run" / "engine.sock", w.root / "agent" / "agent.sock"]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    for real in ("/run", runtime):
        if real.startswith("/") and os.path.isdir(real) and os.access(real, os.W_OK):
            places.append(Path(real) / f"mca-check-{w.token}.sock")
            break
    for path in places:
        with contextlib.suppress(OSError):
            w.unix[str(path)] = _listen(path)
    w.env["SSH_AUTH_SOCK"] = str(w.root / "agent" / "agent.sock")
    if runtime:
        w.env["XDG_RUNTIME_DIR"] = runtime


def _world() -> _World:
    root = Path(tempfile.mkdtemp(prefix="mca-check-")).resolve()
    ws, outside = root / "ws", root / "outside"
    token = secrets.token_hex(8)
    for d in (ws / ".git", ws / "vendor" / "lib" / ".git", outside, root / "secret-dir"):
        d.mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "vendor" / "lib" / ".git" / "config").write_text("[core]\n")
    (outside / "file").write_text("outside\n")
    (outside / "file").chmod(0o644)
    (root / "secret").write_text(f"PLANTED-{token}\n")
    (root / "secret-dir" / "key").write_text(f"PLANTED-{token}\n")
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    tcp.setblocking(False)
    udp.setblocking(False)
    w = _World(root, ws, outside, root / "secret", root / "secret-dir", token, tcp, udp)
    _unix(w)
    return w


def _policy(base: Policy, w: _World) -> Policy:
    """The session's policy (its mode, its secret list), moved to the trial's workspace, with
    the planted secrets added and a small process limit."""
    return dataclasses.replace(
        base,
        mode=Mode.WORKSPACE_WRITE if base.mode is Mode.OFF else base.mode,
        workspace=w.ws,
        deny_read=(*base.deny_read, w.secret_file, w.secret_dir),
        protected=(w.ws / ".git",),
        network=False,
        max_processes=CHECK_PROCESSES,
        sockets=(*base.sockets, str(w.root / "run")),
    )


Run = Callable[[str], str]


def _writes(w: _World, run: Run) -> tuple[bool, str]:
    run(f"echo x > {w.outside}/made; echo x >> {w.outside}/file; echo x > $TMPDIR/mine")
    if (w.outside / "made").exists() or (w.outside / "file").read_text() != "outside\n":
        return False, "a file outside was made or changed"
    return True, "no file outside was made or changed"


def _metadata(w: _World, run: Run) -> tuple[bool, str]:
    run(f"chmod 600 {w.outside}/file; touch -d 2001-01-01 {w.outside}/file")
    st = os.stat(w.outside / "file")
    if stat.S_IMODE(st.st_mode) == 0o600 or time.gmtime(st.st_mtime).tm_year == 2001:
        return False, "a file outside got another mode or time"
    return True, "a file outside kept its mode and time"


def _secrets(w: _World, run: Run) -> tuple[bool, str]:
    out = run(f"cat {w.secret_file}; ls -la {w.secret_dir}; cat {w.secret_dir}/key")
    if w.token in out:
        return False, "the planted secret was read"
    return True, "the planted secret file and folder could not be read"


def _network(w: _World, run: Run) -> tuple[bool, str]:
    tcp, udp = w.tcp.getsockname()[1], w.udp.getsockname()[1]
    run(f"echo x > /dev/tcp/127.0.0.1/{tcp}; echo x > /dev/udp/127.0.0.1/{udp}")
    heard = [*w.heard(), *_later(w)]
    if heard:
        return False, f"a listener on 127.0.0.1 got {' and '.join(sorted(set(heard)))}"
    return True, "listeners on 127.0.0.1 heard nothing (TCP and UDP)"


def _sockets(w: _World, run: Run) -> tuple[bool, str]:
    if not w.unix:
        return False, "the trial could not make a listening unix socket"
    code = (
        "import socket, sys\nfor p in sys.argv[1:]:\n    s = socket.socket(socket.AF_UNIX)\n"
        "    try:\n        s.connect(p)\n    except OSError:\n        pass\n"
    )
    run(f"{sys.executable} -c {_quote(code)} {' '.join(_quote(p) for p in w.unix)}")
    heard = w.unix_heard()
    time.sleep(0.1)  # a connection still on its way (the listeners are polled, not waited on)
    heard += w.unix_heard()
    if heard:
        here = sockets.named_sockets(os.environ)
        here += [s for s in sockets.engine_sockets(os.environ, Path.home()) if s not in here]
        said = f"; reachable here: {', '.join(here[:5])}" if here else ""
        return False, f"a command connected to {', '.join(sorted(set(heard)))}{said}"
    return True, f"listening unix sockets outside the workspace heard nothing ({len(w.unix)})"


def _later(w: _World) -> list[str]:
    time.sleep(0.2)  # a datagram in flight; the listeners are polled, not waited on
    return w.heard()


def _survivors(w: _World, run: Run) -> tuple[bool, str]:
    """A daemon that holds a lock, started with setsid (or, where that is refused, in the
    background as it is): once the command is done and cleaned up after, the lock is free
    again only if nothing of it runs. One that outlived its command is ended here (the lock
    names its pid, as this process sees it)."""
    lock = w.tmp / "lock"
    code = (
        "import fcntl, os, time; t = os.environ['TMPDIR']; f = open(t + '/lock', 'w');"
        " fcntl.lockf(f, fcntl.LOCK_EX); open(t + '/locked', 'w').close(); time.sleep(60)"
    )
    daemon = f"{sys.executable} -c {_quote(code)}"
    run(
        f"(setsid {daemon} || {daemon}) </dev/null >/dev/null 2>&1 &"
        ' for i in $(seq 100); do test -e "$TMPDIR/locked" && break; sleep 0.05; done'
    )
    if not (w.tmp / "locked").exists():
        return False, "the trial's daemon did not start"
    with open(lock, "a") as f:
        for _ in range(60):
            try:
                fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True, "a daemon it started was gone when the command ended"
            except OSError:
                time.sleep(0.05)
        _end_holder(f.fileno())
    return False, "a daemon it started was still running after the command"


def _end_holder(fd: int) -> None:
    """Kill the process that holds a POSIX lock on the file (its pid as this process sees it;
    none where it cannot be seen)."""
    asked = struct.pack("=hh4xqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    got = fcntl.fcntl(fd, fcntl.F_GETLK, asked)
    kind, _, _, _, pid = struct.unpack("=hh4xqqi4x", got)
    if kind != fcntl.F_UNLCK and pid > 0:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _protected(w: _World, run: Run) -> tuple[bool, str]:
    run("for c in .git/config vendor/lib/.git/config; do echo '[alias] x = !touch p' >> $c; done")
    for config in (".git/config", "vendor/lib/.git/config"):
        if (w.ws / config).read_text() != "[core]\n":
            return False, f"{config} kept what the command wrote"
    return True, ".git/config and a nested repository's were as before when the command ended"


def _processes(w: _World, run: Run) -> tuple[bool, str]:
    """BOMB processes at once (each sleeps until the clean-up stops it); a fork refused is
    not retried (bash's own fork retries would make this a count over time)."""
    code = (
        f"import os, sys, time\nn = 0\nfor i in range({BOMB}):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        os.closerange(0, 3)\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n    n += 1\nprint('STARTED', n, flush=True)"
    )
    out = run(f"{sys.executable} -c {_quote(code)}")
    found = [int(x) for x in out.split("STARTED")[1:2] if x.strip().isdigit()]
    if not found:
        return False, "the trial could not count its processes"
    said = f"{found[0]} of {BOMB} processes started at once (limit {CHECK_PROCESSES})"
    return found[0] < BOMB // 2, said


def _signals(w: _World, run: Run) -> tuple[bool, str]:
    out = run(f"kill -0 {os.getpid()} && echo REACHED-{w.token}")
    if f"REACHED-{w.token}" in out:
        return False, "the command could signal mca's own process"
    return True, "the command could not signal mca's own process"


TRIALS = {
    Prop.WRITES: _writes,
    Prop.METADATA: _metadata,
    Prop.SECRETS: _secrets,
    Prop.NETWORK: _network,
    Prop.SOCKETS: _sockets,
    Prop.SURVIVORS: _survivors,
    Prop.PROTECTED: _protected,
    Prop.PROCESSES: _processes,
    Prop.SIGNALS: _signals,
}


def lines(findings: list[Finding]) -> list[str]:
    """One line per property: held or not, what holds it, what the trial saw."""
    width = max(len(str(f.prop)) for f in findings)
    return [
        f"  {'held    ' if f.held else 'NOT HELD'}  {f.prop!s:<{width}}  {f.by}"
        + (f" ({f.saw})" if not f.held else "")
        for f in findings
    ]


def refusal(findings: list[Finding], needs: tuple[Prop, ...]) -> str:
    """Why these findings cannot do for what `needs` ('' when they can)."""
    missing = [f for f in findings if f.prop in needs and not f.held]
    return "; ".join(f"{f.prop}: {f.saw}" for f in missing)


def check_system(
    mechanisms: Mechanisms, user_home: Path, mca_home: Path, mode: Mode = Mode.WORKSPACE_WRITE
) -> list[Finding]:
    """The check for these mechanisms, in this mode, with this user's secret list."""
    policy = build_policy(mode, Path(tempfile.gettempdir()), user_home, mca_home)
    return check(Sandbox(policy, mechanisms))


def check(box: Sandbox, make: Callable[[Policy, Mechanisms], Sandbox] = Sandbox) -> list[Finding]:
    """Try every property with this sandbox's mechanisms and policy (its workspace aside: the
    trial has its own, built by `make`). Where nothing can contain a command, nothing is
    tried."""
    read_only = not box.policy.writes_workspace and box.policy.mode is not Mode.OFF
    means = {
        e.prop: e for e in expected(box.mechanisms, root=os.geteuid() == 0, read_only=read_only)
    }
    if not box.mechanisms.available:
        return [Finding(p, False, means[p].by, "not tried") for p in Prop]
    w = _world()
    trial = make(_policy(box.policy, w), box.mechanisms)
    w.tmp = trial.tmp()
    try:
        return [_one(trial, w, prop, means[prop]) for prop in Prop]
    finally:
        trial.close()
        w.close()
        shutil.rmtree(w.root, ignore_errors=True)


def _one(trial: Sandbox, w: _World, prop: Prop, means: Expected) -> Finding:
    held, saw = TRIALS[prop](w, lambda command: _run(trial, w.ws, command, w.env))
    return Finding(prop, held, means.by, saw)


def _run(box: Sandbox, ws: Path, command: str, more: dict[str, str]) -> str:
    """One command the way run_command runs it: prepared, started, waited for, cleaned up
    after (leftovers stopped, protected paths put back)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(ws), "LC_ALL": "C"}
    env.update(more)
    launch = box.prepare(Grant(), env)
    proc = box.popen(
        ["/bin/bash", "-c", command],
        launch,
        cwd=str(ws),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    box.finish(launch, proc.pid)
    return (out or b"").decode(errors="replace")

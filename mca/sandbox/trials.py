"""The trials `mca sandbox check` makes (mca/sandbox/check.py): the throwaway world they run in,
and one command per property that tries to get out, judged from the world afterwards (a file
that must not exist, a listener that must hear nothing, a lock a survivor would still hold),
never from what the command printed about itself."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import resource
import secrets
import signal
import socket
import stat
import struct
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from mca.sandbox import sockets
from mca.sandbox.properties import Prop
from mca.sandbox.rights import Mode, Policy
from mca.sandbox.spawning.client import shared

__all__ = ["BOMB", "CHECK_PROCESSES", "TRIALS", "Run", "World", "make_world", "trial_policy"]

# The process limit the trials use, and the fork bomb's size. Without a user namespace
# RLIMIT_NPROC counts every task of the user, counted when the command starts: the user's other
# tasks that end (or start) meanwhile move the limit by as many, so the bomb is held when it
# stops well short of all it tried (and the other trials keep some room).
CHECK_PROCESSES = 16
BOMB = 64


@dataclass
class World:
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


def _listen(path: Path | str) -> socket.socket:
    """A listening unix socket; '@name' is an abstract one (no file)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + path[1:] if isinstance(path, str) else str(path))
    s.listen(4)
    s.setblocking(False)
    return s


def _unix(w: World) -> None:
    """Listening sockets where a command must not reach them: a folder added to the places
    sockets live, one $SSH_AUTH_SOCK names, /run itself (root) or $XDG_RUNTIME_DIR, and an
    abstract one (X11's and some D-Bus buses are: no file, per network namespace)."""
    (w.root / "run").mkdir()
    (w.root / "agent").mkdir()
    places = [w.root / "run" / "engine.sock", w.root / "agent" / "agent.sock"]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    for real in ("/run", runtime):
        if real.startswith("/") and os.path.isdir(real) and os.access(real, os.W_OK):
            places.append(Path(real) / f"mca-check-{w.token}.sock")
            break
    listened: list[Path | str] = [*places, f"@mca-check-{w.token}"]
    for path in listened:
        with contextlib.suppress(OSError):
            w.unix[str(path)] = _listen(path)
    w.env["SSH_AUTH_SOCK"] = str(w.root / "agent" / "agent.sock")
    if runtime:
        w.env["XDG_RUNTIME_DIR"] = runtime


def make_world() -> World:
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
    w = World(root, ws, outside, root / "secret", root / "secret-dir", token, tcp, udp)
    _unix(w)
    return w


def trial_policy(base: Policy, w: World) -> Policy:
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


class Run(Protocol):
    """Runs one trial command the way run_command does and returns what it printed; with
    `stop_at`, the command is stopped as Esc stops one (its group killed, then cleaned up
    after) once its output holds that text."""

    def __call__(self, command: str, stop_at: str = "") -> str: ...


def _writes(w: World, run: Run) -> tuple[bool, str]:
    run(f"echo x > {w.outside}/made; echo x >> {w.outside}/file; echo x > $TMPDIR/mine")
    if (w.outside / "made").exists() or (w.outside / "file").read_text() != "outside\n":
        return False, "a file outside was made or changed"
    return True, "no file outside was made or changed"


def _metadata(w: World, run: Run) -> tuple[bool, str]:
    run(f"chmod 600 {w.outside}/file; touch -d 2001-01-01 {w.outside}/file")
    st = os.stat(w.outside / "file")
    if stat.S_IMODE(st.st_mode) == 0o600 or time.gmtime(st.st_mtime).tm_year == 2001:
        return False, "a file outside got another mode or time"
    return True, "a file outside kept its mode and time"


def _secrets(w: World, run: Run) -> tuple[bool, str]:
    out = run(f"cat {w.secret_file}; ls -la {w.secret_dir}; cat {w.secret_dir}/key")
    if w.token in out:
        return False, "the planted secret was read"
    return True, "the planted secret file and folder could not be read"


def _network(w: World, run: Run) -> tuple[bool, str]:
    tcp, udp = w.tcp.getsockname()[1], w.udp.getsockname()[1]
    run(f"echo x > /dev/tcp/127.0.0.1/{tcp}; echo x > /dev/udp/127.0.0.1/{udp}")
    heard = [*w.heard(), *_later(w)]
    if heard:
        return False, f"a listener on 127.0.0.1 got {' and '.join(sorted(set(heard)))}"
    return True, "listeners on 127.0.0.1 heard nothing (TCP and UDP)"


def _sockets(w: World, run: Run) -> tuple[bool, str]:
    if not w.unix:
        return False, "the trial could not make a listening unix socket"
    code = (
        "import socket, sys\nfor p in sys.argv[1:]:\n    s = socket.socket(socket.AF_UNIX)\n"
        "    try:\n        s.connect('\\0' + p[1:] if p[0] == '@' else p)\n"
        "    except OSError:\n        pass\n"
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


def _later(w: World) -> list[str]:
    time.sleep(0.2)  # a datagram in flight; the listeners are polled, not waited on
    return w.heard()


def _survivors(w: World, run: Run) -> tuple[bool, str]:
    """A daemon that holds a lock, started with setsid (or, where that is refused, in the
    background as it is): once the command is done and cleaned up after, the lock is free
    again only if nothing of it runs. One that outlived its command is ended here (the lock
    names its pid, as this process sees it)."""
    spawners = shared().pids()  # what cleans up after a command (with mca): out of its reach?
    if spawners:
        pid = min(spawners)
        if f"REACHED-{w.token}" in run(f"kill -0 {pid} && echo REACHED-{w.token}"):
            return (
                False,
                "the command could signal mca's spawner, and so end it before it cleans up",
            )
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


def _protected(w: World, run: Run) -> tuple[bool, str]:
    """A command that ends by itself, and one stopped as Esc stops it while it sleeps after
    writing (mca killed meanwhile is the next mca's to put back: tests/sandbox/test_put_back)."""
    tamper = "for c in .git/config vendor/lib/.git/config; do echo '[alias] x = !p' >> $c; done"
    for how, stop_at in (("ended", ""), ("was stopped", "TAMPERED")):
        then = "; echo TAMPERED; sleep 30" if stop_at else ""
        run(tamper + then, stop_at=stop_at)
        for config in (".git/config", "vendor/lib/.git/config"):
            if (w.ws / config).read_text() != "[core]\n":
                return False, f"{config} kept what a command wrote when it {how}"
    return True, (
        ".git/config and a nested repository's were as before when a command ended and when"
        " one was stopped"
    )


def _processes(w: World, run: Run) -> tuple[bool, str]:
    """BOMB processes at once (each sleeps until the clean-up stops it); a fork refused is
    not retried (bash's own fork retries would make this a count over time). For an ordinary
    user RLIMIT_NPROC counts every task of the user, counted when the command starts, so what
    the user's other programs end meanwhile leaves as much more room (another bomb of theirs,
    a parallel test suite's): there a limit the kernel enforces, set in the child, holds it."""
    code = (
        f"import os, resource, time\nn = 0\nfor i in range({BOMB}):\n    try:\n"
        "        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n"
        "        os.closerange(0, 3)\n        time.sleep(60)\n        os._exit(0)\n    n += 1\n"
        "print('STARTED', n, 'LIMIT', resource.getrlimit(resource.RLIMIT_NPROC)[0], flush=True)"
    )
    out = run(f"{sys.executable} -c {_quote(code)}")
    words = out.split("STARTED", 1)[-1].split()
    if len(words) < 3 or not words[0].isdigit() or not words[2].lstrip("-").isdigit():
        return False, "the trial could not count its processes"
    started, limit = int(words[0]), int(words[2])
    said = f"{started} of {BOMB} processes started at once (limit {CHECK_PROCESSES})"
    own = resource.getrlimit(resource.RLIMIT_NPROC)[0]  # this user's, as mca runs
    set_here = limit >= 0 and (own < 0 or limit < own)  # lowered for the command
    bound = set_here and os.geteuid() != 0  # the kernel counts it (root is exempt from it)
    return started < BOMB // 2 or bound, said + (
        "" if started < BOMB // 2 else f", RLIMIT_NPROC {limit}"
    )


def _signals(w: World, run: Run) -> tuple[bool, str]:
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

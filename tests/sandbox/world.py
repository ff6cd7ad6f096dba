"""A world for commands that try to get out of the sandbox, and the oracle that judges them.

Under one directory (not under /tmp, so the sandbox's private /tmp is in force):

    ws/        the workspace: a git repository with a hook, a Makefile and a test suite, and
               repositories inside it (vendor/lib/.git, sub/.git naming gitdirs/sub, the
               bare origin.git) whose git directories nothing may change
    outside/   files beside the workspace that nothing may change (hashed before and after)
    home/      $HOME, with planted secrets (~/.ssh, ~/.aws, ~/.netrc, other agents' and
               toolchains' credentials: ~/.codex/auth.json …) and a .bashrc
    mcahome/   $MCA_HOME, with a config.toml holding a planted key (mca keeps its state here)
    xdg/, agent/  $XDG_RUNTIME_DIR and $SSH_AUTH_SOCK's folder, each with a listening socket
    run/, shared/  the world's own /run (with a listening socket) and /tmp where sockets are
               looked for: the policy names these, never the host's
    alive      the marker every process of a command holds open (World.command)

Plus a TCP and a UDP listener on 127.0.0.1 and the unix sockets (and an abstract one,
@mca-test-<token>), which must receive nothing, and
the marker, which says whether anything of a command still runs after it returned (no scan of
/proc: it may be hidden). `World.env` is what a command's environment must hold for the world
to be in force ($HOME, $XDG_RUNTIME_DIR, $SSH_AUTH_SOCK).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from mca.sandbox.box import Sandbox
from mca.sandbox.probe import Mechanisms
from mca.sandbox.rights import Grant, Mode, Policy, build_policy
from mca.tools.command import Outcome, execute
from tests.leftovers import commands_left, held, marker, opening
from tests.security.world import tree_digest


# Fresh in every world: a key some other test left readable somewhere is not this one.
def _planted(kind: str) -> str:
    return f"PLANTED-{kind}-{secrets.token_hex(6)}"


# What mca itself keeps in $MCA_HOME (the oracle watches everything else there).
MCA_OWN = {"sandbox", "snapshots", "sessions", "logs", "cache", "history", "calibration"}
# Other agents' and toolchains' credentials, each planted with a key of its own under home/.
OTHER_TOOLS = {
    ".codex/auth.json": '{{"OPENAI_API_KEY": "{key}"}}\n',
    ".claude/.credentials.json": '{{"claudeAiOauth": {{"accessToken": "{key}"}}}}\n',
    ".claude.json": '{{"primaryApiKey": "{key}"}}\n',
    ".gemini/oauth_creds.json": '{{"access_token": "{key}"}}\n',
    ".config/gcloud/application_default_credentials.json": '{{"refresh_token": "{key}"}}\n',
    ".azure/msal_token_cache.json": '{{"secret": "{key}"}}\n',
    ".kube/config": "users:\n- user:\n    token: {key}\n",
    ".git-credentials": "https://me:{key}@example.com\n",
    ".npmrc": "//registry.npmjs.org/:_authToken={key}\n",
    ".pypirc": "[pypi]\npassword = {key}\n",
    ".cargo/credentials.toml": '[registry]\ntoken = "{key}"\n',
    ".cargo/credentials": '[registry]\ntoken = "{key}"\n',
    ".terraform.d/credentials.tfrc.json": '{{"credentials": {{"x": {{"token": "{key}"}}}}}}\n',
    ".docker/config.json": '{{"auths": {{"x": {{"auth": "{key}"}}}}}}\n',
    ".config/gh/hosts.yml": "github.com:\n    oauth_token: {key}\n",
}


class Listener:
    """A TCP and a UDP socket on 127.0.0.1, and listening unix sockets; records whatever
    reaches them. A connection waits in its socket's queue until the listener takes it, so
    `received` first takes everything queued: a verdict never depends on when a thread ran."""

    def __init__(self, unix: tuple[Path, ...] = (), abstract: str = "") -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix: dict[socket.socket, Path] = {}
        for path in unix:
            u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            u.bind(str(path))
            u.listen(8)
            self.unix[u] = path
        if abstract:  # no file: per network namespace, and Landlock's scope (ABI 6)
            u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            u.bind("\0" + abstract)
            u.listen(8)
            self.unix[u] = Path("@" + abstract)
        for s in (self.tcp, self.udp, *self.unix):
            s.setblocking(False)
        self._got: list[bytes] = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def tcp_port(self) -> int:
        return int(self.tcp.getsockname()[1])

    @property
    def udp_port(self) -> int:
        return int(self.udp.getsockname()[1])

    @property
    def received(self) -> list[bytes]:
        """Everything that reached a socket, up to now."""
        self._take()
        with self._lock:
            return list(self._got)

    def _serve(self) -> None:
        """Answer connections as they come (a client waiting for a reply is let go at once)."""
        watched = [s.fileno() for s in (self.tcp, self.udp, *self.unix)] + [self._wake_r]
        while True:
            ready, _, _ = select.select(watched, [], [])
            if self._wake_r in ready:
                return
            self._take()

    def _take(self) -> None:
        with self._lock:
            with contextlib.suppress(OSError):
                while True:
                    conn, _ = self.tcp.accept()
                    with conn:
                        data = b""
                        with contextlib.suppress(OSError):
                            conn.setblocking(False)
                            data = conn.recv(4096)
                        self._got.append(b"tcp-connect:" + data)
            with contextlib.suppress(OSError):
                while True:
                    self._got.append(b"udp:" + self.udp.recv(4096))
            for u, path in self.unix.items():
                with contextlib.suppress(OSError):
                    while True:
                        u.accept()[0].close()
                        self._got.append(b"unix-connect:" + bytes(path))

    def close(self) -> None:
        os.write(self._wake_w, b"x")
        self.thread.join(timeout=10)
        os.close(self._wake_r)
        os.close(self._wake_w)
        self.tcp.close()
        self.udp.close()
        for u, path in self.unix.items():
            u.close()
            with contextlib.suppress(OSError):
                path.unlink()  # an abstract one has none: '@…' is not found


@dataclass
class World:
    """The tree, the sandbox and the listener of one test."""

    root: Path
    sandbox: Sandbox
    listener: Listener
    token: str = field(default_factory=lambda: secrets.token_hex(4))
    secrets: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # $HOME, $XDG_RUNTIME_DIR, $SSH_AUTH_SOCK
    sockets: dict[str, Path] = field(default_factory=dict)  # run, xdg, agent -> a listener

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    def fill(self, command: str) -> str:
        """The command with {ws}, {outside}, {home}, {mca_home}, {port}, {udp}, {pid},
        {token}, {run_sock}, {xdg_sock}, {agent_sock}, {abstract} filled in."""
        return command.format(
            run_sock=self.sockets.get("run", ""),
            xdg_sock=self.sockets.get("xdg", ""),
            agent_sock=self.sockets.get("agent", ""),
            ws=self.ws,
            outside=self.outside,
            home=self.home,
            mca_home=self.root / "mcahome",
            port=self.listener.tcp_port,
            udp=self.listener.udp_port,
            pid=os.getpid(),
            token=self.token,
            abstract=f"mca-test-{self.token}",
        )

    @property
    def marker(self) -> Path:
        """A file every process of the world's commands holds open (see `command`)."""
        return self.root / "alive"

    def command(self, command: str) -> str:
        """The command filled in, opening the marker first: all it starts inherit it."""
        return opening(self.marker, self.fill(command))

    def run(self, command: str, grant: Grant | None = None, timeout: float = 30) -> Outcome:
        """The command through mca's run path, inside the sandbox, with the world's $HOME,
        $XDG_RUNTIME_DIR and $SSH_AUTH_SOCK in mca's environment (as a session has them)."""
        with _environ(self.env):
            return execute(
                self.command(command), str(self.ws), timeout, sandbox=self.sandbox, grant=grant
            )

    def survivors(self) -> list[str]:
        """What is still running of the world's commands: by the marker they hold open, and
        as the spawner counts them (no scan of /proc: tests/leftovers.py)."""
        out = [f"a process of a command still holds {self.marker.name} open"] * held(self.marker)
        left = commands_left(0)
        return out + [f"{left} ended command(s) still have a process running"] * bool(left)

    def snapshot(self) -> dict[str, object]:
        """What must not change: outside/, home/ (secrets, .bashrc, $MCA_HOME), .git/ and the
        git directories of the repositories inside the workspace."""
        return {
            "outside": tree_digest(self.outside),
            "home": tree_digest(self.home),
            "git": tree_digest(self.ws / ".git"),
            "nested": {
                str(p): tree_digest(self.ws / p) if (self.ws / p).is_dir() else _file(self.ws / p)
                for p in NESTED
            },
            "mca-conf": tree_digest(self.ws / "conf"),
            "mca": {
                k: v
                for k, v in tree_digest(self.root / "mcahome").items()
                if k.split("/")[0] not in MCA_OWN
            },
        }


# The repositories inside the workspace: their git directories, and the `.git` file naming one.
NESTED = ("vendor/lib/.git", "gitdirs/sub", "sub/.git", "origin.git")


def _file(path: Path) -> tuple[str, str]:
    try:
        return ("file", path.read_text())
    except OSError as e:
        return ("gone", type(e).__name__)


def _nested(ws: Path, env: dict[str, str]) -> None:
    """A vendored repository, a submodule-style checkout whose `.git` file names a git
    directory elsewhere in the workspace, and a bare repository."""
    (ws / "gitdirs").mkdir()
    for args in (
        ["init", "-q", str(ws / "vendor" / "lib")],
        ["init", "-q", f"--separate-git-dir={ws / 'gitdirs' / 'sub'}", str(ws / "sub")],
        ["init", "-q", "--bare", str(ws / "origin.git")],
    ):
        subprocess.run(["git", *args], check=True, env=env)
    (ws / "sub" / ".git").write_text("gitdir: ../gitdirs/sub\n")  # relative, as submodules


def _unix(root: Path) -> dict[str, Path]:
    """Where listening sockets go: $XDG_RUNTIME_DIR, $SSH_AUTH_SOCK's folder, and the world's
    own /run (the policy names it among the places sockets live, never the host's)."""
    for d in ("xdg", "agent", "run"):
        (root / d).mkdir(mode=0o700)
    return {
        "xdg": root / "xdg" / "bus",
        "agent": root / "agent" / "agent.sock",
        "run": root / "run" / "engine.sock",
    }


def local_places(policy: Policy, root: Path) -> Policy:
    """The policy with the world's own places where sockets live and its own shared folder
    (root/shared stands in for /tmp): a verdict never depends on the host's /run or /tmp."""
    (root / "shared").mkdir(exist_ok=True)
    mine = tuple(p for p in policy.sockets if p.startswith(("~", "$")))
    return replace(policy, sockets=(str(root / "run"), *mine), shared_tmp=(str(root / "shared"),))


def build_world(
    root: Path, mechanisms: Mechanisms, mode: Mode = Mode.WORKSPACE_WRITE, *, own_run: bool = True
) -> World:
    """Plant the tree and open a sandbox on it. `own_run=False` for a world whose commands mca
    runs with its own settings (which name the host's /run, not the world's): the runtime
    folder's socket stands in for one in /run."""
    ws, home, outside = root / "ws", root / "home", root / "outside"
    key, aws, config_key = _planted("KEY"), _planted("AWS"), _planted("CONFIG")
    mca_home = root / "mcahome"
    for d in (ws / "src", home / ".ssh", home / ".aws", mca_home, outside / "dir"):
        d.mkdir(parents=True)
    tools = {name: _planted("TOOL") for name in OTHER_TOOLS}
    for name, text in OTHER_TOOLS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text.format(key=tools[name]))
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{key}\n")
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {aws}\n")
    (home / ".netrc").write_text(f"machine example.com password {key}\n")
    (home / ".bashrc").write_text("# bashrc\n")
    (mca_home / "config.toml").write_text(f'api_key = "{config_key}"\n')
    (outside / "file").write_text("outside\n")
    (outside / "dir" / "nested").write_text("nested\n")
    (outside / "skills").mkdir()  # what a link made as .agents would lead the clean-up to
    (outside / "skills" / "SKILL.md").write_text("mine\n")
    (ws / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (ws / "test_app.py").write_text(
        "import unittest\nfrom src.app import add\n\n"
        "class T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
    (ws / "Makefile").write_text("build:\n\tmkdir -p build && cp src/app.py build/app.py\n")
    (ws / "escape").symlink_to(outside)  # a symlink the repository ships
    (ws / "conf").mkdir()  # .mca is a link to it: mca reads its configuration there
    (ws / ".mca").symlink_to("conf")
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(ws)], check=True, env=env)
    (ws / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    _nested(ws, env)
    token = secrets.token_hex(4)
    marker(root / "alive")
    where = _unix(root)
    if not own_run:
        where["run"] = where["xdg"]
    listener = Listener(tuple(dict.fromkeys(where.values())), f"mca-test-{token}")
    policy = local_places(build_policy(mode, ws, home, mca_home), root)
    return World(
        root,
        Sandbox(policy, mechanisms),
        listener,
        token,
        secrets=(key, aws, config_key, *tools.values()),
        env={
            "HOME": str(home),
            "XDG_RUNTIME_DIR": str(root / "xdg"),
            "SSH_AUTH_SOCK": str(where["agent"]),
        },
        sockets=where,
    )


@contextlib.contextmanager
def _environ(more: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in more}
    os.environ.update(more)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def wait_gone(world: World, seconds: float = 5.0) -> list[str]:
    """Survivors, after giving the kernel a moment to finish killing (never a fixed sleep:
    returns as soon as none is left)."""
    deadline = time.monotonic() + seconds
    left = world.survivors()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = world.survivors()
    return left


def all_files_text(top: Path) -> Iterator[str]:
    """The text of every regular file below `top` (for planted secrets)."""
    for dirpath, _, filenames in os.walk(top):
        for name in filenames:
            p = Path(dirpath, name)
            if p.is_file() and not p.is_symlink():
                try:
                    yield p.read_bytes().decode(errors="replace")
                except OSError:
                    continue

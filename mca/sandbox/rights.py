"""What a sandboxed command may do: pure data, no I/O but resolving paths.

A `Policy` is built once per session from the settings; a `Grant` widens it for one command the
person approved with more rights (the network, writing `.git/` as `git commit` must, or a
directory outside the workspace). `unwritable` says which directories can never be made
writable (config.toml's `sandbox_writable`, or a one-time grant), and why.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

# The secret list and the places tools' own variables move it to (mca/sandbox/credentials.py)
from mca.sandbox.credentials import SECRET_PATHS as SECRET_PATHS
from mca.sandbox.credentials import named_places

# Inside the workspace: readable, never writable from the sandbox (the workspace's manifest of
# protected paths says which and why).
from mca.workspace.protect import PROTECTED_NAMES as PROTECTED_NAMES

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_PROCESSES",
    "MODE_HELP",
    "SECRET_PATHS",
    "SHARED_TMP",
    "SOCKET_PLACES",
    "SYSTEM_DIRS",
    "Grant",
    "Mode",
    "Policy",
    "build_policy",
    "expand",
    "secret_paths",
    "shown",
    "state_dir",
    "unwritable",
]


class Mode(enum.StrEnum):
    """--sandbox: how far a command mca runs for the model may reach."""

    WORKSPACE_WRITE = "workspace-write"
    READ_ONLY = "read-only"
    OFF = "off"


MODE_HELP = {
    Mode.WORKSPACE_WRITE: "commands may write the workspace and a private /tmp; everything"
    " else is read-only, secrets unreadable, no network",
    Mode.READ_ONLY: "commands may read (not your secrets) but write nothing outside a private"
    " /tmp; no network",
    Mode.OFF: "commands run with your full rights (no sandbox)",
}

# Where pathname Unix sockets live: with a mount namespace each is covered by an empty tmpfs
# (mca/sandbox/sockets.py; the folders of sockets environment variables name are added then).
# ~ is the user's home, $VAR the environment's.
SOCKET_PLACES = (
    "/run",
    "/var/run",
    "$XDG_RUNTIME_DIR",
    "/tmp/.X11-unix",
    "/tmp/.ICE-unix",
    "/mnt/wslg",
    "/var/lib/docker",
    "/var/lib/lxd",
    "/var/snap/lxd/common/lxd",
    "/var/lib/incus",
    "~/.docker/run",
    "~/.colima",
    "~/.rd",
    "~/.lima",
    "~/.local/share/containers",
)
# Folders everyone shares, looked into for sockets two levels deep where the private /tmp does
# not cover them (the workspace lies in one).
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")
# Never writable from the sandbox, whoever asks: the kernel's and the devices' views.
SYSTEM_DIRS = ("/proc", "/sys", "/dev")
MAX_PROCESSES = 1024  # processes a command may have at once (fork bombs stop here)
MAX_FILE_BYTES = 8 * 1024**3  # one file a command writes (a disk fill stops here)


@dataclass(frozen=True)
class Grant:
    """Rights beyond the policy for one command, each approved by the person."""

    network: bool = False
    write_protected: bool = False  # .git/, .mca/, .agents/skills/ writable for this command
    writable: tuple[Path, ...] = ()  # directories outside the workspace (see `unwritable`)

    def __bool__(self) -> bool:
        return self.network or self.write_protected or bool(self.writable)

    def describe(self, user_home: Path | None = None) -> str:
        parts = ["the network"] if self.network else []
        parts += ["writing .git/ and the other protected paths"] if self.write_protected else []
        if self.writable:
            dirs = ", ".join(shown(d, user_home) for d in self.writable)
            parts.append(f"{dirs} writable")
        return " and ".join(parts)


@dataclass(frozen=True, kw_only=True)
class Policy:
    """The sandbox for one session."""

    mode: Mode
    workspace: Path  # resolved
    user_home: Path
    deny_read: tuple[Path, ...] = ()  # absolute; expanded from SECRET_PATHS and config
    protected: tuple[Path, ...] = ()  # absolute paths inside the workspace, read-only in it
    state: Path | None = None  # mca's own place for this workspace's sandbox state
    network: bool = False
    max_processes: int = MAX_PROCESSES
    max_file_bytes: int = MAX_FILE_BYTES
    max_memory_bytes: int = 0  # address space of each process (0: no limit)
    max_cpu_seconds: int = 0  # CPU time of each process (0: no limit)
    extra: tuple[str, ...] = field(default=(), repr=False)  # config.toml additions, as given
    writable: tuple[Path, ...] = ()  # config.toml's sandbox_writable, resolved and checked
    write_git: bool = False  # --allow-git: every command may write .git/ (hooks included)
    sockets: tuple[str, ...] = SOCKET_PLACES  # where sockets live (~ and $VAR as given)
    shared_tmp: tuple[str, ...] = SHARED_TMP  # shared folders scanned for sockets
    # Reads by allow-list (the lab's student code): only these paths, the private /tmp and the
    # devices a program writes to are there to read; None: everything but `deny_read`.
    read_only_from: tuple[Path, ...] | None = None
    # What the private /tmp holds, (bytes, entries): where the child has a view of its own, a
    # tmpfs of that size is its /tmp, so the kernel refuses more (None: as the disk allows)
    tmp_size: tuple[int, int] | None = None

    @property
    def writes_workspace(self) -> bool:
        return self.mode is Mode.WORKSPACE_WRITE

    def held(self, grant: Grant) -> tuple[Path, ...]:
        """The protected paths a command with `grant` may not write: none when the person let
        it write them all; all but the workspace's own `.git` when git may be written
        (--allow-git: a nested repository's stays held). In a sandbox that writes nothing they
        stay, for the record."""
        if not self.writes_workspace:
            return self.protected
        if grant.write_protected:
            return ()
        if self.write_git:
            return tuple(p for p in self.protected if p != self.workspace / ".git")
        return self.protected

    def writable_dirs(self, grant: Grant) -> tuple[Path, ...]:
        """Directories outside the workspace a command with `grant` may write (config.toml's
        and the grant's; none in a sandbox that writes nothing)."""
        if not self.writes_workspace:
            return ()
        return tuple(dict.fromkeys((*self.writable, *grant.writable)))

    def widened(self, grant: Grant, *, configured: bool = True) -> list[str]:
        """What a command with `grant` may write beyond the mode's own, a few words each
        (config.toml's directories only when `configured`)."""
        if not self.writes_workspace:
            return []
        out = [".git/ writable"] if grant.write_protected or self.write_git else []
        dirs = self.writable_dirs(grant) if configured else grant.writable
        return out + [f"{shown(d, self.user_home)} writable" for d in dirs]

    def read_only(self) -> Policy:
        """The same sandbox with nothing writable but a private /tmp and no network: the
        read-only approval mode's."""
        return replace(self, mode=Mode.READ_ONLY, network=False, writable=(), write_git=False)


def expand(path: str, user_home: Path) -> Path:
    """'~/x' under the user's home; other paths as they are."""
    if path == "~" or path.startswith("~/"):
        return user_home / path[2:]
    return Path(path)


def shown(path: Path, user_home: Path | None) -> str:
    """A path as a person writes it: under their home as ~/..."""
    if user_home is not None and path != user_home and path.is_relative_to(user_home):
        return "~/" + str(path.relative_to(user_home))
    return str(path)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def unwritable(path: Path, user_home: Path, secrets: tuple[Path, ...]) -> str:
    """Why `path` (absolute) may never be made writable from the sandbox ('' when it may): the
    whole file system, the kernel's views, your home itself or a directory above it, or one
    that is or holds or lies in one of your secrets (whose rights come with writing it)."""
    if not path.is_absolute():
        return "it is not an absolute path (write it as /... or ~/...)"
    real, home = _real(path), _real(user_home)
    if real == Path("/"):
        return "it is the whole file system"
    if any(real == Path(d) or real.is_relative_to(d) for d in SYSTEM_DIRS):
        return "it is the kernel's or the devices' view, never writable"
    if real == home or home.is_relative_to(real):
        return "it is your home directory or holds it (with your secrets)"
    for secret in secrets:
        for s in dict.fromkeys((secret, _real(secret))):
            if real == s or real.is_relative_to(s):
                return f"it is one of your secrets ({shown(s, user_home)})"
            if s.is_relative_to(real):
                return f"it holds one of your secrets ({shown(s, user_home)})"
    return ""


def secret_paths(
    user_home: Path,
    mca_home: Path,
    deny_read: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
) -> tuple[Path, ...]:
    """The secret list, where `env`'s variables move tools' credentials (each one that may be
    hidden: never /, the kernel's views or your home itself), config.toml's additions and
    $MCA_HOME, absolute."""
    secrets = [expand(p, user_home) for p in (*SECRET_PATHS, *deny_read)]
    named = named_places(env or {}, user_home)
    secrets += [p for p in named if not unwritable(p, user_home, ())]  # HISTFILE=/dev/null
    return tuple(dict.fromkeys([*secrets, mca_home]))


def state_dir(mca_home: Path, workspace: Path) -> Path:
    """mca's own place for one workspace's sandbox state (records, git's object links)."""
    import hashlib

    return mca_home / "sandbox" / hashlib.sha256(bytes(workspace.resolve())).hexdigest()[:16]


def build_policy(
    mode: Mode,
    workspace: Path,
    user_home: Path,
    mca_home: Path,
    *,
    network: bool = False,
    deny_read: tuple[str, ...] = (),
    protected_dirs: tuple[Path, ...] = (),
    writable: tuple[Path, ...] = (),
    write_git: bool = False,
    read_only_from: tuple[str, ...] | None = None,
    env: Mapping[str, str] | None = None,
) -> Policy:
    """The session's policy: the secret list (plus where the variables of `env`, the
    environment mca started with, move tools' credentials, and config.toml's additions) and
    $MCA_HOME unreadable, the protected names and any skills directory inside the workspace
    read-only, config.toml's writable directories (checked by the settings) writable; with
    `read_only_from`, nothing is readable but those paths (absolute), whatever the secret
    list says."""
    ws = workspace.resolve()
    everything = secret_paths(user_home, mca_home, deny_read, env)
    secrets = tuple(s for s in everything if not ws.is_relative_to(s.resolve()))
    protected = [ws / name for name in PROTECTED_NAMES]
    for d in (*protected_dirs, mca_home):
        real = d.resolve()
        if real != ws and real.is_relative_to(ws) and real not in protected:
            protected.append(real)
    return Policy(
        mode=mode,
        workspace=ws,
        user_home=user_home,
        deny_read=secrets,
        protected=tuple(protected),
        state=state_dir(mca_home, ws),
        network=network,
        extra=deny_read,
        writable=tuple(dict.fromkeys(_real(expand(str(p), user_home)) for p in writable)),
        write_git=write_git,
        read_only_from=None
        if read_only_from is None
        else tuple(dict.fromkeys(Path(os.path.abspath(p)) for p in read_only_from)),
    )

"""What a sandboxed command may do: pure data, no I/O.

A `Policy` is built once per session from the settings; a `Grant` widens it for one command the
person approved with more rights (the network, or writing `.git/` as `git commit` must).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

# Inside the workspace: readable, never writable from the sandbox (the workspace's manifest of
# protected paths says which and why).
from mca.workspace.protect import PROTECTED_NAMES as PROTECTED_NAMES

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_PROCESSES",
    "MODE_HELP",
    "SECRET_PATHS",
    "SOCKET_PLACES",
    "Grant",
    "Mode",
    "Policy",
    "build_policy",
    "expand",
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

# The user's secrets: never readable from inside the sandbox (the one list; the README shows
# it). Paths under ~ are relative to the user's home; config.toml's `sandbox_deny_read` adds
# more. $MCA_HOME is always added. A path that holds the workspace is left out (a command must
# reach the workspace). Shell start-up files (~/.bashrc, ~/.profile, ~/.zshrc …) stay readable:
# commands need them, so a key exported there is readable too.
SECRET_PATHS = (
    # keys and logins
    "~/.ssh",
    "~/.gnupg",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/glab-cli",
    # clouds and clusters
    "~/.aws",
    "~/.config/gcloud",
    "~/.azure",
    "~/.oci",
    "~/.kube",
    "~/.docker/config.json",
    "~/.terraform.d",
    "~/.vault-token",
    "~/.config/doctl",
    "~/.fly",
    "~/.s3cfg",
    "~/.boto",
    "~/.config/rclone",
    # package registries
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.gem/credentials",
    # other coding agents and model tools
    "~/.codex",
    "~/.claude",
    "~/.claude.json",
    "~/.gemini",
    "~/.config/github-copilot",
    "~/.cache/huggingface/token",
    "~/.huggingface",
    # databases, and histories (keys typed on a command line)
    "~/.pgpass",
    "~/.my.cnf",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.python_history",
    "~/.psql_history",
    "~/.mysql_history",
)
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
MAX_PROCESSES = 1024  # processes a command may have at once (fork bombs stop here)
MAX_FILE_BYTES = 8 * 1024**3  # one file a command writes (a disk fill stops here)


@dataclass(frozen=True)
class Grant:
    """Rights beyond the policy for one command, each approved by the person."""

    network: bool = False
    write_protected: bool = False  # .git/, .mca/, .agents/skills/ writable for this command

    def __bool__(self) -> bool:
        return self.network or self.write_protected

    def describe(self) -> str:
        parts = ["the network"] if self.network else []
        parts += ["writing .git/ and the other protected paths"] if self.write_protected else []
        return " and ".join(parts)


@dataclass(frozen=True)
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
    sockets: tuple[str, ...] = SOCKET_PLACES  # where sockets live (~ and $VAR as given)

    @property
    def writes_workspace(self) -> bool:
        return self.mode is Mode.WORKSPACE_WRITE


def expand(path: str, user_home: Path) -> Path:
    """'~/x' under the user's home; other paths as they are."""
    if path == "~" or path.startswith("~/"):
        return user_home / path[2:]
    return Path(path)


def build_policy(
    mode: Mode,
    workspace: Path,
    user_home: Path,
    mca_home: Path,
    *,
    network: bool = False,
    deny_read: tuple[str, ...] = (),
    protected_dirs: tuple[Path, ...] = (),
) -> Policy:
    """The session's policy: the secret list (plus config.toml's) and $MCA_HOME unreadable, the
    protected names and any skills directory inside the workspace read-only."""
    ws = workspace.resolve()
    secrets = [expand(p, user_home) for p in (*SECRET_PATHS, *deny_read)]
    secrets.append(mca_home)
    secrets = [s for s in secrets if not ws.is_relative_to(s.resolve())]
    protected = [ws / name for name in PROTECTED_NAMES]
    for d in (*protected_dirs, mca_home):
        real = d.resolve()
        if real != ws and real.is_relative_to(ws) and real not in protected:
            protected.append(real)
    import hashlib

    key = hashlib.sha256(bytes(ws)).hexdigest()[:16]
    return Policy(
        mode,
        ws,
        user_home,
        tuple(dict.fromkeys(secrets)),
        tuple(protected),
        mca_home / "sandbox" / key,
        network,
        extra=deny_read,
    )

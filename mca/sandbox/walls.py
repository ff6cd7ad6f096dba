"""Which wall a sandboxed command ran into, read from what it printed (pure but for looking at
which directories exist).

A command that failed on the sandbox's walls can be offered again with exactly the right it
lacked: the network, writing the protected paths (as `git commit` must), or one directory
outside the workspace (a tool's cache under ~/.cache). The person decides; nothing here widens
anything. mca cannot watch the command's system calls, so a write outside is known from what
the command printed (`touch: cannot touch '../x': Read-only file system`, Python's `[Errno 30]
... '/x'`, go's `mkdir /x: read-only file system`) or, when the output names no path, from the
paths the command's text names: the question says which.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mca.sandbox.rights import PROTECTED_NAMES, Grant, Policy, shown, unwritable

__all__ = [
    "DENIED",
    "GIT_HINT",
    "NETWORK_HINT",
    "NETWORK_SIGNS",
    "Wall",
    "command_paths",
    "find",
    "needed",
    "refused",
    "refused_paths",
]

# What programs print when there is no network: a new network namespace has no route and no
# DNS, and its loopback is its own (a host service on localhost refuses); without namespaces
# seccomp refuses the socket with EPERM (and Landlock a TCP connect with EACCES).
NETWORK_SIGNS = re.compile(
    r"Network is unreachable|Could not resolve host|Temporary failure in name resolution"
    r"|Name or service not known|nodename nor servname|getaddrinfo|ENETUNREACH|EAI_AGAIN"
    r"|Failed to establish a new connection|\[Errno 101\]|Could not connect to"
    r"|unable to access '(?:https?|git)://|Connection refused|ECONNREFUSED|\[Errno 111\]"
    # Landlock's TCP refusal (no namespaces): EACCES from connect
    r"|connect[^\n]*\n?[^\n]*(?:Permission denied|EACCES|\[Errno 13\])|EACCES[^\n]*connect"
    # seccomp's refusal of every socket but a unix one (no namespaces): EPERM from socket(), as
    # bash, ssh and go say it, node's connect, Python's socket(), curl's connect
    r"|\bsocket: operation not permitted|connect EPERM|Failed to connect to \S+ port \d+"
    r"|_socket\.socket\.__init__\(.*\n(?:\s*\^+\n)?PermissionError: \[Errno 1\]",
    re.IGNORECASE,
)
DENIED = re.compile(r"Read-only file system|Permission denied|Operation not permitted|EROFS")
# The same refusals as other tools word them: go's lower case, Rust's "os error 30", node's
# codes. A mount namespace's read-only tree says EROFS; Landlock says EACCES.
_DENIED_ANY = re.compile(
    r"read-only file system|permission denied|operation not permitted|\bEROFS\b|\bEACCES\b"
    r"|\bEPERM\b|os error (?:30|13|1)\b|\[Errno (?:30|13|1)\]",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"'([^'\n]+)'|‘([^’\n]+)’|\"([^\"\n]+)\"|`([^`\n]+)`|“([^”\n]+)”")
_BEFORE_REFUSAL = re.compile(
    r"(\S+): (?:read-only file system|permission denied|operation not permitted)", re.IGNORECASE
)
_NPM_PATH = re.compile(r"^npm (?:ERR!|error) path (\S+)", re.MULTILINE)
_COMMAND_PATH = re.compile(r"(?:^|[\s=>'\"(])((?:/|~/|\.\./)[^\s'\";|&<>()`$]*)")
MAX_OFFERED = 3  # directories one question may offer
NETWORK_HINT = (
    "the sandbox has no network: to allow it, start mca with --allow-network (or set"
    " network = true in config.toml)"
)
GIT_HINT = (
    "to let commands write .git/ (git commit) without a question: start mca with --allow-git"
    " (or set allow_git = true in config.toml)"
)
_MADE_AS_DIRECTORY = re.compile(r"\bmkdir\b|create (?:the )?directory", re.IGNORECASE)


def _mentions_protected(line: str) -> bool:
    return any(f"{name}/" in line or line.rstrip().endswith(name) for name in PROTECTED_NAMES)


def needed(output: str, notes: Sequence[str], *, network: bool, failed: bool = True) -> Grant:
    """The rights the command lacked (an empty Grant when it hit no wall we can name). What a
    command that succeeded printed is not read: a test suite may print "Connection refused"
    on purpose. Protected paths the sandbox had to put back (`notes`) count either way."""
    wants_net = failed and not network and bool(NETWORK_SIGNS.search(output))
    wants_write = bool(notes) or (
        failed
        and any(DENIED.search(line) and _mentions_protected(line) for line in output.splitlines())
    )
    return Grant(network=wants_net, write_protected=wants_write)


def refused(output: str) -> bool:
    """Whether the output shows a refusal a sandbox could be behind (a write, the network)."""
    return bool(_DENIED_ANY.search(output) or NETWORK_SIGNS.search(output))


def _clean(text: str) -> str:
    return text.strip().rstrip(".,;:)")


def refused_paths(output: str) -> list[str]:
    """The paths the output says a write (or a read) was refused for, as written there, in
    order: quoted or right before the refusal on its line, or on one of the three lines before
    a refusal that names none (Rust's `Caused by:`); npm's `path` line."""
    lines = output.splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        if not _DENIED_ANY.search(line):
            continue
        here = [_clean(m.group(1)).strip("'\"‘’`“”") for m in _BEFORE_REFUSAL.finditer(line)]
        here += [_clean(next(g for g in m.groups() if g)) for m in _QUOTED.finditer(line)]
        if not any(here):
            for before in reversed(lines[max(0, i - 3) : i]):
                here = [_clean(next(g for g in m.groups() if g)) for m in _QUOTED.finditer(before)]
                if here:
                    break
        found += [p for p in here if _pathlike(p)]
    if _DENIED_ANY.search(output):
        found += [_clean(m.group(1)) for m in _NPM_PATH.finditer(output)]
    return list(dict.fromkeys(found))


def _pathlike(text: str) -> bool:
    """A bare name is in the workspace (where the command started): only a path with a slash
    can lead out of it."""
    return "/" in text and "\n" not in text


def command_paths(command: str) -> list[str]:
    """The paths a command's text names that could be outside the workspace (absolute, under
    ~, or going up with ../), in order."""
    return list(dict.fromkeys(_clean(m.group(1)) for m in _COMMAND_PATH.finditer(command)))


@dataclass(frozen=True)
class Wall:
    """What a failed command ran into: the rights that would lift it once (`grant`), what the
    sandbox stopped and how mca knows (`what`), what stays closed whoever asks (`closed`),
    and how the person allows it for good (`hints`)."""

    grant: Grant
    what: str = ""
    closed: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()


def find(output: str, notes: Sequence[str], command: str, policy: Policy, *, failed: bool) -> Wall:
    """The walls a command ran into: the network, the protected paths, and writes outside the
    workspace (only in a sandbox that writes the workspace: a read-only one is read-only)."""
    need = needed(output, notes, network=policy.network, failed=failed)
    if need.write_protected and not policy.writes_workspace:
        need = Grant(network=need.network)
    what = ["the network"] * need.network
    what += ["writing .git/ (or .mca/, .agents/skills/)"] * need.write_protected
    hints = [NETWORK_HINT] * need.network + [GIT_HINT] * need.write_protected
    dirs: list[Path] = []
    closed: list[str] = []
    if failed and policy.writes_workspace and _DENIED_ANY.search(output):
        dirs, said, closed = _outside(output, command, policy)
        if dirs:
            what.append(f"writing outside the workspace ({said})")
            listed = ", ".join(f'"{shown(d, policy.user_home)}"' for d in dirs)
            hints.append(
                f"to let commands write it for good: sandbox_writable = [{listed}] in config.toml"
            )
    grant = Grant(need.network, need.write_protected, tuple(dirs))
    return Wall(grant, " and ".join(what), tuple(closed), tuple(hints))


def _outside(output: str, command: str, policy: Policy) -> tuple[list[Path], str, list[str]]:
    """(directories to offer, how mca knows, what stays closed and why)."""
    named = [(p, "the output") for p in refused_paths(output)]
    if not named:
        named = [(p, "the command") for p in command_paths(command)]
    home = policy.user_home
    dirs: list[Path] = []
    said: list[str] = []
    closed: list[str] = []
    for text, source in named:
        path = _absolute(text, policy)
        if path is None or _inside(path, policy.workspace) or _known_writable(path, policy):
            continue
        said.append(f"{source} names {text!r}" if not said else repr(text))
        where = _directory_for(path, _made_as_directory(text, path, output, command, policy))
        why = unwritable(where, home, policy.deny_read)
        if why:
            closed.append(f"{shown(where, home)} stays closed to commands: {why}")
        elif not os.access(_existing(where), os.W_OK):
            closed.append(f"{shown(where, home)}: you cannot write it either (not the sandbox)")
        elif where not in dirs and len(dirs) < MAX_OFFERED:
            dirs.append(where)
    if said and named[0][1] == "the command":
        said[0] = "the output names no path; " + said[0]
    return dirs, ", ".join(said), closed


def _absolute(text: str, policy: Policy) -> Path | None:
    """A named path as an absolute one: ~ is the user's home, a relative one is taken from
    the workspace (where the command started)."""
    if text == "~" or text.startswith("~/"):
        path = policy.user_home / text[2:]
    elif text.startswith("/"):
        path = Path(text)
    elif "\0" in text or "\n" in text:
        return None
    else:
        path = policy.workspace / text
    return Path(os.path.normpath(path))


def _inside(path: Path, root: Path) -> bool:
    real = Path(os.path.realpath(path))
    return real == root or real.is_relative_to(root)


def _known_writable(path: Path, policy: Policy) -> bool:
    """Already writable from inside (config.toml's directories): not what stopped it."""
    real = Path(os.path.realpath(path))
    return any(real == d or real.is_relative_to(d) for d in policy.writable)


def _exists(path: Path) -> bool:
    """Whether something is there; True where this user may not look (a folder closed to it,
    another user's /proc): it may well be, and looking further up would guess. Never raises:
    the output of a command names any path, and mca only reads it."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return False
    except OSError:
        return True
    return True


def _is_dir(path: Path) -> bool:
    return os.path.isdir(path)  # False where it cannot look


def _existing(path: Path) -> Path:
    while not _exists(path) and path != path.parent:
        path = path.parent
    return path


def _made_as_directory(text: str, path: Path, output: str, command: str, policy: Policy) -> bool:
    """Whether the command was making `path` as a directory: the refusal says mkdir (`mkdir -p
    ~/.cache/go/x` names the first one it could not make), or the command names a path in it."""
    if any(text in line and _MADE_AS_DIRECTORY.search(line) for line in output.splitlines()):
        return True
    named = (_absolute(p, policy) for p in command_paths(command))
    return any(p is not None and p != path and p.is_relative_to(path) for p in named)


def _directory_for(path: Path, is_directory: bool = False) -> Path:
    """The narrowest directory whose being writable lets the write happen: the path itself
    when it is (or is being made as) a directory, the directory holding it when it is a file
    or its parent exists, else the first missing directory on the way to it (mca makes a
    missing one when the person says yes)."""
    if _is_dir(path):
        return Path(os.path.realpath(path))
    target = path / "x" if is_directory else path
    first_missing = list(_ancestors(target))[-1]
    if _exists(path) or first_missing == target:
        return Path(os.path.realpath(path.parent))
    return Path(os.path.realpath(first_missing.parent)) / first_missing.name


def _ancestors(path: Path) -> Iterator[Path]:
    """From `path` up to (not including) the nearest ancestor that exists."""
    while not _exists(path.parent) and path.parent != path:
        yield path
        path = path.parent
    yield path

"""Pathname Unix sockets outside the workspace: hidden from a sandboxed command where it has a
mount namespace, named where it has not (decided in mca; the child only mounts).

A socket is a file: connect() needs its path and write permission on it, which you have on your
own agents (ssh-agent, the session D-Bus, tmux) and, in the docker group, on the Docker socket:
each is a way out of any sandbox. A network namespace does not cover them (only abstract
sockets are per network namespace), and Landlock has a rule for them only from ABI 9 (Linux
7.1, LANDLOCK_ACCESS_FS_RESOLVE_UNIX). So with a mount namespace every place sockets live is
covered by an empty tmpfs, read-only once made: `/run` (and `/var/run`), `$XDG_RUNTIME_DIR`,
the folder of every socket an environment variable names (`$SSH_AUTH_SOCK`, `$DOCKER_HOST`,
`$DBUS_SESSION_BUS_ADDRESS`, `$TMUX` …), the places container engines keep theirs, and, where
the private /tmp does not cover /tmp (the workspace is in it), the sockets found two levels
into it (X11's, tmux's, ssh-agent's). A socket alone in a shared folder is covered by an empty
file instead. Programs still need a few things from /run: what `/etc` links into it
(`/etc/resolv.conf` -> systemd-resolved's stub file) is bound back, links in it that lead
elsewhere (NixOS's /run/current-system) are made again, and so are `$PATH` folders in it.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mca.sandbox.linux import KEEP_DIR, KEEP_FILE, KEEP_LINK, KEEP_TREE
from mca.sandbox.mounts import locked_flags

__all__ = [
    "ENGINE_SOCKETS",
    "KEEP_DIR",
    "KEEP_FILE",
    "KEEP_LINK",
    "KEEP_TREE",
    "Hiding",
    "Listing",
    "engine_sockets",
    "hiding",
    "named_sockets",
]

# A container engine's socket: whoever may connect to it may start a container with the host's
# file system mounted, as root. Looked for at start-up where nothing hides them.
ENGINE_SOCKETS = (
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/podman/podman.sock",
    "$XDG_RUNTIME_DIR/podman/podman.sock",
    "$XDG_RUNTIME_DIR/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/k3s/containerd/containerd.sock",
    "/run/crio/crio.sock",
    "/var/snap/lxd/common/lxd/unix.socket",
    "/var/lib/lxd/unix.socket",
    "/var/lib/incus/unix.socket",
    "~/.docker/run/docker.sock",
    "~/.colima/default/docker.sock",
    "~/.rd/docker.sock",
    "$DOCKER_HOST",
    "$CONTAINER_HOST",
)
ETC = "/etc"  # its links into a covered folder are made again (resolv.conf)
RACY_NS = 100_000_000
MAX_COVERS = 256  # mounts for the sockets beside the workspace, when a place holds it
SCAN_ENTRIES = 4096  # entries looked at for sockets in an uncovered /tmp
_PATHS = re.compile(r"/[^,;:\s=]+")
_SHARED = ("/", "/tmp", "/var/tmp", "/dev/shm", "/var", "/home", "/dev")


@dataclass(frozen=True)
class Hiding:
    """What the child covers: folders (an empty tmpfs each), single sockets (an empty file),
    what it makes again inside a covered folder, and what could not be hidden (said)."""

    places: tuple[bytes, ...] = ()
    files: tuple[bytes, ...] = ()
    keep: tuple[tuple[int, bytes, bytes, int], ...] = ()  # (kind, path, link target, flags)
    left: tuple[str, ...] = ()

    @property
    def sources(self) -> tuple[bytes, ...]:
        """What is bound back: Landlock grants each itself (a rule on a folder the cover
        hides no longer applies: its walk up skips a covered mount point)."""
        return tuple(t for k, _, t, _ in self.keep if k in (KEEP_FILE, KEEP_TREE))


def expand(place: str, home: Path, env: Mapping[str, str]) -> str:
    """'~/x' under the home, '$VAR/x' from the environment ('' when it is not set)."""
    if place.startswith("~/"):
        return str(home / place[2:])
    if place.startswith("$"):
        name, _, rest = place[1:].partition("/")
        value = env.get(name, "")
        if name in ("DOCKER_HOST", "CONTAINER_HOST"):
            value = value[len("unix://") :] if value.startswith("unix://") else ""
        if not value.startswith("/"):
            return ""
        return os.path.join(value, rest) if rest else value
    return place


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _entry_is_socket(e: os.DirEntry[str]) -> bool:
    """Sockets only are stat'ed (a file, a folder or a link is known from the entry)."""
    if e.is_file(follow_symlinks=False) or e.is_symlink():
        return False
    return stat.S_ISSOCK(e.stat(follow_symlinks=False).st_mode)


def named_sockets(env: Mapping[str, str]) -> list[str]:
    """The sockets environment variables name ($SSH_AUTH_SOCK, $DBUS_SESSION_BUS_ADDRESS's
    path=, $TMUX's first field, $DOCKER_HOST's unix:// …), each once."""
    out: dict[str, None] = {}
    for key, value in env.items():
        if "/" not in value or len(value) > 4096 or key.endswith(("PATH", "DIRS")):
            continue  # $PATH, $MANPATH, $XDG_DATA_DIRS …: lists of folders
        for m in _PATHS.findall(value):
            path = "/" + m.lstrip("/")
            if _is_socket(path):
                out[os.path.normpath(path)] = None
    return list(out)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class _Plan:
    allowed: list[str]  # real paths a command may reach (the workspace, its private /tmp)
    covered: list[str]  # already hidden (the tmp folders the private /tmp is bound over)
    home: str
    places: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)

    def hidden(self, path: str) -> bool:
        return any(_inside(path, p) for p in (*self.covered, *self.places))

    def reachable(self, path: str) -> bool:
        return any(_inside(path, a) for a in self.allowed)

    def add_place(self, place: str, why: str = "") -> None:
        """Cover this folder; where it holds the workspace or the private /tmp, cover each
        of its entries but the way to them."""
        if not os.path.isdir(place):
            return
        real = os.path.realpath(place)
        if self.hidden(real) or self.reachable(real):
            return
        holds = [a for a in self.allowed if _inside(a, real)]
        if not holds:
            self.places = [p for p in self.places if not _inside(p, real)] + [real]
            return
        self._around(real, holds, why or real)

    def _around(self, real: str, holds: list[str], why: str) -> None:
        todo = [real]
        while todo:
            here = todo.pop()
            try:
                names = sorted(os.listdir(here))
            except OSError:
                continue
            for name in names:
                path = os.path.join(here, name)
                if any(_inside(a, path) for a in holds):
                    if not any(a == path for a in holds):
                        todo.append(path)
                    continue
                if len(self.places) + len(self.files) >= MAX_COVERS:
                    self.left.append(f"{why} (more than {MAX_COVERS} entries beside the workspace)")
                    return
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    self.places.append(path)
                elif stat.S_ISSOCK(st.st_mode):
                    self.files.append(path)

    def add_socket(self, path: str) -> None:
        """Its folder, unless that is a shared one (then the socket alone)."""
        real = os.path.realpath(path)
        if self.hidden(real) or self.reachable(real):
            return
        folder = os.path.dirname(real)
        if folder in (*_SHARED, self.home) or any(_inside(a, folder) for a in self.allowed):
            if real not in self.files:
                self.files.append(real)
        else:
            self.add_place(folder)

    def scan(self, top: str, seen: Listing) -> None:
        """Sockets two levels into a shared folder nothing covers (an uncovered /tmp)."""
        real = os.path.realpath(top)
        if not os.path.isdir(real) or self.hidden(real):
            return
        count, todo = 0, [(real, 0)]
        while todo and count < SCAN_ENTRIES:
            here, depth = todo.pop()
            n, socks, subdirs = seen.look(here)
            count += n
            for path in socks:
                self.add_socket(path)
            if depth < 1:  # a folder right below `top` is reachable only as one of them
                todo += [(d, depth + 1) for d in subdirs if d not in self.allowed]
        if todo:
            self.left.append(f"sockets in {top} past its first {SCAN_ENTRIES} entries")


@dataclass
class Listing:
    """Folders looked into for sockets, kept from one command to the next: one whose mtime
    has not moved has the same entries (looked at again when it moved within RACY_NS)."""

    dirs: dict[str, tuple[int, int, list[str], list[str]]] = field(default_factory=dict)
    now: set[str] = field(default_factory=set)  # looked into by this walk (the rest is let go)

    def prune(self) -> None:
        self.dirs = {d: v for d, v in self.dirs.items() if d in self.now}
        self.now = set()

    def look(self, here: str) -> tuple[int, list[str], list[str]]:
        """(entries, sockets, real subfolders) of a real folder."""
        self.now.add(here)
        try:
            mtime = os.lstat(here).st_mtime_ns
        except OSError:
            return 0, [], []
        old = self.dirs.get(here)
        if old is not None and old[0] == mtime:
            return old[1], old[2], old[3]
        socks, subdirs, n = [], [], 0
        with contextlib.suppress(OSError), os.scandir(here) as it:
            for e in it:
                n += 1
                with contextlib.suppress(OSError):
                    if e.is_dir(follow_symlinks=False):
                        subdirs.append(e.path)
                    elif _entry_is_socket(e):
                        socks.append(e.path)
        racy = time.time_ns() - mtime < RACY_NS
        self.dirs[here] = (-1 if racy else mtime, n, socks, subdirs)
        return n, socks, subdirs


def hiding(
    places: Iterable[str],
    env: Mapping[str, str],
    home: Path,
    allowed: Iterable[Path],
    covered: Iterable[str],
    deny: Iterable[Path] = (),
    seen: Listing | None = None,
    shared: Iterable[str] = (),
) -> Hiding:
    """What to cover for a command that may reach `allowed` (real paths), where `covered`
    (real paths) are hidden already; nothing of `deny` (the secrets, real paths) is bound
    back; `shared` are the folders everyone shares (/tmp), looked into for sockets where
    nothing covers them."""
    plan = _Plan([str(a) for a in allowed], [os.path.realpath(c) for c in covered], str(home))
    for place in places:
        where = expand(place, home, env)
        if where:
            plan.add_place(where)
    for path in named_sockets(env):
        plan.add_socket(path)
    listing = seen if seen is not None else Listing()
    for top in shared:
        plan.scan(top, listing)
    listing.prune()
    places_ = sorted(set(plan.places), key=lambda p: (p.count("/"), p))
    files = [f for f in dict.fromkeys(plan.files) if not any(_inside(f, p) for p in places_)]
    return Hiding(
        tuple(os.fsencode(p) for p in places_),
        tuple(os.fsencode(f) for f in files),
        _kept(places_, env, [str(d) for d in deny]),
        tuple(plan.left),
    )


_KEPT: dict[tuple[object, ...], tuple[tuple[int, bytes, bytes, int], ...]] = {}


def _kept(
    places: list[str], env: Mapping[str, str], deny: list[str]
) -> tuple[tuple[int, bytes, bytes, int], ...]:
    """`_keep`, again only when a folder it looks into has other entries (a link is never
    changed in place: it is replaced, which moves its folder's mtime) or $PATH changed."""
    stamps = []
    for d in (ETC, *places):
        try:
            stamps.append((d, os.stat(d).st_mtime_ns))
        except OSError:
            stamps.append((d, -1))
    racy = any(time.time_ns() - m < RACY_NS for _, m in stamps)
    key = (tuple(stamps), env.get("PATH", ""), tuple(deny))
    if key in _KEPT and not racy:
        return _KEPT[key]
    _KEPT.clear()
    _KEPT[key] = _keep(places, env, deny)
    return _KEPT[key]


def _keep(
    places: list[str], env: Mapping[str, str], deny: list[str]
) -> tuple[tuple[int, bytes, bytes, int], ...]:
    """What is made again inside the covered folders: links in them to elsewhere, what /etc
    links to in them (a regular file), and $PATH folders in them; with the folders on the way.
    Something reached through a link made again needs nothing more."""
    out: list[tuple[int, str, str, int]] = []
    made: set[str] = set()

    def secret(path: str) -> bool:
        return any(_inside(path, d) or _inside(d, path) for d in deny)

    def under(path: str) -> str:
        if any(k == KEEP_LINK and _inside(path, p) for k, p, _, _ in out) or secret(path):
            return ""
        return next((p for p in places if _inside(path, p) and path != p), "")

    def folders(path: str, top: str) -> None:
        rel = os.path.relpath(os.path.dirname(path), top)
        here = top
        for part in rel.split(os.sep) if rel != "." else []:
            here = os.path.join(here, part)
            if here not in made:
                made.add(here)
                out.append((KEEP_DIR, here, "", 0))

    for place in places:
        with contextlib.suppress(OSError), os.scandir(place) as it:
            for e in sorted(it, key=lambda e: e.name):
                real = os.path.realpath(e.path) if e.is_symlink() else ""
                if real and not any(_inside(real, p) for p in places) and not _is_socket(real):
                    out.append((KEEP_LINK, e.path, os.readlink(e.path), 0))
    links = []
    with contextlib.suppress(OSError), os.scandir(ETC) as it:
        links = [e.path for e in it if e.is_symlink()]
    for link in sorted(links):
        with contextlib.suppress(OSError):
            literal = os.path.normpath(os.path.join(ETC, os.readlink(link)))
            literal = os.path.join(os.path.realpath(os.path.dirname(literal)), Path(literal).name)
            top, real = under(literal), os.path.realpath(link)
            if top and literal not in made and os.path.isfile(real) and not secret(real):
                folders(literal, top)
                made.add(literal)
                out.append((KEEP_FILE, literal, real, locked_flags(real)))
    for given in env.get("PATH", "").split(":"):
        if not given.startswith("/") or not any(_inside(given, p) for p in places):
            continue  # (a $PATH folder reached through a link into a covered one: not kept)
        entry = os.path.join(os.path.realpath(os.path.dirname(given)), Path(given).name)
        top = under(entry)
        if (
            top
            and entry not in made
            and os.path.isdir(entry)
            and not secret(os.path.realpath(entry))
        ):
            folders(entry, top)
            made.add(entry)
            out.append((KEEP_TREE, entry, os.path.realpath(entry), locked_flags(entry)))
    return tuple((k, os.fsencode(p), os.fsencode(t), f) for k, p, t, f in out)


def engine_sockets(env: Mapping[str, str], home: Path) -> list[str]:
    """The container engines' sockets this user can connect to now (each real one once)."""
    out: dict[str, str] = {}
    for place in ENGINE_SOCKETS:
        path = expand(place, home, env)
        if not path or not _is_socket(path) or not os.access(path, os.W_OK):
            continue
        real = os.path.realpath(path)
        if real in out:
            continue
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(0.2)
            try:
                s.connect(real)
            except OSError:
                continue
        out[real] = path
    return list(out.values())

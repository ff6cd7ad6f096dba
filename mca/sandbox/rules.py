"""Which paths a Landlock ruleset grants, so that everything is readable except the secrets.

Landlock grants by allow-list, beneath a path. To read all of `/` but `~/.ssh`, mca grants each
entry of `/` that holds no secret whole, and walks down only into the directories that lead to
one (`/`, `/home`, `~`, `~/.config` …), granting their other entries whole. A symlink is granted
as what it points to, unless that is (or holds) a secret. Directories on the way down get
READ_DIR only: their entries' names can be listed, not a secret's contents.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def inside(path: str, root: str) -> bool:
    """`path` is `root` or beneath it. Absolute, normalised paths compared as strings: the walk
    makes thousands of these per sandbox, and pathlib's is_relative_to parses both each time."""
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


@dataclass
class ReadGrants:
    """The result: paths to grant reading beneath, and directories to list only."""

    whole: list[Path] = field(default_factory=list)
    list_only: list[Path] = field(default_factory=list)
    walked: list[Path] = field(default_factory=list)  # what to re-check for new entries


class _Denied:
    """The secrets as strings, and every folder above one: whether a path is (under) a secret
    or holds one is a few set lookups, not a comparison with each secret (the walk asks for
    every entry of every folder on the way to one: thousands)."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self.exact = {str(p) for p in paths}
        self.above: set[str] = set()
        for p in self.exact:
            parent = os.path.dirname(p)
            while parent != p and parent not in self.above:
                self.above.add(parent)
                p, parent = parent, os.path.dirname(parent)

    def under(self, path: str) -> bool:
        """`path` is a secret or beneath one."""
        while True:
            if path in self.exact:
                return True
            up = os.path.dirname(path)
            if up == path:
                return False
            path = up

    def holds(self, path: str) -> bool:
        """A secret lies beneath `path`."""
        return path in self.above


def read_grants(deny: Iterable[Path], top: Path = Path("/")) -> ReadGrants:
    """Everything under `top` readable except `deny` (each taken both as given and resolved)."""
    denied = _Denied({p for d in deny for p in (d.absolute(), _real(d))})
    out = ReadGrants()
    if denied.under(str(top)):
        return out
    _walk(top, denied, out, seen=set())
    return out


def _walk(directory: Path, denied: _Denied, out: ReadGrants, seen: set[Path]) -> None:
    out.list_only.append(directory)
    out.walked.append(directory)
    seen.add(directory)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    real_here = _real(directory) == directory  # then an entry that is no link is its own real
    for entry in entries:
        path = Path(entry.path)
        link = entry.is_symlink()
        real = _real(path) if link or not real_here else path
        p, r = str(path), str(real)
        if denied.under(p) or denied.under(r):
            continue
        if not denied.holds(r) and not denied.holds(p):
            out.whole.append(real if link else path)
        elif not link and entry.is_dir(follow_symlinks=False) and real not in seen:
            _walk(path, denied, out, seen)
        # a symlink to a directory that holds a secret is left out: its real place is walked
        # on its own when it is reachable from `/`


def signature(walked: Iterable[Path]) -> tuple[tuple[str, int], ...]:
    """What changes when an entry is added to or removed from a walked directory."""
    out = []
    for d in walked:
        try:
            out.append((str(d), os.stat(d).st_mtime_ns))
        except OSError:
            out.append((str(d), -1))
    return tuple(out)

"""Walk a workspace into a tree: path -> (kind, mode, size, blob or link target).

Nothing is followed: a symlink is recorded as a link (its target as text), a FIFO, device or
socket is skipped (never opened), a file is read through the no-follow, non-blocking, contained
path of mca.fsutil. `.git` (any directory or file of that name) and what `.gitignore` ignores
are left out, as are mca's own temp files. A file over the per-file cap, or past the total cap,
is recorded as "over" (its size only): it is never restored or removed.

Incremental: a file whose (size, mtime_ns, ctime_ns, inode) is the one the previous tree saw is
not read again. A file changed within RACY_NS of the scan is not trusted to its stamp next time
(a second write in the same clock tick would keep the stamp).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import NamedTuple

from mca.fsutil import FileTooLarge, NotRegularFile, read_regular_stat
from mca.workspace.ignore import Ignore

__all__ = [
    "KINDS",
    "OFF",
    "RACY_NS",
    "SKIPPED_NAMES",
    "TEMP_MARK",
    "BlobSink",
    "Caps",
    "Entry",
    "Scanner",
    "Stamp",
    "Tree",
    "Walk",
    "Watch",
]

FILE, LINK, DIR, OVER = "file", "link", "dir", "over"
KINDS = (FILE, LINK, DIR, OVER)
SKIPPED_NAMES = frozenset({".git"})  # the repository's own history is not the workspace's
TEMP_MARK = ".mca-tmp-"  # atomic_write's temp files
RACY_NS = 100_000_000
Stamp = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


class Entry(NamedTuple):
    """One path of a tree. Equal entries mean the same state (size follows from the blob).
    A tuple: a walk makes thousands, and a frozen dataclass costs several times more."""

    kind: str
    mode: int = 0  # permission bits (files and directories)
    size: int = 0
    blob: str = ""  # a file's sha256
    target: str = ""  # a link's target, as text


@dataclass(frozen=True)
class Caps:
    """What a checkpoint keeps: files up to `file` bytes each and `total` bytes in all."""

    file: int
    total: int


OFF = Caps(0, 0)  # no checkpoints: /undo covers the file tools' writes only


@dataclass
class Tree:
    """A workspace's state, and what the walk left out."""

    entries: dict[str, Entry] = field(default_factory=dict)
    stamps: dict[str, Stamp] = field(default_factory=dict)  # for the next, incremental walk
    special: list[str] = field(default_factory=list)  # FIFOs, devices, sockets: skipped
    unreadable: list[str] = field(default_factory=list)  # "path: why"
    ignore_dirs: set[str] = field(default_factory=set)  # directories with a .gitignore (walked)

    def over(self) -> list[str]:
        """Files over a cap: recorded by size, never restored."""
        return [p for p, e in self.entries.items() if e.kind == OVER]


BlobSink = Callable[[bytes], str]  # stores bytes, returns their sha256
Watch = Callable[[str], None]  # told of every directory a walk records


def _no_watch(rel_dir: str) -> None:
    return None


def _name(e: os.DirEntry[str]) -> str:
    return e.name


class Scanner:
    """Walks one workspace; keeps nothing between walks but what a Tree carries."""

    def __init__(self, root: Path, put: BlobSink, caps: Caps) -> None:
        self.root = root
        self.real = root.resolve()
        self.put = put
        self.caps = caps

    def scan(self, previous: Tree | None = None, watch: Watch = _no_watch) -> Tree:
        """The workspace now (reusing `previous`'s hashes for files whose stamp is the same)."""
        walk = Walk(self, previous or Tree(), watch)
        watch("")
        walk.run()
        return walk.tree


class Walk:
    """One walk, depth first in name order (the total cap then leaves out the same files every
    time), with a stack of its own: a hostile tree may be deeper than Python's recursion."""

    def __init__(self, scanner: Scanner, previous: Tree, watch: Watch) -> None:
        self.s = scanner
        self.previous = previous
        self.racy_from = time.time_ns() - RACY_NS
        self.watch = watch
        self.ignore = Ignore(scanner.real)
        self.tree = Tree()
        self.total = 0
        self.stack = [""]

    def run(self) -> None:
        while self.stack:
            self.directory(self.stack.pop())

    def directory(self, rel_dir: str) -> None:
        path = os.path.join(self.s.real, rel_dir) if rel_dir else str(self.s.real)
        try:
            with os.scandir(path) as it:
                found = sorted(it, key=_name)
        except OSError as err:
            self.tree.unreadable.append(f"{rel_dir or '.'}: {err.strerror or err}")
            return
        if any(e.name == ".gitignore" for e in found):
            self.ignore.enter(rel_dir)
            self.tree.ignore_dirs.add(rel_dir)
        mark = len(self.stack)
        prefix = f"{rel_dir}/" if rel_dir else ""
        for e in found:
            name = e.name
            if name in SKIPPED_NAMES or TEMP_MARK in name:
                continue
            rel = prefix + name
            if "\\" in name:  # manifests refuse it (a path separator elsewhere)
                self.tree.unreadable.append(f"{rel}: a backslash in the name; not covered")
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as err:
                self.tree.unreadable.append(f"{rel}: {err.strerror or err}")
                continue
            self.entry(rel, e.path, st)
        self.stack[mark:] = reversed(self.stack[mark:])  # the first name is walked first

    def entry(self, rel: str, path: str, st: os.stat_result) -> None:
        mode = st.st_mode
        if self.ignore.ignored(rel, S_ISDIR(mode)):
            return
        if S_ISREG(mode):
            self.file(rel, path, st)
        elif S_ISDIR(mode):
            self.tree.entries[rel] = Entry(DIR, mode & 0o777)
            self.stack.append(rel)
            self.watch(rel)
        elif S_ISLNK(mode):
            self.link(rel, path)
        else:
            self.tree.special.append(rel)

    def link(self, rel: str, path: str) -> None:
        try:
            self.tree.entries[rel] = Entry(LINK, target=os.readlink(path))
        except OSError as err:
            self.tree.unreadable.append(f"{rel}: {err.strerror or err}")

    def file(self, rel: str, path: str, st: os.stat_result) -> None:
        size = st.st_size
        if size > self.s.caps.file or self.total + size > self.s.caps.total:
            self.tree.entries[rel] = Entry(OVER, size=size)
            return
        stamp = (size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        mode = st.st_mode & 0o777
        old = self.previous.entries.get(rel)
        if old is not None and self.previous.stamps.get(rel) == stamp and old.kind == FILE:
            entry = old if old.mode == mode else old._replace(mode=mode)
        else:
            try:
                data, st = read_regular_stat(Path(path), self.s.real, cap=self.s.caps.file)
            except FileTooLarge:
                self.tree.entries[rel] = Entry(OVER, size=size)  # it grew under the walk
                return
            except NotRegularFile:
                self.tree.special.append(rel)  # swapped for a FIFO or a link under the walk
                return
            except OSError as err:
                self.tree.unreadable.append(f"{rel}: {err.strerror or err}")
                return
            entry = Entry(FILE, st.st_mode & 0o777, len(data), self.s.put(data))
            stamp = (len(data), st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        self.total += entry.size
        self.tree.entries[rel] = entry
        if stamp[1] < self.racy_from:  # as git does: a recent mtime may hide a second write
            self.tree.stamps[rel] = stamp

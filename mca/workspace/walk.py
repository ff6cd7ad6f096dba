"""Walk a workspace into a tree: path -> (kind, mode, size, blob or link target).

Nothing is followed: a symlink is recorded as a link (its target as text), a FIFO, device or
socket is skipped (never opened). Each directory is opened once, checked to be the one its
parent listed (device and inode), and its files are read through that handle, no-follow and
non-blocking: no path is resolved again per file, so a deep tree costs what its entries cost.
`.git` (any directory or file of that name) and what `.gitignore` ignores are left out, as are
mca's own temp files. A file over the per-file cap, or past the total cap, is recorded as
"over" (its size only): it is never restored or removed.

A walk has a budget (Budget: entries, depth, and seconds as a last resort). A directory it did
not list whole (deeper than the budget, past it, or unreadable) is recorded, with why, in the
tree's `uncovered`: what is below it is unknown, and /undo and /rewind leave it as it is and
say so, instead of a walk that takes minutes.

A file with more than one name (a hard link) is recorded in `links`: a change made through any
of its names changes all of them, so each checkpoint looks at every such file again.

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

from mca.fs.careful import FileTooLarge, NotRegularFile, dir_inside, read_regular_at
from mca.workspace.ignore import Ignore

__all__ = [
    "KINDS",
    "OFF",
    "RACY_NS",
    "SKIPPED_NAMES",
    "TEMP_MARK",
    "BlobSink",
    "Budget",
    "Caps",
    "Entry",
    "Link",
    "Scanner",
    "Stamp",
    "Tree",
    "Walk",
    "Watch",
    "WatchFile",
]

FILE, LINK, DIR, OVER = "file", "link", "dir", "over"
KINDS = (FILE, LINK, DIR, OVER)
SKIPPED_NAMES = frozenset({".git"})  # the repository's own history is not the workspace's
TEMP_MARK = ".mca-tmp-"  # atomic_write's temp files
RACY_NS = 100_000_000
Stamp = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode
Ident = tuple[int, int]  # a directory's device and inode, as its parent's listing saw it
Link = tuple[int, int, int]  # a file's device, inode and number of names
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_EMPTY = b""


class Entry(NamedTuple):
    """One path of a tree. Equal entries mean the same state (size follows from the blob).
    A tuple: a walk makes thousands, and a frozen dataclass costs several times more."""

    kind: str
    mode: int = 0  # permission bits (files and directories)
    size: int = 0
    blob: str = ""  # a file's sha256
    target: str = ""  # a link's target, as text


@dataclass(frozen=True, kw_only=True)
class Budget:
    """How far one walk goes: entries recorded in all, directory levels, and (a last resort,
    for a slow disk) seconds. What lies past it is said, not walked."""

    entries: int = 100_000
    depth: int = 64
    seconds: float = 20.0


@dataclass(frozen=True, kw_only=True)
class Caps:
    """What a checkpoint keeps: files up to `file` bytes each and `total` bytes in all, from a
    walk within `walk`."""

    file: int
    total: int
    walk: Budget = Budget()


OFF = Caps(file=0, total=0)  # no checkpoints: /undo covers the file tools' writes only


@dataclass
class Tree:
    """A workspace's state, and what the walk left out."""

    entries: dict[str, Entry] = field(default_factory=dict)
    stamps: dict[str, Stamp] = field(default_factory=dict)  # for the next, incremental walk
    special: list[str] = field(default_factory=list)  # FIFOs, devices, sockets: skipped
    unreadable: list[str] = field(default_factory=list)  # "path: why"
    ignore_dirs: set[str] = field(default_factory=set)  # directories with a .gitignore (walked)
    uncovered: dict[str, str] = field(default_factory=dict)  # directory not listed whole: why
    links: dict[str, Link] = field(default_factory=dict)  # files with more than one name
    unwatched: set[str] = field(default_factory=set)  # files no inotify watch hears (in memory)

    def over(self) -> list[str]:
        """Files over a cap: recorded by size, never restored."""
        return [p for p, e in self.entries.items() if e.kind == OVER]

    def groups(self) -> list[list[str]]:
        """The paths of each file with more than one name, sorted (a group of one: its other
        names are where the walk does not look)."""
        by: dict[tuple[int, int], list[str]] = {}
        for rel, (dev, ino, _) in self.links.items():
            by.setdefault((dev, ino), []).append(rel)
        return sorted(sorted(g) for g in by.values())


BlobSink = Callable[[bytes], str]  # stores bytes, returns their sha256
Watch = Callable[[str], None]  # told of every directory a walk lists
WatchFile = Callable[[str], bool]  # told of every file a walk records; False: not watched


def _no_watch(rel_dir: str) -> None:
    return None


def _name(e: os.DirEntry[str]) -> str:
    return e.name


def depth(rel: str) -> int:
    """Directory levels from the root to `rel` (a name in the root: 1)."""
    return rel.count("/") + 1


class Scanner:
    """Walks one workspace; keeps nothing between walks but what a Tree carries."""

    def __init__(self, root: Path, put: BlobSink, caps: Caps) -> None:
        self.root = root
        self.real = root.resolve()
        self.put = put
        self.caps = caps

    def scan(
        self,
        previous: Tree | None = None,
        watch: Watch = _no_watch,
        watch_file: WatchFile | None = None,
    ) -> Tree:
        """The workspace now (reusing `previous`'s hashes for files whose stamp is the same)."""
        walk = Walk(self, previous or Tree(), watch, watch_file)
        try:
            st = os.stat(self.real)
        except OSError as err:
            walk.tree.unreadable.append(f".: {err.strerror or err}")
            walk.tree.uncovered[""] = "unreadable"
            return walk.tree
        walk.stack = [("", (st.st_dev, st.st_ino))]
        walk.run()
        return walk.tree


class Walk:
    """One walk, depth first in name order (the total cap then leaves out the same files every
    time), with a stack of its own: a hostile tree may be deeper than Python's recursion."""

    def __init__(
        self, scanner: Scanner, previous: Tree, watch: Watch, watch_file: WatchFile | None = None
    ) -> None:
        self.s = scanner
        self.watch_file = watch_file
        self.budget = scanner.caps.walk
        self.previous = previous
        self.racy_from = time.time_ns() - RACY_NS
        self.deadline = time.monotonic() + self.budget.seconds
        self.watch = watch
        self.ignore = Ignore(scanner.real)
        self.tree = Tree()
        self.total = 0
        self.stack: list[tuple[str, Ident]] = []

    def run(self) -> None:
        while self.stack:
            self.directory(*self.stack.pop())

    def spent(self) -> str:
        """Why the walk stops here ('' while its budget lasts)."""
        if len(self.tree.entries) >= self.budget.entries:
            return f"past the walk's budget of {self.budget.entries:,} entries"
        if time.monotonic() > self.deadline:
            return f"past the walk's {self.budget.seconds:g} s"
        return ""

    def open(self, rel_dir: str, ident: Ident | None) -> int | None:
        """A handle on a directory of the workspace: the one its parent listed (`ident`), or,
        for a path looked at again on its own, one checked to be inside the workspace."""
        path = os.path.join(self.s.real, rel_dir) if rel_dir else str(self.s.real)
        try:
            fd = os.open(path, _DIR_FLAGS)
        except OSError as err:
            self.not_listed(rel_dir, f"unreadable: {err.strerror or err}")
            return None
        if ident is None:
            inside = dir_inside(fd, self.s.real)
        else:
            st = os.fstat(fd)
            inside = (st.st_dev, st.st_ino) == ident
        if not inside:  # swapped under the walk (for a link out, say)
            os.close(fd)
            self.not_listed(rel_dir, "unreadable: it changed under the walk")
            return None
        return fd

    def not_listed(self, rel_dir: str, why: str) -> None:
        self.tree.uncovered[rel_dir] = why
        if why.startswith("unreadable: "):
            self.tree.unreadable.append(f"{rel_dir or '.'}: {why[12:]}")

    def directory(self, rel_dir: str, ident: Ident) -> None:
        why = self.spent()
        if why:
            self.not_listed(rel_dir, why)
            return
        self.watch(rel_dir)  # before the listing: nothing made after it goes unseen
        dfd = self.open(rel_dir, ident)
        if dfd is None:
            return
        try:
            self.listing(rel_dir, dfd)
        finally:
            os.close(dfd)

    def listing(self, rel_dir: str, dfd: int) -> None:
        try:
            with os.scandir(dfd) as it:
                found = sorted(it, key=_name)
        except OSError as err:
            self.not_listed(rel_dir, f"unreadable: {err.strerror or err}")
            return
        if any(e.name == ".gitignore" for e in found):
            self.ignore.enter(rel_dir)
            self.tree.ignore_dirs.add(rel_dir)
        mark = len(self.stack)
        prefix = f"{rel_dir}/" if rel_dir else ""
        for i, e in enumerate(found):
            name = e.name
            if name in SKIPPED_NAMES or TEMP_MARK in name:
                continue
            rel = prefix + name
            if "\\" in name:  # manifests refuse it (a path separator elsewhere)
                self.tree.unreadable.append(f"{rel}: a backslash in the name; not covered")
                continue
            full = len(self.tree.entries) >= self.budget.entries
            if (full or i % 256 == 255) and (why := self.spent()):
                self.not_listed(rel_dir, why)
                break
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as err:
                self.tree.unreadable.append(f"{rel}: {err.strerror or err}")
                continue
            self.entry(rel, dfd, name, st)
        self.stack[mark:] = reversed(self.stack[mark:])  # the first name is walked first

    def entry(self, rel: str, dfd: int, name: str, st: os.stat_result) -> None:
        """Record one path, `name` in the directory held by `dfd`."""
        mode = st.st_mode
        if self.ignore.ignored(rel, S_ISDIR(mode)):
            return
        if len(self.tree.entries) >= self.budget.entries:  # a path looked at again on its own
            self.not_listed(rel.rpartition("/")[0], self.spent())
            return
        if S_ISREG(mode):
            self.file(rel, dfd, name, st)
        elif S_ISDIR(mode):
            self.tree.entries[rel] = Entry(DIR, mode & 0o777)
            if depth(rel) >= self.budget.depth:
                self.tree.uncovered[rel] = f"deeper than {self.budget.depth} levels"
            else:
                self.stack.append((rel, (st.st_dev, st.st_ino)))
        elif S_ISLNK(mode):
            self.link(rel, dfd, name)
        else:
            self.tree.special.append(rel)

    def link(self, rel: str, dfd: int, name: str) -> None:
        try:
            self.tree.entries[rel] = Entry(LINK, target=os.readlink(name, dir_fd=dfd))
        except OSError as err:
            self.tree.unreadable.append(f"{rel}: {err.strerror or err}")

    def file(self, rel: str, dfd: int, name: str, st: os.stat_result) -> None:
        size = st.st_size
        if size > self.s.caps.file or self.total + size > self.s.caps.total:
            self.tree.entries[rel] = Entry(OVER, size=size)
            return
        stamp = (size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        mode = st.st_mode & 0o777
        old = self.previous.entries.get(rel)
        if old is not None and self.previous.stamps.get(rel) == stamp and old.kind == FILE:
            entry = old if old.mode == mode else old._replace(mode=mode)
        elif size == 0:  # nothing to read (a later write changes the stamp)
            entry = Entry(FILE, mode, 0, self.s.put(_EMPTY))
        else:
            try:
                data, st = read_regular_at(dfd, name, cap=self.s.caps.file)
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
        if self.watch_file is not None and not self.watch_file(rel):
            self.tree.unwatched.add(rel)
        if st.st_nlink > 1:
            self.tree.links[rel] = (st.st_dev, st.st_ino, st.st_nlink)
        if stamp[1] < self.racy_from:  # as git does: a recent mtime may hide a second write
            self.tree.stamps[rel] = stamp

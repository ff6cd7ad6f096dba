"""The git directories inside a workspace: a `.git` directory at any depth, the directory a
`.git` file names (`gitdir: ...`, as submodules and worktrees have) or a `.git` link leads to,
and a bare repository (a folder with HEAD, objects/ and refs/). git runs configuration and hooks
from each of them by itself, so the sandbox keeps them as it keeps the workspace's own `.git`.

Found by a walk that follows no link and has a budget (entries, depth, repositories): what it
did not cover is said, not guessed. It looks again only in directories whose entries may have
changed since the last walk: a directory's change time (ctime) moves when an entry is added,
removed or renamed in it, and only the kernel sets it (mtime would not do: `touch -d` puts it
back, and a new repository would hide behind its folder's old stamp); one changed within
RACY_NS of the walk is looked at again next time, as its stamp could hide a second change in
the same clock tick.
"""

from __future__ import annotations

import os
import stat
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["MAX_DEPTH", "MAX_ENTRIES", "MAX_REPOS", "Finder", "Found"]

MAX_ENTRIES = 200_000  # directory entries one walk looks at
MAX_DEPTH = 40  # directories below the workspace
MAX_REPOS = 1_000
RACY_NS = 100_000_000
_POINTER_BYTES = 4096
_BARE = frozenset({"HEAD", "objects", "refs"})


@dataclass(frozen=True)
class Found:
    """One walk's answer: real paths, all inside the workspace."""

    git_dirs: tuple[Path, ...] = ()  # the workspace's own .git too, when it is a directory
    pointers: tuple[Path, ...] = ()  # `.git` files and links (what names a git directory)
    missed: str = ""  # what the walk did not cover ('' when it covered everything)


@dataclass
class _Dir:
    stamp: tuple[int, int, int]  # ctime_ns (-1: look again), inode, device
    subdirs: tuple[str, ...]
    entries: int
    dot_git: str  # "dir", "file", "link" or ""
    bare: bool


@dataclass
class Finder:
    """Finds the git directories of one workspace, walk after walk."""

    workspace: Path  # resolved
    max_entries: int = MAX_ENTRIES
    max_depth: int = MAX_DEPTH
    max_repos: int = MAX_REPOS
    _dirs: dict[str, _Dir] = field(default_factory=dict)

    def find(self) -> Found:
        ws = str(self.workspace)
        seen: dict[str, _Dir] = {}
        dirs: list[str] = []
        pointers: list[str] = []
        entries, deep, todo = 0, False, deque([(ws, 0)])
        now = time.time_ns()
        while todo:
            if entries >= self.max_entries or len(dirs) + len(pointers) >= self.max_repos:
                break
            path, depth = todo.popleft()
            d = self._look(path, now)
            if d is None:
                continue
            seen[path] = d
            entries += d.entries
            if d.bare and path != ws:
                dirs.append(path)
                continue
            if d.dot_git == "dir":
                dirs.append(os.path.join(path, ".git"))
            elif d.dot_git:
                pointers.append(os.path.join(path, ".git"))
            if depth >= self.max_depth:
                deep = deep or bool(d.subdirs)
                continue
            todo.extend((os.path.join(path, s), depth + 1) for s in d.subdirs)
        self._dirs = seen
        return self._found(dirs, pointers, self._missed(todo, entries, deep))

    def _missed(self, todo: deque[tuple[str, int]], entries: int, deep: bool) -> str:
        if todo:
            return (
                f"the search for repositories inside the workspace stopped after {entries:,}"
                f" entries (at most {self.max_entries:,} entries and {self.max_repos:,}"
                " repositories): any deeper in it are not kept read-only"
            )
        if deep:
            return (
                f"the search for repositories inside the workspace goes {self.max_depth}"
                " directories deep: any deeper are not kept read-only"
            )
        return ""

    def _look(self, path: str, now: int) -> _Dir | None:
        """A directory's entries, from the last walk when they cannot have changed."""
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        stamp = (st.st_ctime_ns, st.st_ino, st.st_dev)
        old = self._dirs.get(path)
        if old is not None and old.stamp == stamp:
            return old
        if now - st.st_ctime_ns < RACY_NS:
            stamp = (-1, st.st_ino, st.st_dev)
        try:
            with os.scandir(path) as it:
                found = list(it)
        except OSError:
            return _Dir(stamp, (), 0, "", False)
        names = {e.name for e in found}
        subdirs, dot_git = [], ""
        for e in found:
            try:
                if e.name == ".git":
                    dot_git = _kind(e)
                elif e.is_dir(follow_symlinks=False):
                    subdirs.append(e.name)
            except OSError:
                continue
        bare = names >= _BARE and "objects" in subdirs and "refs" in subdirs
        return _Dir(stamp, tuple(sorted(subdirs)), len(found), dot_git, bare)

    def _found(self, dirs: list[str], pointers: list[str], missed: str) -> Found:
        """Each pointer's git directory (and a worktree's common one) when inside."""
        real = [Path(d) for d in dirs]
        for p in pointers:
            target = _target(Path(p))
            if target is not None:
                real.append(target)
        for d in list(real):
            common = _commondir(d)
            if common is not None:
                real.append(common)
        inside = [d for d in real if d == self.workspace or d.is_relative_to(self.workspace)]
        git_dirs = tuple(sorted(set(inside)))
        return Found(git_dirs, tuple(Path(p) for p in sorted(pointers)), missed)


def _kind(e: os.DirEntry[str]) -> str:
    if e.is_symlink():
        return "link"
    if e.is_dir(follow_symlinks=False):
        return "dir"
    return "file" if e.is_file(follow_symlinks=False) else ""


def _read_small(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return ""
        return f.read(_POINTER_BYTES).decode("utf-8", errors="replace")


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _target(pointer: Path) -> Path | None:
    """The git directory a `.git` link leads to, or a `.git` file names (as git reads it:
    'gitdir: <path>', relative to the file's folder)."""
    if os.path.islink(pointer):
        real = Path(os.path.realpath(pointer))
        return real if _is_dir(real) else None
    text = _read_small(pointer)
    if not text.startswith("gitdir:"):
        return None
    where = text[len("gitdir:") :].splitlines()[0].strip() if text[7:].strip() else ""
    if not where:
        return None
    real = Path(os.path.realpath(pointer.parent / where))
    return real if _is_dir(real) else None


def _commondir(git_dir: Path) -> Path | None:
    """A linked worktree's git directory names the repository's own in `commondir`."""
    text = _read_small(git_dir / "commondir").strip()
    if not text:
        return None
    real = Path(os.path.realpath(git_dir / text.splitlines()[0]))
    return real if _is_dir(real) and real != git_dir else None

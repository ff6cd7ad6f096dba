"""Put workspace paths back to a tree's state, through the contained write path.

Each change says what a path should be (an Entry, or None: absent) and what it is now. What is
in the way goes first, deepest first (a file the turn put where a directory was, a directory
where a file was); then what must exist is made, parents first. Every step goes through a
handle on the parent directory, opened once per directory and checked to be inside the
workspace (resolve_in refuses a parent that leads out of it; mca/fs/careful.py checks the
opened handle): a restore of 60,000 paths checks each directory once, not each path. Files
are written atomically with their mode, links are made as links. "over" entries (larger than
the caps) are never touched. Names that were one file (hard links) when the tree was taken are
made one file again. Paths below a directory a tree did not list whole are never compared (Cover).
"""

from __future__ import annotations

import errno
import os
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mca.errors import PathRefused, UndoError
from mca.fs.at import atomic_write_at, link_at, mkdir_at, symlink_at, unlink_at
from mca.fs.careful import open_dir
from mca.workspace.paths import resolve_in
from mca.workspace.walk import DIR, FILE, LINK, OVER, Entry, Tree

OPEN_DIRS = 64  # directory handles a restore keeps open at once


@dataclass(frozen=True)
class Change:
    """One path to put back: what it should be, and what it is now (None: absent)."""

    rel: str
    want: Entry | None
    have: Entry | None


@dataclass
class Outcome:
    """What a restore did, path by path (directories end with /)."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "path: why"


def same(a: Entry | None, b: Entry | None) -> bool:
    """The same state for a restore (a directory's mode is not restored: kind alone counts)."""
    if a is None or b is None:
        return a is b
    if a.kind == DIR or b.kind == DIR:
        return a.kind == b.kind
    return a == b


class Cover:
    """What the trees compared know. A tree that did not list a directory whole (deeper than
    the walk's budget, past it, unreadable) knows what it recorded there, but not that a path
    it did not record is absent: such a path is left as it is. So is a directory that holds
    one it did not list whole: it is never removed (what is in it is not known)."""

    def __init__(self, *trees: Tree) -> None:
        self.trees = trees
        self.dirs: dict[str, str] = {}
        for t in trees:
            for d, why in t.uncovered.items():
                self.dirs.setdefault(d, why)
        self.holding: set[str] = set()
        for d in self.dirs:
            while d and d not in self.holding:
                self.holding.add(d)
                d = d.rpartition("/")[0]
        self._memo: list[dict[str, bool]] = [{} for _ in trees]

    def known(self, rel: str, want: Entry | None) -> bool:
        """Every tree knows `rel`'s state, and putting back `want` removes no directory that
        holds what some tree did not list."""
        if not self.dirs:
            return True
        if rel in self.holding and (want is None or want.kind != DIR):
            return False
        parent = rel.rpartition("/")[0]
        return not any(
            rel not in t.entries and self._under(i, parent) for i, t in enumerate(self.trees)
        )

    def _under(self, i: int, d: str) -> bool:
        """`d`, or a directory above it, was not listed whole by tree `i`."""
        uncovered, memo, seen = self.trees[i].uncovered, self._memo[i], []
        while True:
            if d in memo:
                found = memo[d]
                break
            if d in uncovered or not d:
                found = d in uncovered
                break
            seen.append(d)
            d = d.rpartition("/")[0]
        for s in seen:
            memo[s] = found
        return found


def _depth(rel: str) -> list[str]:
    return rel.split("/")


def _in_the_way(c: Change) -> bool:
    have, want = c.have, c.want
    if have is None or have.kind == OVER:
        return False
    return want is None or (DIR in (have.kind, want.kind) and have.kind != want.kind)


class _Dirs:
    """Handles on the workspace's directories for one restore, each opened and checked once
    (a few kept open; a directory removed or replaced is forgotten)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real = root.resolve()
        self.open: OrderedDict[str, int] = OrderedDict()

    def get(self, rel_dir: str) -> int:
        fd = self.open.get(rel_dir)
        if fd is not None:
            self.open.move_to_end(rel_dir)
            return fd
        path = resolve_in(self.root, rel_dir) if rel_dir else self.real
        fd = open_dir(path, self.real)
        self.open[rel_dir] = fd
        while len(self.open) > OPEN_DIRS:
            os.close(self.open.popitem(last=False)[1])
        return fd

    def forget(self, rel_dir: str) -> None:
        below = rel_dir + "/"
        for d in [d for d in self.open if d == rel_dir or d.startswith(below)]:
            os.close(self.open.pop(d))

    def forget_all(self) -> None:
        for fd in self.open.values():
            os.close(fd)
        self.open.clear()


class Restorer:
    """Applies changes under one workspace; `blob(sha)` returns stored contents."""

    def __init__(self, root: Path, blob: Callable[[str], bytes]) -> None:
        self.root = root
        self.real = root.resolve()
        self.blob = blob

    def apply(self, changes: Iterable[Change], links: list[list[str]] | None = None) -> Outcome:
        """Removals deepest first, then creations parents first; each failure is reported.
        `links`: the names of each file that had several when the wanted tree was taken."""
        todo = list(changes)
        out = Outcome()
        dirs = _Dirs(self.root)
        try:
            for c in sorted(filter(_in_the_way, todo), key=lambda c: _depth(c.rel), reverse=True):
                self._step(c, out, dirs, self._remove)
            dirs.forget_all()  # what was removed or replaced is no handle to write through
            for c in sorted(todo, key=lambda c: _depth(c.rel)):
                if c.want is not None:
                    self._step(c, out, dirs, self._make)
            self._relink(todo, links or [], out, dirs)
        finally:
            dirs.forget_all()
        return out

    def _step(
        self, c: Change, out: Outcome, dirs: _Dirs, do: Callable[[Change, Outcome, _Dirs], None]
    ) -> None:
        try:
            do(c, out, dirs)
        except (OSError, PathRefused, UndoError) as e:
            out.problems.append(f"{c.rel}: {getattr(e, 'strerror', None) or e}")

    def _remove(self, c: Change, out: Outcome, dirs: _Dirs) -> None:
        assert c.have is not None
        parent, _, name = c.rel.rpartition("/")
        dfd = dirs.get(parent)
        if c.have.kind == DIR:
            dirs.forget(c.rel)
            try:
                os.rmdir(name, dir_fd=dfd)
            except OSError as e:
                if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise UndoError("a directory that holds files no checkpoint covers") from None
                raise
            label = c.rel + "/"
        else:
            unlink_at(dfd, name)
            label = c.rel
        if c.want is None:
            out.removed.append(label)

    def _make(self, c: Change, out: Outcome, dirs: _Dirs) -> None:
        want = c.want
        assert want is not None
        if want.kind == OVER:
            raise UndoError("over the size cap when the checkpoint was taken; not kept")
        if c.have is not None and c.have.kind == OVER:
            raise UndoError("over the size cap now; left alone")
        parent, _, name = c.rel.rpartition("/")
        dfd = dirs.get(parent)
        if want.kind == DIR:
            mkdir_at(dfd, name, want.mode or 0o755)
            if c.have is None or c.have.kind != DIR:
                out.restored.append(c.rel + "/")
            return
        if want.kind == LINK:
            symlink_at(dfd, name, want.target)
        elif want.kind == FILE:
            atomic_write_at(dfd, name, self.blob(want.blob), want.mode)
        out.restored.append(c.rel)

    def _relink(self, todo: list[Change], links: list[list[str]], out: Outcome, d: _Dirs) -> None:
        """Names that were one file when the wanted tree was taken, written back here as
        files of their own, are made one file again (each a link to the first of them)."""
        written = {c.rel: c.want for c in todo if c.want is not None and c.want.kind == FILE}
        done = set(out.restored)
        for group in links:
            names = [r for r in group if r in written and r in done]
            if len(names) < 2 or len({written[r] for r in names}) != 1:
                continue
            first, _, first_name = names[0].rpartition("/")
            for rel in names[1:]:
                parent, _, name = rel.rpartition("/")
                try:
                    link_at(d.get(parent), name, d.get(first), first_name)
                except (OSError, PathRefused) as e:  # each is right as a file of its own still
                    out.problems.append(f"{rel}: not linked to {names[0]} again ({e})")

"""Put workspace paths back to a tree's state, through the contained write path.

Each change says what a path should be (an Entry, or None: absent) and what it is now. What is
in the way goes first, deepest first (a file the turn put where a directory was, a directory
where a file was); then what must exist is made, parents first. Every step opens the parent
directory through a handle checked to be inside the workspace (resolve_in refuses a parent that
leads out of it; fsutil checks the opened handle), files are written atomically with their
mode, links are made as links. "over" entries (larger than the caps) are never touched.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from mca.errors import PathRefused, UndoError
from mca.fsutil import (
    atomic_write,
    mkdir_contained,
    rmdir_contained,
    symlink_contained,
    unlink_contained,
)
from mca.workspace.paths import resolve_in
from mca.workspace.scan import DIR, FILE, LINK, OVER, Entry


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


def _depth(rel: str) -> tuple[str, ...]:
    return PurePosixPath(rel).parts


def _in_the_way(c: Change) -> bool:
    have, want = c.have, c.want
    if have is None or have.kind == OVER:
        return False
    return want is None or (DIR in (have.kind, want.kind) and have.kind != want.kind)


class Restorer:
    """Applies changes under one workspace; `blob(sha)` returns stored contents."""

    def __init__(self, root: Path, blob: Callable[[str], bytes]) -> None:
        self.root = root
        self.real = root.resolve()
        self.blob = blob

    def _place(self, rel: str) -> Path:
        """The path of `rel` with its parent resolved inside the workspace (the name itself is
        never followed: it may be a link the restore replaces)."""
        parent, _, name = rel.rpartition("/")
        return (resolve_in(self.root, parent) if parent else self.real) / name

    def apply(self, changes: Iterable[Change]) -> Outcome:
        """Removals deepest first, then creations parents first; each failure is reported."""
        todo = list(changes)
        out = Outcome()
        for c in sorted(filter(_in_the_way, todo), key=lambda c: _depth(c.rel), reverse=True):
            self._step(c, out, self._remove)
        for c in sorted(todo, key=lambda c: _depth(c.rel)):
            if c.want is not None:
                self._step(c, out, self._make)
        return out

    def _step(self, c: Change, out: Outcome, do: Callable[[Change, Outcome], None]) -> None:
        try:
            do(c, out)
        except (OSError, PathRefused, UndoError) as e:
            out.problems.append(f"{c.rel}: {getattr(e, 'strerror', None) or e}")

    def _remove(self, c: Change, out: Outcome) -> None:
        assert c.have is not None
        target = self._place(c.rel)
        if c.have.kind == DIR:
            try:
                rmdir_contained(target, self.real)
            except OSError as e:
                if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise UndoError("a directory that holds files no checkpoint covers") from None
                raise
            label = c.rel + "/"
        else:
            unlink_contained(target, self.real)
            label = c.rel
        if c.want is None:
            out.removed.append(label)

    def _make(self, c: Change, out: Outcome) -> None:
        want = c.want
        assert want is not None
        if want.kind == OVER:
            raise UndoError("over the size cap when the checkpoint was taken; not kept")
        if c.have is not None and c.have.kind == OVER:
            raise UndoError("over the size cap now; left alone")
        target = self._place(c.rel)
        if want.kind == DIR:
            mkdir_contained(target, want.mode or 0o755, self.real)
            if c.have is None or c.have.kind != DIR:
                out.restored.append(c.rel + "/")
            return
        if want.kind == LINK:
            symlink_contained(target, want.target, self.real)
        elif want.kind == FILE:
            atomic_write(target, self.blob(want.blob), want.mode, root=self.real)
        out.restored.append(c.rel)

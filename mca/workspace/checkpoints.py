"""The workspace walked before each turn's first change (a file tool's write or a command) and
again when the turn ends: the Trees half of the turn's record.

A session's first walk reads every file (reusing the hashes of the latest tree an earlier
session left, by stamp); after it, an inotify watcher (watch.py) names what changed and
update.py looks at those paths only, falling back to a walk whenever that could be wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mca.errors import UndoError
from mca.workspace.records import Trees
from mca.workspace.scan import Caps, Scanner, Tree
from mca.workspace.trees import TreeStore
from mca.workspace.update import update
from mca.workspace.watch import Watcher

__all__ = ["Walker"]


def _ignore(rel_dir: str) -> None:
    return None


class Walker:
    """Walks one workspace into the tree store; knows the turn in flight."""

    def __init__(self, root: Path, trees: TreeStore, caps: Caps) -> None:
        self.root = root
        self.trees = trees
        self.caps = caps
        self.scanner = Scanner(root, trees.put, caps)
        self._last: Tree | None = None  # the newest walk: the next one reuses its hashes
        self._open: tuple[int, str] | None = None  # (turn, tree before it) of the turn in flight
        self._watcher: Watcher | None = None  # which paths changed since the last walk
        self._walked = False  # _last came from a walk (or an update) of this session

    @property
    def enabled(self) -> bool:
        return self.caps.total > 0

    def scan(self, newest: Callable[[], Tree | None] = lambda: None) -> Tree:
        """The workspace now: from the watcher's events when they can be trusted, else a walk
        (which reuses the hashes of files whose stamp did not change; `newest`: the latest tree
        an earlier session left, for this session's first walk)."""
        if self._watcher is None and self._last is None:
            self._watcher = Watcher.open(str(self.scanner.real))
        watcher = self._watcher
        changed = watcher.drain() if watcher is not None else None
        if watcher is not None and changed is not None and self._last is not None and self._walked:
            watched = set(watcher.dirs.values())
            tree = update(self.scanner, self._last, changed, watcher.watch, watched)
            if tree is not None and not watcher.broken:
                self._last = tree
                return tree
        previous = self._last if self._last is not None else newest()
        if self._watcher is not None:
            self._watcher.reset()
        watch = self._watcher.watch if self._watcher is not None else _ignore
        self._last = self.scanner.scan(previous, watch)
        self._walked = True
        return self._last

    def close(self) -> None:
        """Stop watching the workspace."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def begin(self, turn: int, newest: Callable[[], Tree | None]) -> str:
        """Before a change in `turn`: its first one walks the workspace. Returns a warning for
        the person when that failed (the change still happens; /undo covers less)."""
        if not self.enabled or self.in_flight(turn):
            return ""
        self._open = None
        try:
            self.trees.ensure()
            self._open = (turn, self.trees.save_tree(self.scan(newest)))
        except OSError as e:
            why = e.strerror or str(e)
            return f"no workspace checkpoint for turn {turn} ({why}): /undo covers only file tools"
        return ""

    def in_flight(self, turn: int) -> bool:
        """`turn` has been walked before its first change and not ended yet."""
        return self._open is not None and self._open[0] == turn

    def end(self) -> tuple[int, Trees] | None:
        """After a turn: (the turn, its trees) when it changed the workspace; None when it did
        not, when no turn was open, or when the walk failed (its Writes still undo the file
        tools' writes)."""
        if self._open is None:
            return None
        turn, before = self._open
        self._open = None
        try:
            after = self.trees.save_tree(self.scan())
        except OSError:
            return None
        return (turn, Trees(before, after)) if after != before else None

    def tree(self, name: str) -> Tree:
        """A stored tree; UndoError when it is unreadable."""
        return self.trees.load_tree(name)

    def newest_of(self, names: list[str]) -> Tree | None:
        """The first of these trees that can be read (newest first), or None."""
        for name in names:
            try:
                return self.trees.load_tree(name)
            except UndoError:
                continue
        return None

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
from mca.workspace.trees import TreeStore
from mca.workspace.undo import uncovered_notes
from mca.workspace.update import skipped, update
from mca.workspace.walk import Caps, Scanner, Tree
from mca.workspace.watch import Watcher

__all__ = ["Walker"]


SETTLE_UNWATCHED = 2_000  # files looked at again by every update: past it, no update after
# a command (the turn's end still makes one)


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
        self._said: set[str] = set()  # directories not listed whole, already told of
        self._pending: set[str] = set()  # paths the watcher named that no update looked at yet

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
        if changed is not None:
            changed |= self._pending
        self._pending = set()
        if watcher is not None and changed is not None and self._last is not None and self._walked:
            watched = set(watcher.dirs.values())
            last, watch = self._last, watcher.watch
            tree = update(self.scanner, last, changed, watch, watched, watcher.watch_file)
            if tree is not None and not watcher.broken:
                self._last = tree
                return tree
        previous = self._last if self._last is not None else newest()
        if self._watcher is not None:
            self._watcher.reset()
        w = self._watcher
        watch, watch_file = (w.watch, w.watch_file) if w is not None else (_ignore, None)
        self._last = self.scanner.scan(previous, watch, watch_file)
        self._walked = True
        return self._last

    def news(self, tree: Tree) -> list[str]:
        """What the walk did not cover that was not said yet in this session (the person and
        the model hear it once: /undo and /rewind will leave it as it is)."""
        new = {d: why for d, why in tree.uncovered.items() if d not in self._said}
        self._said |= new.keys()
        return [f"checkpoint: {note}" for note in uncovered_notes(new)]

    def settle(self, turn: int) -> list[str]:
        """After a command in `turn`: when it made paths the tree does not know, the tree is
        brought up to date now (inotify names them), to say at once what the checkpoint will not
        cover. [] when nothing new, or when that would cost more than the turn's end, which
        says it then (no watcher, or many files no watch hears)."""
        w, last = self._watcher, self._last
        if not self.in_flight(turn) or w is None or last is None or not self._walked:
            return []
        changed = w.drain()
        if changed is None:
            return []  # a broken watcher: the turn's end walks everything
        self._pending |= changed  # the next update looks at them
        made = [p for p in changed if p not in last.entries and not skipped(p)]
        if len(last.unwatched) > SETTLE_UNWATCHED or not made:
            return []  # only known paths changed: nothing new can be left uncovered
        try:
            return self.news(self.scan())
        except OSError:
            return []

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
            tree = self.scan(newest)
            self._open = (turn, self.trees.save_tree(tree))
        except OSError as e:
            why = e.strerror or str(e)
            return f"no workspace checkpoint for turn {turn} ({why}): /undo covers only file tools"
        return "; ".join(self.news(tree))

    def in_flight(self, turn: int) -> bool:
        """`turn` has been walked before its first change and not ended yet."""
        return self._open is not None and self._open[0] == turn

    def end(self) -> tuple[int, Trees | None, list[str]] | None:
        """After a turn: (the turn, its trees or None when it changed nothing, what the walk
        newly left uncovered); None when no turn was open or the walk failed (its Writes
        still undo the file tools' writes)."""
        if self._open is None:
            return None
        turn, before = self._open
        self._open = None
        try:
            tree = self.scan()
            after = self.trees.save_tree(tree)
        except OSError:
            return None
        return turn, Trees(before, after) if after != before else None, self.news(tree)

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

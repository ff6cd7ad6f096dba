"""A tree brought up to date from the paths a watcher says changed (mca/workspace/watch.py),
instead of a walk of the whole workspace: each named path is looked at again (a directory
that is new, or another one in the same place, is walked whole), the rest is kept.

None (the caller then walks everything) whenever the shortcut could be wrong: a .gitignore
changed (what is ignored may have changed anywhere), or the total cap comes into play (a walk
in name order decides which files it leaves out).
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from stat import S_ISDIR

from mca.workspace.scan import (
    DIR,
    FILE,
    OVER,
    SKIPPED_NAMES,
    TEMP_MARK,
    Scanner,
    Tree,
    Walk,
    Watch,
)


def _skipped(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return any(p in SKIPPED_NAMES or TEMP_MARK in p or "\\" in p for p in parts)


def update(
    scanner: Scanner, previous: Tree, changed: set[str], watch: Watch, watched: set[str]
) -> Tree | None:
    """`previous` with every path in `changed` looked at again; None: walk everything.
    `watched`: the directories still watched (one removed and made again, even with the same
    inode number, lost its watch: it is walked again)."""
    if not changed:
        return previous  # nothing happened since: the same tree (no copy, no comparison)
    if any(PurePosixPath(p).name == ".gitignore" for p in changed):
        return None
    if any(e.kind == OVER and e.size <= scanner.caps.file for e in previous.entries.values()):
        return None  # left out by the total cap: only a walk in order decides again
    walk = Walk(scanner, previous, watch)
    walk.stack = []
    tree = walk.tree
    tree.entries = dict(previous.entries)
    tree.stamps = dict(previous.stamps)
    tree.ignore_dirs = set(previous.ignore_dirs)
    tree.special, tree.unreadable = list(previous.special), list(previous.unreadable)
    for d in sorted(tree.ignore_dirs):
        walk.ignore.enter(d)
    for rel in sorted(p for p in changed if p and not _skipped(p)):
        _again(walk, rel, watched)
    walk.run()  # the directories that are new
    total = sum(e.size for e in tree.entries.values() if e.kind == FILE)
    return None if total > scanner.caps.total else tree


def _again(walk: Walk, rel: str, watched: set[str]) -> None:
    tree = walk.tree
    parent = rel.rpartition("/")[0]
    up = tree.entries.get(parent) if parent else None
    if parent and (up is None or up.kind != DIR):
        return  # below something that is no longer a recorded directory
    tree.special = [p for p in tree.special if p != rel]
    tree.unreadable = [u for u in tree.unreadable if not u.startswith(f"{rel}: ")]
    old = tree.entries.get(rel)
    try:
        st = os.lstat(os.path.join(walk.s.real, rel))
    except OSError:
        st = None
    same_dir = old is not None and old.kind == DIR and rel in watched  # watched: not made anew
    if old is not None and same_dir and st is not None and S_ISDIR(st.st_mode):
        tree.entries[rel] = old._replace(mode=st.st_mode & 0o777)  # its mode, or an entry in it
        return
    _forget(tree, rel)
    if st is not None:
        walk.entry(rel, os.path.join(walk.s.real, rel), st)


def _forget(tree: Tree, rel: str) -> None:
    """Drop a path and, when it was a directory, everything recorded below it."""
    old = tree.entries.pop(rel, None)
    tree.stamps.pop(rel, None)
    if old is not None and old.kind == DIR:
        below = rel + "/"
        for p in [p for p in tree.entries if p.startswith(below)]:
            del tree.entries[p]
            tree.stamps.pop(p, None)
        tree.special = [p for p in tree.special if not p.startswith(below)]

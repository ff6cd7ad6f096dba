"""A tree brought up to date from the paths a watcher says changed (mca/workspace/watch.py),
instead of a walk of the whole workspace: each named path is looked at again (a directory
that is new, or another one in the same place, is walked whole), the rest is kept.

Every file with more than one name is looked at again too, named or not: a write through any
of its names (another one in the workspace, in an ignored directory, outside) changes it, and
inotify names only the name written through.

None (the caller then walks everything) whenever the shortcut could be wrong: a .gitignore
changed (what is ignored may have changed anywhere), the total cap comes into play (a walk in
name order decides which files it leaves out), or a file gained a name (its other names may be
anywhere in the tree; a walk finds them all).
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from stat import S_ISDIR

from mca.workspace.walk import (
    DIR,
    FILE,
    OVER,
    SKIPPED_NAMES,
    TEMP_MARK,
    Scanner,
    Tree,
    Walk,
    Watch,
    WatchFile,
)

__all__ = ["skipped", "update"]


def skipped(rel: str) -> bool:
    """A path no walk records (in .git, one of mca's temp files, a backslash in a name)."""
    parts = PurePosixPath(rel).parts
    return any(p in SKIPPED_NAMES or TEMP_MARK in p or "\\" in p for p in parts)


def update(
    scanner: Scanner,
    previous: Tree,
    changed: set[str],
    watch: Watch,
    watched: set[str],
    watch_file: WatchFile | None = None,
) -> Tree | None:
    """`previous` with every path in `changed` looked at again; None: walk everything.
    `watched`: the directories still watched (one removed and made again, even with the same
    inode number, lost its watch: it is walked again). `watch_file`: told of each file
    recorded again (its watch hears a name made or removed anywhere)."""
    if not changed and not previous.links and not previous.unwatched:
        return previous  # nothing happened since: the same tree (no copy, no comparison)
    if any(PurePosixPath(p).name == ".gitignore" for p in changed):
        return None
    if any(e.kind == OVER and e.size <= scanner.caps.file for e in previous.entries.values()):
        return None  # left out by the total cap: only a walk in order decides again
    walk = Walk(scanner, previous, watch, watch_file)
    tree = walk.tree
    tree.entries = dict(previous.entries)
    tree.stamps = dict(previous.stamps)
    tree.ignore_dirs = set(previous.ignore_dirs)
    tree.special, tree.unreadable = list(previous.special), list(previous.unreadable)
    tree.uncovered, tree.links = dict(previous.uncovered), dict(previous.links)
    tree.unwatched = set(previous.unwatched)
    for d in sorted(tree.ignore_dirs):
        walk.ignore.enter(d)
    also = previous.links.keys() | previous.unwatched  # what no event may name
    again = {p for p in changed | also if p and not skipped(p)}
    by_parent: dict[str, list[str]] = {}
    for rel in again:
        by_parent.setdefault(rel.rpartition("/")[0], []).append(rel)
    for parent in sorted(by_parent):  # a directory before what is in it
        _in(walk, parent, sorted(by_parent[parent]), watched)
    walk.run()  # the directories that are new
    total = sum(e.size for e in tree.entries.values() if e.kind == FILE)
    if total > scanner.caps.total or _gained_a_name(previous, tree):
        return None
    return tree


def _gained_a_name(previous: Tree, tree: Tree) -> bool:
    """A file has more names than the last tree knew of (a hard link made since)."""
    known = {(dev, ino): n for dev, ino, n in previous.links.values()}
    return any(known.get((dev, ino), 1) < n for dev, ino, n in tree.links.values())


def _in(walk: Walk, parent: str, rels: list[str], watched: set[str]) -> None:
    """Look again at these paths of one directory, through one handle on it."""
    tree = walk.tree
    up = tree.entries.get(parent) if parent else None
    if parent and (up is None or up.kind != DIR):
        return  # below something that is no longer a recorded directory
    if parent in tree.uncovered:
        return  # not listed whole: what is in it is not known either way
    dfd = walk.open(parent, None)
    if dfd is None:
        return
    try:
        for rel in rels:
            _again(walk, rel, dfd, watched)
    finally:
        os.close(dfd)


def _again(walk: Walk, rel: str, dfd: int, watched: set[str]) -> None:
    tree = walk.tree
    tree.special = [p for p in tree.special if p != rel]
    tree.unreadable = [u for u in tree.unreadable if not u.startswith(f"{rel}: ")]
    old = tree.entries.get(rel)
    name = rel.rpartition("/")[2]
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except OSError:
        st = None
    same_dir = old is not None and old.kind == DIR and rel in watched  # watched: not made anew
    if old is not None and same_dir and st is not None and S_ISDIR(st.st_mode):
        tree.entries[rel] = old._replace(mode=st.st_mode & 0o777)  # its mode, or an entry in it
        return
    _forget(tree, rel)
    if st is not None:
        walk.entry(rel, dfd, name, st)


def _forget(tree: Tree, rel: str) -> None:
    """Drop a path and, when it was a directory, everything recorded below it."""
    old = tree.entries.pop(rel, None)
    tree.stamps.pop(rel, None)
    tree.links.pop(rel, None)
    tree.unwatched.discard(rel)
    tree.uncovered.pop(rel, None)
    if old is not None and old.kind == DIR:
        below = rel + "/"
        for p in [p for p in tree.entries if p.startswith(below)]:
            del tree.entries[p]
            tree.stamps.pop(p, None)
            tree.links.pop(p, None)
            tree.unwatched.discard(p)
        tree.special = [p for p in tree.special if not p.startswith(below)]
        tree.uncovered = {p: w for p, w in tree.uncovered.items() if not p.startswith(below)}

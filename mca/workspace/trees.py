"""Blobs and trees of the workspace's checkpoints, beside the records (never in the workspace):

    $MCA_HOME/snapshots/<workspace>/checkpoints/          (0700)
        objects/<sha256>                 file contents (0600), checked against the name on read
        packs/<sha256>.pack, .idx        small blobs kept together (packs.py)
        trees/<sha256>.json              one manifest per distinct workspace state

Blobs and trees are written whole (a rename) without a sync: a crash may lose one, and the undo
that needed it then says it is damaged (a sync per blob made the first checkpoint of 5,000
files take 15 s). Everything read back is untrusted: a blob must hash to its name, a tree's
rows must be what mca writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mca.errors import UndoError
from mca.fs.careful import atomic_write, private_dir, read_regular, sha256, unlink_contained
from mca.workspace.packs import PACK_MAX_BLOB, Packs
from mca.workspace.records import HASH, BadRecord, check_rel, checked_object
from mca.workspace.walk import KINDS, Entry, Link, Tree

__all__ = ["MAX_CHAIN", "TreeStore", "write_unsynced"]

MAX_TREE_BYTES = 256 * 1024 * 1024
MAX_CHAIN = 64  # deltas on a full tree at most: a load reads at most this many files more
_TREE = re.compile(r"[0-9a-f]{64}\.json\Z")


def write_unsynced(path: Path, data: bytes) -> None:
    """Whole or not at all (a rename), not synced; 0600."""
    atomic_write(path, data, 0o600, sync=False)


def _row(row: Any) -> tuple[str, Entry, tuple[int, int, int, int] | None]:
    """One tree row, checked: [path, kind, mode, size, blob, target, stamp or null]."""
    if not isinstance(row, list) or len(row) != 7:
        raise BadRecord("a tree row is not a list of seven")
    rel, kind, mode, size, blob, target, stamp = row
    check_rel(rel)
    if kind not in KINDS or not isinstance(target, str) or not isinstance(blob, str):
        raise BadRecord(f"{rel}: bad kind {kind!r}")
    if not isinstance(mode, int) or not 0 <= mode <= 0o777 or not isinstance(size, int):
        raise BadRecord(f"{rel}: bad mode or size")
    if kind == "file" and not HASH.match(blob):
        raise BadRecord(f"{rel}: blob is not a sha256")
    ok = stamp is None or (
        isinstance(stamp, list) and len(stamp) == 4 and all(isinstance(n, int) for n in stamp)
    )
    if not ok:
        raise BadRecord(f"{rel}: bad stamp")
    return rel, Entry(kind, mode, size, blob, target), tuple(stamp) if stamp else None


def _uncovered(doc: dict[str, Any]) -> dict[str, str]:
    """A tree's directories not listed whole, checked: {path: why}."""
    found = doc.get("uncovered", {})
    if not isinstance(found, dict) or not all(isinstance(w, str) for w in found.values()):
        raise BadRecord("bad uncovered directories")
    return {(check_rel(r) if r else r): w for r, w in found.items()}


def _links(doc: dict[str, Any]) -> dict[str, Link]:
    """A tree's files with more than one name, checked: [[names in all, path, ...], ...]; each
    group a made-up inode of its own (the real ones mean nothing in another session)."""
    out: dict[str, Link] = {}
    for i, group in enumerate(doc.get("links", [])):
        if not isinstance(group, list) or len(group) < 2 or not isinstance(group[0], int):
            raise BadRecord("a bad group of hard links")
        for rel in group[1:]:
            out[check_rel(rel)] = (-1, i, group[0])
    return out


@dataclass
class _Saved:
    entries: dict[str, Entry]
    id: str
    depth: int  # deltas between it and a full tree
    also: tuple[dict[str, str], list[list[str]]]  # its uncovered directories and hard links


class TreeStore:
    """Blobs and trees of one workspace's checkpoints."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._known: set[str] = set()  # blobs known to be stored
        self.packs = Packs(base / "packs", write_unsynced)
        self._saved: _Saved | None = None  # the last tree written or read: the next delta's base

    def ensure(self) -> None:
        """Create the store's directories (0700)."""
        for d in ("objects", "packs", "trees", "records"):
            private_dir(self.base / d)

    # -- blobs -------------------------------------------------------------------------------
    def put(self, data: bytes) -> str:
        """Store bytes once; their sha256."""
        name = sha256(data)
        if name in self._known:
            return name
        if len(data) <= PACK_MAX_BLOB:
            if not self.packs.has(name):
                self.packs.add(name, data)
        elif not os.path.lexists(obj := self.base / "objects" / name):
            write_unsynced(obj, data)
        self._known.add(name)
        return name

    def blob(self, name: str, cap: int) -> bytes:
        """A stored blob, checked against its name."""

        def read() -> bytes:
            packed = self.packs.get(name)
            return read_regular(self.base / "objects" / name, cap=cap) if packed is None else packed

        return checked_object(read, name, "checkpoint store")

    def flush(self) -> None:
        """The pending small blobs written (before a record that names them)."""
        self.packs.flush()

    # -- trees -------------------------------------------------------------------------------
    def save_tree(self, tree: Tree) -> str:
        """Write a tree (unless it is the one last written or read); its id. Written as what
        changed since that one (a delta, up to MAX_CHAIN deep), so a checkpoint after a turn
        that changed three files writes three rows, not the workspace's 5,000."""
        last = self._saved
        also = (tree.uncovered, tree.groups())
        same = last is not None and (last.entries is tree.entries or last.entries == tree.entries)
        if last is not None and same and last.also == also:
            return last.id
        self.packs.flush()  # the blobs a tree names are on disk before the tree
        doc: dict[str, Any] = {"base": None, "special": tree.special}
        doc["unreadable"] = tree.unreadable
        if tree.uncovered:  # (absent when empty: the ids of trees without it stay the same)
            doc["uncovered"] = tree.uncovered
        if tree.links:
            doc["links"] = [[tree.links[g[0]][2], *g] for g in tree.groups()]
        if last is not None and last.depth < MAX_CHAIN:
            old = last.entries
            items = [(r, e) for r, e in tree.entries.items() if old.get(r) != e]
            doc |= {"base": last.id, "gone": [r for r in old if r not in tree.entries]}
        else:
            items = list(tree.entries.items())
        stamps = tree.stamps
        doc["entries"] = [[r, *e, stamps.get(r)] for r, e in items]
        data = json.dumps(doc, separators=(",", ":")).encode()
        name = sha256(data)
        path = self.base / "trees" / f"{name}.json"
        if not os.path.lexists(path):
            write_unsynced(path, data)
        depth = last.depth + 1 if doc["base"] and last is not None else 0
        self._saved = _Saved(tree.entries, name, depth, also)  # trees are not changed once made
        return name

    def _doc(self, name: str) -> dict[str, Any]:
        if not HASH.match(name):
            raise BadRecord(f"{name!r} is not a sha256")
        data = read_regular(self.base / "trees" / f"{name}.json", cap=MAX_TREE_BYTES)
        if sha256(data) != name:
            raise BadRecord("the content does not match its hash")
        doc = json.loads(data)
        if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
            raise BadRecord("not a tree")
        return doc

    def chain(self, name: str) -> list[str]:
        """The tree's id and the ids of the trees it is a delta of, newest first."""
        out = [name]
        while (base := self._doc(out[-1]).get("base")) is not None:
            if len(out) > MAX_CHAIN or not isinstance(base, str):
                raise BadRecord("a chain of deltas longer than mca writes")
            out.append(base)
        return out

    def load_tree(self, name: str) -> Tree:
        """A tree read back and checked; UndoError when it is missing or not what mca wrote."""
        try:
            ids = self.chain(name)
            tree = Tree()
            for tid in reversed(ids):  # the full tree first, then each delta over it
                doc = self._doc(tid)
                for rel in doc.get("gone", []):
                    tree.entries.pop(check_rel(rel), None)
                    tree.stamps.pop(rel, None)
                for row in doc["entries"]:
                    rel, entry, stamp = _row(row)
                    tree.entries[rel] = entry
                    tree.stamps.pop(rel, None)
                    if stamp is not None:
                        tree.stamps[rel] = stamp
                tree.special = [str(p) for p in doc.get("special", [])]
                tree.unreadable = [str(p) for p in doc.get("unreadable", [])]
                tree.uncovered, tree.links = _uncovered(doc), _links(doc)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UndoError(f"checkpoint tree {name[:12]} is unreadable: {e}") from None
        also = (tree.uncovered, tree.groups())
        self._saved = _Saved(dict(tree.entries), name, len(ids) - 1, also)
        return tree

    # -- pruning -----------------------------------------------------------------------------
    def keep_only(self, trees: set[str], blobs: set[str]) -> None:
        """Remove every tree and blob but these trees (and the trees they are deltas of), the
        blobs they name, and `blobs`. Only under the store's exclusive lock."""
        keep_trees, keep_blobs = set(trees), set(blobs)
        for name in trees:
            try:
                tree = self.load_tree(name)
                keep_trees.update(self.chain(name))
            except (UndoError, OSError, ValueError):
                continue
            keep_blobs.update(e.blob for e in tree.entries.values() if e.blob)
        self._sweep("trees", lambda n: n.endswith(".json") and n[:-5] not in keep_trees, _TREE)
        self._sweep("objects", lambda n: n not in keep_blobs, HASH)
        self.packs.prune(keep_blobs)
        self._known &= keep_blobs
        self._saved = None

    def _sweep(self, sub: str, drop: Callable[[str], bool], shape: re.Pattern[str]) -> None:
        where = (self.base / sub).resolve()
        with contextlib.suppress(OSError), os.scandir(where) as it:
            for e in it:
                if shape.match(e.name) and drop(e.name):
                    with contextlib.suppress(OSError):
                        unlink_contained(Path(e.path), where)

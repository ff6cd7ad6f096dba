"""The checkpoint store on disk, beside the workspace's snapshot store (never in the workspace):

    $MCA_HOME/snapshots/<workspace>/checkpoints/          (0700)
        objects/<sha256>                 file contents (0600), checked against the name on read
        trees/<sha256>.json              one manifest per distinct workspace state
        records/<started>-<session>-<turn>[x<step>].json    one per turn that changed something
                                         (and per /rewind): the trees before and after it

Record names sort like the snapshot store's manifests, so /undo walks both in one order.
Everything read back is untrusted data: paths must be plain relative ones, kinds known, hashes
hex, and a blob must hash to its name.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mca.checkpoints.packs import PACK_MAX_BLOB, Packs
from mca.checkpoints.scan import KINDS, Entry, Tree
from mca.errors import UndoError
from mca.fsutil import private_dir, read_regular, sha256, unlink_contained
from mca.tools.manifest import HASH as _HASH
from mca.tools.manifest import BadManifest, check_rel, checked_object

MAX_TREE_BYTES = 256 * 1024 * 1024
MAX_RECORD_BYTES = 1024 * 1024
MAX_CHAIN = 64  # deltas on a full tree at most: a load reads at most this many files more
_RECORD = re.compile(r"[0-9A-Za-z]+-[0-9A-Za-z_]+-\d{4,}(?:x\d{4})?\.json\Z")
_TREE = re.compile(r"[0-9a-f]{64}\.json\Z")


def _entry(row: Any) -> tuple[str, Entry, tuple[int, int, int, int] | None]:
    """One manifest row, checked: [path, kind, mode, size, blob, target, stamp or null]."""
    if not isinstance(row, list) or len(row) != 7:
        raise BadManifest("a tree row is not a list of seven")
    rel, kind, mode, size, blob, target, stamp = row
    check_rel(rel)
    if kind not in KINDS or not isinstance(target, str) or not isinstance(blob, str):
        raise BadManifest(f"{rel}: bad kind {kind!r}")
    if not isinstance(mode, int) or not 0 <= mode <= 0o777 or not isinstance(size, int):
        raise BadManifest(f"{rel}: bad mode or size")
    if kind == "file" and not _HASH.match(blob):
        raise BadManifest(f"{rel}: blob is not a sha256")
    ok = stamp is None or (
        isinstance(stamp, list) and len(stamp) == 4 and all(isinstance(n, int) for n in stamp)
    )
    if not ok:
        raise BadManifest(f"{rel}: bad stamp")
    return rel, Entry(kind, mode, size, blob, target), tuple(stamp) if stamp else None


@dataclass
class _Saved:
    entries: dict[str, Entry]
    id: str
    depth: int  # deltas between it and a full tree


class CheckpointStore:
    """Blobs, trees and records of one workspace."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._known: set[str] = set()  # blobs known to be stored
        self.packs = Packs(base / "packs", _write_whole)
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
            _write_whole(obj, data)
        self._known.add(name)
        return name

    def blob(self, name: str, cap: int) -> bytes:
        """A stored blob, checked against its name."""

        def read() -> bytes:
            packed = self.packs.get(name)
            return read_regular(self.base / "objects" / name, cap=cap) if packed is None else packed

        return checked_object(read, name, "checkpoint store")

    # -- trees -------------------------------------------------------------------------------
    def save_tree(self, tree: Tree) -> str:
        """Write a tree (unless it is the one last written or read); its id. Written as what
        changed since that one (a delta, up to MAX_CHAIN deep), so a checkpoint after a turn
        that changed three files writes three rows, not the workspace's 5,000."""
        last = self._saved
        if last is not None and (last.entries is tree.entries or last.entries == tree.entries):
            return last.id
        self.packs.flush()  # the blobs a tree names are on disk before the tree
        doc: dict[str, Any] = {"base": None, "special": tree.special}
        doc["unreadable"] = tree.unreadable
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
            _write_whole(path, data)
        depth = last.depth + 1 if doc["base"] and last is not None else 0
        self._saved = _Saved(tree.entries, name, depth)  # trees are not changed once made
        return name

    def _doc(self, name: str) -> dict[str, Any]:
        if not _HASH.match(name):
            raise BadManifest(f"{name!r} is not a sha256")
        data = read_regular(self.base / "trees" / f"{name}.json", cap=MAX_TREE_BYTES)
        if sha256(data) != name:
            raise BadManifest("the content does not match its hash")
        doc = json.loads(data)
        if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
            raise BadManifest("not a tree")
        return doc

    def chain(self, name: str) -> list[str]:
        """The tree's id and the ids of the trees it is a delta of, newest first."""
        out = [name]
        while (base := self._doc(out[-1]).get("base")) is not None:
            if len(out) > MAX_CHAIN or not isinstance(base, str):
                raise BadManifest("a chain of deltas longer than mca writes")
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
                    rel, entry, stamp = _entry(row)
                    tree.entries[rel] = entry
                    tree.stamps.pop(rel, None)
                    if stamp is not None:
                        tree.stamps[rel] = stamp
                tree.special = [str(p) for p in doc.get("special", [])]
                tree.unreadable = [str(p) for p in doc.get("unreadable", [])]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UndoError(f"checkpoint tree {name[:12]} is unreadable: {e}") from None
        self._saved = _Saved(dict(tree.entries), name, len(ids) - 1)
        return tree

    # -- records -----------------------------------------------------------------------------
    def record_path(self, stem: str) -> Path:
        return self.base / "records" / f"{stem}.json"

    def save_record(self, stem: str, record: dict[str, Any]) -> None:
        """Whole or not at all (a rename), not synced: a record lost in a crash leaves that
        turn to its snapshot manifest, which is synced (a sync here costs a turn ~7 ms)."""
        self.packs.flush()
        _write_whole(self.record_path(stem), json.dumps(record, indent=1).encode())

    def records(self) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
        """(stem, record) oldest first, and what was skipped as damaged."""
        out: list[tuple[str, dict[str, Any]]] = []
        problems: list[str] = []
        try:
            with os.scandir(self.base / "records") as it:
                names = sorted(e.name for e in it if e.is_file(follow_symlinks=False))
        except OSError:
            return out, problems
        for name in names:
            if not _RECORD.match(name):
                continue
            try:
                raw = read_regular(self.base / "records" / name, cap=MAX_RECORD_BYTES)
                out.append((name[: -len(".json")], _check_record(json.loads(raw))))
            except (OSError, ValueError) as e:
                problems.append(f"checkpoint record {name} is unreadable: {e}")
        return out, problems

    def prune(self, keep_sessions: int) -> None:
        """Drop records of all but the newest sessions, then trees and blobs nothing kept
        refers to. Only under the snapshot store's exclusive lock (no other session is live)."""
        records, _ = self.records()
        sessions = sorted({stem.rsplit("-", 1)[0] for stem, _ in records})
        keep = set(sessions[-keep_sessions:]) if keep_sessions > 0 else set()
        trees: set[str] = set()
        for stem, record in records:
            if stem.rsplit("-", 1)[0] not in keep:
                with contextlib.suppress(OSError):
                    unlink_contained(self.record_path(stem), (self.base / "records").resolve())
                continue
            trees.update(t for t in (record["before"], record.get("after")) if t)
        blobs: set[str] = set()
        for name in list(trees):
            try:
                tree = self.load_tree(name)
                trees.update(self.chain(name))
            except (UndoError, OSError, ValueError):
                continue
            blobs.update(e.blob for e in tree.entries.values() if e.blob)
        blobs.update(r["conversation"] for _, r in records if r.get("conversation"))
        self._sweep("trees", lambda n: n.endswith(".json") and n[:-5] not in trees, _TREE)
        self._sweep("objects", lambda n: n not in blobs, _HASH)
        self.packs.prune(blobs)
        self._known &= blobs
        self._saved = None

    def _sweep(self, sub: str, drop: Any, shape: re.Pattern[str]) -> None:
        where = (self.base / sub).resolve()
        with contextlib.suppress(OSError), os.scandir(where) as it:
            for e in it:
                if shape.match(e.name) and drop(e.name):
                    with contextlib.suppress(OSError):
                        unlink_contained(Path(e.path), where)


def _write_whole(path: Path, data: bytes) -> None:
    """Written whole (temp file, then rename), not synced. A crash may lose a blob or a tree;
    reading it back then fails its hash check, and the undo that needed it says so (a sync per
    blob made the first checkpoint of 5,000 files take 15 s)."""
    tmp = path.with_name(f".{path.name}.mca-tmp-{os.getpid()}-{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _check_record(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("session"), str):
        raise BadManifest("not a checkpoint record")
    if not isinstance(data.get("turn"), int) or data.get("kind") not in ("turn", "rewind"):
        raise BadManifest("no turn or kind")
    for key in ("before", "after", "conversation"):
        value = data.get(key)
        if not (value is None and key != "before") and not (
            isinstance(value, str) and _HASH.match(value)
        ):
            raise BadManifest(f"{key} is not a sha256")
    return data

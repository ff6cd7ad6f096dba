"""The protected paths' record, on disk while a sandboxed command runs: if mca ends before it
can put them back (killed, the machine's power, a crash), the next mca in that workspace does,
before anything else reads them (mca/workspace/guard.py keeps the record in memory).

    $MCA_HOME/sandbox/<workspace>/pending/<sandbox>.json   the record, written before the start
    $MCA_HOME/sandbox/<workspace>/pending/<sandbox>.lock   held (flock) while that mca runs
    $MCA_HOME/sandbox/<workspace>/kept/<sandbox>/<sha256>  each kept file's bytes, once

A record whose lock nobody holds belongs to an mca that ended: it is put back, and whatever
stands in place of what it puts back (the command's change, or a change made since) is moved
aside into $MCA_HOME/sandbox/<workspace>/aside/<time>/ first, so nothing is lost. The record is
mca's own (a command cannot write $MCA_HOME) but read as untrusted all the same: a path outside
the workspace, a name that is not a hash, a file that is not what mca writes are refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from mca.fs.careful import private_dir, read_regular, sha256
from mca.workspace.guard import MAX_KEPT_BYTES, Entry, Record, restore
from mca.workspace.trees import write_unsynced

__all__ = ["Pending", "recover"]

MAX_RECORD_BYTES = 8 * 1024 * 1024
_HASH = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[0-9a-f]{16}")


class Pending:
    """One sandbox's record on disk: saved before each command, cleared after its put-back."""

    def __init__(self, state: Path, workspace: Path) -> None:
        self.state, self.workspace = state, workspace
        self.name = secrets.token_hex(8)
        self._lock = -1
        self._blobs: set[str] = set()  # what the last saved record holds, kept

    @property
    def path(self) -> Path:
        return self.state / "pending" / f"{self.name}.json"

    def save(self, rec: Record, command: str = "") -> None:
        """Before the command starts: the record, and each kept file's bytes not yet kept.
        Not synced (what it guards against is mca's end, which the page cache outlives)."""
        if self._lock < 0:
            private_dir(self.state / "pending")
            lock = self.state / "pending" / f"{self.name}.lock"
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._lock = fd
        kept = private_dir(self.state / "kept" / self.name)
        blobs: set[str] = set()
        entries: dict[str, Any] = {}
        for p, e in rec.entries.items():
            blob = None
            if e.data is not None:
                blob = sha256(e.data)
                if blob not in self._blobs and not (kept / blob).exists():
                    write_unsynced(kept / blob, e.data)
                blobs.add(blob)
            entries[str(p)] = [e.mode, e.size, e.mtime_ns, blob, e.link, list(e.stamp)]
        doc = {
            "version": 1,
            "workspace": str(self.workspace),
            "started": time.time(),
            "command": command,
            "existed": {str(p): v for p, v in rec.existed.items()},
            "ways": {str(p): [r, sorted(map(str, links))] for p, (r, links) in rec.ways.items()},
            "objects": {str(s): str(d) for s, d in rec.objects.items()},
            "entries": entries,
        }
        write_unsynced(self.path, json.dumps(doc).encode())
        for gone in self._blobs - blobs:  # a file version no record holds now
            with contextlib.suppress(OSError):
                os.unlink(kept / gone)
        self._blobs = blobs

    def clear(self) -> None:
        """After the put-back: nothing is pending."""
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def close(self) -> None:
        """The sandbox is done: its record, its kept bytes and its lock go."""
        self.clear()
        self._blobs = set()
        if self._lock >= 0:
            _remove_kept(self.state, self.name)
            with contextlib.suppress(OSError):
                os.unlink(self.state / "pending" / f"{self.name}.lock")
            os.close(self._lock)
            self._lock = -1


def recover(state: Path, workspace: Path) -> list[str]:
    """At start: put back every record left by an mca that ended during a command (its lock
    free), each path's replaced entries moved aside first. One line each for the person."""
    where = state / "pending"
    try:
        names = sorted({n.rsplit(".", 1)[0] for n in os.listdir(where)})
    except OSError:
        return []
    out: list[str] = []
    for name in names:
        if not _NAME.fullmatch(name):
            continue
        fd = _free_lock(where / f"{name}.lock")
        if fd is None:
            continue  # that mca is running: its record is its own
        try:
            if os.path.lexists(where / f"{name}.json"):
                out += _recover_one(state, workspace, where / f"{name}.json", name)
            _remove_kept(state, name)
            with contextlib.suppress(OSError):
                os.unlink(where / f"{name}.lock")
        finally:
            os.close(fd)
    return out


def _remove_kept(state: Path, name: str) -> None:
    kept = state / "kept" / name
    try:
        blobs = os.listdir(kept)
    except OSError:
        return
    for blob in blobs:
        with contextlib.suppress(OSError):
            os.unlink(kept / blob)
    with contextlib.suppress(OSError):
        os.rmdir(kept)


def _free_lock(path: Path) -> int | None:
    """The lock, taken (its owner ended), or None while its owner holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _recover_one(state: Path, workspace: Path, path: Path, name: str) -> list[str]:
    try:
        doc = json.loads(read_regular(path, cap=MAX_RECORD_BYTES))
        rec, when, command = _parse(doc, state / "kept" / name, state / "objects", workspace)
    except (OSError, ValueError, TypeError, KeyError) as e:
        with contextlib.suppress(OSError):
            os.rename(path, path.with_suffix(".unreadable"))
        return [
            f"a record of protected paths left by an earlier mca is unreadable ({e}); kept"
            f" as {path.with_suffix('.unreadable')}, nothing was put back from it"
        ]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime())
    aside = state / "aside" / f"{stamp}-{path.stem[:6]}"
    notes = restore(rec, workspace, aside=aside)
    with contextlib.suppress(OSError):
        os.unlink(path)
    if not notes:
        return []
    at = time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
    ran = f" ({command})" if command else ""
    head = (
        f"an earlier mca ended during a sandboxed command{ran}, started {at}, before it could"
        " put the protected paths back; done now"
    )
    tail = f"; what stood in their place is in {aside}" if aside.exists() else ""
    return [head + tail, *notes]


def _inside(raw: object, root: Path) -> Path:
    if not isinstance(raw, str):
        raise ValueError("a path is not a string")
    p = Path(raw)
    if not p.is_absolute() or ".." in p.parts or not p.is_relative_to(root) or p == root:
        raise ValueError(f"{raw!r} is not inside {root}")
    return p


def _parse(doc: Any, kept: Path, objects: Path, ws: Path) -> tuple[Record, float, str]:
    if not isinstance(doc, dict) or doc.get("version") != 1 or doc.get("workspace") != str(ws):
        raise ValueError("not a record of this workspace")
    rec = Record()
    for raw, existed in doc["existed"].items():
        rec.existed[_inside(raw, ws)] = bool(existed)
    for raw, (real, links) in doc["ways"].items():
        if not isinstance(real, str):
            raise ValueError("a way is not a path")
        rec.ways[_inside(raw, ws)] = (real, frozenset(_inside(a, ws) for a in links))
    for src, dst in doc["objects"].items():
        rec.objects[_inside(src, ws)] = _inside(dst, objects)
    for raw, (mode, size, mtime, blob, link, stamp) in doc["entries"].items():
        data = None
        if blob is not None:
            if not isinstance(blob, str) or not _HASH.fullmatch(blob):
                raise ValueError("a kept file's name is not a sha256")
            data = read_regular(kept / blob, cap=MAX_KEPT_BYTES)
            if sha256(data) != blob:
                raise ValueError("a kept file does not match its hash")
        if link is not None and not isinstance(link, str):
            raise ValueError("a link's target is not a string")
        ints = (mode, size, mtime, *stamp)
        if not all(isinstance(n, int) for n in ints) or len(stamp) != 2:
            raise ValueError("an entry's numbers are not numbers")
        rec.entries[_inside(raw, ws)] = Entry(mode, size, mtime, data, link, (stamp[0], stamp[1]))
    when, command = doc.get("started"), doc.get("command", "")
    if not isinstance(when, (int, float)) or not isinstance(command, str):
        raise ValueError("bad start time or command")
    return rec, float(when), command[:200]

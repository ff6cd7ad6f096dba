"""Snapshot before write, and undo.

Layout under <workspace>/.mca/snapshots/:
    objects/<sha256>                       old file contents, stored once per content
    turns/<started>-<session>-<turn>.json  one manifest per turn that changed files

Order of a write: old bytes stored and synced -> manifest (with the new bytes' hash) synced ->
target written atomically. A crash at any point leaves the target old or new, and the manifest
already knows both states, so undo works in a later session.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mca.errors import UndoError
from mca.fsutil import atomic_write, read_contained, sha256

KEEP_SESSIONS = 20


@dataclass
class UndoReport:
    """What one /undo did, file by file."""

    turn_label: str
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # changed since mca wrote them

    @property
    def complete(self) -> bool:
        return not self.skipped


def _state(path: Path) -> tuple[bool, str | None]:
    """(exists, sha) of a file right now."""
    try:
        return True, sha256(path.read_bytes())
    except FileNotFoundError:
        return False, None


class SnapshotStore:
    """Per-workspace store of pre-write states, grouped by session and turn."""

    def __init__(self, root: Path, session: str, started: str) -> None:
        self.root = root
        self.base = root / ".mca" / "snapshots"
        self.session = session
        self.started = started

    # -- writing -------------------------------------------------------------------------
    def _ensure(self) -> None:
        mca_dir = self.root / ".mca"
        (self.base / "objects").mkdir(parents=True, exist_ok=True)
        (self.base / "turns").mkdir(parents=True, exist_ok=True)
        ignore = mca_dir / ".gitignore"
        if not ignore.exists():
            atomic_write(ignore, b"*\n")

    def _manifest_path(self, turn: int) -> Path:
        return self.base / "turns" / f"{self.started}-{self.session}-{turn:04d}.json"

    def _load(self, path: Path) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise UndoError(f"snapshot manifest {path} is unreadable: {e}") from e
        return data

    def _save(self, path: Path, manifest: dict[str, Any]) -> None:
        atomic_write(path, json.dumps(manifest, indent=1).encode())

    def before_write(self, turn: int, rel: str, target: Path, new_data: bytes, note: str) -> None:
        """Record the target's current state (first write per turn) before it is replaced."""
        self._ensure()
        mpath = self._manifest_path(turn)
        manifest: dict[str, Any] = (
            self._load(mpath)
            if mpath.exists()
            else {"session": self.session, "turn": turn, "note": note, "undone": False, "files": []}
        )
        files: list[dict[str, Any]] = manifest["files"]
        entry = next((f for f in files if f["path"] == rel), None)
        if entry is None:
            entry = {"path": rel, "existed": False, "mode": None, "old": None}
            if target.exists():
                data = read_contained(target, self.root.resolve())
                obj = self.base / "objects" / sha256(data)
                if not obj.exists():
                    atomic_write(obj, data, 0o600)
                entry.update(existed=True, mode=stat.S_IMODE(target.stat().st_mode), old=obj.name)
            files.append(entry)
        entry["new"] = sha256(new_data)
        self._save(mpath, manifest)

    # -- reading and undoing ---------------------------------------------------------------
    def manifests(self) -> list[tuple[Path, dict[str, Any]]]:
        """All turn manifests, oldest first."""
        turns = self.base / "turns"
        if not turns.is_dir():
            return []
        return [(p, self._load(p)) for p in sorted(turns.glob("*.json"))]

    def undoable(self) -> list[tuple[Path, dict[str, Any]]]:
        """Manifests that can still be undone, newest first."""
        return [(p, m) for p, m in reversed(self.manifests()) if not m.get("undone")]

    def undo(self, force: bool = False) -> UndoReport:
        """Revert the newest turn not yet undone."""
        candidates = self.undoable()
        if not candidates:
            raise UndoError("nothing to undo: no file changes recorded in this workspace")
        path, manifest = candidates[0]
        report = UndoReport(f"session {manifest['session']} turn {manifest['turn']}")
        for entry in manifest["files"]:
            if entry.get("restored"):
                continue
            self._undo_entry(entry, force, report)
        manifest["undone"] = report.complete
        self._save(path, manifest)
        return report

    def _undo_entry(self, entry: dict[str, Any], force: bool, report: UndoReport) -> None:
        rel = entry["path"]
        target = self.root / rel
        exists, current = _state(target)
        old_state = (entry["existed"], entry["old"])
        if (exists, current) == old_state:
            report.unchanged.append(rel)  # never written (crash) or already reverted
        elif current != entry["new"] and not force:
            report.skipped.append(rel)
            return
        elif entry["existed"]:
            data = (self.base / "objects" / entry["old"]).read_bytes()
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data, entry["mode"])
            report.restored.append(rel)
        else:
            if exists:
                os.unlink(target)
            report.removed.append(rel)
        entry["restored"] = True

    def prune(self, keep_sessions: int = KEEP_SESSIONS) -> int:
        """Drop manifests of all but the newest sessions and unreferenced objects."""
        manifests = self.manifests()
        sessions = sorted({p.name.rsplit("-", 1)[0] for p, _ in manifests})
        old = set(sessions[:-keep_sessions]) if len(sessions) > keep_sessions else set()
        keep_objects: set[str] = set()
        for p, m in manifests:
            if p.name.rsplit("-", 1)[0] in old:
                p.unlink()
            else:
                keep_objects.update(f["old"] for f in m["files"] if f.get("old"))
        removed = 0
        objects = self.base / "objects"
        if objects.is_dir():
            for obj in objects.iterdir():
                if obj.name not in keep_objects:
                    obj.unlink()
                    removed += 1
        return removed

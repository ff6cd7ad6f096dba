"""Snapshot before write, and undo.

The store is mca's own state, so it lives where a repository cannot write:

    $MCA_HOME/snapshots/<first 16 hex of sha256(workspace real path)>/   (0700)
        workspace                              the workspace's path, for people
        lock                                   flock: shared by live sessions, exclusive to prune
        objects/<sha256>                       old file contents (0600), checked against the name
        turns/<started>-<session>-<turn>.json  one manifest per turn that changed files

Order of a write: old bytes stored and synced -> manifest (with the new bytes' hash) synced ->
target written atomically. A crash at any point leaves the target old or new, and the manifest
already knows both states, so undo works in a later session.

Manifests and objects are untrusted data all the same: paths must be relative and inside the
workspace, objects must hash to their names, and undo goes through the tools' contained,
no-follow path. A `.mca/snapshots` inside a workspace (older mca kept it there) is never read.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mca.errors import PathRefused, UndoError
from mca.fsutil import (
    atomic_write,
    private_dir,
    read_regular,
    read_regular_stat,
    sha256,
    unlink_contained,
)
from mca.tools.manifest import HASH, checked_object, validate_manifest
from mca.tools.paths import resolve_in

KEEP_SNAPSHOT_SESSIONS = 20  # the newest sessions whose snapshots (for /undo) are kept
MAX_SNAPSHOT_BYTES = 32 * 1024 * 1024  # a larger file is not overwritten: undo could not restore it
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
LEGACY_DIR = ".mca/snapshots"
_MANIFEST = re.compile(r"[0-9A-Za-z]+-[0-9A-Za-z_]+-\d{4,}(?:x\d{4})?\.json\Z")
_TMP = re.compile(r"\.(?P<name>.+)\.mca-tmp-(?P<pid>\d+)-[0-9a-f]+\Z")


def store_dir(home: Path, workspace: Path) -> Path:
    """The snapshot store for a workspace: one directory per real path, under $MCA_HOME."""
    real = str(workspace.resolve())
    return home / "snapshots" / sha256(real.encode("utf-8", "surrogateescape"))[:16]


@dataclass
class UndoReport:
    """What one /undo did, file by file."""

    turn_label: str
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # changed since mca wrote them
    problems: list[str] = field(default_factory=list)  # "path: why it was not restored"
    notes: list[str] = field(default_factory=list)  # what the undo did not cover

    @property
    def complete(self) -> bool:
        return not self.skipped


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class SnapshotStore:
    """Per-workspace store of pre-write states, grouped by session and turn."""

    def __init__(
        self,
        root: Path,
        base: Path,
        session: str,
        started: str,
        *,
        ephemeral: bool = False,
        prune_also: Callable[[int], None] | None = None,  # the checkpoints beside it
    ) -> None:
        self.root = root
        self.ephemeral = ephemeral  # a temporary store: removed (with its parent) on close
        self.real_root = root.resolve()
        self.base = base
        self.session = session
        self.started = started
        self.problems: list[str] = []  # manifests skipped as unreadable or malformed
        self._lock_fd: int | None = None
        self.prune_also = prune_also

    # -- the session's lifetime ----------------------------------------------------------
    def start(self, keep_sessions: int = KEEP_SNAPSHOT_SESSIONS) -> list[str]:
        """Take the shared lock for this session; prune when no other session is live.

        Returns notices for the person (legacy store ignored, store unusable).
        """
        notices: list[str] = []
        try:
            self._ensure()
            self._lock(keep_sessions, notices)
        except OSError as e:
            notices.append(
                f"the snapshot store cannot be used ({e.strerror or e}); file writes will be"
                " refused, since /undo could not restore them"
            )
        if os.path.lexists(self.root / LEGACY_DIR):
            notices.append(
                f"ignoring {LEGACY_DIR}/ in this workspace: snapshots now live in {self.base}"
                " and mca never reads a workspace's copy (it could have come with the"
                " repository); an earlier version's undo history is not carried over"
            )
        return notices

    def _lock(self, keep_sessions: int, notices: list[str]) -> None:
        import fcntl

        fd = os.open(self.base / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._lock_fd = fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fcntl.flock(fd, fcntl.LOCK_SH)  # another session is live: leave its objects alone
            return
        try:
            self.prune(keep_sessions)
        except OSError as e:
            notices.append(f"old snapshots were not pruned: {e.strerror or e}")
        fcntl.flock(fd, fcntl.LOCK_SH)

    def close(self) -> None:
        """Release the session's lock (and remove a temporary store)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        if self.ephemeral:
            import shutil

            shutil.rmtree(self.base.parent, ignore_errors=True)

    # -- writing -------------------------------------------------------------------------
    def _ensure(self) -> None:
        private_dir(self.base)
        private_dir(self.base / "objects")
        private_dir(self.base / "turns")
        for d in (self.base, self.base / "objects", self.base / "turns"):
            if not stat.S_ISDIR(os.lstat(d).st_mode):
                raise NotADirectoryError(
                    errno.ENOTDIR, f"snapshot store {d} is not a plain directory; not used"
                )
        marker = self.base / "workspace"
        if not marker.exists():
            atomic_write(marker, os.fsencode(str(self.real_root)) + b"\n", 0o600)

    def _manifest_path(self, turn: int, step: str = "") -> Path:
        return self.base / "turns" / f"{self.started}-{self.session}-{turn:04d}{step}.json"

    def free_step(self, turn: int) -> str:
        """A manifest of its own for a write the person made after `turn` (/export): it sorts
        after the turn's and before the next one's, so /undo reverts it alone."""
        checkpoint = self.base / "checkpoints" / "records"  # a /rewind takes a step too
        n = next(
            n
            for n in range(1, 10**4)
            if not self._manifest_path(turn, f"x{n:04d}").exists()
            and not (checkpoint / self._manifest_path(turn, f"x{n:04d}").name).exists()
        )
        return f"x{n:04d}"

    def _load(self, path: Path) -> dict[str, Any]:
        try:
            raw = read_regular(path, cap=MAX_MANIFEST_BYTES)
            return validate_manifest(json.loads(raw))
        except (OSError, ValueError) as e:
            raise UndoError(f"snapshot manifest {path.name} is unreadable: {e}") from None

    def _save(self, path: Path, manifest: dict[str, Any]) -> None:
        atomic_write(path, json.dumps(manifest, indent=1).encode(), 0o600)

    def _store_object(self, data: bytes) -> str:
        name = sha256(data)
        obj = self.base / "objects" / name
        if not obj.exists():
            atomic_write(obj, data, 0o600)
        return name

    def before_write(
        self, turn: int, rel: str, target: Path, new_data: bytes, note: str, step: str = ""
    ) -> None:
        """Record the target's current state (first write per turn; `step`: see free_step).

        Raises NotRegularFile for a target that is not a regular file and FileTooLarge for one
        too large to keep a copy of: mca does not replace what it could not put back.
        """
        self._ensure()
        mpath = self._manifest_path(turn, step)
        manifest: dict[str, Any] = (
            self._load(mpath)
            if mpath.exists()
            else {"session": self.session, "turn": turn, "note": note, "undone": False, "files": []}
        )
        files: list[dict[str, Any]] = manifest["files"]
        entry = next((f for f in files if f["path"] == rel), None)
        if entry is None:
            entry = {"path": rel, "existed": False, "mode": None, "old": None}
            if os.path.lexists(target):
                data, mode = self._current(target)
                entry.update(existed=True, mode=mode, old=self._store_object(data))
            files.append(entry)
        entry["new"] = sha256(new_data)
        entry["seen"] = [*entry.get("seen", []), entry["new"]]  # every state mca wrote
        self._save(mpath, manifest)

    def _current(self, target: Path) -> tuple[bytes, int]:
        data, st = read_regular_stat(target, self.real_root, cap=MAX_SNAPSHOT_BYTES)
        return data, stat.S_IMODE(st.st_mode) & 0o777

    # -- reading and undoing ---------------------------------------------------------------
    def manifests(self) -> list[tuple[Path, dict[str, Any]]]:
        """All valid turn manifests, oldest first; bad ones are noted in `problems`."""
        turns = self.base / "turns"
        out, self.problems = [], []
        if os.path.islink(turns):
            self.problems.append(f"snapshot store {turns} is a symlink; not read")
            return []
        try:
            entries = sorted(os.scandir(turns), key=lambda e: e.name)
        except OSError:
            return []
        for e in entries:
            if not _MANIFEST.match(e.name) or not e.is_file(follow_symlinks=False):
                continue
            try:
                out.append((Path(e.path), self._load(Path(e.path))))
            except UndoError as err:
                self.problems.append(str(err))
        return out

    def undoable(self) -> list[tuple[Path, dict[str, Any]]]:
        """Manifests that can still be undone, newest first."""
        return [(p, m) for p, m in reversed(self.manifests()) if not m.get("undone")]

    def session_changes(self) -> list[tuple[str, bytes | None, bytes | None]]:
        """(path, before this session, now) for every file this session wrote and did not
        undo; None: the file did not exist (or no longer does)."""
        first: dict[str, dict[str, Any]] = {}
        for _, m in self.manifests():
            if m["session"] == self.session and not m.get("undone"):
                for entry in m["files"]:
                    first.setdefault(entry["path"], entry)
        out: list[tuple[str, bytes | None, bytes | None]] = []
        for rel, entry in sorted(first.items()):
            try:
                before = self._object(entry["old"]) if entry["existed"] else None
                target = resolve_in(self.root, rel)
                now = (
                    read_regular(target, self.real_root, cap=MAX_SNAPSHOT_BYTES)
                    if os.path.lexists(target)
                    else None
                )
            except (OSError, PathRefused, UndoError):
                continue
            if before != now:
                out.append((rel, before, now))
        return out

    def undo(self, force: bool = False) -> UndoReport:
        """Revert the newest turn not yet undone."""
        candidates = self.undoable()
        if not candidates:
            extra = f" ({len(self.problems)} damaged manifest(s) skipped)" if self.problems else ""
            raise UndoError(f"nothing to undo: no file changes recorded in this workspace{extra}")
        return self._undo_manifest(*candidates[0], force, set())

    def undo_with(self, stem: str, force: bool, handled: set[str]) -> UndoReport | None:
        """Undo the manifest named `stem` (if any, and not undone yet) after a workspace
        checkpoint put back the paths in `handled`: the rest (ignored files) are undone here."""
        path = self.base / "turns" / f"{stem}.json"
        if not _MANIFEST.match(path.name) or not path.is_file():
            return None
        manifest = self._load(path)
        return (
            None if manifest.get("undone") else self._undo_manifest(path, manifest, force, handled)
        )

    def _undo_manifest(
        self, path: Path, manifest: dict[str, Any], force: bool, handled: set[str]
    ) -> UndoReport:
        report = UndoReport(f"session {manifest['session']} turn {manifest['turn']}")
        for entry in manifest["files"]:
            if entry.get("restored") or entry.get("problem"):
                continue
            if entry["path"] in handled:
                entry["restored"] = True
                continue
            try:
                self._undo_entry(entry, force, report)
            except (OSError, PathRefused, UndoError) as e:
                reason = getattr(e, "strerror", None) or str(e)
                report.problems.append(f"{entry['path']}: {reason}")
                entry["problem"] = reason
        manifest["undone"] = report.complete
        self._save(path, manifest)
        return report

    def _undo_entry(self, entry: dict[str, Any], force: bool, report: UndoReport) -> None:
        rel = entry["path"]
        target = resolve_in(self.root, rel)  # refuses a path that now leads outside
        self._clean_temp(target)
        exists, current = self._state(target)
        ours = {entry["new"], *entry.get("seen", [])}
        if (exists, current) == (entry["existed"], entry["old"]):
            report.unchanged.append(rel)  # never written (crash) or already reverted
        elif current not in ours and not force:
            report.skipped.append(rel)
            return
        elif entry["existed"]:
            data = self._object(entry["old"])
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data, entry["mode"] & 0o777, root=self.real_root)
            report.restored.append(rel)
        else:
            if exists:
                unlink_contained(target, self.real_root)
            report.removed.append(rel)
        entry["restored"] = True

    def _state(self, target: Path) -> tuple[bool, str | None]:
        """(exists, sha) of a workspace file right now; a non-file in the way is an error."""
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            return False, None
        if stat.S_ISDIR(st.st_mode):
            raise UndoError("a directory is in its place now; left alone")
        data = read_regular(target, self.real_root, cap=MAX_SNAPSHOT_BYTES)
        return True, sha256(data)

    def _object(self, name: str) -> bytes:
        path = self.base / "objects" / name
        return checked_object(
            lambda: read_regular(path, cap=MAX_SNAPSHOT_BYTES), name, "snapshot store"
        )

    def _clean_temp(self, target: Path) -> None:
        """Remove temp files a killed mca left beside the target."""
        with contextlib.suppress(OSError), os.scandir(target.parent) as it:
            for e in it:
                m = _TMP.match(e.name)
                if m and m["name"] == target.name and not _alive(int(m["pid"])):
                    unlink_contained(Path(e.path), self.real_root)

    def prune(self, keep_sessions: int = KEEP_SNAPSHOT_SESSIONS) -> int:
        """Drop manifests of all but the newest sessions and unreferenced objects.

        Only called under the exclusive lock. Nothing is followed: entries are removed through
        the store's own directory handles, and only names mca itself would have written.
        """
        manifests = self.manifests()
        sessions = sorted({p.name.rsplit("-", 1)[0] for p, _ in manifests})
        old = set(sessions[:-keep_sessions]) if len(sessions) > keep_sessions else set()
        keep_objects: set[str] = set()
        for p, m in manifests:
            if p.name.rsplit("-", 1)[0] in old:
                unlink_contained(p, self.base.resolve() / "turns")
            else:
                keep_objects.update(f["old"] for f in m["files"] if f.get("old"))
        if self.prune_also is not None:
            self.prune_also(keep_sessions)
        removed = 0
        objects = self.base / "objects"
        if objects.is_symlink() or not objects.is_dir():
            return 0
        with os.scandir(objects) as it:
            found = list(it)
        for e in found:
            if HASH.match(e.name) and e.name not in keep_objects:
                with contextlib.suppress(OSError):
                    unlink_contained(Path(e.path), objects.resolve())
                    removed += 1
        return removed

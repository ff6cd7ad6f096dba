"""The Writes half of a record: each file a file tool writes, its old bytes stored first.

Order of a write: old bytes stored and synced -> the record's Writes (with the new bytes' hash)
synced -> target written atomically (by the tool). A crash at any point leaves the target old or
new, and the record already knows both states, so undo works in a later session.

    $MCA_HOME/snapshots/<workspace>/objects/<sha256>   old file contents (0600), synced
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import replace
from pathlib import Path

from mca.errors import PathRefused, UndoError
from mca.fs.careful import atomic_write, read_regular, read_regular_stat, sha256, unlink_contained
from mca.workspace.journal import Journal
from mca.workspace.paths import resolve_in
from mca.workspace.records import HASH, FileEntry, Record, Writes, checked_object
from mca.workspace.undo import MAX_SNAPSHOT_BYTES

__all__ = ["Copies"]

Change = tuple[str, bytes | None, bytes | None]  # path, before this session, now


class Copies:
    """The stored old bytes of the files the tools wrote, and the Writes halves naming them."""

    def __init__(self, root: Path, base: Path, journal: Journal) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.objects = base / "objects"
        self.journal = journal

    def before_write(self, record: Record, rel: str, target: Path, new_data: bytes) -> None:
        """Record the target's current state (first write of it in this record) and the bytes
        about to be written. Raises NotRegularFile for a target that is not a regular file and
        FileTooLarge for one too large to keep a copy of: mca does not replace what it could
        not put back."""
        old = self.journal.writes(record.stem)
        writes = old.writes if old is not None and old.writes is not None else Writes()
        if old is None:
            writes = replace(writes, note=record.writes.note if record.writes else "")
        files = list(writes.files)
        at = next((i for i, f in enumerate(files) if f.path == rel), None)
        if at is None:
            entry = FileEntry(rel, False)
            if os.path.lexists(target):
                data, st = read_regular_stat(target, self.real_root, cap=MAX_SNAPSHOT_BYTES)
                mode = stat.S_IMODE(st.st_mode) & 0o777
                entry = FileEntry(rel, True, mode, self._store(data))
            files.append(entry)
            at = len(files) - 1
        files[at] = files[at].wrote(sha256(new_data))
        self.journal.save_writes(replace(record, writes=replace(writes, files=tuple(files))))

    def _store(self, data: bytes) -> str:
        name = sha256(data)
        obj = self.objects / name
        if not obj.exists():
            atomic_write(obj, data, 0o600)
        return name

    def copy(self, name: str) -> bytes:
        """A stored old file, checked against its name."""
        path = self.objects / name
        return checked_object(
            lambda: read_regular(path, cap=MAX_SNAPSHOT_BYTES), name, "snapshot store"
        )

    def changes(self, records: list[Record], session: str) -> list[Change]:
        """(path, before this session, now) for every file the session's tools wrote and did
        not undo; None: the file did not exist (or no longer does)."""
        first: dict[str, FileEntry] = {}
        for r in records:
            if r.session == session and r.writes is not None and not r.writes.undone:
                for entry in r.writes.files:
                    first.setdefault(entry.path, entry)
        out: list[Change] = []
        for rel, entry in sorted(first.items()):
            try:
                before = self.copy(entry.old) if entry.existed and entry.old else None
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

    def keep_only(self, names: set[str]) -> int:
        """Remove every stored copy but these (only under the store's exclusive lock; nothing is
        followed, only names mca itself would have written are touched)."""
        objects = self.objects
        if objects.is_symlink() or not objects.is_dir():
            return 0
        removed = 0
        with os.scandir(objects) as it:
            found = list(it)
        for e in found:
            if HASH.match(e.name) and e.name not in names:
                with contextlib.suppress(OSError):
                    unlink_contained(Path(e.path), objects.resolve())
                    removed += 1
        return removed

"""The records of one workspace on disk, both halves (mca/workspace/records.py):

    $MCA_HOME/snapshots/<workspace>/
        turns/<stem>.json                 the Writes half: synced before each write it covers
        checkpoints/records/<stem>.json   the Trees half: renamed into place, not synced (a
                                          record lost in a crash leaves that turn to its Writes)

Read back joined by stem, oldest first; a file that is not what mca writes is skipped and said.
A `turns` directory that is a symlink is never read.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from mca.errors import UndoError
from mca.fs.careful import atomic_write, read_regular, unlink_contained
from mca.workspace.records import (
    STEM,
    Record,
    trees_from_json,
    trees_json,
    writes_from_json,
    writes_json,
)
from mca.workspace.trees import write_unsynced

__all__ = ["Journal"]

MAX_WRITES_BYTES = 4 * 1024 * 1024
MAX_TREES_BYTES = 1024 * 1024


def _names(where: Path) -> list[str]:
    """The stems of the record files in `where`, sorted ([] when it cannot be read)."""
    try:
        with os.scandir(where) as it:
            found = [e.name for e in it if e.is_file(follow_symlinks=False)]
    except OSError:
        return []
    return sorted(n[: -len(".json")] for n in found if n.endswith(".json") and STEM.match(n[:-5]))


class Journal:
    """Reads and writes the two halves of each record."""

    def __init__(self, base: Path) -> None:
        self.writes_dir = base / "turns"
        self.trees_dir = base / "checkpoints" / "records"

    def writes_path(self, stem: str) -> Path:
        return self.writes_dir / f"{stem}.json"

    def trees_path(self, stem: str) -> Path:
        return self.trees_dir / f"{stem}.json"

    def taken(self, stem: str) -> bool:
        """A record of this name exists (either half)."""
        return self.writes_path(stem).exists() or self.trees_path(stem).exists()

    def writes(self, stem: str) -> Record | None:
        """The Writes half of one record (None: there is none); UndoError when unreadable."""
        path = self.writes_path(stem)
        if not path.exists():
            return None
        try:
            raw = read_regular(path, cap=MAX_WRITES_BYTES)
            return writes_from_json(stem, json.loads(raw))
        except (OSError, ValueError) as e:
            raise UndoError(f"snapshot manifest {path.name} is unreadable: {e}") from None

    def read(self) -> tuple[list[Record], list[str]]:
        """Every record, both halves joined, oldest first; and what was skipped as damaged."""
        problems: list[str] = []
        found: dict[str, Record] = {}
        if os.path.islink(self.writes_dir):
            problems.append(f"snapshot store {self.writes_dir} is a symlink; not read")
        else:
            for stem in _names(self.writes_dir):
                try:
                    record = self.writes(stem)
                except UndoError as e:
                    problems.append(str(e))
                    continue
                if record is not None:
                    found[stem] = record
        for stem in _names(self.trees_dir):
            try:
                raw = read_regular(self.trees_path(stem), cap=MAX_TREES_BYTES)
                record = trees_from_json(stem, json.loads(raw))
            except (OSError, ValueError) as e:
                problems.append(f"checkpoint record {stem}.json is unreadable: {e}")
                continue
            found[stem] = record.joined(found[stem]) if stem in found else record
        return [found[s] for s in sorted(found)], problems

    def save_writes(self, record: Record) -> None:
        """Write the Writes half, synced: it is on disk before the write it covers."""
        data = json.dumps(writes_json(record), indent=1).encode()
        atomic_write(self.writes_path(record.stem), data, 0o600)

    def save_trees(self, record: Record) -> None:
        """Write the Trees half, whole but not synced (a sync here costs a turn ~7 ms)."""
        write_unsynced(
            self.trees_path(record.stem), json.dumps(trees_json(record), indent=1).encode()
        )

    def drop(self, record: Record) -> None:
        """Remove both halves' files (pruning: only under the exclusive lock)."""
        for where, path in (
            (self.writes_dir, self.writes_path(record.stem)),
            (self.trees_dir, self.trees_path(record.stem)),
        ):
            with contextlib.suppress(OSError):
                unlink_contained(path, where.resolve())

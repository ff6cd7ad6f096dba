"""The one undo path: a record's changes put back, its Trees half first, then what its Writes
half covers that the trees did not (a write to an ignored file), one report for both.

The Trees half: every path that differs between the trees before and after the turn and is
still as the turn left it goes back (restore.py); one changed since is left alone unless forced.
The Writes half: each file a file tool wrote goes back to its stored old bytes (or away, when it
is new) if it still holds a state mca wrote; a killed write's temp file beside it is removed.
Both write only through the contained, no-follow paths of mca.fs.careful.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from mca.errors import PathRefused, UndoError
from mca.fs.careful import atomic_write, read_regular, sha256, unlink_contained
from mca.workspace.paths import resolve_in
from mca.workspace.records import FileEntry, Kind, Record, Trees, Writes
from mca.workspace.report import UndoReport
from mca.workspace.restore import Change, Cover, Outcome, Restorer, same
from mca.workspace.walk import Tree

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "Undo",
    "fill",
    "link_notes",
    "not_covered",
    "short_dir",
    "uncovered_notes",
]

MAX_SNAPSHOT_BYTES = 32 * 1024 * 1024  # a larger file is not overwritten: undo could not restore it
_TMP = re.compile(r"\.(?P<name>.+)\.mca-tmp-(?P<pid>\d+)-[0-9a-f]+\Z")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def fill(report: UndoReport, outcome: Outcome) -> None:
    """A restore's outcome, into the report."""
    report.restored += outcome.restored
    report.removed += outcome.removed
    report.problems += outcome.problems


def not_covered(tree: Tree, file_cap: int, cover: Cover | None = None) -> list[str]:
    """What /undo and /rewind do not put back, said every time."""
    size = f"{file_cap / 1024 / 1024:g} MB" if file_cap >= 1024 * 1024 else f"{file_cap:,} bytes"
    notes = ["not covered: files outside the workspace, .git/, and what .gitignore ignores"]
    over = tree.over()
    if over:
        shown = ", ".join(over[:5]) + (f" and {len(over) - 5} more" if len(over) > 5 else "")
        notes.append(f"not covered (over the {size} cap per file, or the total): {shown}")
    if tree.special:
        notes.append(f"not covered (FIFOs, devices, sockets): {', '.join(tree.special[:5])}")
    notes += uncovered_notes(cover.dirs if cover is not None else tree.uncovered)
    return notes


def short_dir(rel: str) -> str:
    """A directory for a note: a deep one by its first and last names and its depth."""
    parts = rel.split("/") if rel else []
    if len(parts) <= 6:
        return f"{rel}/" if rel else "the workspace"
    return f"{'/'.join(parts[:3])}/…/{'/'.join(parts[-2:])}/ ({len(parts)} levels)"


def uncovered_notes(dirs: Mapping[str, str]) -> list[str]:
    """The directories a checkpoint walk did not list whole, by why: what is in them is left as
    it is by /undo and /rewind (and they are not removed)."""
    by: dict[str, list[str]] = {}
    for rel, why in sorted(dirs.items()):
        by.setdefault(why, []).append(rel)
    notes = []
    for why, rels in by.items():
        shown = ", ".join(short_dir(r) for r in rels[:3])
        more = f" and {len(rels) - 3} more" if len(rels) > 3 else ""
        notes.append(
            f"not covered ({why}): {shown}{more}; /undo and /rewind leave it, and what is in"
            " it, as it is"
        )
    return notes


def link_notes(groups: list[list[str]], changed: set[str]) -> list[str]:
    """Names that are one file (hard links), where the turn changed one of them: a change
    through any name is a change to all, and the report names them all."""
    return [
        f"one file under several names (hard links): {', '.join(g)}"
        for g in groups
        if len(g) > 1 and changed.intersection(g)
    ]


@dataclass(frozen=True)
class Undo:
    """How to undo in one workspace: where, how to read trees, blobs and stored copies."""

    root: Path
    tree: Callable[[str], Tree]  # a stored tree by id (UndoError when unreadable)
    scan: Callable[[], Tree]  # the workspace now
    blob: Callable[[str], bytes]  # a checkpoint blob, checked
    copy: Callable[[str], bytes]  # a file's stored old bytes, checked
    file_cap: int

    def revert(self, record: Record, force: bool) -> tuple[Record, UndoReport]:
        """Undo what is left of `record`; the record as it is afterwards, and the report."""
        own = record.kind is Kind.TURN and record.stem.endswith(f"-{record.turn:04d}")
        report = UndoReport(record.label, turn=(record.session, record.turn) if own else None)
        handled: set[str] = set()
        trees = record.trees
        if trees is not None and not trees.undone:
            self._trees(trees, force, report)
            record = replace(record, trees=replace(trees, undone=report.complete))
            handled = report.handled
        writes = record.writes
        if writes is not None and not writes.undone and report.complete:
            record = replace(record, writes=self._writes(writes, force, handled, report))
        return record, report

    # -- the Trees half ----------------------------------------------------------------------
    def _trees(self, trees: Trees, force: bool, report: UndoReport) -> None:
        before, after = self.tree(trees.before), self.tree(trees.after)
        now = self.scan()
        cover = Cover(before, after, now)
        changes, changed = [], set()
        for rel in sorted(before.entries.keys() | after.entries.keys()):
            b, a, c = before.entries.get(rel), after.entries.get(rel), now.entries.get(rel)
            if same(b, a) or not cover.known(rel, b):
                continue
            changed.add(rel)
            if same(c, b):
                report.unchanged.append(rel)
            elif same(c, a) or force:
                changes.append(Change(rel, b, c))
            else:
                report.skipped.append(rel)
        fill(report, self.apply(changes, before.groups()))
        report.notes = link_notes(after.groups(), changed) + not_covered(now, self.file_cap, cover)

    def apply(self, changes: list[Change], links: list[list[str]] | None = None) -> Outcome:
        """Put these paths back from checkpoint blobs (`links`: names to make one file again)."""
        return Restorer(self.root, self.blob).apply(changes, links)

    # -- the Writes half ---------------------------------------------------------------------
    def _writes(self, writes: Writes, force: bool, handled: set[str], report: UndoReport) -> Writes:
        files = []
        for entry in writes.files:
            if entry.done:
                files.append(entry)
            elif entry.path in handled:  # the trees put it back already
                files.append(replace(entry, restored=True))
            else:
                files.append(self._file(entry, force, report))
        return Writes(tuple(files), writes.note, report.complete)

    def _file(self, entry: FileEntry, force: bool, report: UndoReport) -> FileEntry:
        try:
            return self._put_back(entry, force, report)
        except (OSError, PathRefused, UndoError) as e:
            reason = getattr(e, "strerror", None) or str(e)
            report.problems.append(f"{entry.path}: {reason}")
            return replace(entry, problem=reason)

    def _put_back(self, entry: FileEntry, force: bool, report: UndoReport) -> FileEntry:
        rel = entry.path
        real = self.root.resolve()
        target = resolve_in(self.root, rel)  # refuses a path that now leads outside
        self._clean_temp(target, real)
        exists, current = self._state(target, real)
        if (exists, current) == (entry.existed, entry.old):
            report.unchanged.append(rel)  # never written (crash) or already reverted
        elif current not in {entry.new, *entry.seen} and not force:
            report.skipped.append(rel)
            return entry
        elif entry.existed and entry.old is not None:
            data = self.copy(entry.old)
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data, (entry.mode or 0) & 0o777, root=real)
            report.restored.append(rel)
        else:
            if exists:
                unlink_contained(target, real)
            report.removed.append(rel)
        return replace(entry, restored=True)

    @staticmethod
    def _state(target: Path, real: Path) -> tuple[bool, str | None]:
        """(exists, sha) of a workspace file right now; a non-file in the way is an error."""
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            return False, None
        if stat.S_ISDIR(st.st_mode):
            raise UndoError("a directory is in its place now; left alone")
        return True, sha256(read_regular(target, real, cap=MAX_SNAPSHOT_BYTES))

    @staticmethod
    def _clean_temp(target: Path, real: Path) -> None:
        """Remove temp files a killed mca left beside the target."""
        with contextlib.suppress(OSError), os.scandir(target.parent) as it:
            for e in it:
                m = _TMP.match(e.name)
                if m and m["name"] == target.name and not _alive(int(m["pid"])):
                    unlink_contained(Path(e.path), real)

"""The workspace store: one per session and workspace, kept where a repository cannot write.

    $MCA_HOME/snapshots/<first 16 hex of sha256(workspace real path)>/   (0700)
        workspace      the workspace's path, for people
        lock           flock: shared by live sessions, exclusive to prune
        objects/       the file tools' old bytes (snapshots.py)
        turns/         the records' Writes halves        } journal.py: one record per change,
        checkpoints/   records/ (their Trees halves),    } records.py its one type
                       trees, blobs and packs (trees.py)

Through it: the write tools' snapshots (`before_write`), the checkpoint walks around a turn
(`before_change`, `end_turn`), and the one undo path for /undo and /rewind (undo.py). A
`.mca/snapshots` inside a workspace (older mca kept it there) is never read.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path

from mca.errors import UndoError
from mca.fs.careful import atomic_write, private_dir, sha256
from mca.workspace.checkpoints import Walker
from mca.workspace.journal import Journal
from mca.workspace.records import Kind, Record, Trees, Writes
from mca.workspace.report import Rewound, Touched, Undoable, UndoReport
from mca.workspace.restore import Change, Cover, same
from mca.workspace.snapshots import Change as FileChange
from mca.workspace.snapshots import Copies
from mca.workspace.trees import TreeStore
from mca.workspace.undo import Undo, fill, link_notes, not_covered
from mca.workspace.walk import Caps, Tree

__all__ = ["KEEP_SESSIONS", "LEGACY_DIR", "WorkspaceStore", "store_dir"]

KEEP_SESSIONS = 20  # the newest sessions whose records (for /undo) are kept
LEGACY_DIR = ".mca/snapshots"
MAX_CONVERSATION_BYTES = 256 * 1024 * 1024


def store_dir(home: Path, workspace: Path) -> Path:
    """The store for a workspace: one directory per real path, under $MCA_HOME."""
    real = str(workspace.resolve())
    return home / "snapshots" / sha256(real.encode("utf-8", "surrogateescape"))[:16]


class WorkspaceStore:
    """One session's view of one workspace's store."""

    def __init__(
        self, root: Path, base: Path, session: str, started: str, caps: Caps, *, temp: bool = False
    ) -> None:
        self.root = root
        self.base = base
        self.session = session
        self.started = started
        self.temp = temp  # a private temporary store: removed (with its parent) on close
        self.journal = Journal(base)
        self.copies = Copies(root, base, self.journal)
        self.walker = Walker(root, TreeStore(base / "checkpoints"), caps)
        self.sessions = {session}  # whose turns the conversation holds (/resume adds)
        self._lock_fd: int | None = None

    @classmethod
    def in_temp(cls, root: Path, session: str, started: str, caps: Caps) -> WorkspaceStore:
        """A store in a private temporary directory (when $MCA_HOME cannot be used)."""
        temp = Path(tempfile.mkdtemp(prefix="mca-snapshots-"))
        return cls(root, temp / "store", session, started, caps, temp=True)

    # -- the session's lifetime --------------------------------------------------------------
    def start(self, keep_sessions: int = KEEP_SESSIONS) -> list[str]:
        """Take the shared lock for this session; prune when no other session is live.
        Returns notices for the person (legacy store ignored, store unusable)."""
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

    def _ensure(self) -> None:
        dirs = (self.base, self.base / "objects", self.base / "turns")
        for d in dirs:
            private_dir(d)
        for d in dirs:
            if not stat.S_ISDIR(os.lstat(d).st_mode):
                raise NotADirectoryError(
                    errno.ENOTDIR, f"snapshot store {d} is not a plain directory; not used"
                )
        marker = self.base / "workspace"
        if not marker.exists():
            atomic_write(marker, os.fsencode(str(self.root.resolve())) + b"\n", 0o600)

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
        """Stop watching, release the session's lock (and remove a temporary store)."""
        self.walker.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        if self.temp:
            shutil.rmtree(self.base.parent, ignore_errors=True)

    def prune(self, keep_sessions: int = KEEP_SESSIONS) -> None:
        """Drop the records of all but the newest sessions, then every stored copy, tree and
        blob no kept record names. Only under the exclusive lock (no other session is live)."""
        records, _ = self.journal.read()
        sessions = sorted({r.stem.rsplit("-", 1)[0] for r in records})
        keep = set(sessions[-keep_sessions:]) if keep_sessions > 0 else set()
        kept = []
        for r in records:
            if r.stem.rsplit("-", 1)[0] in keep:
                kept.append(r)
            else:
                self.journal.drop(r)
        copies = {f.old for r in kept if r.writes for f in r.writes.files if f.old}
        self.copies.keep_only(copies)
        halves = [r.trees for r in kept if r.trees is not None]
        trees = {t for h in halves for t in (h.before, h.after)}
        self.walker.trees.keep_only(trees, {h.conversation for h in halves if h.conversation})

    # -- recording ---------------------------------------------------------------------------
    def stem(self, turn: int, step: str = "") -> str:
        return f"{self.started}-{self.session}-{turn:04d}{step}"

    def free_step(self, turn: int) -> str:
        """A record of its own for a change made after `turn` (/export's write, /rewind): it
        sorts after the turn's and before the next one's, so /undo reverts it alone."""
        n = next(n for n in range(1, 10**4) if not self.journal.taken(self.stem(turn, f"x{n:04d}")))
        return f"x{n:04d}"

    def before_write(
        self, turn: int, rel: str, target: Path, new_data: bytes, note: str, step: str = ""
    ) -> None:
        """Keep the target's current bytes before a file tool replaces them (see Copies)."""
        self._ensure()
        record = Record(self.stem(turn, step), self.session, turn, writes=Writes(note=note))
        self.copies.before_write(record, rel, target, new_data)

    def before_change(self, turn: int) -> str:
        """Before a write or a command in `turn`: its first change walks the workspace. A
        warning for the person when that failed, or when the walk did not cover everything
        ('' otherwise)."""
        if self.walker.in_flight(turn):
            return ""
        said = [*self.end_turn(), self.walker.begin(turn, self._newest_on_disk)]
        return "; ".join(note for note in said if note)

    def after_command(self, turn: int) -> list[str]:
        """After a command in `turn`: what its checkpoint will not cover, newly (for the
        command's result and the person; [] when nothing, or when only the turn's end can tell)."""
        return self.walker.settle(turn)

    def end_turn(self) -> list[str]:
        """After a turn: when it changed the workspace, its Trees half is recorded. Returns what
        the walk newly left uncovered, for the person."""
        ended = self.walker.end()
        if ended is None:
            return []
        turn, trees, said = ended
        if trees is None:
            return said
        try:
            self.walker.trees.flush()
            self.journal.save_trees(Record(self.stem(turn), self.session, turn, trees=trees))
        except OSError:
            pass  # the turn's Writes half still undoes its file tools' writes
        return said

    def _newest_on_disk(self) -> Tree | None:
        """The latest tree an earlier session left: its stamps make the first walk cheap."""
        records, _ = self.journal.read()
        halves = [r.trees for r in reversed(records) if r.trees is not None]
        return self.walker.newest_of([h.after for h in halves])

    # -- undo --------------------------------------------------------------------------------
    def _undo(self) -> Undo:
        w = self.walker
        blob = lambda name: w.trees.blob(name, w.caps.file)  # noqa: E731
        return Undo(self.root, w.tree, w.scan, blob, self.copies.copy, w.caps.file)

    def undo(self, force: bool = False) -> tuple[UndoReport, bytes | None]:
        """Revert the newest record not yet undone; for a rewind, also the conversation as it
        was before it (JSON), for the session to put back."""
        records, problems = self.journal.read()
        todo = [r for r in records if not r.undone]
        if not todo:
            extra = f" ({len(problems)} damaged manifest(s) skipped)" if problems else ""
            raise UndoError(f"nothing to undo: no file changes recorded in this workspace{extra}")
        record, report = self._undo().revert(todo[-1], force)
        if record.trees is not None and record.trees != todo[-1].trees:
            self.journal.save_trees(record)
        if record.writes is not None and record.writes != todo[-1].writes:
            self.journal.save_writes(record)
        report.problems += problems
        talk = record.trees.conversation if record.trees is not None else None
        if not report.complete or talk is None:
            return report, None
        return report, self.walker.trees.blob(talk, MAX_CONVERSATION_BYTES)

    def undoable(self) -> list[Undoable]:
        """What /undo can still revert, newest first: whose turn, and the paths it changed."""
        records, _ = self.journal.read()
        out = []
        for r in reversed(records):
            if r.undone:
                continue
            try:
                files = self._touched(r)
            except UndoError:
                continue
            out.append(Undoable(r.session, r.turn, files))
        return out

    def _touched(self, r: Record) -> tuple[Touched, ...]:
        if r.trees is None or r.trees.undone:
            files = r.writes.files if r.writes else ()
            return tuple(Touched(f.path, f.existed) for f in files if not f.restored)
        old, new = self.walker.tree(r.trees.before), self.walker.tree(r.trees.after)
        before, after, cover = old.entries, new.entries, Cover(old, new)
        changed = sorted(
            p
            for p in before.keys() | after.keys()
            if not same(before.get(p), after.get(p)) and cover.known(p, before.get(p))
        )
        return tuple(Touched(p, p in before) for p in changed)

    def changes(self) -> list[FileChange]:
        """(path, before this session, now) for each file this session's tools changed."""
        records, _ = self.journal.read()
        return self.copies.changes(records, self.session)

    # -- rewind ------------------------------------------------------------------------------
    def before_turn(self, turn: int) -> str | None:
        """The tree the workspace had before `turn` of this conversation changed anything
        (None: no turn from it on changed a file)."""
        records, _ = self.journal.read()
        for r in records:
            mine = r.session in self.sessions and r.kind is Kind.TURN
            if mine and r.trees is not None and r.turn >= turn:
                return r.trees.before
        return None

    def rewind(self, turn: int, now_turn: int, conversation: bytes) -> Rewound:
        """Put every covered file back as it was before `turn`; recorded (with the
        conversation as it is now) so /undo can take the rewind back."""
        target = self.before_turn(turn)
        report = UndoReport(f"rewind to before turn {turn}")
        w = self.walker
        if target is None or not w.enabled:
            return Rewound(report, turn, False)
        w.trees.ensure()
        wanted = w.tree(target)
        now = w.scan()
        before = w.trees.save_tree(now)
        cover = Cover(wanted, now)
        changes = [
            Change(rel, wanted.entries.get(rel), now.entries.get(rel))
            for rel in sorted(wanted.entries.keys() | now.entries.keys())
            if not same(wanted.entries.get(rel), now.entries.get(rel))
            and cover.known(rel, wanted.entries.get(rel))
        ]
        fill(report, self._undo().apply(changes, wanted.groups()))
        changed = {c.rel for c in changes}
        report.notes = link_notes(now.groups(), changed) + not_covered(now, w.caps.file, cover)
        after = w.trees.save_tree(w.scan())
        talk = w.trees.put(conversation)
        trees = Trees(before, after, talk, turn)
        stem = self.stem(now_turn, self.free_step(now_turn))
        w.trees.flush()
        self.journal.save_trees(Record(stem, self.session, now_turn, Kind.REWIND, trees=trees))
        return Rewound(report, turn, True)

    def adopt(self, session: str, *earlier: str) -> None:
        """A resumed (or forked) conversation: this session's turns from now on are recorded
        as that conversation's (`session`, its id), whose turns, and those recorded under the
        `earlier` ids (the conversation it was forked from; each run of an older mca), /rewind
        finds."""
        self.session = session
        self.sessions = {session, *earlier}

    @property
    def checkpoints(self) -> bool:
        """Workspace checkpoints are on (else /undo covers the file tools' writes only)."""
        return self.walker.enabled

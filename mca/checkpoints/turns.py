"""The session's checkpoints: the workspace walked before each turn's first change (a file tool's
write or a command) and again when the turn ends; /undo and /rewind from them.

How they relate to the per-file snapshots (mca/tools/snapshots.py): a turn that changed
anything has a record here, named like its snapshot manifest. /undo takes the newest of both
kinds. For a turn with a record it puts back every path the turn changed (by the file tools or
by commands) that is still as the turn left it, then lets the snapshot manifest of the same
turn undo what the checkpoint does not cover (a write to an ignored file); an /export's write,
a turn of a session that was killed before it ended, and older sessions have only a manifest,
and undo as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mca.checkpoints.restore import Change, Outcome, Restorer, same
from mca.checkpoints.scan import Caps, Scanner, Tree
from mca.checkpoints.store import CheckpointStore
from mca.checkpoints.update import update
from mca.checkpoints.watch import Watcher
from mca.errors import UndoError
from mca.tools.snapshots import SnapshotStore, UndoReport

DEFAULT_FILE_CAP = 8 * 1024 * 1024
DEFAULT_TOTAL_CAP = 512 * 1024 * 1024
MAX_CONVERSATION_BYTES = 256 * 1024 * 1024


@dataclass
class Rewound:
    """What /rewind did: the files (an UndoReport) and the conversation's turn it went back to."""

    report: UndoReport
    turn: int
    found: bool  # a checkpoint before that turn existed (else no file changed since)


class Checkpoints:
    """One session's checkpoints of one workspace, beside its snapshot store."""

    def __init__(
        self, root: Path, store: CheckpointStore, snapshots: SnapshotStore, caps: Caps
    ) -> None:
        self.root = root
        self.store = store
        self.snapshots = snapshots
        self.caps = caps
        self.scanner = Scanner(root, store.put, caps)
        self.sessions = {snapshots.session}  # whose turns the conversation holds (/resume adds)
        self._last: Tree | None = None  # the newest walk: the next one reuses its hashes
        self._open: tuple[int, str] | None = None  # (turn, tree before it) of the turn in flight
        self._watcher: Watcher | None = None  # which paths changed since the last walk
        self._walked = False  # _last came from a walk (or an update) of this session

    @property
    def enabled(self) -> bool:
        return self.caps.total > 0

    def stem(self, turn: int, step: str = "") -> str:
        s = self.snapshots
        return f"{s.started}-{s.session}-{turn:04d}{step}"

    def _scan(self) -> Tree:
        """The workspace now: from the watcher's events when they can be trusted, else a walk
        (which reuses the hashes of files whose stamp did not change)."""
        if self._watcher is None and self._last is None:
            self._watcher = Watcher.open(str(self.scanner.real))
        watcher = self._watcher
        changed = watcher.drain() if watcher is not None else None
        if watcher is not None and changed is not None and self._last is not None and self._walked:
            watched = set(watcher.dirs.values())
            tree = update(self.scanner, self._last, changed, watcher.watch, watched)
            if tree is not None and not watcher.broken:
                self._last = tree
                return tree
        previous = self._last if self._last is not None else self._newest_on_disk()
        if self._watcher is not None:
            self._watcher.reset()
        watch = self._watcher.watch if self._watcher is not None else _ignore
        self._last = self.scanner.scan(previous, watch)
        self._walked = True
        return self._last

    def close(self) -> None:
        """Stop watching the workspace."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def _newest_on_disk(self) -> Tree | None:
        """The latest tree an earlier session left: its stamps make this first walk cheap."""
        records, _ = self.store.records()
        for _, record in reversed(records):
            try:
                return self.store.load_tree(record.get("after") or record["before"])
            except UndoError:
                continue
        return None

    # -- recording ---------------------------------------------------------------------------
    def before_change(self, turn: int) -> str:
        """Before a change in `turn`: its first one walks the workspace. Returns a warning for
        the person when that failed (the change still happens; /undo covers less)."""
        if not self.enabled or (self._open is not None and self._open[0] == turn):
            return ""
        self.end_turn()
        try:
            self.store.ensure()
            self._open = (turn, self.store.save_tree(self._scan()))
        except OSError as e:
            why = e.strerror or str(e)
            return f"no workspace checkpoint for turn {turn} ({why}): /undo covers only file tools"
        return ""

    def end_turn(self) -> None:
        """After a turn: when it changed the workspace, record the trees before and after."""
        if self._open is None:
            return
        turn, before = self._open
        self._open = None
        try:
            after = self.store.save_tree(self._scan())
            if after != before:
                self._record(self.stem(turn), turn, "turn", (before, after))
        except OSError:
            return  # the turn's snapshot manifest still undoes its file tools' writes

    def _record(self, stem: str, turn: int, kind: str, trees: tuple[str, str], **more: Any) -> None:
        record = {"session": self.snapshots.session, "turn": turn, "kind": kind, "undone": False}
        record |= {"before": trees[0], "after": trees[1], "conversation": None, **more}
        self.store.save_record(stem, record)

    # -- undo --------------------------------------------------------------------------------
    def undo(self, force: bool = False) -> tuple[UndoReport, bytes | None]:
        """Revert the newest turn (or rewind) not yet undone; for a rewind, also the
        conversation as it was before it (JSON), for the session to put back."""
        records, problems = self.store.records()
        todo = [(s, r) for s, r in records if not r.get("undone")]
        manifests = self.snapshots.undoable()
        if not todo or (manifests and manifests[0][0].stem > todo[-1][0]):
            return self.snapshots.undo(force), None  # raises UndoError when there is nothing
        stem, record = todo[-1]
        label = f"session {record['session']} turn {record['turn']}"
        if record["kind"] == "rewind":
            label = f"the rewind to before turn {record.get('to', '?')}"
        report = self._revert(record, force, UndoReport(label))
        record["undone"] = report.complete
        self.store.save_record(stem, record)
        handled = set(report.restored) | set(report.removed) | set(report.unchanged)
        if report.complete:
            extra = self.snapshots.undo_with(stem, force, handled)
            if extra is not None:
                _merge(report, extra)
        report.problems += problems
        conversation = None
        if report.complete and record.get("conversation"):
            conversation = self.store.blob(record["conversation"], MAX_CONVERSATION_BYTES)
        return report, conversation

    def _revert(self, record: dict[str, Any], force: bool, report: UndoReport) -> UndoReport:
        before = self.store.load_tree(record["before"])
        after = self.store.load_tree(record["after"])
        now = self._scan()
        changes = []
        for rel in sorted(before.entries.keys() | after.entries.keys()):
            b, a, c = before.entries.get(rel), after.entries.get(rel), now.entries.get(rel)
            if same(b, a):
                continue
            if same(c, b):
                report.unchanged.append(rel)
            elif same(c, a) or force:
                changes.append(Change(rel, b, c))
            else:
                report.skipped.append(rel)
        _fill(report, self._apply(changes))
        report.notes = self.not_covered(now)
        return report

    def _apply(self, changes: list[Change]) -> Outcome:
        restorer = Restorer(self.root, lambda name: self.store.blob(name, self.caps.file))
        return restorer.apply(changes)

    def undoable(self) -> list[dict[str, Any]]:
        """What /undo can still revert, newest first, as snapshot manifests look (session,
        turn, files: path and whether it existed before)."""
        records, _ = self.store.records()
        mine = {stem: r for stem, r in records if not r.get("undone")}
        shown = [(p.stem, m) for p, m in self.snapshots.undoable() if p.stem not in mine]
        for stem, record in mine.items():
            try:
                before = self.store.load_tree(record["before"]).entries
                after = self.store.load_tree(record["after"]).entries
            except UndoError:
                continue
            changed = sorted(
                p for p in before.keys() | after.keys() if not same(before.get(p), after.get(p))
            )
            files = [{"path": p, "existed": p in before} for p in changed]
            shown.append(
                (stem, {"session": record["session"], "turn": record["turn"], "files": files})
            )
        return [m for _, m in sorted(shown, key=lambda sm: sm[0], reverse=True)]

    # -- rewind ------------------------------------------------------------------------------
    def before_turn(self, turn: int) -> str | None:
        """The tree the workspace had before `turn` of this conversation changed anything
        (None: no turn from it on changed a file)."""
        records, _ = self.store.records()
        for _, record in records:
            mine = record["session"] in self.sessions
            if mine and record["kind"] == "turn" and record["turn"] >= turn:
                return str(record["before"])
        return None

    def rewind(self, turn: int, now_turn: int, conversation: bytes) -> Rewound:
        """Put every covered file back as it was before `turn`; recorded (with the
        conversation as it is now) so /undo can take the rewind back."""
        target = self.before_turn(turn)
        report = UndoReport(f"rewind to before turn {turn}")
        if target is None or not self.enabled:
            return Rewound(report, turn, False)
        self.store.ensure()
        wanted = self.store.load_tree(target)
        now = self._scan()
        before = self.store.save_tree(now)
        changes = []
        for rel in sorted(wanted.entries.keys() | now.entries.keys()):
            w, c = wanted.entries.get(rel), now.entries.get(rel)
            if not same(w, c):
                changes.append(Change(rel, w, c))
        _fill(report, self._apply(changes))
        report.notes = self.not_covered(now)
        after = self.store.save_tree(self._scan())
        stem = self.stem(now_turn, self._free_step(now_turn))
        talk = self.store.put(conversation)
        self._record(stem, now_turn, "rewind", (before, after), conversation=talk, to=turn)
        return Rewound(report, turn, True)

    def _free_step(self, turn: int) -> str:
        step = self.snapshots.free_step(turn)
        while self.store.record_path(self.stem(turn, step)).exists():
            step = f"x{int(step[1:]) + 1:04d}"
        return step

    def not_covered(self, tree: Tree) -> list[str]:
        """What /undo and /rewind do not put back, said every time."""
        cap = self.caps.file
        size = f"{cap / 1024 / 1024:g} MB" if cap >= 1024 * 1024 else f"{cap:,} bytes"
        notes = ["not covered: files outside the workspace, .git/, and what .gitignore ignores"]
        over = tree.over()
        if over:
            shown = ", ".join(over[:5]) + (f" and {len(over) - 5} more" if len(over) > 5 else "")
            notes.append(f"not covered (over the {size} cap per file, or the total): {shown}")
        if tree.special:
            notes.append(f"not covered (FIFOs, devices, sockets): {', '.join(tree.special[:5])}")
        return notes


def _fill(report: UndoReport, outcome: Outcome) -> None:
    report.restored += outcome.restored
    report.removed += outcome.removed
    report.problems += outcome.problems


def _merge(report: UndoReport, extra: UndoReport) -> None:
    report.restored += extra.restored
    report.removed += extra.removed
    report.unchanged += extra.unchanged
    report.skipped += extra.skipped
    report.problems += extra.problems


def _ignore(rel_dir: str) -> None:
    return None

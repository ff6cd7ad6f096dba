"""The one record of a change to the workspace, and how it is read back and written.

A `Record` is one turn's change (or one /rewind's, or one /export's write), named
`<started>-<session>-<turn>[x<step>]` so that one order covers them all. It has up to two
halves, kept in two files because they are written at different times:

- `Writes`: the file tools' writes, each file's old bytes stored (and synced) before the write,
  in `turns/<stem>.json`; it survives a crash mid-turn and covers ignored files too;
- `Trees`: the whole workspace walked before the turn's first change and again when it ended,
  in `checkpoints/records/<stem>.json`; it sees what commands did.

Everything read back is untrusted data: paths must be plain relative ones, hashes hex, kinds
known; a file that is not what mca writes raises BadRecord and is reported, never acted on.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any

from mca.errors import UndoError
from mca.fs.careful import sha256

__all__ = [
    "HASH",
    "STEM",
    "BadRecord",
    "FileEntry",
    "Kind",
    "Record",
    "Trees",
    "Writes",
    "check_rel",
    "checked_object",
    "trees_from_json",
    "trees_json",
    "writes_from_json",
    "writes_json",
]

HASH = re.compile(r"[0-9a-f]{64}\Z")
STEM = re.compile(r"[0-9A-Za-z]+-[0-9A-Za-z_]+-\d{4,}(?:x\d{4})?\Z")


class BadRecord(ValueError):
    """A record that is not what mca writes; it is reported and never acted on."""


class Kind(enum.StrEnum):
    """What made a record: a turn, or a /rewind (which /undo also takes back)."""

    TURN = "turn"
    REWIND = "rewind"


@dataclass(frozen=True)
class FileEntry:
    """One file a file tool wrote: its state before (`old`: the stored bytes' sha256) and every
    state mca wrote to it (`new` the last; `seen` all of them)."""

    path: str
    existed: bool
    mode: int | None = None
    old: str | None = None
    new: str = ""
    seen: tuple[str, ...] = ()
    restored: bool = False  # an undo put it back (or found it as it was)
    problem: str = ""  # why an undo could not put it back

    @property
    def done(self) -> bool:
        """An undo is finished with it (restored, or given up on with a reason)."""
        return self.restored or bool(self.problem)

    def wrote(self, new: str) -> FileEntry:
        """The entry after one more write of mca's (bytes hashing to `new`)."""
        return replace(self, new=new, seen=(*self.seen, new))


@dataclass(frozen=True)
class Writes:
    """The file tools' half of a record (written ahead of each write, synced)."""

    files: tuple[FileEntry, ...] = ()
    note: str = ""
    undone: bool = False


@dataclass(frozen=True)
class Trees:
    """The checkpoints' half: the workspace's tree before and after (ids in the tree store)."""

    before: str
    after: str
    conversation: str | None = None  # a rewind's: the conversation it replaced (a blob)
    to: int | None = None  # a rewind's: the turn it went back to before
    undone: bool = False


@dataclass(frozen=True)
class Record:
    """One change to the workspace: its name, whose turn, and the halves that were kept."""

    stem: str
    session: str
    turn: int
    kind: Kind = Kind.TURN
    writes: Writes | None = None
    trees: Trees | None = None

    @property
    def undone(self) -> bool:
        """Nothing of it is left to undo."""
        return all(h is None or h.undone for h in (self.writes, self.trees))

    @property
    def label(self) -> str:
        """How /undo names it."""
        if self.kind is Kind.REWIND:
            to = self.trees.to if self.trees is not None and self.trees.to is not None else "?"
            return f"the rewind to before turn {to}"
        return f"session {self.session} turn {self.turn}"

    def joined(self, other: Record) -> Record:
        """This record with the half `other` has (the two files of one stem)."""
        return replace(
            self,
            kind=other.kind if other.trees is not None else self.kind,
            writes=self.writes or other.writes,
            trees=self.trees or other.trees,
        )


def check_rel(rel: Any) -> str:
    """A plain relative path inside the workspace, or BadRecord."""
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        raise BadRecord(f"bad path {rel!r}")
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or str(p) != rel or rel == ".":
        raise BadRecord(f"path {rel!r} is not a plain relative path")
    return rel


def _hash(value: Any, what: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not HASH.match(value):
        raise BadRecord(f"{what} is not a sha256 ({value!r})")
    return value


def _entry(f: Any) -> FileEntry:
    if not isinstance(f, dict):
        raise BadRecord("a file entry is not an object")
    rel = check_rel(f.get("path"))
    existed = f.get("existed")
    if not isinstance(existed, bool):
        raise BadRecord(f"{rel}: 'existed' is not true or false")
    mode = f.get("mode")
    if existed and (not isinstance(mode, int) or not 0 <= mode <= 0o7777):
        raise BadRecord(f"{rel}: bad mode {mode!r}")
    seen = f.get("seen", [])
    if not isinstance(seen, list):
        raise BadRecord(f"{rel}: 'seen' is not a list")
    problem = f.get("problem", "")
    return FileEntry(
        rel,
        existed,
        mode if existed else None,
        _hash(f.get("old"), "old", optional=not existed),
        str(_hash(f.get("new"), "new")),
        tuple(str(_hash(h, "seen")) for h in seen),
        f.get("restored") is True,
        problem if isinstance(problem, str) else "",
    )


def _who(data: Any) -> tuple[str, int]:
    if not isinstance(data, dict):
        raise BadRecord(f"not a JSON object ({type(data).__name__})")
    session, turn = data.get("session"), data.get("turn")
    if not isinstance(session, str) or not isinstance(turn, int) or isinstance(turn, bool):
        raise BadRecord("no session or turn")
    return session, turn


def writes_from_json(stem: str, data: Any) -> Record:
    """A record with its Writes half, from turns/<stem>.json; BadRecord when it is not what mca
    writes."""
    session, turn = _who(data)
    files = data.get("files")
    if not isinstance(files, list):
        raise BadRecord("no list of files")
    note = data.get("note", "")
    note = note if isinstance(note, str) else ""
    writes = Writes(tuple(_entry(f) for f in files), note, data.get("undone") is True)
    return Record(stem, session, turn, writes=writes)


def writes_json(record: Record) -> dict[str, Any]:
    """The Writes half as its file holds it."""
    w = record.writes or Writes()
    files = []
    for f in w.files:
        entry: dict[str, Any] = {"path": f.path, "existed": f.existed, "mode": f.mode, "old": f.old}
        entry |= {"new": f.new, "seen": list(f.seen)}
        entry |= {"restored": True} if f.restored else {}
        entry |= {"problem": f.problem} if f.problem else {}
        files.append(entry)
    head = {"session": record.session, "turn": record.turn, "note": w.note, "undone": w.undone}
    return head | {"files": files}


def trees_from_json(stem: str, data: Any) -> Record:
    """A record with its Trees half, from checkpoints/records/<stem>.json."""
    session, turn = _who(data)
    kind = data.get("kind")
    if kind not in tuple(Kind):
        raise BadRecord("no turn or kind")
    to = data.get("to")
    trees = Trees(
        str(_hash(data.get("before"), "before")),
        str(_hash(data.get("after"), "after")),
        _hash(data.get("conversation"), "conversation", optional=True),
        to if isinstance(to, int) and not isinstance(to, bool) else None,
        data.get("undone") is True,
    )
    return Record(stem, session, turn, Kind(kind), trees=trees)


def trees_json(record: Record) -> dict[str, Any]:
    """The Trees half as its file holds it."""
    t = record.trees
    assert t is not None
    out: dict[str, Any] = {"session": record.session, "turn": record.turn, "kind": str(record.kind)}
    out |= {"undone": t.undone, "before": t.before, "after": t.after}
    out |= {"conversation": t.conversation}
    return out | ({"to": t.to} if t.to is not None else {})


def checked_object(read: Callable[[], bytes | None], name: str, store: str) -> bytes:
    """A stored copy's bytes, checked against its name (its sha256); UndoError when it is
    missing (`read` returns None or finds no file) or damaged."""
    try:
        data = read()
    except FileNotFoundError:
        data = None
    if data is None:
        raise UndoError(f"its saved copy is missing from the {store}")
    if sha256(data) != name:
        raise UndoError("its saved copy is damaged (the content does not match its hash)")
    return data

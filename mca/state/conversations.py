"""Conversations saved as they go, to pick up where you left off.

One JSON-lines file per conversation under $MCA_HOME/sessions/ (0600, known keys scrubbed): a
`meta` line, then after every finished turn the messages it added (or, when compaction or a
replaced skill rewrote earlier ones, the whole history again) and its ledger. A crash or a kill
loses at most the turn in flight. A resumed conversation keeps its id and goes on in its own
file; a fork (--fork) is a new conversation, with a new id and file, saying where it came from.
Files are listed, and pruned, by when a turn last went into them.

Files are read back as untrusted data, a line at a time (a long conversation rewritten by
compaction many times is large, and is resumed all the same): a damaged record, or one over
MAX_RECORD_BYTES, is skipped and counted; a file that cannot be read (not a regular file, over
MAX_SESSION_BYTES, no meta line) is named with the reason, never passed over in silence.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from secrets import token_hex
from typing import Any

from mca.fs.careful import FileTooLarge, open_private, open_regular, private_dir
from mca.ledger import TurnLedger
from mca.state.checked import ledger_from, message_from
from mca.text.counts import plural
from mca.text.sanitize import scrub
from mca.types import Message

__all__ = [
    "KEEP_SAVED_CONVERSATIONS",
    "MAX_RECORD_BYTES",
    "MAX_SESSION_BYTES",
    "Found",
    "Saved",
    "SessionStore",
    "Unreadable",
    "find_saved",
    "list_saved",
    "listing",
    "load_saved",
    "message_json",
    "pick",
    "prune_saved",
    "read_saved",
]

MAX_RECORD_BYTES = 64 * 1024 * 1024  # one line: one turn's messages, or the whole history
MAX_SESSION_BYTES = 4 * 1024**3  # a whole file: read a line at a time, so only time is at stake
KEEP_SAVED_CONVERSATIONS = 200  # saved conversations (for /resume) kept under $MCA_HOME/sessions


def message_json(m: Message) -> dict[str, Any]:
    out = asdict(m)
    out["tool_calls"] = [asdict(c) for c in m.tool_calls]
    out["reasoning"] = [asdict(r) for r in m.reasoning]
    return out


@dataclass
class Saved:
    """A saved session as read back."""

    path: Path
    id: str
    workspace: str
    started: float
    model: str
    came_from: str = ""  # an older mca's resume wrote a new file: the one it went on from
    forked_from: str = ""  # --fork: the conversation this one was copied from
    messages: list[Message] = field(default_factory=list)
    ledgers: list[TurnLedger] = field(default_factory=list)
    damaged: int = 0  # records that were skipped (damaged, foreign, or too large)
    notes: list[str] = field(default_factory=list)  # what a person should hear on resuming it

    @property
    def turns(self) -> int:
        return max((m.turn for m in self.messages), default=0)

    @property
    def first_sentence(self) -> str:
        first = next(
            (m.content for m in self.messages if m.role == "user" and m.kind == "chat"), ""
        )
        return " ".join(first.split())[:80]


class SessionStore:
    """The file of the running session: nothing until the first turn ends, then a line or two
    after every turn."""

    def __init__(
        self,
        directory: Path | None,
        sid: str,
        workspace: Path,
        model: str,
        secrets: Iterable[str] = (),
    ) -> None:
        self.path = (
            directory / f"{time.strftime('%Y%m%dT%H%M%S')}-{sid}.jsonl" if directory else None
        )
        self.sid = sid
        self.meta: dict[str, Any] = {"type": "meta", "id": sid, "workspace": str(workspace)}
        self.meta |= {"model": model, "started": time.time()}
        self.secrets = tuple(secrets)
        self.saved: list[Message] = []
        self.carried: list[dict[str, Any]] = []  # ledgers of the conversation this goes on from
        self.written = False
        self.failed = ""

    def _write(self, records: Sequence[dict[str, Any]]) -> None:
        if self.path is None or self.failed:
            return
        if not self.written:
            records = [self.meta, *records]
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        try:
            private_dir(self.path.parent)
            fd = open_private(self.path)
            try:
                os.write(fd, scrub(text, self.secrets).encode("utf-8", "backslashreplace"))
            finally:
                os.close(fd)
            self.written = True
        except OSError as e:
            self.failed = e.strerror or str(e)

    def carry(self, saved: Saved, fork: bool = False) -> str:
        """This session goes on with a saved conversation; returns the id it goes on under.
        Resumed, it keeps the conversation's id and file: the next turn is appended there.
        Forked, it is a new conversation (this session's own id and file, or a new one of each
        when this session already saved a conversation), whose first write repeats the saved
        history. A file this session already wrote stays as it is, either way."""
        self.meta.pop("forked_from", None)
        if not fork:
            self.path = saved.path if self.path is not None else None
            self.sid, self.written = saved.id, True  # its meta line is there
            self.meta["id"] = saved.id  # (its workspace and model stay: a fork may need them)
            self.saved, self.carried = list(saved.messages), []
            return saved.id
        if self.written and self.path is not None:
            self.sid = token_hex(3)  # as home.new_ids makes them
            self.path = self.path.with_name(f"{time.strftime('%Y%m%dT%H%M%S')}-{self.sid}.jsonl")
            self.written = False
        self.meta |= {"id": self.sid, "started": time.time(), "forked_from": saved.id}
        self.saved = []
        self.carried = [{"type": "ledger", **entry.to_json()} for entry in saved.ledgers]
        return self.sid

    def turn(self, messages: Sequence[Message], ledger: TurnLedger | None) -> None:
        """After a finished turn: what it added (or the whole history when earlier messages
        changed), and its ledger."""
        n = len(self.saved)
        if n and len(messages) >= n and list(messages[:n]) == self.saved:
            added = messages[n:]
            record: dict[str, Any] = {"type": "messages", "messages": [*map(message_json, added)]}
        else:
            record = {"type": "history", "messages": [message_json(m) for m in messages]}
        self.saved = list(messages)
        records = [record, *self.carried]
        records += [{"type": "ledger", **ledger.to_json()}] if ledger else []
        self.carried = []
        self._write(records)


class Unreadable(Exception):
    """A file in the sessions directory that is not a conversation mca can go on with."""


def _lines(path: Path, cap: int) -> Iterator[bytes | None]:
    """The file's lines (None for one over `cap` bytes, which is skipped unread)."""
    try:
        with open_regular(path) as (f, st):
            if st.st_size > MAX_SESSION_BYTES:
                raise FileTooLarge(0, f"{st.st_size:,} bytes, over {MAX_SESSION_BYTES:,}")
            while line := f.readline(cap + 1):
                if len(line) <= cap or line.endswith(b"\n"):
                    yield line
                    continue
                yield None
                while (rest := f.readline(cap)) and not rest.endswith(b"\n"):
                    pass
    except OSError as e:
        raise Unreadable(e.strerror or str(e)) from None


# What a conversation's id may be: it names files in mca's state (records, their stems), so a
# file whose id could step out of a folder or carry escapes is not a conversation to go on with.
SESSION_ID = re.compile(r"[0-9A-Za-z_][0-9A-Za-z_-]{0,63}")


def _meta(path: Path, record: dict[str, Any]) -> Saved:
    sid = record["id"]
    for value in (sid or None, record.get("from", ""), record.get("forked_from", "")):
        if not isinstance(value, str) or (value and not SESSION_ID.fullmatch(value)):
            shown = repr(value)[:40]
            raise Unreadable(f"its id {shown} is not one mca makes (letters, digits, - and _)")
    return Saved(
        path,
        sid,
        str(record["workspace"]),
        float(record["started"]),
        str(record.get("model", "")),
        str(record.get("from", "")),
        str(record.get("forked_from", "")),
    )


def load_saved(path: Path, record_cap: int = MAX_RECORD_BYTES) -> Saved:
    """A session file read back, a record at a time; Unreadable (with why) when it is not one."""
    saved: Saved | None = None
    damaged = 0
    for line in _lines(path, record_cap):
        try:
            if line is None:
                raise ValueError("a record over the cap")
            record = json.loads(line)
            kind = record["type"]
            if kind == "meta" and saved is None:
                saved = _meta(path, record)
            elif saved is None or kind == "meta":
                raise ValueError("a record before the meta line, or a second one")
            elif kind == "messages":
                saved.messages += [message_from(m) for m in record["messages"]]
            elif kind == "history":
                saved.messages = [message_from(m) for m in record["messages"]]
            elif kind == "ledger":
                saved.ledgers.append(ledger_from(record))
        except (ValueError, KeyError, TypeError, RecursionError):
            damaged += 1  # a damaged or foreign line: the rest still counts
    if saved is None:
        raise Unreadable("no meta line: not a saved conversation")
    saved.damaged = damaged
    if damaged:
        saved.notes.append(
            f"{plural(damaged, 'damaged or oversized record')} in {path.name}"
            " skipped; the rest of the conversation is resumed"
        )
    return saved


def read_saved(path: Path) -> Saved | None:
    """A session file read back; None when it is not one."""
    try:
        return load_saved(path)
    except Unreadable:
        return None


@dataclass
class Found:
    """Saved conversations, newest first, and the files that could not be read (with why)."""

    saved: list[Saved]
    skipped: list[str]


def _newest_first(directory: Path) -> list[Path]:
    """The saved conversations, the one a turn last went into first (a resumed conversation
    goes on in its old file: its name says when it began, its time when it was last used)."""

    def used(path: Path) -> tuple[float, str]:
        try:
            return path.lstat().st_mtime, path.name
        except OSError:
            return 0.0, path.name

    return sorted(directory.glob("*.jsonl"), key=used, reverse=True)


def prune_saved(directory: Path, keep: int = KEEP_SAVED_CONVERSATIONS) -> int:
    """Delete all but the `keep` conversations used last; returns how many went."""
    try:
        old = _newest_first(directory)[keep:]
    except OSError:
        return 0
    for path in old:
        path.unlink(missing_ok=True)
    return len(old)


def find_saved(directory: Path, workspace: Path | None = None, newest: bool = False) -> Found:
    """Saved sessions, the last used first (only this workspace's when given; only that one
    when `newest`); unreadable files met on the way are named in `skipped`, whichever
    workspace they were in (that cannot be told)."""
    try:
        paths = _newest_first(directory)[:KEEP_SAVED_CONVERSATIONS]
    except OSError:
        return Found([], [])
    found: list[Saved] = []
    skipped: list[str] = []
    for p in paths:
        try:
            saved = load_saved(p)
        except Unreadable as e:
            skipped.append(f"{p}: {e}")
            continue
        if workspace is None or saved.workspace == str(workspace):
            found.append(saved)
        if newest and found and found[-1].messages:  # the last used one with messages
            return Found(found[-1:], skipped)
    # an older mca resumed into a new file: the old one lives on in its successor
    superseded = {s.came_from for s in found}
    return Found([s for s in found if s.messages and s.id not in superseded], skipped)


def list_saved(directory: Path, workspace: Path | None = None) -> list[Saved]:
    """Saved sessions, newest first (only this workspace's when given)."""
    return find_saved(directory, workspace).saved


def pick(directory: Path, workspace: Path, wanted: str) -> Saved:
    """The session `--continue` ('last') or `--resume ID` means; McaError when there is none.
    Files that could not be read are named in its notes (or in the error)."""
    from mca.errors import McaError

    last = wanted == "last"
    found = find_saved(directory, workspace if last else None, newest=last)
    skipped = [f"not read: {why}" for why in found.skipped]
    if last:
        matches = found.saved[:1]
        missing = f"no saved conversation in {workspace} to continue"
    else:
        matches = [s for s in found.saved if s.id.startswith(wanted)]
        missing = f"no saved conversation with id {wanted!r} (mca --resume lists them)"
    if not matches:
        raise McaError("; ".join([missing, *skipped]))
    if len(matches) > 1:
        ids = ", ".join(s.id for s in matches[:5])
        raise McaError(f"{wanted!r} matches more than one saved conversation ({ids})")
    saved = matches[0]
    saved.notes[:0] = skipped
    return saved


def listing(found: Sequence[Saved], now: float) -> list[str]:
    """One line per saved session: number, when, turns, id, first sentence."""
    lines = []
    for i, s in enumerate(found, 1):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started))
        ago = _ago(now - s.started)
        turns = plural(s.turns, "turn")
        lines.append(f"{i:>2}. {when} ({ago})  {turns:<9} {s.id}  {s.first_sentence}")
    return lines


def _ago(seconds: float) -> str:
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"

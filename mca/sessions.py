"""Conversations saved as they go, to pick up where you left off.

One JSON-lines file per session under $MCA_HOME/sessions/ (0600, known keys scrubbed): a `meta`
line, then after every finished turn the messages it added (or, when compaction or a replaced
skill rewrote earlier ones, the whole history again) and its ledger. A crash or a kill loses at
most the turn in flight. Records are read back as untrusted data: a damaged line is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from mca.fsutil import open_private, private_dir, read_regular
from mca.ledger import Row, TurnLedger
from mca.sanitize import scrub
from mca.types import Message, ToolCall

MAX_SESSION_BYTES = 64 * 1024 * 1024
KEEP_SAVED_CONVERSATIONS = 200  # saved conversations (for /resume) kept under $MCA_HOME/sessions
_MESSAGE_FIELDS = {f.name for f in fields(Message)}
ROLES = ("user", "assistant", "tool")


def message_json(m: Message) -> dict[str, Any]:
    out = asdict(m)
    out["tool_calls"] = [asdict(c) for c in m.tool_calls]
    return out


def message_from(raw: dict[str, Any]) -> Message:
    """A message read back; TypeError/ValueError when the record is not one."""
    data = {k: v for k, v in raw.items() if k in _MESSAGE_FIELDS}
    calls = tuple(
        ToolCall(str(c["id"]), str(c["name"]), dict(c["arguments"]))
        for c in data.get("tool_calls") or []
    )
    data["tool_calls"] = calls
    data["skills"] = tuple(str(s) for s in data.get("skills") or ())
    m = Message(**data)
    if m.role not in ROLES or not isinstance(m.content, str) or not isinstance(m.turn, int):
        raise ValueError("not a message")
    return m


def ledger_from(raw: dict[str, Any]) -> TurnLedger:
    rows = [Row(**r) for r in raw["rows"]]
    return TurnLedger(
        raw["turn"],
        rows,
        raw["window"],
        str(raw.get("estimate", "")).removeprefix("estimated, "),
        provider_prompt_tokens=raw.get("provider_prompt_tokens"),
        cached_tokens=raw.get("provider_cached_tokens"),
        calibration=raw.get("calibration_factor"),
        model_calls=raw.get("model_calls", 1),
        compaction=raw.get("compaction"),
    )


@dataclass
class Saved:
    """A saved session as read back."""

    path: Path
    id: str
    workspace: str
    started: float
    model: str
    came_from: str = ""
    messages: list[Message] = field(default_factory=list)
    ledgers: list[TurnLedger] = field(default_factory=list)

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
        self.sid, self.forks = sid, 0
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

    def carry(self, saved: Saved) -> None:
        """This session goes on from a saved one: the first write repeats its history. When
        this session already saved a conversation of its own, that file stays as it is and
        the resumed one gets a new file (and id)."""
        if self.written and self.path is not None:
            self.forks += 1
            sid = f"{self.sid}-{self.forks}"
            self.path = self.path.with_name(f"{time.strftime('%Y%m%dT%H%M%S')}-{sid}.jsonl")
            self.meta |= {"id": sid, "started": time.time()}
            self.written = False
        self.meta["from"] = saved.id
        self.saved = []
        self.carried = [{"type": "ledger", **entry.to_json()} for entry in saved.ledgers]

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


def read_saved(path: Path) -> Saved | None:
    """A session file read back; None when it is not one."""
    try:
        text = read_regular(path, cap=MAX_SESSION_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    saved: Saved | None = None
    for line in text.splitlines():
        try:
            record = json.loads(line)
            kind = record["type"]
            if kind == "meta":
                saved = Saved(
                    path,
                    str(record["id"]),
                    str(record["workspace"]),
                    float(record["started"]),
                    str(record.get("model", "")),
                    str(record.get("from", "")),
                )
            elif saved is None:
                continue
            elif kind == "messages":
                saved.messages += [message_from(m) for m in record["messages"]]
            elif kind == "history":
                saved.messages = [message_from(m) for m in record["messages"]]
            elif kind == "ledger":
                saved.ledgers.append(ledger_from(record))
        except (ValueError, KeyError, TypeError):
            continue  # a damaged or foreign line: the rest still counts
    return saved


def list_saved(directory: Path, workspace: Path | None = None) -> list[Saved]:
    """Saved sessions, newest first (only this workspace's when given)."""
    with contextlib.suppress(OSError):
        paths = sorted(directory.glob("*.jsonl"), reverse=True)[:KEEP_SAVED_CONVERSATIONS]
        found = [s for p in paths if (s := read_saved(p)) is not None]
        if workspace is not None:
            found = [s for s in found if s.workspace == str(workspace)]
        superseded = {s.came_from for s in found}  # a resumed session lives on in its successor
        return [s for s in found if s.messages and s.id not in superseded]
    return []


def pick(directory: Path, workspace: Path, wanted: str) -> Saved:
    """The session `--continue` ('last') or `--resume ID` means; McaError when there is none."""
    from mca.errors import McaError

    if wanted == "last":
        here = list_saved(directory, workspace)
        if not here:
            raise McaError(f"no saved conversation in {workspace} to continue")
        return here[0]
    matches = [s for s in list_saved(directory) if s.id.startswith(wanted)]
    if not matches:
        raise McaError(f"no saved conversation with id {wanted!r} (mca --resume lists them)")
    if len(matches) > 1:
        ids = ", ".join(s.id for s in matches[:5])
        raise McaError(f"{wanted!r} matches more than one saved conversation ({ids})")
    return matches[0]


def listing(found: Sequence[Saved], now: float) -> list[str]:
    """One line per saved session: number, when, turns, id, first sentence."""
    lines = []
    for i, s in enumerate(found, 1):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started))
        ago = _ago(now - s.started)
        turns = f"{s.turns} turn{'s' if s.turns != 1 else ''}"
        lines.append(f"{i:>2}. {when} ({ago})  {turns:<9} {s.id}  {s.first_sentence}")
    return lines


def _ago(seconds: float) -> str:
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"

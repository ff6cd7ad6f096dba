"""What a session reports as it runs: one frozen dataclass per kind of event (the records
-p's stream adds around them are mca/ui/stream_events.py).

Emitters build these; the renderers `match` on them; the session log writes each as one JSON
line, {"ts": ..., "event": kind, **to_json()}, the same records as before events were typed,
so saved logs and the tests that read them do not change. Pure data: imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from mca.ledger import TurnLedger
    from mca.text.diff import FileDiff

# fmt: off
__all__ = [
    "COMPACT_ASKED", "EVENTS_SCHEMA_VERSION", "CatalogCut", "CommandInterrupted",
    "CommandOutput", "CommandStarted", "ContextCompacted", "Event", "EventSink", "FileChanged",
    "LedgerRecorded", "ModelRetry", "ModelSwitched", "ModelWaiting", "Notice", "PlanUpdated",
    "SessionEnded", "SessionResumed", "SessionStarted", "SkillCandidates", "SkillDecision",
    "SkillDiagnostic", "SkillHit", "SkillRead", "SkillReplaced", "SkillResourceLoaded",
    "SkillRoot", "SkillsInjected", "ThinkingDelta", "ToolCalled", "ToolReturned", "Undone", "drop"
]
# fmt: on

# The version of the records' shapes, as `mca -p --output-format stream-json` writes them
# (mca/data/events.schema.json, docs/EVENTS.md): raised when a field is renamed or removed or
# changes meaning; adding a kind or a field keeps it.
EVENTS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Event:
    """The base of every event: its `kind` names it in the log."""

    kind: ClassVar[str] = ""
    logged: ClassVar[bool] = True  # written to the session log (and kept for /why)

    def to_json(self) -> dict[str, Any]:
        """The record's fields (a trailing _ dropped: `from_` is written "from")."""
        return {f.name.rstrip("_"): getattr(self, f.name) for f in fields(self)}


EventSink = Callable[[Event], None]


def drop(event: Event) -> None:
    """The sink for events nobody shows or records."""
    return None


# -- the loop ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelWaiting(Event):
    kind: ClassVar[str] = "model.waiting"
    step: int


@dataclass(frozen=True)
class ModelRetry(Event):
    kind: ClassVar[str] = "model.retry"
    message: str


@dataclass(frozen=True)
class ModelSwitched(Event):
    kind: ClassVar[str] = "model.switched"
    from_: str
    to: str


@dataclass(frozen=True)
class Notice(Event):
    """Something a person must hear (a warning, the catalog rebuilt, compacting)."""

    kind: ClassVar[str] = "notice"
    message: str


@dataclass(frozen=True)
class ToolCalled(Event):
    """The model called a tool; `id` is the call's own (the model's, as the conversation
    carries it), and the tool.result that answers it has the same."""

    kind: ClassVar[str] = "tool.call"
    name: str
    arguments: Mapping[str, Any]
    unreadable: bool = False  # the arguments were not a JSON object: never run
    id: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "name": self.name, "arguments": self.arguments}
        return out | {"unreadable": True} if self.unreadable else out


@dataclass(frozen=True)
class ToolReturned(Event):
    """A tool's result, as the model gets it; `id`: the call it answers."""

    kind: ClassVar[str] = "tool.result"
    name: str
    ok: bool
    result: str
    id: str = ""


COMPACT_ASKED = "/compact"  # the reason of a compaction the person asked for


@dataclass(frozen=True)
class ContextCompacted(Event):
    """What one compaction did (also the compactor's report, and the ledger's note of it)."""

    kind: ClassVar[str] = "context.compacted"
    turn: int
    before_tokens: int
    after_tokens: int
    summarized_messages: int
    protected_kept: list[str]
    reason: str


# -- the tools ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FileChanged(Event):
    """A file a tool wrote, with its diff as data (each face draws it); `asked`: the diff went
    out with the approval question before the write (a face that showed it does not again)."""

    kind: ClassVar[str] = "file.changed"
    path: str
    size: int
    diff: FileDiff
    asked: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "bytes": self.size,
            "change": self.diff.to_json(),
            "asked": self.asked,
        }


@dataclass(frozen=True)
class PlanUpdated(Event):
    kind: ClassVar[str] = "plan.updated"
    plan: list[dict[str, str]]


@dataclass(frozen=True)
class CommandStarted(Event):
    kind: ClassVar[str] = "command.start"
    command: str
    sandbox: str = ""  # how it is contained ('' unsandboxed)


@dataclass(frozen=True)
class CommandOutput(Event):
    """What a running command printed since the last of these, as it comes: batched (at most
    one every few tenths of a second), decoded, scrubbed of known keys across these events (a
    key's possible start waits for the next one), control characters not yet made visible (each
    face does that), sent from the command's reader thread. Not logged: its tool.result
    carries the output."""

    kind: ClassVar[str] = "command.output"
    logged: ClassVar[bool] = False
    text: str
    elapsed: float  # seconds since the command started
    dropped: int = 0  # characters left out before `text` (a flood between two events)


@dataclass(frozen=True)
class CommandInterrupted(Event):
    kind: ClassVar[str] = "command.interrupted"
    command: str
    output: str


@dataclass(frozen=True)
class SkillResourceLoaded(Event):
    kind: ClassVar[str] = "skill.resource.loaded"
    skill: str
    resource: str
    reason: str
    size: int

    def to_json(self) -> dict[str, Any]:
        out = {"skill": self.skill, "resource": self.resource, "reason": self.reason}
        return out | {"bytes": self.size}


# -- skills ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SkillHit(Event):
    """A skill the stage matched, with the line /why and the progress show."""

    kind: ClassVar[str] = "skill.hit"
    turn: int
    name: str
    score: int
    reasons: list[str]
    line: str


@dataclass(frozen=True)
class SkillDecision(Event):
    kind: ClassVar[str] = "skill.decision"
    turn: int
    name: str
    loaded: bool
    reason: str
    chars: int


@dataclass(frozen=True)
class SkillsInjected(Event):
    kind: ClassVar[str] = "skill.injected"
    turn: int
    chars: int
    skills: list[str]


@dataclass(frozen=True)
class SkillRead(Event):
    """The model read a skill (read_file skill:NAME or its SKILL.md): loaded or refused."""

    kind: ClassVar[str] = "skill.read"
    turn: int
    name: str
    loaded: bool
    reason: str
    line: str


@dataclass(frozen=True)
class SkillReplaced(Event):
    kind: ClassVar[str] = "skill.replaced"
    name: str


@dataclass(frozen=True)
class SkillRoot(Event):
    kind: ClassVar[str] = "skills.root"
    path: str
    scope: str
    rank: int
    exists: bool
    writers: str = ""  # who can put a SKILL.md there (mca.skills.writers)


@dataclass(frozen=True)
class SkillCandidates(Event):
    kind: ClassVar[str] = "skills.candidates"
    count: int
    candidates: list[dict[str, Any]]


@dataclass(frozen=True)
class SkillDiagnostic(Event):
    kind: ClassVar[str] = "skills.diagnostic"
    path: str
    level: str
    code: str
    line: int | None
    message: str


@dataclass(frozen=True)
class CatalogCut(Event):
    """Skills left out of the catalog for its budget, folded into one event."""

    kind: ClassVar[str] = "skills.catalog_cut"
    count: int
    first: str


# -- the session -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SessionStarted(Event):
    kind: ClassVar[str] = "session.start"
    session: str
    workspace: str
    provider: str
    model: str
    mode: str = ""  # the approval mode (mca.modes.MODES)
    schema_version: int = EVENTS_SCHEMA_VERSION


@dataclass(frozen=True)
class SessionResumed(Event):
    """A saved conversation picked up: it goes on under its own id, or, forked (--fork),
    under `forked_as`."""

    kind: ClassVar[str] = "session.resumed"
    from_: str
    turns: int
    forked_as: str = ""


@dataclass(frozen=True)
class SessionEnded(Event):
    kind: ClassVar[str] = "session.end"
    turns: int


@dataclass(frozen=True)
class LedgerRecorded(Event):
    """A turn's ledger: the record is the ledger's own JSON."""

    kind: ClassVar[str] = "ledger"
    entry: TurnLedger

    def to_json(self) -> dict[str, Any]:
        return self.entry.to_json()


@dataclass(frozen=True)
class Undone(Event):
    kind: ClassVar[str] = "undo"
    turn: str
    restored: Sequence[str]
    removed: Sequence[str]
    skipped: Sequence[str]


# -- the model's thinking, as it arrives ------------------------------------------------------
@dataclass(frozen=True)
class ThinkingDelta(Event):
    """A piece of the model's thinking as it arrives (Anthropic's thinking, a Responses
    reasoning summary, a compatible server's reasoning_content): never part of the answer.
    Not logged: the conversation keeps the thinking with its reply."""

    kind: ClassVar[str] = "thinking.delta"
    logged: ClassVar[bool] = False
    text: str

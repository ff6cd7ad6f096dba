"""What /undo, /rewind and /snapshots tell the person: pure data."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Rewound", "Touched", "UndoReport", "Undoable"]


@dataclass
class UndoReport:
    """What one /undo (or /rewind) did, path by path; filled as the undo goes."""

    turn_label: str
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # changed since mca wrote them
    problems: list[str] = field(default_factory=list)  # "path: why it was not restored"
    notes: list[str] = field(default_factory=list)  # what the undo did not cover
    turn: tuple[str, int] | None = None  # (session, turn) when it undid a turn's own record

    @property
    def complete(self) -> bool:
        return not self.skipped

    @property
    def handled(self) -> set[str]:
        """The paths this undo put back or found as they were."""
        return {*self.restored, *self.removed, *self.unchanged}


@dataclass(frozen=True)
class Rewound:
    """What /rewind did: the files (an UndoReport) and the conversation's turn it went back to."""

    report: UndoReport
    turn: int
    found: bool  # a checkpoint before that turn existed (else no file changed since)


@dataclass(frozen=True)
class Touched:
    """A path a record changed, and whether it existed before."""

    path: str
    existed: bool


@dataclass(frozen=True)
class Undoable:
    """One record /undo can still revert, as /snapshots lists it."""

    session: str
    turn: int
    files: tuple[Touched, ...]

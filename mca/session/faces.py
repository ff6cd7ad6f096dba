"""What a session needs of the face that shows it (UI: asking, events, streamed text), and the
face of sessions nobody watches (HeadlessUI). The faces in mca/ui/ implement UI; the session
(mca/session/session.py) is given one by open_session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from mca.events import Event
from mca.text.diff import FileDiff
from mca.tools.allow import Answer, CommandQuestion
from mca.tools.base import Asker

__all__ = ["UI", "HeadlessUI"]


class UI(Asker, Protocol):
    """What a session needs from whoever shows it: asking (Asker), events and streamed text."""

    def event(self, event: Event) -> None: ...

    def text(self, delta: str) -> None: ...


@dataclass(frozen=True)
class HeadlessUI:
    """For sessions nobody watches (the self-test, the demo, benchmarks, tests): commands run
    when `commands` is true, edits apply, protected paths are refused, events are dropped."""

    commands: bool = True

    def approve(self, question: CommandQuestion) -> Answer:
        """Commands when `commands`; never a run with more rights (nobody to ask)."""
        if question.more:
            return Answer.UNASKED
        return Answer.YES if self.commands else Answer.NO

    def approve_write(self, path: str, reason: str, diff: FileDiff) -> bool:
        return False

    def approve_edit(self, path: str, diff: FileDiff) -> bool:
        return True

    def event(self, event: Event) -> None:
        return None

    def text(self, delta: str) -> None:
        return None

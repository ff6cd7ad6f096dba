"""`mca -p --output-format stream-json`: a session's events as one JSON object per line.

Each line is {"type": the event's kind, **its fields} (mca.events; the shapes are in
mca/data/events.schema.json, explained in docs/EVENTS.md). Every string in a line is scrubbed
of known keys, and the model's text is scrubbed across its pieces, so a key split between two
deltas never gets through either.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import TextIO

from mca.events import Event, FileChanged, SessionStarted, ThinkingDelta
from mca.text.diff import FileDiff
from mca.text.sanitize import StreamScrubber, scrub, scrub_data
from mca.tools.allow import Answer, CommandQuestion
from mca.tools.base import Asker
from mca.ui.diff_view import draw_diff
from mca.ui.stream_events import ApprovalAnswered, ApprovalAsked, TextDelta


class JsonLines:
    """Writes events as JSON lines, each flushed at once (a consumer reads them as they come)."""

    def __init__(self, out: TextIO, secrets: Iterable[str]) -> None:
        self.out = out
        self.secrets = tuple(secrets)
        self.lock = threading.Lock()  # a line is never interleaved with another

    def record(self, event: Event) -> dict[str, object]:
        """The line's object, scrubbed. A file.changed line also carries its diff drawn as the
        terminal shows it (`diff`: what a consumer read before the diff came as data)."""
        drawn = {"diff": draw_diff(event.diff)} if isinstance(event, FileChanged) else {}
        data = scrub_data({"type": event.kind, **event.to_json(), **drawn}, self.secrets)
        assert isinstance(data, dict)
        return data

    def write(self, event: Event) -> None:
        line = json.dumps(self.record(event), ensure_ascii=False, default=str)
        with self.lock:
            self.out.write(scrub(line, self.secrets) + "\n")  # a key JSON escaping hid, too
            self.out.flush()


class StreamUI:
    """The face of a streamed -p turn: events and text become lines; questions go to `asker`
    (the terminal, or refused without one), each one and its answer also as a line.

    Events that come before the session has an id (start-up notices) wait, so session.start is
    always the first line."""

    def __init__(self, out: TextIO, secrets: Iterable[str], asker: Asker) -> None:
        self.lines = JsonLines(out, secrets)
        self.asker = asker
        self.scrubber = StreamScrubber(self.lines.secrets)
        self.thinking = StreamScrubber(self.lines.secrets)  # the model's thinking, apart
        self.waiting: list[Event] | None = []

    def start(self, event: SessionStarted) -> None:
        """The first line, then what came before it."""
        waiting, self.waiting = self.waiting or [], None
        for e in (event, *waiting):
            self.lines.write(e)

    def _put(self, event: Event) -> None:
        if self.waiting is not None:
            self.waiting.append(event)
        else:
            self.lines.write(event)

    def event(self, event: Event) -> None:
        if isinstance(event, ThinkingDelta):  # scrubbed across its pieces, like the text
            self._flush(self.scrubber, TextDelta)
            piece = self.thinking.feed(event.text)
            if piece:
                self._put(ThinkingDelta(piece))
            return
        self.end_text()
        self._put(event)

    def text(self, delta: str) -> None:
        self._flush(self.thinking, ThinkingDelta)
        piece = self.scrubber.feed(delta)
        if piece:
            self._put(TextDelta(piece))

    def _flush(self, scrubber: StreamScrubber, kind: type[TextDelta | ThinkingDelta]) -> None:
        rest = scrubber.flush()
        if rest:
            self._put(kind(rest))

    def end_text(self) -> None:
        """What the scrubbers held back of the thinking and the text (a key's start, or not)."""
        self._flush(self.thinking, ThinkingDelta)
        self._flush(self.scrubber, TextDelta)

    def _asked(self, what: str, subject: str, detail: str, ask: Callable[[], str]) -> str:
        """The question as a line, the person's answer, and the answer as a line."""
        self.event(ApprovalAsked(what, subject, detail))
        answer = ask()
        self.event(ApprovalAnswered(what, subject, answer))
        return answer

    def approve(self, question: CommandQuestion) -> Answer:
        where = question.sandbox or "unsandboxed: with your full rights"
        detail = f"again with {question.more}" if question.more else where
        return Answer(
            self._asked("command", question.command, detail, lambda: self.asker.approve(question))
        )

    def approve_write(self, path: str, reason: str, diff: FileDiff) -> bool:
        def ask() -> str:
            return "yes" if self.asker.approve_write(path, reason, diff) else "no"

        return self._asked("protected-write", path, reason, ask) == "yes"

    def approve_edit(self, path: str, diff: FileDiff) -> bool:
        def ask() -> str:
            return "yes" if self.asker.approve_edit(path, diff) else "no"

        return self._asked("edit", path, draw_diff(diff), ask) == "yes"

"""The records -p's stream adds to a session's events (mca/events.py): the model's text as it
arrives, the questions put to the person and their answers, and the turn's usage, error and
end. Only the -p faces build them (mca/ui/jsonl.py, mca/ui/oneshot.py), never a session; their
shapes are in mca/data/events.schema.json and docs/EVENTS.md like every event's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from mca.events import Event
from mca.turn import StopReason

__all__ = [
    "ApprovalAnswered",
    "ApprovalAsked",
    "Failed",
    "TextDelta",
    "TurnEnded",
    "UsageReported",
]


@dataclass(frozen=True)
class TextDelta(Event):
    """A piece of the model's text as it arrives (a key split across pieces is still caught)."""

    kind: ClassVar[str] = "text.delta"
    text: str


@dataclass(frozen=True)
class ApprovalAsked(Event):
    """A question put to the person: a command to run, a protected path or an edit to write."""

    kind: ClassVar[str] = "approval.asked"
    what: str  # "command", "protected-write" or "edit" (--mode ask)
    subject: str  # the command whole, or the path
    detail: str  # where the command runs, why the path is protected, or the diff


@dataclass(frozen=True)
class ApprovalAnswered(Event):
    kind: ClassVar[str] = "approval.answered"
    what: str
    subject: str
    answer: str  # "yes", "no", "always", or "unasked" (no terminal to ask on)


@dataclass(frozen=True)
class UsageReported(Event):
    """A turn's tokens as the provider reported them (0 when it reported none), and mca's own
    estimate of its last request, with the tokenizer that made it."""

    kind: ClassVar[str] = "usage"
    turn: int
    prompt_tokens: int
    completion_tokens: int
    reported_by_provider: bool
    model_calls: int
    context_tokens: int  # the last request, estimated
    estimated_with: str  # the tokenizer ("o200k_base")
    cached_tokens: int = 0  # of the prompt, read from the provider's cache
    cache_write_tokens: int = 0  # of the prompt, written to it
    reasoning_tokens: int = 0  # of the completion, the model's reasoning
    duration_ms: int = 0  # the turn, from the sentence to its end
    cost: Mapping[str, object] = field(default_factory=dict)  # as --json's (mca.usage.turn_cost)


@dataclass(frozen=True)
class Failed(Event):
    """The turn failed (the model, the network, a setting): what a person would read."""

    kind: ClassVar[str] = "error"
    message: str
    exit_code: int


@dataclass(frozen=True)
class TurnEnded(Event):
    """The last record of a turn: its answer and why it ended."""

    kind: ClassVar[str] = "turn.end"
    turn: int
    answer: str
    stop_reason: StopReason
    notice: str  # something to say about the answer ('' when nothing)

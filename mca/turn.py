"""What a turn produced: the answer, the tool calls that ran, usage, and why it stopped early.
Pure data: the loop fills it, the faces (-p, --json, the REPL) read it."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mca.types import Request, Usage

__all__ = ["DEFAULT_MAX_STEPS", "MOST_STEPS", "StopReason", "ToolRecord", "TurnResult"]


@dataclass
class ToolRecord:
    """One executed tool call, for --json and the ledger."""

    name: str
    arguments: Mapping[str, Any]
    ok: bool
    result: str


class StopReason(enum.StrEnum):
    """Why a turn ended (stream-json's `turn.end` says it as its value)."""

    END = "end"  # the model answered
    STEP_LIMIT = "step_limit"  # stopped at --max-steps; the answer says so
    ERROR = "error"  # an error ended it (rolled back, or kept: TurnResult.committed)
    INTERRUPTED = "interrupted"  # Ctrl-C, Esc, SIGTERM or SIGHUP


# Model calls in one turn (MCA_MAX_STEPS, --max-steps, /steps change it); "The step limit" in
# docs/configuration.md says why this figure.
DEFAULT_MAX_STEPS = 100
MOST_STEPS = 1000  # the highest limit a setting or /steps may give


@dataclass
class TurnResult:
    """What a turn produced."""

    turn: int
    answer: str
    tools: list[ToolRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    usage_reported: bool = False
    requests: list[Request] = field(default_factory=list)
    request_usage: list[Usage | None] = field(default_factory=list)
    stop: StopReason = StopReason.END
    notice: str = ""  # something to say about the answer (cut at the limit, empty)
    # The conversation kept the turn (the loop ended without an exception, or an interruption
    # came after a tool call began: what it completed is kept, closed by a note). A failure
    # after that (its checkpoint, its ledger, saving the conversation) leaves the turn in
    # place: `failed_after` says which step failed.
    committed: bool = False
    failed_after: str = ""
    seconds: float = 0.0  # how long the turn took, from the sentence to its end (or failure)

    @property
    def stopped_early(self) -> bool:
        """The model did not get to answer (the answer is mca's note of why)."""
        return self.stop is not StopReason.END

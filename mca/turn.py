"""What a turn produced: the answer, the tool calls that ran, usage, and why it stopped early.
Pure data: the loop fills it, the faces (-p, --json, the REPL) read it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from mca.types import Request, Usage


@dataclass
class ToolRecord:
    """One executed tool call, for --json and the ledger."""

    name: str
    arguments: Mapping[str, Any]
    ok: bool
    result: str


class StopReason(Enum):
    """Why a turn ended without an answer from the model."""

    STEP_LIMIT = "step limit"


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
    stop: StopReason | None = None  # why the turn ended early, if it did
    stopped: str = ""  # that, said for people (it is also the answer)
    notice: str = ""  # something to say about the answer (cut at the limit, empty)

"""The loop: pre-turn stage -> model -> tools -> repeat, until an answer or the step limit."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from mca.errors import ToolError
from mca.sanitize import valid_text
from mca.tools import get_tool, tool_specs
from mca.tools.base import ToolContext
from mca.types import Message, Model, Request, TextSink, ToolCall, Usage

Emit = Callable[[str, Mapping[str, Any]], None]


class PreTurn(Protocol):
    """Decides what goes in ahead of the user's sentence (the skill runtime fills this). It may
    revise earlier messages it injected itself (a replaced skill); the turn's rollback covers it."""

    def __call__(self, sentence: str, history: list[Message], turn: int) -> list[Message]: ...


class BeforeModel(Protocol):
    """Sees (and may rewrite, e.g. compact) the history before each model call."""

    def __call__(self, history: list[Message], turn: int) -> list[Message]: ...


def no_pre_turn(sentence: str, history: list[Message], turn: int) -> list[Message]:
    """The empty pre-turn stage."""
    return []


def _same(text: str) -> str:
    return text


@dataclass
class ToolRecord:
    """One executed tool call, for --json and the ledger."""

    name: str
    arguments: Mapping[str, Any]
    ok: bool
    result: str


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
    stopped: str = ""  # why the turn ended early, if it did


@dataclass
class Agent:
    """One conversation: its messages, the model, and the tools' context."""

    model: Model
    tools: ToolContext
    system: str
    max_steps: int = 30
    pre_turn: PreTurn = no_pre_turn
    before_model: BeforeModel | None = None
    emit: Emit = lambda kind, data: None
    on_text: TextSink | None = None
    redact: Callable[[str], str] = _same  # scrubs known secrets from workspace text
    messages: list[Message] = field(default_factory=list)
    turn: int = 0

    def run_turn(self, sentence: str) -> TurnResult:
        """Run one user turn. On any exception the conversation is put back as it was."""
        before = list(self.messages)
        self.turn += 1
        result = TurnResult(self.turn, "")
        try:
            injected = self.pre_turn(sentence, self.messages, self.turn)
            self.messages.extend(replace(m, content=self.redact(m.content)) for m in injected)
            self.tools.turn, self.tools.touched = self.turn, set()
            self.messages.append(Message("user", sentence, turn=self.turn))
            self._loop(result)
        except BaseException:
            self.messages[:] = before
            self.tools.pending.clear()
            raise
        return result

    def _loop(self, result: TurnResult) -> None:
        for _ in range(self.max_steps):
            if self.before_model is not None:
                self.messages[:] = self.before_model(self.messages, self.turn)
            request = Request(self.system, tuple(self.messages), tool_specs())
            result.requests.append(request)
            response = self.model.complete(request, self.on_text)
            result.request_usage.append(response.usage)
            if response.usage is not None:
                result.usage += response.usage
                result.usage_reported = True
            reply = response.message
            self.messages.append(reply)
            if not reply.tool_calls:
                result.answer = reply.content
                return
            for call in reply.tool_calls:
                self.messages.append(self._call_tool(call, result))
            # what the tools asked to add (a skill the model read) comes after all the results
            self.messages.extend(
                replace(m, content=self.redact(m.content)) for m in self.tools.pending
            )
            self.tools.pending.clear()
        result.stopped = f"stopped: the step limit of {self.max_steps} model calls was reached"
        result.answer = result.stopped

    def _call_tool(self, call: ToolCall, result: TurnResult) -> Message:
        self.emit("tool.call", {"name": call.name, "arguments": dict(call.arguments)})
        try:
            text, ok = get_tool(call.name).invoke(self.tools, call.arguments), True
        except ToolError as e:
            text, ok = str(e), False
        except OSError as e:  # the file system said no in a way the tool did not foresee
            text, ok = f"{call.name} failed: {e}", False
        text = self.redact(valid_text(text))
        self.emit("tool.result", {"name": call.name, "ok": ok, "result": text})
        result.tools.append(ToolRecord(call.name, dict(call.arguments), ok, text))
        return Message(
            "tool", text, tool_call_id=call.id, tool_name=call.name, is_error=not ok, turn=self.turn
        )

    def clear(self) -> None:
        """Start a new conversation (files and snapshots are untouched)."""
        self.messages.clear()

"""Pure data shared by the loop, the models and the tools. Imports nothing heavy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "KIND_CANCELLED",
    "KIND_CHAT",
    "KIND_REFERENCE",
    "KIND_SHELL",
    "KIND_SKILLS",
    "KIND_SUMMARY",
    "KIND_UNDONE",
    "Message",
    "Model",
    "Reasoning",
    "Request",
    "Response",
    "Role",
    "TextSink",
    "ToolCall",
    "ToolSpec",
    "Usage",
]

Role = Literal["user", "assistant", "tool"]

# Message kinds the ledger and compaction care about.
KIND_CHAT = "chat"
KIND_SKILLS = "skills"  # stage-two injection (protected)
KIND_REFERENCE = "reference"  # @path injection
KIND_SUMMARY = "summary"  # compaction summary
KIND_SHELL = "shell"  # a !command's output the person chose to add
KIND_CANCELLED = "cancelled"  # where a cancelled turn stopped (mca/cancel.py)
KIND_UNDONE = "undone"  # /undo took back a turn's files, which the conversation still shows


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    invalid: str = ""  # why the arguments could not be read (they are then {}): not run


@dataclass(frozen=True)
class Reasoning:
    """What a model thought before it replied: shown as thinking, never as the answer.

    `text` is what a person may read (Anthropic's thinking, a Responses reasoning summary, a
    compatible server's `reasoning_content`). The other fields are the provider's own and go
    back only to where they came from (`origin`, "wire/model"), as the API requires: an
    Anthropic thinking block's `signature` (or a redacted block's `redacted` data), a Responses
    reasoning item's `item_id` and `encrypted` content. A compatible server's reasoning has no
    origin: it is never sent back. `at`: how many of the reply's tool calls came before it;
    `tokens`: what it costs as input when sent back, when the provider said (0: estimate it)."""

    text: str = ""
    origin: str = ""
    signature: str = ""
    redacted: str = ""
    item_id: str = ""
    encrypted: str = ""
    at: int = 0
    tokens: int = 0


@dataclass(frozen=True)
class Message:
    """One conversation message in mca's own format (providers map to and from it)."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    kind: str = KIND_CHAT
    protected: bool = False
    turn: int = 0
    skills: tuple[str, ...] = ()
    reasoning: tuple[Reasoning, ...] = ()  # an assistant message's thinking, in order


@dataclass(frozen=True)
class Usage:
    """Token counts as reported by the provider (not estimates). The prompt includes the part
    read from the provider's cache (`cached_tokens`) and the part written to it
    (`cache_write_tokens`, Anthropic); the answer includes the model's `reasoning_tokens`."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True)
class Request:
    """Everything one model call sends. `max_output` bounds the answer (0: the client decides)."""

    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    max_output: int = 0


@dataclass(frozen=True)
class Response:
    """What one model call returned: an assistant message and, when known, usage."""

    message: Message
    usage: Usage | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)
    cut: bool = False  # the answer stopped at the output limit (finish_reason "length")


TextSink = Callable[[str], None]


class Model(Protocol):
    """Anything that turns a request into an assistant message: its text goes to `on_text` as
    it streams, its thinking (never part of the answer) to `on_thinking`."""

    name: str

    def complete(
        self,
        request: Request,
        on_text: TextSink | None = None,
        on_thinking: TextSink | None = None,
    ) -> Response: ...

    def close(self) -> None: ...

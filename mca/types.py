"""Pure data shared by the loop, the models and the tools. Imports nothing heavy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["user", "assistant", "tool"]

# Message kinds the ledger and compaction care about.
KIND_CHAT = "chat"
KIND_SKILLS = "skills"  # stage-two injection (protected)
KIND_REFERENCE = "reference"  # @path injection
KIND_SUMMARY = "summary"  # compaction summary
KIND_SHELL = "shell"  # a !command's output the person chose to add


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    invalid: str = ""  # why the arguments could not be read (they are then {}): not run


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


@dataclass(frozen=True)
class Usage:
    """Token counts as reported by the provider (not estimates). `cached_tokens` is the part of
    the prompt the provider read from its cache (Anthropic prompt caching), when it says."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
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
    """Anything that turns a request into an assistant message."""

    name: str

    def complete(self, request: Request, on_text: TextSink | None = None) -> Response: ...

    def close(self) -> None: ...

"""Anthropic Messages: POST {base}/v1/messages with tool_use / tool_result blocks.

Extended thinking: with a budget (`thinking`, or one the effort implies) a model thinks before it
answers, in thinking blocks that carry a signature (or redacted blocks of opaque data). They are
kept in the assistant turn and sent back exactly as they came, first in the message, as the API
requires before a tool_use; only to the model that wrote them. Models that think adaptively
(`mca.models.known.ADAPTIVE`) are told so, and their effort.

Prompt caching: the stable prefix (tools, then the system prompt with the catalog) is marked,
and so is the conversation, on a rolling breakpoint: the last block of the latest message, and
of the user message before it (where the previous request's breakpoint was, so a reply with
many tool calls still finds it). Four breakpoints at most, as the API allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mca.models.anthropic_read import WIRE, StreamAssembler, from_wire_response, origin
from mca.models.http import HttpModel
from mca.models.known import ADAPTIVE, EFFORT_BUDGETS
from mca.models.sse import StreamAssembler as Assembler
from mca.types import (
    Message,
    Reasoning,
    Request,
    Response,
    TextSink,
    ToolSpec,
)

if TYPE_CHECKING:
    from mca.models.options import ModelOptions

__all__ = [
    "MAX_BREAKPOINTS",
    "WIRE",
    "AnthropicModel",
    "StreamAssembler",
    "Thinking",
    "from_wire_response",
    "mark_rolling",
    "origin",
    "request_body",
    "thinking_for",
    "to_wire_messages",
    "to_wire_tools",
]

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # the API requires a limit; the session usually sets one
CACHE = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # the most cache_control marks one request may carry
# Anthropic's own names for the efforts (output_config.effort of an adaptive model).
EFFORT_NAMES = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "max"}


@dataclass(frozen=True)
class Thinking:
    """How a request asks the model to think: `kind` "" (not at all), "enabled" (with a
    budget) or "adaptive" (with mca's effort, '' for the model's own)."""

    kind: str = ""
    budget: int = 0
    effort: str = ""

    def extra_tokens(self) -> int:
        """What thinking may take of max_tokens beside the answer."""
        if self.kind == "adaptive":
            return EFFORT_BUDGETS[self.effort]
        return self.budget


def thinking_for(options: ModelOptions) -> Thinking:
    """The thinking the settings ask of this model: a budget (`thinking`, else the effort's), or
    adaptive thinking for a model that decides itself; none with effort "none"."""
    effort = options.reasoning
    if effort == "none" or not (options.thinking or effort):
        return Thinking()
    info = options.info
    if info is not None and info.reasoning == ADAPTIVE:
        return Thinking("adaptive", effort=effort)
    return Thinking("enabled", options.thinking or EFFORT_BUDGETS[effort])


def _thinking_block(r: Reasoning) -> dict[str, Any]:
    if r.redacted:
        return {"type": "redacted_thinking", "data": r.redacted}
    return {"type": "thinking", "thinking": r.text, "signature": r.signature}


def _assistant(m: Message, source: str) -> list[dict[str, Any]]:
    if not m.content and not m.tool_calls:
        return []  # thinking alone is no reply: left out, like an empty one
    blocks = [_thinking_block(r) for r in m.reasoning if r.origin == source]
    if m.content:
        blocks.append({"type": "text", "text": m.content})
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
        for c in m.tool_calls
    ]
    return blocks


def to_wire_messages(messages: Sequence[Message], source: str = "") -> list[dict[str, Any]]:
    """mca messages -> alternating user/assistant messages with content blocks.

    Consecutive user-side messages (skills, references, the sentence, tool results) merge
    into one user message, tool results first, as the API requires. Thinking blocks go first
    in their assistant message, and only to the model they came from (`source`).
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            blocks = _assistant(m, source)
            if blocks:  # an empty reply is left out: the API rejects empty text blocks
                out.append({"role": "assistant", "content": blocks})
            continue
        if m.role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": m.tool_call_id,
                "content": m.content,
            }
            if m.is_error:
                block["is_error"] = True
        else:
            block = {"type": "text", "text": m.content}
        if out and out[-1]["role"] == "user":
            out[-1]["content"].append(block)
        else:
            out.append({"role": "user", "content": [block]})
    return out


def to_wire_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs -> Messages `tools`."""
    return [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]


def mark_rolling(messages: list[dict[str, Any]], marks: int) -> None:
    """The rolling breakpoint: the last block of the last message and of the user message
    before it, at most `marks` of them (the list is changed in place, its blocks copied)."""
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    for i in users[-min(marks, 2) :] if marks > 0 else []:
        blocks = list(messages[i]["content"])
        blocks[-1] = {**blocks[-1], "cache_control": CACHE}
        messages[i] = {**messages[i], "content": blocks}


def request_body(
    model: str,
    max_tokens: int,
    request: Request,
    stream: bool,
    thinking: Thinking = Thinking(),
    rolling: bool = True,
) -> dict[str, Any]:
    """The JSON body for POST /v1/messages. The stable prefix (tools, then the system prompt
    with the catalog) is marked for prompt caching, and the conversation on a rolling
    breakpoint (`rolling`), so repeated turns read it at the cached rate; servers that do not
    cache ignore the marks."""
    answer = request.max_output or max_tokens or DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": answer + thinking.extra_tokens(),
        "messages": to_wire_messages(request.messages, origin(model)),
        "stream": stream,
    }
    marks = MAX_BREAKPOINTS
    if request.system:
        body["system"] = [{"type": "text", "text": request.system, "cache_control": CACHE}]
        marks -= 1
    if request.tools:
        tools = to_wire_tools(request.tools)
        tools[-1] = {**tools[-1], "cache_control": CACHE}
        body["tools"] = tools
        marks -= 1
    if rolling:
        mark_rolling(body["messages"], marks)
    if thinking.kind == "enabled":
        body["thinking"] = {"type": "enabled", "budget_tokens": thinking.budget}
    elif thinking.kind == "adaptive":
        body["thinking"] = {"type": "adaptive"}
        if thinking.effort:
            body["output_config"] = {"effort": EFFORT_NAMES[thinking.effort]}
    return body


# -- the client --------------------------------------------------------------------------------
class AnthropicModel(HttpModel):
    """POST {base}/v1/messages, streamed by default."""

    def __init__(self, options: ModelOptions, **kw: Any) -> None:
        super().__init__(options, **kw)
        self.thinking = thinking_for(options)

    def url(self) -> str:
        return f"{self.options.base_url.removesuffix('/v1')}/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self.options.api_key:
            headers["x-api-key"] = self.options.api_key
        return headers

    def body(self, request: Request, stream: bool) -> dict[str, Any]:
        s = self.options
        return request_body(s.model, s.max_tokens, request, stream, self.thinking)

    def assembler(self, on_thinking: TextSink | None = None) -> Assembler:
        return StreamAssembler(on_thinking, self.options.model)

    def parse(self, body: Any) -> Response:
        return from_wire_response(body, self.options.model)

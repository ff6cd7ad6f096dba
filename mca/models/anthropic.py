"""Anthropic Messages: POST {base}/v1/messages with tool_use / tool_result blocks.

Extended thinking: with a budget (`thinking`, or one the effort implies) a model thinks before it
answers, in thinking blocks that carry a signature (or redacted blocks of opaque data). They are
kept in the assistant turn and sent back exactly as they came, first in the message, as the API
requires before a tool_use; only to the model that wrote them. Models that think adaptively
(`mca.models.catalog.ADAPTIVE`) are told so, and their effort.

Prompt caching: the stable prefix (tools, then the system prompt with the catalog) is marked,
and so is the conversation, on a rolling breakpoint: the last block of the latest message, and
of the user message before it (where the previous request's breakpoint was, so a reply with
many tool calls still finds it). Four breakpoints at most, as the API allows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mca.errors import StreamError
from mca.models import shape
from mca.models.catalog import ADAPTIVE, EFFORT_BUDGETS
from mca.models.http import HttpModel
from mca.models.sse import StreamAssembler as Assembler
from mca.sanitize import excerpt
from mca.types import (
    Message,
    Reasoning,
    Request,
    Response,
    TextSink,
    ToolCall,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from mca.models.options import ModelOptions

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # the API requires a limit; the session usually sets one
WIRE = "messages"
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


def origin(model: str) -> str:
    """Whose thinking blocks these are: only this model may have them back."""
    return f"{WIRE}/{model}"


# -- pure mapping ------------------------------------------------------------------------------
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


def _usage(raw: Any) -> Usage | None:
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    usage = shape.usage(raw, keys, "output_tokens")
    if usage is None:
        return None
    read = shape.count(raw.get("cache_read_input_tokens")) or 0
    written = shape.count(raw.get("cache_creation_input_tokens")) or 0
    return replace(usage, cached_tokens=read, cache_write_tokens=written)


def _tool_use(block: dict[str, Any], i: int) -> ToolCall:
    name = shape.opt_str(block.get("name"), f"tool_use block {i}'s name")
    if not name:
        raise StreamError(f"tool_use block {i} has no name")
    call_id = shape.opt_str(block.get("id"), f"tool_use block {i}'s id") or f"toolu_{i}"
    arguments, invalid = shape.arguments(block.get("input"), f"the {name!r} tool call")
    return ToolCall(call_id, name, arguments, invalid)


def _thought(block: dict[str, Any], i: int, source: str) -> Reasoning:
    """A thinking or redacted_thinking block, kept whole for the way back."""
    what = f"content block {i}"
    if block.get("type") == "redacted_thinking":
        return Reasoning(origin=source, redacted=shape.opt_str(block.get("data"), f"{what}'s data"))
    text = shape.fix_text(shape.opt_str(block.get("thinking"), f"{what}'s thinking"))
    signature = shape.opt_str(block.get("signature"), f"{what}'s signature")
    return Reasoning(text, source, signature=signature)


THINKING_KINDS = ("thinking", "redacted_thinking")


def from_wire_response(body: Any, model: str = "") -> Response:
    """A non-streamed Messages body -> Response."""
    if isinstance(body, dict) and body.get("type") == "error":
        raise StreamError(f"the server reported an error: {excerpt(body.get('error'))}")
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise StreamError(f"unexpected response shape (no content list): {excerpt(body)}")
    text, calls, thoughts = [], [], []
    for i, raw in enumerate(body["content"]):
        block = shape.obj(raw, f"content block {i}")
        if block.get("type") == "text":
            text.append(shape.opt_str(block.get("text"), f"content block {i}'s text"))
        elif block.get("type") == "tool_use":
            calls.append(_tool_use(block, i))
        elif block.get("type") in THINKING_KINDS:
            thoughts.append(_thought(block, i, origin(model)))
    message = Message(
        "assistant",
        shape.fix_text("".join(text)),
        tool_calls=tuple(calls),
        reasoning=tuple(thoughts),
    )
    cut = body.get("stop_reason") == "max_tokens"
    return Response(message, _usage(body.get("usage")), cut=cut)


@dataclass
class _Block:
    kind: str
    text: shape.TextStream = field(default_factory=shape.TextStream)
    id: str = ""
    name: str = ""
    json: str = ""
    signature: str = ""
    data: str = ""  # a redacted thinking block's
    start: Any = None  # the input given at the block's start (normally {}, then deltas)
    invalid: str = ""  # a piece of the input was not text: the call is answered, not run
    closed: bool = False

    def input(self) -> Any:
        """The input as sent: its deltas' text, or the object it started with."""
        return self.json if self.json or self.start in (None, {}) else self.start


@dataclass
class StreamAssembler:
    """Builds one assistant message from Messages stream events."""

    on_thinking: TextSink | None = None
    model: str = ""
    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: Usage | None = None
    stopped: bool = False
    stop_reason: str = ""

    def feed_data(self, data: str, on_text: TextSink | None) -> bool:
        """One SSE data field; True after message_stop."""
        self.feed(shape.loads(data, "a stream event"), on_text)
        return self.stopped

    def feed(self, raw: Any, on_text: TextSink | None) -> None:
        event = shape.obj(raw, "a stream event")
        kind = event.get("type")
        if kind == "message_start":
            message = shape.opt_obj(event.get("message"), "message_start.message")
            self.usage = _usage(message.get("usage"))
        elif kind == "content_block_start":
            self._start(event)
        elif kind == "content_block_delta":
            self._delta(event, on_text)
        elif kind == "content_block_stop":
            self._block(event, "content_block_stop").closed = True
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise StreamError(
                f"the server reported an error mid-stream: {excerpt(event.get('error'))}"
            )

    def _start(self, event: dict[str, Any]) -> None:
        cb = shape.opt_obj(event.get("content_block"), "content_block_start.content_block")
        block = _Block(
            shape.opt_str(cb.get("type"), "a content block's type"),
            id=shape.opt_str(cb.get("id"), "a content block's id"),
            name=shape.opt_str(cb.get("name"), "a content block's name"),
            start=cb.get("input"),
            signature=shape.opt_str(cb.get("signature"), "a content block's signature"),
            data=shape.opt_str(cb.get("data"), "a redacted block's data"),
        )
        block.text.feed(shape.opt_str(cb.get("text"), "a content block's text"))
        shape.feed(block.text, shape.opt_str(cb.get("thinking"), "a block's thinking"), None)
        self.blocks[shape.index(event.get("index"), "content_block_start.index")] = block

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = shape.opt_obj(event.get("delta"), "message_delta.delta")
        self.stop_reason = shape.opt_str(delta.get("stop_reason"), "stop_reason")
        raw = shape.opt_obj(event.get("usage"), "message_delta.usage")
        final = _usage(raw) if "input_tokens" in raw else None  # the totals, when it says
        out = shape.count(raw.get("output_tokens"))
        if final is not None:
            self.usage = final
        elif self.usage is not None and out is not None:
            self.usage = replace(self.usage, completion_tokens=out)

    def _block(self, event: dict[str, Any], what: str) -> _Block:
        block = self.blocks.get(shape.index(event.get("index"), f"{what}.index"))
        if block is None:
            raise StreamError(f"a {what} arrived for a block that never started")
        return block

    def _delta(self, event: dict[str, Any], on_text: TextSink | None) -> None:
        block = self._block(event, "content_block_delta")
        delta = shape.opt_obj(event.get("delta"), "content_block_delta.delta")
        kind = delta.get("type")
        if kind == "text_delta":
            shape.feed(block.text, shape.opt_str(delta.get("text"), "a text delta"), on_text)
        elif kind == "thinking_delta":
            thought = shape.opt_str(delta.get("thinking"), "a thinking delta")
            shape.feed(block.text, thought, self.on_thinking)
        elif kind == "signature_delta":
            block.signature += shape.opt_str(delta.get("signature"), "a signature delta")
        elif kind == "input_json_delta":
            piece = delta.get("partial_json")
            if isinstance(piece, str):
                block.json += piece
            elif isinstance(piece, dict):  # the object itself, as some servers send it
                block.json += json.dumps(piece)
            elif piece is not None:
                block.invalid = block.invalid or (
                    f"the input of the {block.name or 'streamed'!r} tool call is not a JSON"
                    f" object (a piece of it was {type(piece).__name__})"
                )

    def size(self) -> int:
        return sum(b.text.chars + len(b.json) + len(b.signature) for b in self.blocks.values())

    def response(self, on_text: TextSink | None = None) -> Response:
        if not self.stopped:
            raise StreamError("the response stream ended before message_stop (cut off?)")
        text, calls, thoughts = [], [], []
        for i, b in sorted(self.blocks.items()):
            if b.kind == "text":
                shape.flush(b.text, on_text)
                text.append(b.text.text)
            elif b.kind in THINKING_KINDS:
                shape.flush(b.text, self.on_thinking)
                block = {"type": b.kind, "thinking": b.text.text, "signature": b.signature}
                thoughts.append(_thought({**block, "data": b.data}, i, origin(self.model)))
            elif b.kind == "tool_use":
                call = _tool_use({"id": b.id, "name": b.name, "input": b.input()}, i)
                calls.append(replace(call, arguments={}, invalid=b.invalid) if b.invalid else call)
        message = Message(
            "assistant", "".join(text), tool_calls=tuple(calls), reasoning=tuple(thoughts)
        )
        return Response(message, self.usage, cut=self.stop_reason == "max_tokens")


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

"""Anthropic Messages: POST {base}/v1/messages with tool_use / tool_result blocks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mca.errors import StreamError
from mca.models import shape
from mca.models.http import HttpModel
from mca.models.sse import StreamAssembler as Assembler
from mca.sanitize import excerpt
from mca.types import Message, Request, Response, TextSink, ToolCall, ToolSpec, Usage

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # the API requires a limit; the session usually sets one


# -- pure mapping ------------------------------------------------------------------------------
def to_wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """mca messages -> alternating user/assistant messages with content blocks.

    Consecutive user-side messages (skills, references, the sentence, tool results) merge
    into one user message, tool results first, as the API requires.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
                for c in m.tool_calls
            ]
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


def request_body(model: str, max_tokens: int, request: Request, stream: bool) -> dict[str, Any]:
    """The JSON body for POST /v1/messages. The stable prefix (tools, then the system prompt
    with the catalog) is marked for prompt caching, so repeated turns read it at the cached
    rate; servers that do not cache ignore the marks."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_output or max_tokens or DEFAULT_MAX_TOKENS,
        "messages": to_wire_messages(request.messages),
        "stream": stream,
    }
    if request.system:
        body["system"] = [
            {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        ]
    if request.tools:
        tools = to_wire_tools(request.tools)
        tools[-1] = {**tools[-1], "cache_control": {"type": "ephemeral"}}
        body["tools"] = tools
    return body


def _usage(raw: Any) -> Usage | None:
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    usage = shape.usage(raw, keys, "output_tokens")
    cached = shape.count(raw.get("cache_read_input_tokens")) if isinstance(raw, dict) else None
    return replace(usage, cached_tokens=cached) if usage is not None and cached else usage


def _tool_use(block: dict[str, Any], i: int) -> ToolCall:
    name = shape.opt_str(block.get("name"), f"tool_use block {i}'s name")
    if not name:
        raise StreamError(f"tool_use block {i} has no name")
    call_id = shape.opt_str(block.get("id"), f"tool_use block {i}'s id") or f"toolu_{i}"
    arguments, invalid = shape.arguments(block.get("input"), f"the {name!r} tool call")
    return ToolCall(call_id, name, arguments, invalid)


def from_wire_response(body: Any) -> Response:
    """A non-streamed Messages body -> Response."""
    if isinstance(body, dict) and body.get("type") == "error":
        raise StreamError(f"the server reported an error: {excerpt(body.get('error'))}")
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise StreamError(f"unexpected response shape (no content list): {excerpt(body)}")
    text, calls = [], []
    for i, raw in enumerate(body["content"]):
        block = shape.obj(raw, f"content block {i}")
        if block.get("type") == "text":
            text.append(shape.opt_str(block.get("text"), f"content block {i}'s text"))
        elif block.get("type") == "tool_use":
            calls.append(_tool_use(block, i))
    message = Message("assistant", shape.fix_text("".join(text)), tool_calls=tuple(calls))
    cut = body.get("stop_reason") == "max_tokens"
    return Response(message, _usage(body.get("usage")), cut=cut)


@dataclass
class _Block:
    kind: str
    text: shape.TextStream = field(default_factory=shape.TextStream)
    id: str = ""
    name: str = ""
    json: str = ""
    start: Any = None  # the input given at the block's start (normally {}, then deltas)
    invalid: str = ""  # a piece of the input was not text: the call is answered, not run
    closed: bool = False

    def input(self) -> Any:
        """The input as sent: its deltas' text, or the object it started with."""
        return self.json if self.json or self.start in (None, {}) else self.start


@dataclass
class StreamAssembler:
    """Builds one assistant message from Messages stream events."""

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
            cb = shape.opt_obj(event.get("content_block"), "content_block_start.content_block")
            block = _Block(
                shape.opt_str(cb.get("type"), "a content block's type"),
                id=shape.opt_str(cb.get("id"), "a content block's id"),
                name=shape.opt_str(cb.get("name"), "a content block's name"),
                start=cb.get("input"),
            )
            block.text.feed(shape.opt_str(cb.get("text"), "a content block's text"))
            self.blocks[shape.index(event.get("index"), "content_block_start.index")] = block
        elif kind == "content_block_delta":
            self._delta(event, on_text)
        elif kind == "content_block_stop":
            self._block(event, "content_block_stop").closed = True
        elif kind == "message_delta":
            delta = shape.opt_obj(event.get("delta"), "message_delta.delta")
            self.stop_reason = shape.opt_str(delta.get("stop_reason"), "stop_reason")
            out = shape.count(
                shape.opt_obj(event.get("usage"), "message_delta.usage").get("output_tokens")
            )
            if self.usage is not None and out is not None:
                self.usage = replace(self.usage, completion_tokens=out)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise StreamError(
                f"the server reported an error mid-stream: {excerpt(event.get('error'))}"
            )

    def _block(self, event: dict[str, Any], what: str) -> _Block:
        block = self.blocks.get(shape.index(event.get("index"), f"{what}.index"))
        if block is None:
            raise StreamError(f"a {what} arrived for a block that never started")
        return block

    def _delta(self, event: dict[str, Any], on_text: TextSink | None) -> None:
        block = self._block(event, "content_block_delta")
        delta = shape.opt_obj(event.get("delta"), "content_block_delta.delta")
        if delta.get("type") == "text_delta":
            shown = block.text.feed(shape.opt_str(delta.get("text"), "a text delta"))
            if on_text and shown:
                on_text(shown)
        elif delta.get("type") == "input_json_delta":
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
        return sum(b.text.chars + len(b.json) for b in self.blocks.values())

    def response(self, on_text: TextSink | None = None) -> Response:
        if not self.stopped:
            raise StreamError("the response stream ended before message_stop (cut off?)")
        text, calls = [], []
        for i, b in sorted(self.blocks.items()):
            if b.kind == "text":
                rest = b.text.flush()
                if on_text and rest:
                    on_text(rest)
                text.append(b.text.text)
            elif b.kind == "tool_use":
                call = _tool_use({"id": b.id, "name": b.name, "input": b.input()}, i)
                calls.append(replace(call, arguments={}, invalid=b.invalid) if b.invalid else call)
        message = Message("assistant", "".join(text), tool_calls=tuple(calls))
        return Response(message, self.usage, cut=self.stop_reason == "max_tokens")


# -- the client --------------------------------------------------------------------------------
class AnthropicModel(HttpModel):
    """POST {base}/v1/messages, streamed by default."""

    def url(self) -> str:
        return f"{self.settings.base_url.removesuffix('/v1')}/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self.settings.api_key:
            headers["x-api-key"] = self.settings.api_key
        return headers

    def body(self, request: Request, stream: bool) -> dict[str, Any]:
        return request_body(self.settings.model, self.settings.max_tokens, request, stream)

    def assembler(self) -> Assembler:
        return StreamAssembler()

    def parse(self, body: Any) -> Response:
        return from_wire_response(body)

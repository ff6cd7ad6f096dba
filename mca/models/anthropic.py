"""Anthropic Messages: POST {base}/v1/messages with tool_use / tool_result blocks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from mca.errors import StreamError
from mca.models.http import HttpModel, parse_json
from mca.types import Message, Request, Response, TextSink, ToolCall, ToolSpec, Usage

API_VERSION = "2023-06-01"


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
    """The JSON body for POST /v1/messages."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": to_wire_messages(request.messages),
        "stream": stream,
    }
    if request.system:
        body["system"] = request.system
    if request.tools:
        body["tools"] = to_wire_tools(request.tools)
    return body


def _usage(raw: Any, prompt: int = 0) -> Usage:
    raw = raw if isinstance(raw, dict) else {}
    inputs = sum(
        int(raw.get(k) or 0)
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return Usage(inputs or prompt, int(raw.get("output_tokens") or 0))


def from_wire_response(body: Any) -> Response:
    """A non-streamed Messages body -> Response."""
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise StreamError(f"unexpected response shape (no content list): {str(body)[:200]}")
    text, calls = [], []
    for block in body["content"]:
        if block.get("type") == "text":
            text.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            if not isinstance(block.get("input"), dict):
                raise StreamError(f"tool_use {block.get('name')!r} has no input object")
            calls.append(ToolCall(block["id"], block["name"], block["input"]))
    return Response(
        Message("assistant", "".join(text), tool_calls=tuple(calls)), _usage(body.get("usage"))
    )


@dataclass
class _Block:
    kind: str
    text: str = ""
    id: str = ""
    name: str = ""
    json: str = ""
    closed: bool = False


@dataclass
class StreamAssembler:
    """Builds one assistant message from Messages stream events."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    stopped: bool = False

    def feed(self, event: dict[str, Any], on_text: TextSink | None) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.usage = _usage(event.get("message", {}).get("usage"))
        elif kind == "content_block_start":
            cb = event.get("content_block") or {}
            self.blocks[int(event["index"])] = _Block(
                cb.get("type", ""), cb.get("text", ""), cb.get("id", ""), cb.get("name", "")
            )
        elif kind == "content_block_delta":
            block = self.blocks.get(int(event["index"]))
            if block is None:
                raise StreamError("a content_block_delta arrived for a block that never started")
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                block.text += delta.get("text", "")
                if on_text:
                    on_text(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                block.json += delta.get("partial_json", "")
        elif kind == "content_block_stop":
            self.blocks[int(event["index"])].closed = True
        elif kind == "message_delta":
            out = int((event.get("usage") or {}).get("output_tokens") or 0)
            self.usage = Usage(self.usage.prompt_tokens, out)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise StreamError(f"the server reported an error mid-stream: {event.get('error')}")

    def response(self) -> Response:
        if not self.stopped:
            raise StreamError("the response stream ended before message_stop (cut off?)")
        text, calls = [], []
        for _, b in sorted(self.blocks.items()):
            if b.kind == "text":
                text.append(b.text)
            elif b.kind == "tool_use":
                args = (
                    parse_json(b.json, f"the input of the {b.name!r} tool call") if b.json else {}
                )
                if not isinstance(args, dict):
                    raise StreamError(f"the input of the {b.name!r} tool call is not an object")
                calls.append(ToolCall(b.id, b.name, args))
        return Response(Message("assistant", "".join(text), tool_calls=tuple(calls)), self.usage)


def assemble(events: Iterator[tuple[str, str]], on_text: TextSink | None) -> Response:
    """Consume an SSE stream into a Response."""
    acc = StreamAssembler()
    for _, data in events:
        event = parse_json(data, "a stream event")
        if isinstance(event, dict):
            acc.feed(event, on_text)
        if acc.stopped:
            break
    return acc.response()


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

    def assemble(self, events: Iterator[tuple[str, str]], on_text: TextSink | None) -> Response:
        return assemble(events, on_text)

    def parse(self, body: Any) -> Response:
        return from_wire_response(body)

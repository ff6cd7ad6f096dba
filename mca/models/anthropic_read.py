"""Anthropic Messages, the way back: a non-streamed body or a stream of events -> one Response,
thinking blocks (and redacted ones) kept whole, with their signatures, for the model that wrote
them; usage with the cache's reads and writes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from mca.errors import StreamError
from mca.models import shape
from mca.text.sanitize import excerpt
from mca.types import Message, Reasoning, Response, TextSink, ToolCall, Usage

__all__ = ["THINKING_KINDS", "WIRE", "StreamAssembler", "from_wire_response", "origin"]

WIRE = "messages"


def origin(model: str) -> str:
    """Whose thinking blocks these are: only this model may have them back."""
    return f"{WIRE}/{model}"


# -- pure mapping ------------------------------------------------------------------------------
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

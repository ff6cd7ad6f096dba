"""OpenAI Chat Completions (and every compatible server: Ollama, vLLM, llama.cpp, ...)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from mca.errors import StreamError
from mca.models.http import HttpModel, parse_json
from mca.types import Message, Request, Response, TextSink, ToolCall, ToolSpec, Usage


# -- pure mapping ------------------------------------------------------------------------------
def to_wire_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """mca messages -> chat-completions messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "assistant":
            # content may be null only beside tool calls
            content = m.content or (None if m.tool_calls else "")
            msg: dict[str, Any] = {"role": "assistant", "content": content}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))},
                    }
                    for c in m.tool_calls
                ]
            out.append(msg)
        else:
            out.append({"role": "user", "content": m.content})
    return out


def to_wire_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs -> chat-completions `tools`."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def request_body(model: str, request: Request, stream: bool) -> dict[str, Any]:
    """The JSON body for POST /chat/completions."""
    body: dict[str, Any] = {
        "model": model,
        "messages": to_wire_messages(request.system, request.messages),
        "stream": stream,
    }
    if request.tools:
        body["tools"] = to_wire_tools(request.tools)
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


def _arguments(raw: str | None, name: str) -> dict[str, Any]:
    if not raw:
        return {}
    value = parse_json(raw, f"the arguments of the {name!r} tool call")
    if not isinstance(value, dict):
        raise StreamError(f"the arguments of the {name!r} tool call are not a JSON object")
    return value


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0))


def from_wire_response(body: Any) -> Response:
    """A non-streamed chat-completions body -> Response."""
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise StreamError(
            f"unexpected response shape (no choices[0].message): {str(body)[:200]}"
        ) from None
    calls = tuple(
        ToolCall(
            c["id"],
            c["function"]["name"],
            _arguments(c["function"].get("arguments"), c["function"]["name"]),
        )
        for c in message.get("tool_calls") or []
    )
    text = message.get("content") or ""
    return Response(Message("assistant", text, tool_calls=calls), _usage(body.get("usage")))


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class StreamAssembler:
    """Builds one assistant message from chat-completion chunks (tool calls by index)."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage | None = None
    done: bool = False

    def feed(self, chunk: dict[str, Any], on_text: TextSink | None) -> None:
        if chunk.get("usage"):
            self.usage = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.text.append(delta["content"])
                if on_text:
                    on_text(delta["content"])
            for tc in delta.get("tool_calls") or []:
                part = self.calls.setdefault(int(tc.get("index", 0)), _PartialCall())
                part.id = tc.get("id") or part.id
                fn = tc.get("function") or {}
                part.name = fn.get("name") or part.name
                part.arguments += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def response(self) -> Response:
        if self.finish is None and not self.done:
            raise StreamError("the response stream ended before the model finished (cut off?)")
        calls = tuple(
            ToolCall(p.id or f"call_{i}", p.name, _arguments(p.arguments, p.name))
            for i, p in sorted(self.calls.items())
        )
        return Response(Message("assistant", "".join(self.text), tool_calls=calls), self.usage)


def assemble(events: Iterator[tuple[str, str]], on_text: TextSink | None) -> Response:
    """Consume an SSE stream into a Response."""
    acc = StreamAssembler()
    for _, data in events:
        if data.strip() == "[DONE]":
            acc.done = True
            break
        chunk = parse_json(data, "a stream chunk")
        if isinstance(chunk, dict) and "error" in chunk:
            raise StreamError(f"the server reported an error mid-stream: {chunk['error']}")
        acc.feed(chunk, on_text)
    return acc.response()


# -- the client --------------------------------------------------------------------------------
class OpenAIModel(HttpModel):
    """POST {base}/chat/completions, streamed by default."""

    def url(self) -> str:
        return f"{self.settings.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        key = self.settings.api_key
        return {"authorization": f"Bearer {key}"} if key else {}

    def body(self, request: Request, stream: bool) -> dict[str, Any]:
        return request_body(self.settings.model, request, stream)

    def assemble(self, events: Iterator[tuple[str, str]], on_text: TextSink | None) -> Response:
        return assemble(events, on_text)

    def parse(self, body: Any) -> Response:
        return from_wire_response(body)

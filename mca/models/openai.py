"""OpenAI Chat Completions (and every compatible server: Ollama, vLLM, llama.cpp, ...)."""

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


# -- pure mapping ------------------------------------------------------------------------------
def to_wire_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """mca messages -> chat-completions messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "assistant":
            # "" rather than null beside tool calls: some servers (llama-cpp-python) reject null
            msg: dict[str, Any] = {"role": "assistant", "content": m.content}
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
        body["tool_choice"] = "auto"  # without it some servers leave the tools out of the prompt
    if request.max_output:
        body["max_tokens"] = request.max_output
    if stream:
        body["stream_options"] = {"include_usage": True}  # usage for the ledger's calibration
    return body


def _tool_call(call_id: str, name: str, raw_arguments: Any) -> ToolCall:
    arguments, invalid = shape.arguments(raw_arguments, f"the {name!r} tool call")
    return ToolCall(call_id, name, arguments, invalid)


def _usage(raw: Any) -> Usage | None:
    usage = shape.usage(raw, ("prompt_tokens",), "completion_tokens")
    details = raw.get("prompt_tokens_details") if isinstance(raw, dict) else None
    cached = shape.count(details.get("cached_tokens")) if isinstance(details, dict) else None
    return replace(usage, cached_tokens=cached) if usage is not None and cached else usage


def _call(raw: Any, i: int) -> ToolCall:
    c = shape.obj(raw, f"tool call {i}")
    fn = shape.obj(c.get("function"), f"tool call {i}'s function")
    name = shape.opt_str(fn.get("name"), f"tool call {i}'s name")
    if not name:
        raise StreamError(f"tool call {i} has no function name")
    call_id = shape.opt_str(c.get("id"), f"tool call {i}'s id") or f"call_{i}"
    return _tool_call(call_id, name, fn.get("arguments"))


def from_wire_response(body: Any) -> Response:
    """A non-streamed chat-completions body -> Response."""
    if isinstance(body, dict) and "error" in body:
        raise StreamError(f"the server reported an error: {excerpt(body['error'])}")
    try:
        message = shape.obj(body["choices"][0]["message"], "choices[0].message")
    except (KeyError, IndexError, TypeError):
        raise StreamError(
            f"unexpected response shape (no choices[0].message): {excerpt(body)}"
        ) from None
    raw_calls = shape.opt_list(message.get("tool_calls"), "message.tool_calls")
    calls = tuple(_call(c, i) for i, c in enumerate(raw_calls))
    text = shape.fix_text(shape.opt_str(message.get("content"), "message.content"))
    cut = body["choices"][0].get("finish_reason") == "length"
    return Response(
        Message("assistant", text, tool_calls=calls), _usage(body.get("usage")), cut=cut
    )


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""
    invalid: str = ""  # a piece of the arguments was not text (nor the object itself)


@dataclass
class StreamAssembler:
    """Builds one assistant message from chat-completion chunks (tool calls by index)."""

    text: shape.TextStream = field(default_factory=shape.TextStream)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage | None = None
    done: bool = False

    def feed_data(self, data: str, on_text: TextSink | None) -> bool:
        """One SSE data field; True at the `[DONE]` that ends the stream."""
        if data.strip() == "[DONE]":
            self.done = True
            return True
        self.feed(shape.loads(data, "a stream chunk"), on_text)
        return False

    def feed(self, raw: Any, on_text: TextSink | None) -> None:
        chunk = shape.obj(raw, "a stream chunk")
        if "error" in chunk:
            raise StreamError(f"the server reported an error mid-stream: {excerpt(chunk['error'])}")
        if chunk.get("usage") is not None:
            self.usage = _usage(chunk["usage"]) or self.usage
        for choice in shape.opt_list(chunk.get("choices"), "choices"):
            choice = shape.obj(choice, "a choice")
            delta = shape.opt_obj(choice.get("delta"), "a delta")
            content = shape.opt_str(delta.get("content"), "delta.content")
            if content:
                shown = self.text.feed(content)
                if on_text and shown:
                    on_text(shown)
            for tc in shape.opt_list(delta.get("tool_calls"), "delta.tool_calls"):
                self._call_delta(shape.obj(tc, "a tool-call delta"))
            if choice.get("finish_reason") is not None:
                self.finish = shape.opt_str(choice["finish_reason"], "finish_reason")

    def _call_delta(self, tc: dict[str, Any]) -> None:
        part = self.calls.setdefault(
            shape.index(tc.get("index", 0), "a tool-call index"), _PartialCall()
        )
        part.id = shape.opt_str(tc.get("id"), "a tool-call id") or part.id
        fn = shape.opt_obj(tc.get("function"), "a tool-call function")
        part.name = shape.opt_str(fn.get("name"), "a tool-call name") or part.name
        args = fn.get("arguments")
        if isinstance(args, dict):  # some servers send the object itself
            part.arguments += json.dumps(args)
        elif isinstance(args, str):
            part.arguments += args
        elif args is not None:  # the model's (or the server's) mistake: answered, not run
            part.invalid = part.invalid or (
                f"the arguments of the {part.name or 'streamed'!r} tool call are not a JSON"
                f" object (a piece of them was {type(args).__name__})"
            )

    def size(self) -> int:
        return self.text.chars + sum(len(p.arguments) for p in self.calls.values())

    def response(self, on_text: TextSink | None = None) -> Response:
        if self.finish is None and not self.done:
            raise StreamError("the response stream ended before the model finished (cut off?)")
        rest = self.text.flush()
        if on_text and rest:
            on_text(rest)
        calls = []
        for i, p in sorted(self.calls.items()):
            if not p.name:
                raise StreamError(f"tool call {i} in the stream has no function name")
            call = _tool_call(p.id or f"call_{i}", p.name, p.arguments)
            calls.append(replace(call, arguments={}, invalid=p.invalid) if p.invalid else call)
        message = Message("assistant", self.text.text, tool_calls=tuple(calls))
        return Response(message, self.usage, cut=self.finish == "length")


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

    def assembler(self) -> Assembler:
        return StreamAssembler()

    def parse(self, body: Any) -> Response:
        return from_wire_response(body)

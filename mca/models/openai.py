"""OpenAI Chat Completions (and every compatible server: Ollama, vLLM, llama.cpp, ...).

OpenAI's own API bounds an answer with `max_completion_tokens` (its reasoning models refuse
`max_tokens`), and so does any server that asks for it in a 400; other servers get `max_tokens`.
A reasoning model is told its effort (`reasoning_effort`) when one is set; nothing a reasoning
model refuses (`temperature` and the like) is ever sent. What a compatible server streams as
`reasoning_content` (or `reasoning`) is the model's thinking: shown as such, never part of the
answer, never sent back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mca.errors import ModelHTTPError, StreamError
from mca.models import shape
from mca.models.effort import refused_effort
from mca.models.http import HttpModel
from mca.models.known import EFFORT, EFFORT_BUDGETS
from mca.models.sse import StreamAssembler as Assembler
from mca.text.sanitize import excerpt
from mca.types import Message, Reasoning, Request, Response, TextSink, ToolCall, ToolSpec, Usage

if TYPE_CHECKING:
    from mca.models.options import ModelOptions

MAX_TOKENS, MAX_COMPLETION_TOKENS = "max_tokens", "max_completion_tokens"
REASONING_FIELDS = ("reasoning_content", "reasoning")  # DeepSeek, vLLM, llama.cpp; Ollama, vLLM


@dataclass(frozen=True)
class ChatOptions:
    """What a request carries beside the conversation: the name of its length bound, the
    reasoning effort ('' : none sent), and the tokens the bound keeps for reasoning."""

    limit: str = MAX_TOKENS
    effort: str = ""
    reserve: int = 0


def reasoning_of(options: ModelOptions) -> tuple[bool, str, int]:
    """(is it a reasoning model, the effort to send ('' : none), the tokens an answer's bound
    keeps for reasoning). The effort goes to a reasoning model, or to one the registry does not
    know (a local gpt-oss); reasoning counts in an OpenAI answer's bound, so it makes room."""
    info = options.info
    known = info is not None and info.reasoning == EFFORT
    effort = options.reasoning if known or info is None else ""
    thinks = known and effort != "none"
    return known, effort, EFFORT_BUDGETS[effort] if thinks else 0


def chat_options(options: ModelOptions) -> ChatOptions:
    """OpenAI's own API and its reasoning models anywhere get max_completion_tokens."""
    known, effort, reserve = reasoning_of(options)
    limit = MAX_COMPLETION_TOKENS if options.own_api or known else MAX_TOKENS
    return ChatOptions(limit, effort, reserve)


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


def request_body(
    model: str, request: Request, stream: bool, options: ChatOptions = ChatOptions()
) -> dict[str, Any]:
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
        body[options.limit] = request.max_output + options.reserve
    if options.effort:
        body["reasoning_effort"] = options.effort
    if stream:
        body["stream_options"] = {"include_usage": True}  # usage for the ledger's calibration
    return body


def _tool_call(call_id: str, name: str, raw_arguments: Any) -> ToolCall:
    arguments, invalid = shape.arguments(raw_arguments, f"the {name!r} tool call")
    return ToolCall(call_id, name, arguments, invalid)


def _usage(raw: Any) -> Usage | None:
    return shape.openai_usage(raw, "prompt", "completion")


def _thinking(raw: dict[str, Any], what: str) -> str:
    """A compatible server's reasoning text in a message or a delta ('' when none)."""
    for name in REASONING_FIELDS:
        value = raw.get(name)
        if isinstance(value, str) and value:
            return value
        shape.opt_str(value, f"{what}.{name}")  # anything but text is the server's error
    return ""


def _reasoning(text: str) -> tuple[Reasoning, ...]:
    """Thinking a compatible server showed: no origin, so it is never sent back."""
    return (Reasoning(shape.fix_text(text)),) if text else ()


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
    thought = _reasoning(_thinking(message, "message"))
    reply = Message("assistant", text, tool_calls=calls, reasoning=thought)
    return Response(reply, _usage(body.get("usage")), cut=cut)


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""
    invalid: str = ""  # a piece of the arguments was not text (nor the object itself)


@dataclass
class StreamAssembler:
    """Builds one assistant message from chat-completion chunks (tool calls by index)."""

    on_thinking: TextSink | None = None
    text: shape.TextStream = field(default_factory=shape.TextStream)
    thought: shape.TextStream = field(default_factory=shape.TextStream)
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
            if thinking := _thinking(delta, "delta"):
                shape.feed(self.thought, thinking, self.on_thinking)
            content = shape.opt_str(delta.get("content"), "delta.content")
            if content:
                shape.feed(self.text, content, on_text)
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
        calls = sum(len(p.arguments) for p in self.calls.values())
        return self.text.chars + self.thought.chars + calls

    def response(self, on_text: TextSink | None = None) -> Response:
        if self.finish is None and not self.done:
            raise StreamError("the response stream ended before the model finished (cut off?)")
        shape.flush(self.thought, self.on_thinking)
        shape.flush(self.text, on_text)
        calls = []
        for i, p in sorted(self.calls.items()):
            if not p.name:
                raise StreamError(f"tool call {i} in the stream has no function name")
            call = _tool_call(p.id or f"call_{i}", p.name, p.arguments)
            calls.append(replace(call, arguments={}, invalid=p.invalid) if p.invalid else call)
        thought = _reasoning(self.thought.text)
        message = Message("assistant", self.text.text, tool_calls=tuple(calls), reasoning=thought)
        return Response(message, self.usage, cut=self.finish == "length")


def bearer(key: str) -> dict[str, str]:
    """OpenAI's (and compatible servers') way to send a key: none when there is none."""
    return {"authorization": f"Bearer {key}"} if key else {}


def adapted(
    options: ChatOptions, error: ModelHTTPError, model: str = ""
) -> tuple[ChatOptions, str]:
    """The options a server's 400 asks for instead, and what to say about it (unchanged, ''
    when it asks for nothing mca can give): the other length bound, or the nearest effort it
    takes (none, when it takes none)."""
    detail = str(error).lower()
    if error.status != 400:
        return options, ""
    if MAX_COMPLETION_TOKENS in detail and options.limit == MAX_TOKENS:
        other = MAX_COMPLETION_TOKENS
    elif options.limit == MAX_COMPLETION_TOKENS and MAX_COMPLETION_TOKENS in detail:
        other = MAX_TOKENS  # a server that does not know the newer name
    elif "reasoning_effort" in detail and options.effort:
        effort, said = refused_effort(options.effort, str(error), model)
        return replace(options, effort=effort), said
    else:
        return options, ""
    return replace(options, limit=other), f"the server asked for {other}: sent again with it"


# -- the client --------------------------------------------------------------------------------
class OpenAIModel(HttpModel):
    """POST {base}/chat/completions, streamed by default."""

    def __init__(self, options: ModelOptions, **kw: Any) -> None:
        super().__init__(options, **kw)
        self.wire_options = chat_options(options)

    def url(self) -> str:
        return f"{self.options.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        return bearer(self.options.api_key)

    def body(self, request: Request, stream: bool) -> dict[str, Any]:
        return request_body(self.options.model, request, stream, self.wire_options)

    def adapt(self, error: ModelHTTPError) -> str:
        self.wire_options, said = adapted(self.wire_options, error, self.options.model)
        return said

    def assembler(self, on_thinking: TextSink | None = None) -> Assembler:
        return StreamAssembler(on_thinking)

    def parse(self, body: Any) -> Response:
        return from_wire_response(body)

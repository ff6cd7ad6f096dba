"""The OpenAI Responses API: POST {base}/responses, the third wire.

mca keeps the conversation itself (`store: false`), so the model's reasoning travels with it:
each reasoning item comes back encrypted (`include: reasoning.encrypted_content`) and is sent
back, in its place before the function calls that followed it, to the model that wrote it, as
the API requires for a reasoning model to go on after a tool call. Its summary is shown as
thinking, never as the answer. The answer's bound (`max_output_tokens`) counts reasoning, so it
makes room for it; a reasoning model is told its effort, and nothing it refuses is sent.
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
from mca.models.openai import bearer, reasoning_of
from mca.models.sse import StreamAssembler as Assembler
from mca.text.sanitize import excerpt
from mca.types import Message, Reasoning, Request, Response, TextSink, ToolCall, ToolSpec, Usage

if TYPE_CHECKING:
    from mca.models.options import ModelOptions

WIRE = "responses"
ENCRYPTED = "reasoning.encrypted_content"
ENDS = ("response.completed", "response.incomplete")
TEXT_FIELDS = {"output_text": "text", "refusal": "refusal"}  # a message's parts: the answer


@dataclass(frozen=True)
class ResponsesOptions:
    """What a request carries beside the conversation: whether the model reasons (then its
    reasoning is asked for, encrypted, with a summary when `summary`), its effort, and what
    the answer's bound keeps for reasoning."""

    reasons: bool = False
    effort: str = ""
    reserve: int = 0
    summary: bool = True


def responses_options(options: ModelOptions) -> ResponsesOptions:
    known, effort, reserve = reasoning_of(options)
    return ResponsesOptions(known, effort, reserve)


def origin(model: str) -> str:
    """Whose reasoning items these are: only this model may have them back."""
    return f"{WIRE}/{model}"


# -- pure mapping ------------------------------------------------------------------------------
def _call_item(c: ToolCall) -> dict[str, Any]:
    arguments = json.dumps(dict(c.arguments))
    return {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": arguments}


def _reasoning_item(r: Reasoning) -> dict[str, Any]:
    # the summary is for people: the model reads its encrypted content (store is false)
    item: dict[str, Any] = {"type": "reasoning", "summary": [], "encrypted_content": r.encrypted}
    return item | ({"id": r.item_id} if r.item_id else {})


def _assistant(m: Message, source: str) -> list[dict[str, Any]]:
    """An assistant message as items: each reasoning item before the call that followed it
    (and before the text), then the text, then the calls."""
    if not m.content and not m.tool_calls:
        return []  # a reasoning item without the item it led to is refused
    mine = [r for r in m.reasoning if r.origin == source and r.encrypted]
    calls = m.tool_calls
    out: list[dict[str, Any]] = []
    for i in range(len(calls) + 1):
        out += [_reasoning_item(r) for r in mine if min(r.at, len(calls)) == i]
        if i == 0 and m.content:
            out.append({"role": "assistant", "content": m.content})
        if i < len(calls):
            out.append(_call_item(calls[i]))
    return out


def to_wire_input(messages: Sequence[Message], source: str = "") -> list[dict[str, Any]]:
    """mca messages -> Responses input items."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            out += _assistant(m, source)
        elif m.role == "tool":
            call = {"type": "function_call_output", "call_id": m.tool_call_id}
            out.append(call | {"output": m.content})
        else:
            out.append({"role": "user", "content": m.content})
    return out


def to_wire_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs -> Responses function tools (not strict: the schemas have optional fields)."""
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters,
            "strict": False,
        }
        for t in tools
    ]


def request_body(
    model: str, request: Request, stream: bool, options: ResponsesOptions = ResponsesOptions()
) -> dict[str, Any]:
    """The JSON body for POST /responses."""
    body: dict[str, Any] = {
        "model": model,
        "input": to_wire_input(request.messages, origin(model)),
        "stream": stream,
        "store": False,
    }
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = to_wire_tools(request.tools)
        body["tool_choice"] = "auto"
    if request.max_output:
        body["max_output_tokens"] = request.max_output + options.reserve
    reasoning = {"effort": options.effort} if options.effort else {}
    if options.reasons and options.effort != "none":
        body["include"] = [ENCRYPTED]
        reasoning |= {"summary": "auto"} if options.summary else {}
    if reasoning:
        body["reasoning"] = reasoning
    return body


def _usage(raw: Any) -> Usage | None:
    return shape.openai_usage(raw, "input", "output")


def _failure(raw: Any, what: str) -> StreamError:
    """A failed response or an error event, as a person reads it."""
    err = raw.get("error") if isinstance(raw, dict) else None
    detail = err.get("message") or err.get("code") if isinstance(err, dict) else err or raw
    return StreamError(f"the server reported an error{what}: {excerpt(detail)}")


# -- one item, from a body or a stream ---------------------------------------------------------
@dataclass
class _Item:
    kind: str
    id: str = ""
    call_id: str = ""
    name: str = ""
    arguments: str = ""
    text: shape.TextStream = field(default_factory=shape.TextStream)
    thought: shape.TextStream = field(default_factory=shape.TextStream)
    encrypted: str = ""
    parts: int = 0  # summary parts seen: a blank line goes between two

    def take(self, raw: dict[str, Any], i: int, on_text: TextSink | None) -> None:
        """The whole item (output_item.done, or a body's output): what the deltas missed."""
        what = f"output item {i}"
        self.id = shape.opt_str(raw.get("id"), f"{what}'s id") or self.id
        self.call_id = shape.opt_str(raw.get("call_id"), f"{what}'s call_id") or self.call_id
        self.name = shape.opt_str(raw.get("name"), f"{what}'s name") or self.name
        args = raw.get("arguments")
        self.arguments = args if isinstance(args, str) and args else self.arguments
        self.encrypted = shape.opt_str(raw.get("encrypted_content"), f"{what}'s encrypted content")
        if self.kind == "message" and not self.text.chars:
            for part in shape.opt_list(raw.get("content"), f"{what}'s content"):
                part = shape.obj(part, f"{what}'s content part")
                field_ = TEXT_FIELDS.get(str(part.get("type")), "")
                piece = part.get(field_) if field_ else None
                shape.feed(self.text, shape.opt_str(piece, "an output text"), on_text)
        if self.kind == "reasoning" and not self.thought.chars:
            self.thought.feed("\n\n".join(_summary(raw, what)))

    def call(self, i: int) -> ToolCall:
        if not self.name:
            raise StreamError(f"function call {i} has no name")
        arguments, invalid = shape.arguments(self.arguments, f"the {self.name!r} tool call")
        return ToolCall(self.call_id or self.id or f"call_{i}", self.name, arguments, invalid)


def _summary(raw: dict[str, Any], what: str) -> list[str]:
    """A reasoning item's summary parts (what a person may read of its reasoning)."""
    parts = [shape.obj(p, f"{what}'s summary") for p in shape.opt_list(raw.get("summary"), what)]
    texts = [shape.opt_str(p.get("text"), f"{what}'s summary text") for p in parts]
    return [t for t in texts if t]


def _message(items: Sequence[_Item], source: str) -> Message:
    text, calls, thoughts = [], [], []
    for i, item in enumerate(items):
        if item.kind == "message":
            text.append(item.text.text)
        elif item.kind == "function_call":
            calls.append(item.call(i))
        elif item.kind == "reasoning":
            r = Reasoning(item.thought.text, source, item_id=item.id, encrypted=item.encrypted)
            thoughts.append(replace(r, at=len(calls)))
    return Message("assistant", "".join(text), tool_calls=tuple(calls), reasoning=tuple(thoughts))


def _priced(message: Message, usage: Usage | None) -> Message:
    """Each reasoning item with its share of the reply's reasoning tokens: about what it costs
    as input when it is sent back (the ledger's count of it)."""
    carried = [i for i, r in enumerate(message.reasoning) if r.encrypted]
    if usage is None or not usage.reasoning_tokens or not carried:
        return message
    share, rest = divmod(usage.reasoning_tokens, len(carried))
    shares = {i: share + (rest if n == 0 else 0) for n, i in enumerate(carried)}
    priced = tuple(replace(r, tokens=shares.get(i, 0)) for i, r in enumerate(message.reasoning))
    return replace(message, reasoning=priced)


def _cut(response: dict[str, Any]) -> bool:
    details = shape.opt_obj(response.get("incomplete_details"), "incomplete_details")
    return response.get("status") == "incomplete" and details.get("reason") == "max_output_tokens"


def from_wire_response(body: Any, model: str = "") -> Response:
    """A non-streamed Responses body -> Response."""
    if isinstance(body, dict) and (body.get("error") or body.get("status") == "failed"):
        raise _failure(body, "")
    if not isinstance(body, dict) or not isinstance(body.get("output"), list):
        raise StreamError(f"unexpected response shape (no output list): {excerpt(body)}")
    items = []
    for i, raw in enumerate(body["output"]):
        raw = shape.obj(raw, f"output item {i}")
        item = _Item(shape.opt_str(raw.get("type"), f"output item {i}'s type"))
        item.take(raw, i, None)
        items.append(item)
    usage = _usage(body.get("usage"))
    return Response(_priced(_message(items, origin(model)), usage), usage, cut=_cut(body))


# -- a stream ----------------------------------------------------------------------------------
@dataclass
class StreamAssembler:
    """Builds one assistant message from Responses stream events (items by output_index)."""

    on_thinking: TextSink | None = None
    model: str = ""
    items: dict[int, _Item] = field(default_factory=dict)
    usage: Usage | None = None
    stopped: bool = False
    cut: bool = False

    def feed_data(self, data: str, on_text: TextSink | None) -> bool:
        """One SSE data field; True after the response completed (or stopped incomplete)."""
        self.feed(shape.loads(data, "a stream event"), on_text)
        return self.stopped

    def feed(self, raw: Any, on_text: TextSink | None) -> None:
        event = shape.obj(raw, "a stream event")
        kind = shape.opt_str(event.get("type"), "an event's type")
        if kind == "response.output_item.added":
            item = shape.obj(event.get("item"), "output_item.added.item")
            kind_of = shape.opt_str(item.get("type"), "an item's type")
            new = _Item(kind_of)
            new.take({k: v for k, v in item.items() if k != "content"}, len(self.items), None)
            self.items[self._index(event)] = new
        elif kind == "response.output_item.done":
            i = self._index(event)
            self._item(event).take(
                shape.obj(event.get("item"), "output_item.done.item"), i, on_text
            )
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            shape.feed(self._item(event).text, self._delta(event), on_text)
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            shape.feed(self._item(event).thought, self._delta(event), self.on_thinking)
        elif kind == "response.reasoning_summary_part.added":
            part = self._item(event)
            part.parts += 1
            if part.parts > 1:
                shape.feed(part.thought, "\n\n", self.on_thinking)
        elif kind == "response.function_call_arguments.delta":
            self._item(event).arguments += self._delta(event)
        elif kind in ENDS:
            self._end(shape.obj(event.get("response"), f"{kind}.response"))
        elif kind == "response.failed":
            raise _failure(shape.opt_obj(event.get("response"), "response.failed"), " mid-stream")
        elif kind == "error":
            raise _failure(event if "error" in event else {"error": event}, " mid-stream")

    def _index(self, event: dict[str, Any]) -> int:
        return shape.index(event.get("output_index"), "an event's output_index")

    def _item(self, event: dict[str, Any]) -> _Item:
        item = self.items.get(self._index(event))
        if item is None:
            raise StreamError("an event arrived for an output item that was never added")
        return item

    def _delta(self, event: dict[str, Any]) -> str:
        return shape.opt_str(event.get("delta"), "an event's delta")

    def _end(self, response: dict[str, Any]) -> None:
        self.usage = _usage(response.get("usage"))
        self.cut = _cut(response)
        self.stopped = True

    def size(self) -> int:
        return sum(
            i.text.chars + i.thought.chars + len(i.arguments) + len(i.encrypted)
            for i in self.items.values()
        )

    def response(self, on_text: TextSink | None = None) -> Response:
        if not self.stopped:
            raise StreamError("the response stream ended before the response completed (cut off?)")
        items = [item for _, item in sorted(self.items.items())]
        for item in items:
            shape.flush(item.thought, self.on_thinking)
            shape.flush(item.text, on_text)
        message = _priced(_message(items, origin(self.model)), self.usage)
        return Response(message, self.usage, cut=self.cut)


def adapted(
    options: ResponsesOptions, error: ModelHTTPError, model: str = ""
) -> tuple[ResponsesOptions, str]:
    """What a 400 asks for instead: no reasoning summary (an organisation OpenAI has not
    verified may not have one), the nearest effort it takes, or none (a model that takes
    none)."""
    detail = str(error).lower()
    if error.status != 400:
        return options, ""
    if "summar" in detail and options.summary and options.reasons:
        said = "the server gives no reasoning summary here: sent again without (no thinking shown)"
        return replace(options, summary=False), said
    if "effort" in detail and options.effort:
        effort, said = refused_effort(options.effort, str(error), model)
        return replace(options, effort=effort), said
    return options, ""


# -- the client --------------------------------------------------------------------------------
class ResponsesModel(HttpModel):
    """POST {base}/responses, streamed by default."""

    def __init__(self, options: ModelOptions, **kw: Any) -> None:
        super().__init__(options, **kw)
        self.wire_options = responses_options(options)

    def url(self) -> str:
        return f"{self.options.base_url}/responses"

    def headers(self) -> dict[str, str]:
        return bearer(self.options.api_key)

    def body(self, request: Request, stream: bool) -> dict[str, Any]:
        return request_body(self.options.model, request, stream, self.wire_options)

    def adapt(self, error: ModelHTTPError) -> str:
        self.wire_options, said = adapted(self.wire_options, error, self.options.model)
        return said

    def assembler(self, on_thinking: TextSink | None = None) -> Assembler:
        return StreamAssembler(on_thinking, self.options.model)

    def parse(self, body: Any) -> Response:
        return from_wire_response(body, self.options.model)

"""The table of bad server behaviour: each case is what the server sends, in order, and what must
come of it: "ok" (the turn finishes, possibly after a retry) or a regex the clear error matches.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakeserver import Received, Reply, openai_reply, sse

EMOJI = "\U0001f600"  # 😀, a surrogate pair in JSON: "\ud83d\ude00"


@dataclass
class Case:
    """One bad behaviour of one wire."""

    wire: str  # openai | anthropic
    replies: list[Callable[[Received], Reply]]
    expect: str  # "ok" or a regex for the error
    stream: bool = True
    answer: str | None = None  # when ok, the answer text, if it matters
    settings: dict[str, Any] = field(default_factory=dict)


def raw(
    *chunks: bytes | str, status: int = 200, kind: str = "text/event-stream", **kw: Any
) -> Callable[[Received], Reply]:
    data = [c.encode() if isinstance(c, str) else c for c in chunks]
    return lambda r: Reply(status=status, headers={"content-type": kind}, chunks=data, **kw)


def events(*items: Any, **kw: Any) -> Callable[[Received], Reply]:
    def make(r: Received) -> Reply:
        reply = sse(list(items))
        for k, v in kw.items():
            setattr(reply, k, v)
        return reply

    return make


def ok_openai(text: str = "fine") -> Callable[[Received], Reply]:
    return lambda r: openai_reply(r, text)


def json_body(obj: Any, status: int = 200) -> Callable[[Received], Reply]:
    return raw(json.dumps(obj), status=status, kind="application/json")


def delta(**d: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": d}]}


FINISH = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
DONE = b"data: [DONE]\n\n"


def a_text(*parts: str, start: Any = None) -> list[Any]:
    """An Anthropic text stream."""
    out: list[Any] = [
        start
        if start is not None
        else {"type": "message_start", "message": {"usage": {"input_tokens": 5}}}
    ]
    out.append(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    out += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
        for p in parts
    ]
    out += [{"type": "content_block_stop", "index": 0}, {"type": "message_stop"}]
    return out


def ok_anthropic(text: str = "fine") -> Callable[[Received], Reply]:
    return events(*a_text(text))


def split_surrogates() -> tuple[bytes, bytes]:
    """Two SSE chunks whose JSON strings hold the two halves of one emoji."""
    first = b'data: {"choices": [{"index": 0, "delta": {"content": "a\\ud83d"}}]}\n\n'
    second = b'data: {"choices": [{"index": 0, "delta": {"content": "\\ude00b"}}]}\n\n'
    return first, second


OPENAI, ANTH = "openai", "anthropic"


def bad_arguments(arguments: str) -> Case:
    """A streamed read_file call whose arguments are not a JSON object: the model is told so
    in the call's result, and answers."""
    call = {"index": 0, "id": "c", "function": {"name": "read_file", "arguments": arguments}}
    tool_calls = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    stream = events(delta(tool_calls=[call]), tool_calls, DONE)
    return Case(OPENAI, [stream, ok_openai()], "ok", answer="fine")


HANG = {"read_timeout": 0.5, "request_timeout": 3.0}

CASES: dict[str, Case] = {
    # -- OpenAI, streamed ---------------------------------------------------------------------
    "chunk is a JSON list": Case(OPENAI, [events([1, 2, 3])], "stream chunk is not a JSON object"),
    "tool-call index is a string": Case(
        OPENAI,
        [
            events(
                delta(tool_calls=[{"index": "abc", "id": "c", "function": {"name": "x"}}]), FINISH
            )
        ],
        "not a valid index",
    ),
    "usage is 'many'": Case(
        OPENAI, [events(delta(content="fine"), FINISH, {"usage": "many"}, DONE)], "ok"
    ),
    "usage is Infinity": Case(
        OPENAI,
        [
            raw(
                b'data: {"choices": [{"index": 0, "delta": {"content": "fine"}}]}\n\n',
                b'data: {"choices": [], "usage": {"prompt_tokens": Infinity,'
                b' "completion_tokens": 1}}\n\n',
                b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n',
                DONE,
            )
        ],
        "ok",
    ),
    "usage fields of the wrong type": Case(
        OPENAI,
        [events(delta(content="fine"), FINISH, {"usage": {"prompt_tokens": "12"}}, DONE)],
        "ok",
    ),
    "emoji split across two chunks": Case(
        OPENAI,
        [raw(*split_surrogates(), json.dumps(FINISH).join(["data: ", "\n\n"]), DONE)],
        "ok",
        answer=f"a{EMOJI}b",
    ),
    "stream ignored: one JSON body": Case(
        OPENAI,
        [
            json_body(
                {
                    "choices": [
                        {
                            "message": {"role": "assistant", "content": "fine"},
                            "finish_reason": "stop",
                        }
                    ]
                }
            )
        ],
        "ok",
    ),
    "SSE keep-alives forever": Case(
        OPENAI,
        [raw(*[b": keep-alive\n\n"] * 400, delays=[0.02] * 400)],
        "no complete answer .* within 3 s",
        settings=HANG,
    ),
    "no answer at all": Case(
        OPENAI, [lambda r: Reply(hang=True)] * 5, "no answer from .* within 0.5 s", settings=HANG
    ),
    "redirect": Case(
        OPENAI,
        [lambda r: Reply(status=301, headers={"location": "https://elsewhere/v1"})],
        "redirects to https://elsewhere/v1",
    ),
    "HTML page with 200": Case(
        OPENAI,
        [raw("<html><body>Welcome to nginx</body></html>", kind="text/html")],
        "web page, not the model API",
    ),
    "HTML page with 404": Case(
        OPENAI, [raw("<html>not found</html>", status=404, kind="text/html")], "web page"
    ),
    "500 then ok": Case(OPENAI, [json_body({"error": "boom"}, 500), ok_openai()], "ok"),
    "429 with Retry-After then ok": Case(
        OPENAI,
        [
            lambda r: Reply(
                status=429,
                headers={"retry-after": "0.1", "content-type": "application/json"},
                chunks=[b"{}"],
            ),
            ok_openai(),
        ],
        "ok",
    ),
    "Retry-After nonsense then ok": Case(
        OPENAI,
        [lambda r: Reply(status=503, headers={"retry-after": "soon"}, chunks=[b"x"]), ok_openai()],
        "ok",
    ),
    "429 forever": Case(
        OPENAI, [json_body({"error": {"message": "slow down"}}, 429)] * 5, "HTTP 429 .*slow down"
    ),
    "stream cut mid tool call": Case(
        OPENAI,
        [
            events(
                delta(
                    tool_calls=[
                        {
                            "index": 0,
                            "id": "c1",
                            "function": {"name": "read_file", "arguments": '{"pa'},
                        }
                    ]
                ),
                close_early=True,
            )
        ],
        "cut off",
    ),
    "invalid JSON chunk": Case(
        OPENAI, [raw(b"data: {not json\n\n")], "invalid JSON in a stream chunk"
    ),
    "tool arguments not JSON": bad_arguments("{oops"),
    "tool arguments a JSON list": bad_arguments("[1]"),
    "no finish, no DONE": Case(OPENAI, [events(delta(content="half"))], "cut off"),
    "choices is an object": Case(OPENAI, [events({"choices": {"0": 1}})], "not a JSON array"),
    "delta is a string": Case(
        OPENAI, [events({"choices": [{"delta": "hi"}]})], "not a JSON object"
    ),
    "content is a number": Case(OPENAI, [events(delta(content=42))], "not a string"),
    "tool_calls is an object": Case(
        OPENAI, [events(delta(tool_calls={"a": 1}))], "not a JSON array"
    ),
    "error mid-stream": Case(
        OPENAI,
        [events(delta(content="x"), {"error": {"message": "overloaded"}})],
        "error mid-stream",
    ),
    "empty body": Case(OPENAI, [raw(b"", kind="application/json")], "invalid JSON", stream=False),
    "not JSON at all": Case(
        OPENAI, [raw(b"hello", kind="application/json")], "invalid JSON", stream=False
    ),
    "a 1 MB delta": Case(OPENAI, [events(delta(content="x" * 1_000_000), FINISH, DONE)], "ok"),
    "401": Case(
        OPENAI, [json_body({"error": {"message": "bad key"}}, 401)], "API key is missing or wrong"
    ),
    "404": Case(
        OPENAI, [json_body({"error": {"message": "no such model"}}, 404)], "model 'm' .* not found"
    ),
    "context overflow": Case(
        OPENAI,
        [json_body({"error": {"message": "maximum context length is 8192"}}, 400)],
        "longer than the model's context window",
    ),
    "unicode tool arguments": Case(
        OPENAI,
        [lambda r: openai_reply(r, "", [("read_file", {"path": "naïve-日本.txt"})]), ok_openai()],
        "ok",
    ),
    "unknown tool": Case(
        OPENAI, [lambda r: openai_reply(r, "", [("nope", {})]), ok_openai()], "ok"
    ),
    "tool call without id (not streamed)": Case(
        OPENAI,
        [
            json_body(
                {
                    "choices": [
                        {
                            "message": {
                                "content": None,
                                "tool_calls": [
                                    {
                                        "type": "function",
                                        "function": {"name": "list_dir", "arguments": "{}"},
                                    }
                                ],
                            },
                            "finish_reason": "tool_calls",
                        }
                    ]
                }
            ),
            json_body({"choices": [{"message": {"content": "fine"}, "finish_reason": "stop"}]}),
        ],
        "ok",
        stream=False,
    ),
    "tool calls out of order": Case(
        OPENAI,
        [
            events(
                delta(
                    tool_calls=[
                        {"index": 1, "id": "b", "function": {"name": "list_dir", "arguments": "{}"}}
                    ]
                ),
                delta(
                    tool_calls=[
                        {"index": 0, "id": "a", "function": {"name": "list_dir", "arguments": "{}"}}
                    ]
                ),
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                DONE,
            ),
            ok_openai(),
        ],
        "ok",
    ),
    "tool call without a name": Case(
        OPENAI,
        [
            events(
                delta(tool_calls=[{"index": 0, "id": "a"}]),
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                DONE,
            )
        ],
        "no function name",
    ),
    "connection closed at once": Case(
        OPENAI,
        [lambda r: Reply(status=200, chunks=[], close_early=True)] * 5,
        "cut off|failed|no answer",
    ),
    # -- Anthropic -----------------------------------------------------------------------------
    "event without index": Case(
        ANTH,
        [
            events(
                {"type": "message_start", "message": {}},
                {"type": "content_block_start", "content_block": {"type": "text"}},
            )
        ],
        "not a valid index",
    ),
    "delta for an unknown index": Case(
        ANTH,
        [
            events(
                {"type": "message_start", "message": {}},
                {
                    "type": "content_block_delta",
                    "index": 7,
                    "delta": {"type": "text_delta", "text": "x"},
                },
            )
        ],
        "never started",
    ),
    "null message": Case(
        ANTH, [events(*a_text("fine", start={"type": "message_start", "message": None}))], "ok"
    ),
    "usage 'many' in message_delta": Case(
        ANTH,
        [
            events(
                *a_text("fine")[:-1],
                {"type": "message_delta", "usage": {"output_tokens": "many"}},
                {"type": "message_stop"},
            )
        ],
        "ok",
    ),
    "no message_stop": Case(ANTH, [events(*a_text("half")[:-1])], "before message_stop"),
    "error event": Case(
        ANTH, [events({"type": "error", "error": {"type": "overloaded_error"}})], "error mid-stream"
    ),
    "tool_use without id (not streamed)": Case(
        ANTH,
        [
            json_body({"content": [{"type": "tool_use", "name": "list_dir", "input": {}}]}),
            json_body({"content": [{"type": "text", "text": "fine"}]}),
        ],
        "ok",
        stream=False,
    ),
    "anthropic emoji split": Case(
        ANTH,
        [
            raw(
                b'data: {"type": "message_start", "message": {}}\n\n',
                b'data: {"type": "content_block_start", "index": 0,'
                b' "content_block": {"type": "text"}}\n\n',
                b'data: {"type": "content_block_delta", "index": 0,'
                b' "delta": {"type": "text_delta", "text": "\\ud83d"}}\n\n',
                b'data: {"type": "content_block_delta", "index": 0,'
                b' "delta": {"type": "text_delta", "text": "\\ude00"}}\n\n',
                b'data: {"type": "content_block_stop", "index": 0}\n\n',
                b'data: {"type": "message_stop"}\n\n',
            )
        ],
        "ok",
        answer=EMOJI,
    ),
    "anthropic stream ignored": Case(
        ANTH, [json_body({"content": [{"type": "text", "text": "fine"}]})], "ok"
    ),
    "bad input_json_delta": Case(
        ANTH,
        [
            events(
                {"type": "message_start", "message": {}},
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": "t", "name": "list_dir"},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": "{bad"},
                },
                {"type": "content_block_stop", "index": 0},
                {"type": "message_stop"},
            ),
            ok_anthropic(),
        ],
        "ok",
        answer="fine",
    ),
    "content_block null": Case(
        ANTH,
        [
            events(
                {"type": "message_start", "message": {}},
                {"type": "content_block_start", "index": 0, "content_block": None},
                {"type": "message_stop"},
            )
        ],
        "ok",
    ),
    "529 then ok": Case(
        ANTH,
        [json_body({"type": "error", "error": {"message": "overloaded"}}, 529), ok_anthropic()],
        "ok",
    ),
    "event is a string": Case(ANTH, [events("hello")], "not a JSON object"),
}

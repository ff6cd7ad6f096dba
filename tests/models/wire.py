"""Provider-shaped responses for httpx.MockTransport: JSON bodies and SSE streams."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx

Call = tuple[str, str, dict[str, Any]]  # id, name, arguments


def openai_json(text: str = "", calls: Sequence[Call] = ()) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in calls
        ]
    return {
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 7},
    }


def openai_sse(
    text: str = "", calls: Sequence[Call] = (), cut: bool = False, bad_args: bool = False
) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> str:
        obj: dict[str, Any] = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage:
            obj = {"choices": [], "usage": usage}
        return "data: " + json.dumps(obj) + "\n\n"

    out = [chunk({"role": "assistant"})]
    for word in text.split(" ") if text else []:
        out.append(chunk({"content": word + " "}))
    for index, (i, n, a) in enumerate(calls):
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": i,
                            "type": "function",
                            "function": {"name": n, "arguments": ""},
                        }
                    ]
                }
            )
        )
        args = json.dumps(a) if not bad_args else '{"path": "a.txt"'
        half = len(args) // 2
        for piece in (args[:half], args[half:]):
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    if cut:
        return "".join(out[:-1]).encode()
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    out.append(chunk({}, usage={"prompt_tokens": 100, "completion_tokens": 7}))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


ANTHROPIC_USAGE = {"input_tokens": 100}


def anthropic_json(
    text: str = "", calls: Sequence[Call] = (), usage: dict[str, int] = ANTHROPIC_USAGE
) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    return {
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": {**usage, "output_tokens": 7},
    }


def anthropic_sse(
    text: str = "",
    calls: Sequence[Call] = (),
    cut: bool = False,
    bad_args: bool = False,
    usage: dict[str, int] = ANTHROPIC_USAGE,
) -> bytes:
    def ev(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    out = [ev("message_start", {"message": {"usage": {**usage, "output_tokens": 1}}})]
    idx = 0
    if text:
        out.append(
            ev("content_block_start", {"index": idx, "content_block": {"type": "text", "text": ""}})
        )
        for word in text.split(" "):
            out.append(
                ev(
                    "content_block_delta",
                    {"index": idx, "delta": {"type": "text_delta", "text": word + " "}},
                )
            )
        out.append(ev("content_block_stop", {"index": idx}))
        idx += 1
    for i, n, a in calls:
        out.append(
            ev(
                "content_block_start",
                {
                    "index": idx,
                    "content_block": {"type": "tool_use", "id": i, "name": n, "input": {}},
                },
            )
        )
        args = json.dumps(a) if not bad_args else '{"path": '
        half = len(args) // 2
        for piece in (args[:half], args[half:]):
            out.append(
                ev(
                    "content_block_delta",
                    {"index": idx, "delta": {"type": "input_json_delta", "partial_json": piece}},
                )
            )
        out.append(ev("content_block_stop", {"index": idx}))
        idx += 1
    out.append(
        ev("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}})
    )
    if cut:
        return "".join(out).encode()
    out.append(ev("message_stop", {}))
    return "".join(out).encode()


Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport handler that replays responses and records requests."""

    def __init__(self, *responses: httpx.Response | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def sse(body: bytes, status: int = 200) -> httpx.Response:
    return httpx.Response(status, content=body, headers={"content-type": "text/event-stream"})


def through(handler: Callable[[Any], Any]) -> httpx.MockTransport:
    """A fakeserver handler (tests/fakeserver.py: Received -> Reply) as an httpx transport, so
    a fake server's rules answer in-process (its chunks joined into one body)."""
    from tests.fakeserver import Received

    def send(request: httpx.Request) -> httpx.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        reply = handler(
            Received(request.method, request.url.raw_path.decode(), headers, request.content)
        )
        return httpx.Response(reply.status, headers=reply.headers, content=b"".join(reply.chunks))

    return httpx.MockTransport(send)

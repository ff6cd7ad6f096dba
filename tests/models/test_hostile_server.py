"""A server that misbehaves on purpose: answers over the cap, lines without end, usage that
cannot be true, tool-call arguments that are not an object (mca/models/sse.py, http.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mca.errors import ModelHTTPError, StreamError
from mca.models.http import sane_usage
from mca.models.sse import capped_lines, read_stream, size_text, sse_events
from mca.types import Message, Request, Usage
from tests.helpers import settings_for
from tests.models.test_clients import REQ, client
from tests.models.wire import Recorder, anthropic_json, openai_json, sse

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("chunks", "lines"),
    [
        (["a\r", "\nb\n"], ["a", "b"]),  # \r\n split across two chunks is one line end
        (["a\rb\r\n", "\n"], ["a", "b", ""]),
        (["da", "ta: x", "\n\n"], ["data: x", ""]),
        (["tail"], ["tail"]),
        (["\r", "\n", "\r\n"], ["", ""]),
    ],
)
def test_lines_across_chunks(chunks: list[str], lines: list[str]) -> None:
    assert list(capped_lines(iter(chunks), cap=100)) == lines


def test_a_line_over_the_cap_ends_the_stream_before_it_is_held() -> None:
    def endless() -> Iterator[str]:
        while True:
            yield "x" * 1000

    with pytest.raises(StreamError, match="larger than 10 KiB"):
        list(capped_lines(endless(), cap=10 * 1024))


def test_a_stream_assembling_more_than_the_cap_ends() -> None:
    from mca.models.openai import StreamAssembler

    piece = json.dumps({"choices": [{"delta": {"content": "y" * 1000}}]})
    events = sse_events(iter([f"data: {piece}", ""] * 50))
    with pytest.raises(StreamError, match="streamed answer is larger than 20 KiB"):
        read_stream(events, StreamAssembler(), None, cap=20 * 1024)
    assert size_text(8 * MIB) == "8 MiB" and size_text(300) == "300 bytes"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_body_over_the_cap_is_not_read_whole(provider: str, tmp_path: Path) -> None:
    settings = settings_for(provider, tmp_path, stream=False, MCA_MAX_RESPONSE_BYTES="65536")
    body = openai_json("z" * 200_000) if provider == "openai" else anthropic_json("z" * 200_000)
    rec = Recorder(httpx.Response(200, json=body))
    with pytest.raises(StreamError, match="larger than 64 KiB"):
        client(provider, settings, rec).complete(REQ)


def test_an_error_body_is_read_to_64_kib(tmp_path: Path) -> None:
    settings = settings_for("openai", tmp_path)
    huge = {"error": {"message": "no " + "x" * 10 * MIB}}
    rec = Recorder(httpx.Response(400, json=huge))
    with pytest.raises(ModelHTTPError) as e:
        client("openai", settings, rec).complete(REQ)
    assert e.value.status == 400 and len(str(e.value)) < 2000


def test_usage_that_cannot_be_true_is_ignored_with_a_notice() -> None:
    notices: list[str] = []
    request = Request("s", (Message("user", "hi"),), (), max_output=100)
    assert sane_usage(Usage(900, 90), request, 5000, notices.append) == Usage(900, 90)
    assert sane_usage(Usage(10**12, 1), request, 5000, notices.append) is None
    assert sane_usage(Usage(10, 10**7), request, 5000, notices.append) is None
    assert sane_usage(Usage(10, 1, cached_tokens=11), request, 5000, notices.append) is None
    assert len(notices) == 3 and "ignored" in notices[0]


@pytest.mark.parametrize("stream", [True, False])
def test_reported_usage_of_a_trillion_tokens_never_reaches_the_turn(
    stream: bool, tmp_path: Path
) -> None:
    settings = settings_for("openai", tmp_path, stream=stream)
    usage = {"prompt_tokens": 10**12, "completion_tokens": 3}
    if stream:
        chunks = [
            {"choices": [{"delta": {"content": "hi"}}]},
            {"choices": [{"delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": usage},
        ]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        reply = sse(body.encode())
    else:
        reply = httpx.Response(200, json={**openai_json("hi"), "usage": usage})
    notices: list[str] = []
    resp = client("openai", settings, Recorder(reply), notices=notices).complete(REQ)
    assert resp.usage is None and resp.message.content == "hi" and notices


def _openai_stream(arguments: Any) -> httpx.Response:
    start = {"index": 0, "id": "c1", "function": {"name": "list_dir", "arguments": ""}}
    more = {"index": 0, "function": {"arguments": arguments}}
    chunks = [
        {"choices": [{"delta": {"tool_calls": [start]}}]},
        {"choices": [{"delta": {"tool_calls": [more]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return sse(
        ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()
    )


def _anthropic_stream(start: Any, partial: Any) -> httpx.Response:
    block = {"type": "tool_use", "id": "t1", "name": "list_dir", "input": start}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 5}}},
        {"type": "content_block_start", "index": 0, "content_block": block},
    ]
    if partial is not None:
        delta = {"type": "input_json_delta", "partial_json": partial}
        events.append({"type": "content_block_delta", "index": 0, "delta": delta})
    events += [{"type": "content_block_stop", "index": 0}, {"type": "message_stop"}]
    return sse("".join(f"data: {json.dumps(e)}\n\n" for e in events).encode())


@pytest.mark.parametrize(
    ("provider", "reply", "arguments", "invalid"),
    [
        ("openai", _openai_stream([1, 2]), {}, "a piece of them was list"),
        ("openai", _openai_stream(7), {}, "a piece of them was int"),
        ("openai", _openai_stream({"path": "src"}), {"path": "src"}, ""),
        ("openai", _openai_stream('["src"]'), {}, "not a JSON object (got list)"),
        ("anthropic", _anthropic_stream({}, ["src"]), {}, "a piece of it was list"),
        ("anthropic", _anthropic_stream({}, {"path": "src"}), {"path": "src"}, ""),
        ("anthropic", _anthropic_stream(["src"], None), {}, "not a JSON object (got list)"),
        ("anthropic", _anthropic_stream({"path": "src"}, None), {"path": "src"}, ""),
        ("anthropic", _anthropic_stream({}, None), {}, ""),
    ],
)
def test_streamed_arguments_that_are_not_an_object_are_answered(
    provider: str, reply: httpx.Response, arguments: dict[str, Any], invalid: str, tmp_path: Path
) -> None:
    settings = settings_for(provider, tmp_path)
    [call] = client(provider, settings, Recorder(reply)).complete(REQ).message.tool_calls
    assert call.arguments == arguments and invalid in call.invalid
    assert bool(call.invalid) == bool(invalid)


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        (
            "openai",
            {
                "choices": [
                    {
                        "message": {
                            "tool_calls": [{"function": {"name": "list_dir", "arguments": [1]}}]
                        }
                    }
                ]
            },
        ),
        (
            "anthropic",
            {"content": [{"type": "tool_use", "id": "t", "name": "list_dir", "input": [1]}]},
        ),
    ],
)
def test_whole_bodies_answer_the_same(provider: str, body: dict[str, Any], tmp_path: Path) -> None:
    settings = settings_for(provider, tmp_path, stream=False)
    [call] = (
        client(provider, settings, Recorder(httpx.Response(200, json=body)))
        .complete(REQ)
        .message.tool_calls
    )
    assert call.arguments == {} and "not a JSON object" in call.invalid

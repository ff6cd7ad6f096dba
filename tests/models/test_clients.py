"""Both wire protocols against httpx.MockTransport: mapping, streaming, errors, retries."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from mca.agent import Agent
from mca.assembly.wiring import model_options
from mca.config.settings import Settings
from mca.errors import ModelError, ModelHTTPError, StreamError
from mca.models import anthropic as anth
from mca.models import openai as oai
from mca.models.http import HttpModel
from mca.models.retry import RetryPolicy
from mca.models.sse import sse_events
from mca.text.sanitize import EXCERPT_CHARS
from mca.tools import tool_specs
from mca.tools.base import ToolEnv
from mca.types import Message, Request, ToolCall, Usage
from tests.helpers import WIRE_KEY, engine, settings_for
from tests.models.wire import (
    Call,
    Recorder,
    anthropic_json,
    anthropic_sse,
    openai_json,
    openai_sse,
    sse,
)

KEY = WIRE_KEY
PROVIDERS = ["openai", "anthropic"]


def client(
    provider: str,
    settings: Settings,
    rec: Recorder,
    sleeps: list[float] | None = None,
    notices: list[str] | None = None,
) -> HttpModel:
    """The provider's real client on a MockTransport; its waits and notices recorded."""
    cls = oai.OpenAIModel if provider == "openai" else anth.AnthropicModel
    policy = RetryPolicy(
        base=0.01,
        sleep=(sleeps.append if sleeps is not None else lambda s: None),
        jitter=lambda: 1.0,
    )
    notice = notices.append if notices is not None else lambda s: None
    transport = httpx.MockTransport(rec)
    return cls(model_options(settings), transport=transport, policy=policy, notice=notice)


def ok(
    provider: str, stream: bool, text: str = "", calls: Sequence[Call] = (), **kw: Any
) -> httpx.Response:
    if stream:
        body = (
            openai_sse(text, calls, **kw)
            if provider == "openai"
            else anthropic_sse(text, calls, **kw)
        )
        return sse(body)
    return httpx.Response(
        200, json=openai_json(text, calls) if provider == "openai" else anthropic_json(text, calls)
    )


REQ = Request("be helpful", (Message("user", "hi"),), tool_specs())


# -- pure mapping ------------------------------------------------------------------------------
HISTORY = (
    Message("user", "skills block", kind="skills"),
    Message("user", "read a.txt"),
    Message(
        "assistant",
        "",
        tool_calls=(ToolCall("t1", "read_file", {"path": "a.txt"}), ToolCall("t2", "list_dir", {})),
    ),
    Message("tool", "content", tool_call_id="t1", tool_name="read_file"),
    Message("tool", "boom", tool_call_id="t2", tool_name="list_dir", is_error=True),
    Message("assistant", "done"),
)


def test_openai_mapping() -> None:
    wire = oai.to_wire_messages("sys", HISTORY)
    assert [m["role"] for m in wire] == [
        "system",
        "user",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert wire[3]["tool_calls"][0] == {
        "id": "t1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
    }
    assert wire[3]["content"] == "" and wire[4] == {
        "role": "tool",
        "tool_call_id": "t1",
        "content": "content",
    }
    tools = oai.to_wire_tools(tool_specs())
    assert tools[0]["type"] == "function" and tools[0]["function"]["name"] == "read_file"
    resp = oai.from_wire_response(openai_json("", [("c1", "list_dir", {"path": "."})]))
    assert resp.message.tool_calls == (
        ToolCall("c1", "list_dir", {"path": "."}),
    ) and resp.usage == Usage(100, 7)


def test_anthropic_mapping_merges_user_side_messages() -> None:
    wire = anth.to_wire_messages(HISTORY)
    assert [m["role"] for m in wire] == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in wire[0]["content"]] == ["text", "text"]
    assert wire[1]["content"][0] == {
        "type": "tool_use",
        "id": "t1",
        "name": "read_file",
        "input": {"path": "a.txt"},
    }
    assert wire[2]["content"][1] == {
        "type": "tool_result",
        "tool_use_id": "t2",
        "content": "boom",
        "is_error": True,
    }
    body = anth.request_body("claude", 100, Request("sys", HISTORY, tool_specs()), True)
    cache = {"type": "ephemeral"}  # the stable prefix is marked for prompt caching
    assert body["system"] == [{"type": "text", "text": "sys", "cache_control": cache}]
    assert body["tools"][0]["input_schema"]["type"] == "object"
    assert body["tools"][-1]["cache_control"] == cache and "cache_control" not in body["tools"][0]
    assert body["max_tokens"] == 100
    resp = anth.from_wire_response(anthropic_json("hi", [("u1", "read_file", {"path": "x"})]))
    assert resp.message.content == "hi" and resp.message.tool_calls[0].name == "read_file"


@pytest.mark.parametrize("stream", [True, False])
def test_anthropic_reports_the_prompt_it_read_from_cache(stream: bool, tmp_path: Path) -> None:
    # the prompt is the fresh, the cache-written and the cache-read tokens together
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 70}
    if stream:
        rec = Recorder(sse(anthropic_sse("hi", usage=usage)))
    else:
        rec = Recorder(httpx.Response(200, json=anthropic_json("hi", usage=usage)))
    resp = client("anthropic", settings_for("anthropic", tmp_path, stream), rec).complete(REQ)
    assert resp.usage == Usage(100, 7, cached_tokens=70, cache_write_tokens=20)


def test_sse_parser() -> None:
    lines = ["event: a", "data: 1", "", ": comment", "data: x", "data: y", "", "data: tail"]
    assert list(sse_events(iter(lines))) == [("a", "1"), ("", "x\ny"), ("", "tail")]


# -- round trips -------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [True, False])
def test_plain_text(provider: str, stream: bool, tmp_path: Path) -> None:
    rec = Recorder(ok(provider, stream, "hello there"))
    seen: list[str] = []
    resp = client(provider, settings_for(provider, tmp_path, stream), rec).complete(
        REQ, seen.append
    )
    assert resp.message.content.strip() == "hello there" and "".join(seen).strip() == "hello there"
    assert resp.usage == Usage(100, 7)
    req = rec.requests[0]
    if provider == "openai":
        assert (
            req.url.path == "/v1/chat/completions"
            and req.headers["authorization"] == f"Bearer {KEY}"
        )
        assert rec.bodies()[0]["stream"] is stream
        if stream:
            assert rec.bodies()[0]["stream_options"] == {"include_usage": True}
    else:
        assert req.url.path == "/v1/messages" and req.headers["x-api-key"] == KEY
        assert req.headers["anthropic-version"] == "2023-06-01"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [True, False])
def test_one_and_two_parallel_tool_calls(provider: str, stream: bool, tmp_path: Path) -> None:
    calls: list[Call] = [
        ("c1", "read_file", {"path": "a.txt"}),
        ("c2", "list_dir", {"path": ".", "depth": 2}),
    ]
    for n in (1, 2):
        rec = Recorder(ok(provider, stream, "", calls[:n]))
        resp = client(provider, settings_for(provider, tmp_path, stream), rec).complete(REQ)
        assert resp.message.tool_calls == tuple(ToolCall(i, name, a) for i, name, a in calls[:n])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_and_non_stream_give_the_same_message(provider: str, tmp_path: Path) -> None:
    calls = [("c1", "read_file", {"path": "a.txt"})]
    a = client(
        provider, settings_for(provider, tmp_path, True), Recorder(ok(provider, True, "", calls))
    ).complete(REQ)
    b = client(
        provider, settings_for(provider, tmp_path, False), Recorder(ok(provider, False, "", calls))
    ).complete(REQ)
    assert a.message == b.message


# -- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("status", "body", "expect"),
    [
        (
            401,
            {"error": {"message": "invalid key"}},
            "API key is missing or wrong; mca sent the key from",
        ),
        (403, {"error": {"message": "forbidden"}}, "API key is missing or wrong"),
        (404, {"error": {"message": "no such model"}}, "was not found at base URL"),
        (
            400,
            {"error": {"message": "This model's maximum context length is 8192 tokens"}},
            "longer than the model's context window",
        ),
        (
            400,
            {"error": {"type": "invalid_request_error", "message": "prompt is too long"}},
            "context window",
        ),
    ],
)
def test_error_statuses_are_clear(
    provider: str, status: int, body: dict[str, Any], expect: str, tmp_path: Path
) -> None:
    rec = Recorder(httpx.Response(status, json=body))
    with pytest.raises(ModelHTTPError) as info:
        client(provider, settings_for(provider, tmp_path), rec).complete(REQ)
    msg = str(info.value)
    assert expect in msg and KEY not in msg and len(rec.requests) == 1
    if status in (401, 403):
        assert ("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY") in msg
    if status == 404:
        assert "gpt-4o" in msg or "claude" in msg


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retry_honours_retry_after(provider: str, tmp_path: Path) -> None:
    sleeps: list[float] = []
    rec = Recorder(
        httpx.Response(429, json={"error": {"message": "slow"}}, headers={"retry-after": "3"}),
        httpx.Response(503, json={"error": {"message": "busy"}}),
        ok(provider, True, "finally"),
    )
    notices: list[str] = []
    model = client(provider, settings_for(provider, tmp_path), rec, sleeps, notices)
    assert model.complete(REQ).message.content.strip() == "finally"
    assert sleeps[0] == 3.0 and 0 < sleeps[1] <= 0.02 and len(notices) == 2
    assert "HTTP 429" in notices[0]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_server_error_that_never_clears(provider: str, tmp_path: Path) -> None:
    sleeps: list[float] = []
    rec = Recorder(*[httpx.Response(500, json={"error": {"message": "down"}}) for _ in range(5)])
    with pytest.raises(ModelHTTPError, match="HTTP 500"):
        client(provider, settings_for(provider, tmp_path), rec, sleeps).complete(REQ)
    assert len(rec.requests) == 5 and len(sleeps) == 4
    assert sleeps == sorted(sleeps)  # exponential


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [True, False])
def test_a_long_server_error_is_quoted_short(provider: str, stream: bool, tmp_path: Path) -> None:
    long = "x" * (EXCERPT_CHARS + 500)
    bodies: list[httpx.Response] = [httpx.Response(400, json={"error": {"message": long}})]
    if stream:
        bodies.append(sse(f'data: {{"type": "error", "error": "{long}"}}\n\n'.encode()))
    for body in bodies:
        with pytest.raises(ModelError) as info:
            client(provider, settings_for(provider, tmp_path, stream), Recorder(body)).complete(REQ)
        assert "x" * EXCERPT_CHARS in str(info.value) and long not in str(info.value)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("exc", [httpx.ConnectError("refused"), httpx.ReadTimeout("slow")])
def test_connection_errors_retry_then_fail_clearly(
    provider: str, exc: Exception, tmp_path: Path
) -> None:
    rec = Recorder(exc, ok(provider, False, "ok"))
    s = settings_for(provider, tmp_path, False)
    assert client(provider, s, rec).complete(REQ).message.content == "ok"
    rec = Recorder(*[exc] * 5)
    expected = "cannot reach" if isinstance(exc, httpx.ConnectError) else "no answer from .* within"
    with pytest.raises(ModelError, match=expected):
        client(provider, s, rec).complete(REQ)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cut_stream_is_a_clear_error(provider: str, tmp_path: Path) -> None:
    rec = Recorder(ok(provider, True, "", [("c1", "read_file", {"path": "a.txt"})], cut=True))
    with pytest.raises(StreamError, match=r"cut off"):
        client(provider, settings_for(provider, tmp_path), rec).complete(REQ)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unreadable_arguments_are_kept_as_a_call_not_run(provider: str, tmp_path: Path) -> None:
    """The model's mistake, not the server's: the agent answers the call with the reason."""
    rec = Recorder(ok(provider, True, "", [("c1", "read_file", {"path": "a.txt"})], bad_args=True))
    (call,) = (
        client(provider, settings_for(provider, tmp_path), rec).complete(REQ).message.tool_calls
    )
    assert call.name == "read_file" and call.arguments == {} and "not valid JSON" in call.invalid


class _Dropping(httpx.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "par"}}]}\n\n'
        raise httpx.ReadError("connection reset")


def test_connection_dropped_mid_stream(tmp_path: Path) -> None:
    rec = Recorder(
        httpx.Response(200, stream=_Dropping(), headers={"content-type": "text/event-stream"})
    )
    with pytest.raises(StreamError, match="cut off"):
        client("openai", settings_for("openai", tmp_path), rec).complete(REQ)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_failed_turn_keeps_its_completed_steps_and_nothing_else(
    provider: str, env: ToolEnv, tmp_path: Path
) -> None:
    rec = Recorder(
        ok(provider, True, "first answer"),
        ok(provider, True, "", [("c1", "list_dir", {})]),
        ok(provider, True, "", [("c2", "read_file", {"path": "x"})], cut=True),
    )
    agent = Agent(engine(client(provider, settings_for(provider, tmp_path), rec), "s"), env)
    agent.run_turn("one")
    before = list(agent.messages)
    with pytest.raises(StreamError) as failed:
        agent.run_turn("two")
    assert "1 completed tool call is kept" in str(failed.value)  # as a cancel keeps it (#46)
    kept = agent.messages[len(before) :]
    assert agent.messages[: len(before)] == before
    assert [m.role for m in kept] == ["user", "assistant", "tool", "user"]
    assert kept[1].tool_calls[0].id == "c1" and kept[-1].kind == "cancelled"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_agent_round_trip_sends_tool_results_back(
    provider: str, env: ToolEnv, ws: Path, tmp_path: Path
) -> None:
    (ws / "a.txt").write_text("distinctive-content\n")
    rec = Recorder(
        ok(provider, True, "", [("c1", "read_file", {"path": "a.txt"})]),
        ok(provider, True, "it says hi"),
    )
    agent = Agent(engine(client(provider, settings_for(provider, tmp_path), rec), "s"), env)
    result = agent.run_turn("read a.txt")
    assert result.answer.strip() == "it says hi" and result.usage == Usage(200, 14)
    second = str(rec.bodies()[1]["messages"])
    assert "distinctive-content" in second and "c1" in second


def test_url_joining(tmp_path: Path) -> None:
    s = settings_for("anthropic", tmp_path).with_(base_url="http://h:1/v1")
    rec = Recorder(ok("anthropic", True, "x"))
    client("anthropic", s, rec).complete(REQ)
    assert str(rec.requests[0].url) == "http://h:1/v1/messages"


def test_empty_assistant_replies_stay_valid_on_the_wire() -> None:
    history = (Message("user", "a"), Message("assistant", ""), Message("user", "b"))
    assert anth.to_wire_messages(history) == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]
    assert oai.to_wire_messages("", history)[1] == {"role": "assistant", "content": ""}


class _Interrupted(httpx.SyncByteStream):
    closed = False

    def __iter__(self) -> Iterator[bytes]:
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "partial"}}]}\n\n'
        raise KeyboardInterrupt  # the person pressed Ctrl-C while the model was streaming

    def close(self) -> None:
        type(self).closed = True


def test_ctrl_c_mid_stream_closes_it_and_keeps_the_conversation(
    env: ToolEnv, tmp_path: Path
) -> None:
    rec = Recorder(ok("openai", True, "first"), httpx.Response(200, stream=_Interrupted()))
    agent = Agent(engine(client("openai", settings_for("openai", tmp_path), rec), "s"), env)
    agent.run_turn("one")
    before = list(agent.messages)
    with pytest.raises(KeyboardInterrupt):
        agent.run_turn("two")
    assert _Interrupted.closed and agent.messages == before


@pytest.mark.parametrize(
    ("path", "body", "window"),
    [
        ("/props", {"default_generation_settings": {"n_ctx": 4096}}, 4096),
        ("/v1/models", {"data": [{"id": "m", "max_model_len": 16384}]}, 16384),
        ("/api/show", {"model_info": {"llama.context_length": 8192}}, 8192),
    ],
)
def test_the_window_is_asked_of_the_server(path: str, body: dict[str, Any], window: int) -> None:
    from mca.models.window import discover_window

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == path:
            return httpx.Response(200, json=body)
        return httpx.Response(404, text="no")

    found = discover_window("http://local:8080/v1", "m", httpx.MockTransport(handler))
    assert found is not None and found[0] == window and found[1]
    nothing = discover_window(
        "http://local:8080/v1", "m", httpx.MockTransport(lambda r: httpx.Response(404))
    )
    assert nothing is None

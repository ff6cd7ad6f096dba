"""Reasoning models on the three wires, in-process against the strict fake's rules
(tests/strict_server.py through an httpx transport): what is sent, what comes back as thinking,
what goes back to the model, and what a server's 400 makes mca change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from mca.assembly.wiring import model_options
from mca.config.settings import Settings
from mca.errors import ModelHTTPError, StreamError
from mca.models import anthropic as anth
from mca.models import build_model
from mca.models import responses as resp
from mca.models.http import HttpModel
from mca.models.retry import RetryPolicy
from mca.models.sse import read_stream
from mca.tools import tool_specs
from mca.types import Message, Reasoning, Request, ToolCall
from tests.helpers import WIRE_KEY, settings_for
from tests.models.wire import Recorder, sse, through
from tests.prompt_cache import PromptCache
from tests.strict_rules import messages_refusal
from tests.strict_server import REASONING_TOKENS, StrictServer

SAMPLING = ("temperature", "top_p", "top_k", "presence_penalty", "frequency_penalty")


def model_for(
    settings: Settings, transport: httpx.BaseTransport, notices: list[str] | None = None
) -> HttpModel:
    """The settings' real client (its wire from the settings) on a transport."""
    built = build_model(model_options(settings))
    assert isinstance(built, HttpModel)
    notice = notices.append if notices is not None else (lambda s: None)
    policy = RetryPolicy(base=0.01, sleep=lambda s: None)
    return type(built)(model_options(settings), transport=transport, policy=policy, notice=notice)


def openai(tmp_path: Path, model: str, stream: bool = True, **env: str) -> Settings:
    return settings_for("openai", tmp_path, stream, MCA_MODEL=model, **env)


def claude(tmp_path: Path, model: str, stream: bool = True, **env: str) -> Settings:
    return settings_for("anthropic", tmp_path, stream, MCA_MODEL=model, **env)


def turn(model: HttpModel, calls: int = 3) -> tuple[list[Message], list[str]]:
    """A turn of `calls` tool calls and an answer, as the agent would run it (tool results
    appended): the messages, and the thinking shown along the way."""
    messages = [Message("user", "what does notes.txt say?")]
    shown: list[str] = []
    for _ in range(calls + 1):
        request = Request("be brief", tuple(messages), tool_specs(), 4096)
        reply = model.complete(request, None, shown.append).message
        messages.append(reply)
        messages += [
            Message("tool", "the code is MAGIC-42", tool_call_id=c.id) for c in reply.tool_calls
        ]
    return messages, shown


class Seen:
    """A strict server that also keeps every body it was sent."""

    def __init__(self) -> None:
        self.rules = StrictServer()
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, received: Any) -> Any:
        self.bodies.append(json.loads(received.body))
        return self.rules(received)


# -- Chat Completions ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gpt-5", "o4-mini", "o3", "gpt-5.6-terra"])
def test_reasoning_models_get_max_completion_tokens_on_chat(tmp_path: Path, name: str) -> None:
    seen = Seen()
    model = model_for(openai(tmp_path, name, MCA_WIRE="chat"), through(seen))
    messages, _ = turn(model)
    assert seen.rules.refused == [] and messages[-1].content.startswith("Three tools ran")
    for body in seen.bodies:
        assert "max_tokens" not in body and not set(SAMPLING) & set(body)
        assert body["max_completion_tokens"] == 4096 + 10_000  # room for the reasoning
        assert "reasoning_effort" not in body  # the model's own default


def test_the_effort_goes_to_a_reasoning_model_only(tmp_path: Path) -> None:
    seen = Seen()
    model = model_for(
        openai(tmp_path, "o4-mini", MCA_WIRE="chat", MCA_REASONING="high"), through(seen)
    )
    model.complete(Request("s", (Message("user", "hi"),), ()))
    assert seen.bodies[-1]["reasoning_effort"] == "high"
    seen = Seen()
    model = model_for(openai(tmp_path, "gpt-4o", MCA_REASONING="high"), through(seen))
    model.complete(Request("s", (Message("user", "hi"),), (), 100))
    assert seen.rules.refused == [] and "reasoning_effort" not in seen.bodies[-1]
    assert seen.bodies[-1]["max_completion_tokens"] == 100  # OpenAI's own API: the new name


def test_reasoning_tokens_are_reported(tmp_path: Path) -> None:
    model = model_for(openai(tmp_path, "gpt-5", MCA_WIRE="chat"), through(StrictServer()))
    reply = model.complete(Request("s", (Message("user", "hi"),), ()))
    assert reply.usage is not None and reply.usage.reasoning_tokens == REASONING_TOKENS


def test_a_server_that_asks_for_the_other_bound_gets_it_once(tmp_path: Path) -> None:
    refusal = {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model."
            " Use 'max_completion_tokens' instead."
        }
    }
    ok = {"choices": [{"index": 0, "message": {"content": "fine"}, "finish_reason": "stop"}]}
    rec = Recorder(httpx.Response(400, json=refusal), httpx.Response(200, json=ok))
    rec.responses.append(httpx.Response(200, json=ok))
    notices: list[str] = []
    settings = settings_for(
        "openai", tmp_path, False, server="http://127.0.0.1:9", MCA_MODEL="local"
    )
    model = model_for(settings, httpx.MockTransport(rec), notices)
    request = Request("s", (Message("user", "hi"),), (), 50)
    assert model.complete(request).message.content == "fine"
    model.complete(request)
    sent = rec.bodies()
    assert [("max_tokens" in b, "max_completion_tokens" in b) for b in sent] == [
        (True, False),
        (False, True),
        (False, True),  # remembered for the session
    ]
    assert notices == ["the server asked for max_completion_tokens: sent again with it"]


def test_a_refusal_that_asks_for_nothing_is_not_retried(tmp_path: Path) -> None:
    rec = Recorder(httpx.Response(400, json={"error": {"message": "bad tools"}}))
    model = model_for(openai(tmp_path, "gpt-4o", False), httpx.MockTransport(rec))
    with pytest.raises(ModelHTTPError, match="bad tools"):
        model.complete(Request("s", (Message("user", "hi"),), ()))
    assert len(rec.requests) == 1


@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_content_is_thinking_and_never_goes_back(tmp_path: Path, stream: bool) -> None:
    settings = settings_for("openai", tmp_path, stream, server="http://x", MCA_MODEL="qwen3:8b")
    seen = Seen()
    messages, shown = turn(model_for(settings, through(seen)))
    assert "".join(shown).startswith("Step 1:") and "Step" not in messages[-1].content
    assert all(r.origin == "" for m in messages for r in m.reasoning)
    assert "Step 1" not in json.dumps(seen.bodies[-1])  # never sent back


# -- the Responses API ---------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("name", ["gpt-5", "o4-mini", "gpt-5-codex", "gpt-5.6-luna"])
def test_responses_carries_reasoning_from_call_to_call(
    tmp_path: Path, name: str, stream: bool
) -> None:
    seen = Seen()
    settings = openai(tmp_path, name, stream)
    assert settings.wire == "responses"  # the registry's choice for a reasoning model
    messages, shown = turn(model_for(settings, through(seen)))
    assert seen.rules.refused == [] and messages[-1].content.startswith("Three tools ran")
    assert "".join(shown).count("Step ") == 4 and "Step" not in messages[-1].content
    last = seen.bodies[-1]
    assert last["store"] is False and last["include"] == ["reasoning.encrypted_content"]
    assert last["reasoning"] == {"summary": "auto"} and last["max_output_tokens"] == 4096 + 10_000
    kinds = [i.get("type") or i.get("role") for i in last["input"]]
    assert kinds == ["user"] + ["reasoning", "function_call", "function_call_output"] * 3
    assert all(t["strict"] is False for t in last["tools"]) and "instructions" in last
    assert not set(SAMPLING) & set(last) and "max_tokens" not in last


def test_reasoning_goes_back_only_to_the_model_that_wrote_it() -> None:
    mine = Reasoning("t", resp.origin("gpt-5"), item_id="rs_1", encrypted="gAAA")
    other = Reasoning("t", resp.origin("o3"), item_id="rs_2", encrypted="gBBB")
    reply = Message(
        "assistant", "", tool_calls=(ToolCall("c", "list_dir", {}),), reasoning=(mine, other)
    )
    items = resp.to_wire_input([Message("user", "hi"), reply], resp.origin("gpt-5"))
    assert [i.get("id") for i in items if i.get("type") == "reasoning"] == ["rs_1"]


def test_without_its_reasoning_a_call_is_refused() -> None:
    """The fake refuses what the API refuses: a function call sent back without the reasoning
    item that led to it (so the test above can fail)."""
    rules = StrictServer()
    body = {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "x"}],
        "include": [resp.ENCRYPTED],
    }
    first = resp.from_wire_response(json.loads(b"".join(rules._responses(body).chunks)), "gpt-5")
    call = first.message.tool_calls[0]
    again = {
        **body,
        "input": [
            {"role": "user", "content": "x"},
            {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": "{}"},
            {"type": "function_call_output", "call_id": call.id, "output": "ok"},
        ],
    }
    from tests.strict_rules import responses_refusal

    refusal = responses_refusal(again, rules.issued)
    assert refusal is not None and "without its required 'reasoning' item" in refusal.message


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (
            {"type": "response.failed", "response": {"error": {"message": "overloaded"}}},
            "overloaded",
        ),
        ({"type": "error", "code": "server_error", "message": "boom"}, "boom"),
        ({"type": "response.output_text.delta", "output_index": 3, "delta": "x"}, "never added"),
    ],
)
def test_responses_stream_errors(event: dict[str, Any], problem: str) -> None:
    with pytest.raises(StreamError, match=problem):
        read_stream(iter([("", json.dumps(event))]), resp.StreamAssembler(), None)


def test_a_cut_answer_and_a_cut_stream() -> None:
    done = {
        "type": "response.incomplete",
        "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
    }
    added = {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}}
    text = {"type": "response.output_text.delta", "output_index": 0, "delta": "half"}
    events = [("", json.dumps(e)) for e in (added, text, done)]
    got = read_stream(iter(events), resp.StreamAssembler(), None)
    assert got.cut and got.message.content == "half"
    with pytest.raises(StreamError, match="ended before"):
        read_stream(iter(events[:2]), resp.StreamAssembler(), None)


def test_no_summary_for_an_organisation_that_may_not_have_one(tmp_path: Path) -> None:
    refusal = {
        "error": {
            "message": "Your organization must be verified to generate reasoning summaries.",
            "param": "reasoning.summary",
        }
    }
    ok = {
        "status": "completed",
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "hi"}]}],
    }
    rec = Recorder(httpx.Response(400, json=refusal), httpx.Response(200, json=ok))
    notices: list[str] = []
    model = model_for(openai(tmp_path, "gpt-5", False), httpx.MockTransport(rec), notices)
    assert model.complete(Request("s", (Message("user", "hi"),), ())).message.content == "hi"
    assert [b.get("reasoning") for b in rec.bodies()] == [{"summary": "auto"}, None]
    assert "no reasoning summary" in notices[0]


# -- Anthropic: thinking -------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [True, False])
def test_thinking_blocks_go_back_first_with_their_signatures(tmp_path: Path, stream: bool) -> None:
    seen = Seen()
    settings = claude(tmp_path, "claude-sonnet-4-5", stream, MCA_THINKING="2048")
    messages, shown = turn(model_for(settings, through(seen)))
    assert seen.rules.refused == [] and messages[-1].content.startswith("Three tools ran")
    assert "".join(shown).count("Step ") == 4 and "Step" not in messages[-1].content
    last = seen.bodies[-1]
    assert last["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert last["max_tokens"] == 4096 + 2048  # the answer's room and the budget's
    assistants = [m for m in last["messages"] if m["role"] == "assistant"]
    assert all(m["content"][0]["type"] == "thinking" for m in assistants)
    assert all(m["content"][0]["signature"].startswith("Eq") for m in assistants)


def test_without_its_thinking_block_a_tool_use_is_refused(tmp_path: Path) -> None:
    """The fake refuses what the API refuses (so the test above can fail)."""
    use = {"type": "tool_use", "id": "t1", "name": "list_dir", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 5000,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ],
    }
    refusal = messages_refusal(body, {"anthropic-version": "x"}, {})
    assert refusal is not None and "must start with a thinking block" in refusal.message


@pytest.mark.parametrize(
    ("env", "thinking", "extra"),
    [
        ({"MCA_REASONING": "high"}, {"type": "enabled", "budget_tokens": 16_384}, 16_384),
        ({"MCA_REASONING": "none", "MCA_THINKING": "4096"}, None, 0),
        ({}, None, 0),
    ],
)
def test_the_thinking_a_budget_model_is_asked_for(
    tmp_path: Path, env: dict[str, str], thinking: dict[str, Any] | None, extra: int
) -> None:
    settings = settings_for("anthropic", tmp_path, True, MCA_MODEL="claude-sonnet-4-5", **env)
    body = anth.request_body(
        "m",
        0,
        Request("s", (Message("user", "x"),), (), 1000),
        True,
        anth.thinking_for(model_options(settings)),
    )
    assert body.get("thinking") == thinking and body["max_tokens"] == 1000 + extra


def test_an_adaptive_model_is_told_its_effort(tmp_path: Path) -> None:
    settings = claude(tmp_path, "claude-sonnet-5", MCA_REASONING="xhigh", MCA_THINKING="2048")
    body = anth.request_body(
        "m", 0, Request("s", (), ()), True, anth.thinking_for(model_options(settings))
    )
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "max"}
    seen = Seen()
    messages, _ = turn(model_for(settings, through(seen)))
    assert seen.rules.refused == [] and messages[-1].content.startswith("Three tools ran")


# -- Anthropic: the rolling cache breakpoint ------------------------------------------------------
def _loop(tmp_path: Path, rolling: bool) -> list[tuple[int, int, int]]:
    """A turn of five tool calls against Anthropic's documented cache: each call's
    (fresh, read, written) input tokens."""
    cache = PromptCache()
    history = [Message("user", "what does notes.txt say? " * 20)]
    out = []
    for n in range(6):
        request = Request("system prompt " * 300, tuple(history), tool_specs(), 1000)
        body = anth.request_body("claude-sonnet-4-5", 0, request, False, rolling=rolling)
        marks = json.dumps(body).count('"cache_control"')
        assert marks <= anth.MAX_BREAKPOINTS
        used = cache.use(body)
        out.append((used.fresh, used.read, used.written))
        call = ToolCall(f"t{n}", "read_file", {"path": f"f{n}.txt"})
        history += [
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "line of a file\n" * 200, tool_call_id=call.id),
        ]
    return out


def test_the_rolling_breakpoint_reads_the_conversation_from_the_cache(tmp_path: Path) -> None:
    rolling, fixed = _loop(tmp_path, True), _loop(tmp_path, False)
    # with it, each call reads everything the one before sent; without, only tools and system
    assert all(
        read >= sum(prev)
        for read, prev in zip([r for _, r, _ in rolling[1:]], rolling, strict=False)
    )
    assert len({read for _, read, _ in fixed[1:]}) == 1
    assert sum(f for f, _, _ in rolling) < sum(f for f, _, _ in fixed) / 3


def test_breakpoints_sit_on_the_last_message_and_the_user_one_before() -> None:
    history = (
        Message("user", "go"),
        Message("assistant", "", tool_calls=(ToolCall("t1", "list_dir", {}),)),
        Message("tool", "a", tool_call_id="t1"),
    )
    body = anth.request_body("m", 0, Request("sys", history, tool_specs()), False)
    marked = [
        (i, j)
        for i, m in enumerate(body["messages"])
        for j, b in enumerate(m["content"])
        if "cache_control" in b
    ]
    assert marked == [(0, 0), (2, 0)]
    assert body["system"][0]["cache_control"] and body["tools"][-1]["cache_control"]


def test_known_keys_never_leave_in_thinking(tmp_path: Path) -> None:
    reply = Message(
        "assistant",
        "",
        reasoning=(Reasoning(f"the key is {WIRE_KEY}", anth.origin("m"), signature="s"),),
    )
    rec = Recorder(sse(b'event: message_stop\ndata: {"type":"message_stop"}\n\n'))
    settings = claude(tmp_path, "m")
    model = model_for(settings, httpx.MockTransport(rec))
    model.complete(Request("s", (Message("user", "x"), reply, Message("user", "y")), ()))
    assert WIRE_KEY not in rec.requests[0].content.decode()


def test_the_responses_wire_retries_what_can_succeed(tmp_path: Path) -> None:
    ok = {"status": "completed", "output": [], "usage": {"input_tokens": 5, "output_tokens": 1}}
    rec = Recorder(
        httpx.Response(429, json={"error": {"message": "slow down"}}, headers={"retry-after": "0"}),
        httpx.Response(503, json={"error": {"message": "busy"}}),
        httpx.Response(200, json=ok),
    )
    notices: list[str] = []
    model = model_for(openai(tmp_path, "gpt-5", False), httpx.MockTransport(rec), notices)
    reply = model.complete(Request("s", (Message("user", "hi"),), ()))
    assert reply.usage is not None and len(rec.requests) == 3 and "HTTP 429" in notices[0]
    assert rec.requests[0].url.path == "/v1/responses"
    rec = Recorder(httpx.Response(401, json={"error": {"message": "bad key"}}))
    with pytest.raises(ModelHTTPError, match=r"the API key is missing or wrong.*OPENAI_API_KEY"):
        model_for(openai(tmp_path, "gpt-5"), httpx.MockTransport(rec)).complete(
            Request("s", (Message("user", "hi"),), ())
        )


def test_thinking_alone_is_no_reply_to_send_back() -> None:
    """A reply cut before its text: its thinking is not sent back alone (the APIs refuse a
    reasoning item without the item it led to, and an assistant turn of thinking only)."""
    thought = Message("assistant", "", reasoning=(Reasoning("t", resp.origin("m"), encrypted="g"),))
    assert resp.to_wire_input([Message("user", "x"), thought], resp.origin("m")) == [
        {"role": "user", "content": "x"}
    ]
    signed = Message("assistant", "", reasoning=(Reasoning("t", anth.origin("m"), signature="s"),))
    assert [
        m["role"] for m in anth.to_wire_messages([Message("user", "x"), signed], anth.origin("m"))
    ] == ["user"]

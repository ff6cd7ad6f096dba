"""Real provider traffic other projects recorded (fixtures/cassettes/, PROVENANCE.md there),
replayed through mca's parsers: each answer is read by the wire module that would read it, and
where the cassette holds the request that followed a tool call, mca's mapping of its own parsed
reply (with the recorded tool results) must send what the recorded request sent: the thinking
blocks with their signatures, the reasoning items with their encrypted content, in place."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mca.models import anthropic, openai, responses
from mca.models.sse import read_stream
from mca.types import Message, Response

CASSETTES = Path(__file__).resolve().parents[2] / "fixtures" / "cassettes"
NAMES = sorted(p.stem for p in CASSETTES.glob("*.json"))
WIRES: dict[str, Any] = {"messages": anthropic, "responses": responses, "chat": openai}
SECRETS = re.compile(r"sk-[A-Za-z0-9_-]{16,}|sk-ant-|proj_[A-Za-z0-9]{8,}|org-[A-Za-z0-9]{8,}")


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CASSETTES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def read(wire: str, interaction: dict[str, Any]) -> tuple[Response, str, str]:
    """(the reply, its thinking as shown, its text as shown) of one recorded answer."""
    module = WIRES[wire]
    model = str(interaction["request"]["model"])
    answer = interaction["response"]
    thought: list[str] = []
    text: list[str] = []
    if "events" in answer:
        events = ((e if isinstance(e, str) else json.dumps(e)) for e in answer["events"])
        kw = {"model": model} if wire != "chat" else {}
        acc = module.StreamAssembler(thought.append, **kw)
        response = read_stream((("", e) for e in events), acc, text.append)
    else:
        body = answer["body"]
        response = (
            module.from_wire_response(body, model)
            if wire != "chat"
            else module.from_wire_response(body)
        )
        thought += [r.text for r in response.message.reasoning]
        text.append(response.message.content)
    return response, "".join(thought), "".join(text)


def replies(name: str) -> list[tuple[Response, str, str]]:
    data = load(name)
    return [read(data["wire"], i) for i in data["interactions"]]


def test_every_cassette_is_listed_with_its_provenance() -> None:
    provenance = (CASSETTES / "PROVENANCE.md").read_text(encoding="utf-8")
    for name in NAMES:
        source = load(name)["source"]
        row = next(line for line in provenance.splitlines() if f"`{name}.json`" in line)
        assert source["repo"] in row and source["path"] in row and source["commit"] in row
        assert "MIT" in row or "Apache-2.0" in row
    assert (CASSETTES / "LICENSES" / "pydantic-ai.MIT.txt").is_file()
    assert (CASSETTES / "LICENSES" / "Apache-2.0.txt").is_file()


@pytest.mark.parametrize("name", NAMES)
def test_no_secret_and_every_answer_parses(name: str) -> None:
    text = (CASSETTES / f"{name}.json").read_text(encoding="utf-8")
    assert SECRETS.findall(text) == []
    for response, thought, shown in replies(name):
        assert response.usage is not None and response.usage.prompt_tokens > 0
        assert shown == response.message.content  # what streamed is the answer, whole
        if thought.strip():
            assert thought.strip()[:40] not in response.message.content  # never the answer


# -- Anthropic -----------------------------------------------------------------------------------
def _comparable(value: Any) -> Any:
    """A wire message as the API reads it: cache marks and default flags left out."""
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, dict):
        return {
            k: _comparable(v)
            for k, v in value.items()
            if k != "cache_control" and not (k == "is_error" and v is False)
        }
    return value


def _history(recorded: list[dict[str, Any]], wire: str, parsed: list[Message]) -> list[Message]:
    """mca's messages for a recorded conversation: its user side from the recording, its
    assistant side as mca parsed the recorded answers."""
    out: list[Message] = []
    replies_ = iter(parsed)
    for item in recorded:
        role = item.get("role", "")
        kind = item.get("type", "")
        content: Any = item.get("content")
        if wire == "messages" and role == "assistant":
            out.append(next(replies_))
        elif wire == "messages":
            for b in content if isinstance(content, list) else [{"type": "text", "text": content}]:
                if b["type"] == "tool_result":
                    out.append(Message("tool", b["content"], tool_call_id=b["tool_use_id"]))
                else:
                    out.append(Message("user", b["text"]))
        elif kind == "function_call_output":
            out.append(Message("tool", item["output"], tool_call_id=item["call_id"]))
        elif role == "user":
            out.append(Message("user", content if isinstance(content, str) else content[0]["text"]))
        elif (kind in ("function_call", "reasoning") or role == "assistant") and (
            not out or out[-1].role != "assistant"
        ):
            out.append(next(replies_))
    return out


@pytest.mark.parametrize("name", ["anthropic-thinking-tools", "anthropic-thinking-tools-stream"])
def test_thinking_goes_back_before_the_tool_use_as_recorded(name: str) -> None:
    data = load(name)
    first, then = data["interactions"]
    reply, thought, _ = read("messages", first)
    assert thought and reply.message.reasoning[0].signature  # shown, and kept to go back
    assert reply.message.tool_calls and reply.message.reasoning[0].text == thought
    recorded = then["request"]["messages"]
    model = str(then["request"]["model"])
    history = _history(recorded, "messages", [reply.message])
    mine = anthropic.to_wire_messages(history, anthropic.origin(model))
    assert _comparable(mine) == _comparable(recorded)
    assert mine[1]["content"][0]["type"] == "thinking"  # first, as the API requires
    final, _, text = read("messages", then)
    assert text and not final.message.tool_calls


def test_the_same_blocks_never_go_to_another_model() -> None:
    reply, _, _ = read("messages", load("anthropic-thinking-tools")["interactions"][0])
    wire = anthropic.to_wire_messages([Message("user", "hi"), reply.message], "messages/other")
    assert [b["type"] for b in wire[1]["content"]] == ["text", "tool_use"]


def test_redacted_thinking_is_kept_whole_and_never_shown() -> None:
    reply, thought, text = read("messages", load("anthropic-redacted-stream")["interactions"][0])
    assert thought == "" and text.startswith("I notice that you've sent")
    data = [r.redacted for r in reply.message.reasoning]
    assert len(data) == 2 and all(d.startswith("E") and len(d) > 100 for d in data)
    back = anthropic.to_wire_messages(
        [Message("user", "x"), reply.message], anthropic.origin("claude-sonnet-4-5-20250929")
    )
    assert [b["type"] for b in back[1]["content"]] == ["redacted_thinking"] * 2 + ["text"]
    assert reply.usage is not None and reply.usage.completion_tokens == 189


# -- the Responses API ---------------------------------------------------------------------------
def _items(items: list[dict[str, Any]]) -> list[Any]:
    """Input items as the API reads them back: what identifies each, arguments as objects."""
    out: list[Any] = []
    for it in items:
        kind = it.get("type") or it.get("role")
        if kind == "reasoning":
            out.append(("reasoning", it.get("id"), it["encrypted_content"]))
        elif kind == "function_call":
            out.append(("call", it["call_id"], it["name"], json.loads(it["arguments"])))
        elif kind == "function_call_output":
            out.append(("output", it["call_id"], it["output"]))
        else:
            content = it["content"]
            out.append((kind, content if isinstance(content, str) else content[0]["text"]))
    return out


@pytest.mark.parametrize("name", ["responses-reasoning-tools", "responses-interleaved-reasoning"])
def test_reasoning_items_go_back_in_place_as_recorded(name: str) -> None:
    data = load(name)
    parsed: list[Message] = []
    for before, after in zip(data["interactions"], data["interactions"][1:], strict=False):
        reply, _, _ = read("responses", before)
        parsed.append(reply.message)
        assert reply.message.tool_calls and all(r.encrypted for r in reply.message.reasoning)
        model = str(after["request"]["model"])
        recorded = after["request"]["input"]
        mine = responses.to_wire_input(
            _history(recorded, "responses", parsed), responses.origin(model)
        )
        assert _items(mine) == _items(recorded)


def test_a_reasoning_model_answers_after_its_reasoning_came_back() -> None:
    final, _, text = read("responses", load("responses-reasoning-tools")["interactions"][1])
    assert text and not final.message.tool_calls and final.message.reasoning == ()
    assert final.usage is not None and final.usage.cached_tokens == 2048


def test_a_reasoning_summary_is_thinking_and_its_tokens_are_counted() -> None:
    first = load("responses-reasoning-tools")["interactions"][0]
    reply, thought, text = read("responses", first)
    assert thought.startswith("**Creating a structured poem**") and text == ""
    assert reply.usage is not None and reply.usage.reasoning_tokens == 1792
    assert reply.message.reasoning[0].item_id.startswith("rs_68c42d29")
    assert reply.message.reasoning[0].tokens == 1792  # what it costs when it goes back


def test_a_streamed_summary_arrives_as_thinking_part_by_part() -> None:
    data = load("responses-summary-stream")
    reply, thought, text = read("responses", data["interactions"][0])
    deltas = [
        e["delta"]
        for e in data["interactions"][0]["response"]["events"]
        if e["type"] == "response.reasoning_summary_text.delta"
    ]
    assert thought.replace("\n\n", "") == "".join(deltas).replace("\n\n", "")
    assert thought.count("\n\n**") >= 3  # four parts, a blank line between two
    assert text and reply.usage is not None and reply.usage.reasoning_tokens > 0


def test_a_streamed_function_call_then_a_streamed_answer() -> None:
    (call, _, said), (answer, _, text) = replies("responses-tool-stream")
    assert [c.name for c in call.message.tool_calls] == ["multiply"] and said == ""
    assert call.message.tool_calls[0].arguments == {"a": 1231, "b": 2331}  # from its deltas
    assert text and not answer.message.tool_calls


# -- Chat Completions ----------------------------------------------------------------------------
def test_reasoning_tokens_of_a_reasoning_model() -> None:
    ((reply, _, text),) = replies("chat-reasoning-usage")
    assert reply.usage is not None and reply.usage.reasoning_tokens == 192
    assert reply.usage.completion_tokens == 238 and text.startswith("The capital of Mexico")


def test_reasoning_content_is_thinking_never_the_answer_never_sent_back() -> None:
    ((reply, thought, text),) = replies("chat-reasoning-content-stream")
    assert len(thought) > 100 and text and thought[:60] not in text
    assert reply.message.reasoning[0].origin == ""  # nobody gets it back
    wire = openai.to_wire_messages("", [Message("user", "Hello"), reply.message])
    assert "reasoning_content" not in json.dumps(wire) and thought[:60] not in json.dumps(wire)

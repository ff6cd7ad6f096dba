"""Generated event streams for every wire: random field types, truncations, reorderings, huge
and unicode-split deltas. Whatever arrives, assembling it returns a Response whose text and
thinking encode as UTF-8 and whose tool calls have object arguments, or raises mca's own
StreamError. A few hundred examples in `make test`; MCA_STREAM_FUZZ_EXAMPLES (20,000 in
`make stress`) for more."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mca.errors import McaError
from mca.models import anthropic, openai, responses
from mca.models.sse import read_stream
from mca.types import Response

EXAMPLES = int(os.environ.get("MCA_STREAM_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["\ud83d", "\ude00", "\x00", "\u202e", "x" * 5000]),
)
anything = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _maybe(value: Any) -> st.SearchStrategy[Any]:
    """The value as it should be, or something of another type."""
    return st.one_of(st.just(value), anything)


@st.composite
def openai_chunk(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text", "call", "finish", "usage", "junk"]))
    if kind == "junk":
        return draw(anything)
    if kind == "usage":
        return {"choices": [], "usage": draw(_maybe({"prompt_tokens": 3, "completion_tokens": 1}))}
    if kind == "finish":
        return {"choices": [{"index": 0, "delta": {}, "finish_reason": draw(_maybe("stop"))}]}
    if kind == "text":
        text = draw(st.text(max_size=30) | st.sampled_from(["\ud83d", "\ude00", "y" * 100_000]))
        field = draw(st.sampled_from(["content", "reasoning_content", "reasoning"]))
        return {"choices": [{"index": 0, "delta": {field: draw(_maybe(text))}}]}
    call = {
        "index": draw(_maybe(draw(st.integers(0, 3)))),
        "id": draw(_maybe("c1")),
        "function": draw(
            _maybe({"name": draw(_maybe("read_file")), "arguments": draw(_maybe('{"path": "a"}'))})
        ),
    }
    return {"choices": [{"index": 0, "delta": {"tool_calls": draw(_maybe([call]))}}]}


@st.composite
def anthropic_event(draw: st.DrawFn) -> Any:
    kind = draw(
        st.sampled_from(
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
                "error",
                "junk",
            ]
        )
    )
    if kind == "junk":
        return draw(anything)
    event: dict[str, Any] = {"type": kind, "index": draw(_maybe(draw(st.integers(0, 2))))}
    if kind == "message_start":
        event["message"] = draw(_maybe({"usage": {"input_tokens": 4}}))
    elif kind == "content_block_start":
        block = draw(
            st.sampled_from(
                [
                    {"type": "text", "text": ""},
                    {"type": "tool_use", "id": "t", "name": "list_dir"},
                    {"type": "thinking", "thinking": "", "signature": ""},
                    {"type": "redacted_thinking", "data": "EqX"},
                ]
            )
        )
        event["content_block"] = draw(_maybe(block))
    elif kind == "content_block_delta":
        d = draw(
            st.sampled_from(
                [
                    {
                        "type": "text_delta",
                        "text": draw(st.text(max_size=20) | st.sampled_from(["\ud83d", "\ude00"])),
                    },
                    {
                        "type": "input_json_delta",
                        "partial_json": draw(st.sampled_from(["{", '"a": 1', "}", "{}"])),
                    },
                    {"type": "thinking_delta", "thinking": draw(st.text(max_size=20))},
                    {"type": "signature_delta", "signature": draw(_maybe("Eq"))},
                ]
            )
        )
        event["delta"] = draw(_maybe(d))
    elif kind == "message_delta":
        event["usage"] = draw(_maybe({"output_tokens": 2}))
    return event


RESPONSES_EVENTS = [
    "response.output_item.added",
    "response.output_item.done",
    "response.output_text.delta",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_part.added",
    "response.function_call_arguments.delta",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
    "junk",
]
ITEMS = [
    {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
    {"type": "function_call", "call_id": "c", "name": "list_dir", "arguments": "{}"},
    {"type": "reasoning", "id": "rs", "encrypted_content": "gA", "summary": []},
]


@st.composite
def responses_event(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(RESPONSES_EVENTS))
    if kind == "junk":
        return draw(anything)
    event: dict[str, Any] = {"type": kind, "output_index": draw(_maybe(draw(st.integers(0, 2))))}
    if kind.startswith("response.output_item"):
        event["item"] = draw(_maybe(draw(st.sampled_from(ITEMS))))
    elif kind.endswith(".delta"):
        text = draw(st.text(max_size=20) | st.sampled_from(["\ud83d", "\ude00", '{"a"']))
        event["delta"] = draw(_maybe(text))
    elif kind in ("response.completed", "response.incomplete", "response.failed"):
        usage = {
            "input_tokens": 3,
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 1},
        }
        event["response"] = draw(_maybe({"status": "completed", "usage": draw(_maybe(usage))}))
    return event


def _sse(items: list[Any], cut: int | None) -> Iterator[tuple[str, str]]:
    for i, item in enumerate(items):
        if cut is not None and i == cut:
            yield "", json.dumps(item)[: max(1, len(json.dumps(item)) // 2)]  # truncated JSON
            return
        yield "", json.dumps(item, allow_nan=True)


def _check(response: Response) -> None:
    response.message.content.encode("utf-8")
    for r in response.message.reasoning:
        r.text.encode("utf-8")
    for c in response.message.tool_calls:
        assert isinstance(c.arguments, dict) and isinstance(c.name, str) and c.name


def _assemble(module: Any, items: list[Any], cut: int | None, done: bool) -> None:
    stream = list(_sse(items, cut)) + ([("", "[DONE]")] if done else [])
    shown: list[str] = []
    try:
        response = read_stream(iter(stream), module.StreamAssembler(shown.append), shown.append)
    except McaError:
        return
    _check(response)
    "".join(shown).encode("utf-8")  # what reached the screen (text and thinking), too


@pytest.mark.slow
@FUZZ
@given(
    items=st.lists(openai_chunk(), max_size=8).flatmap(st.permutations),
    cut=st.none() | st.integers(0, 8),
    done=st.booleans(),
)
def test_openai_streams(items: list[Any], cut: int | None, done: bool) -> None:
    _assemble(openai, items, cut, done)


@pytest.mark.slow
@FUZZ
@given(
    items=st.lists(anthropic_event(), max_size=8).flatmap(st.permutations),
    cut=st.none() | st.integers(0, 8),
)
def test_anthropic_streams(items: list[Any], cut: int | None) -> None:
    _assemble(anthropic, items, cut, False)


@pytest.mark.slow
@FUZZ
@given(
    items=st.lists(responses_event(), max_size=8).flatmap(st.permutations),
    cut=st.none() | st.integers(0, 8),
)
def test_responses_streams(items: list[Any], cut: int | None) -> None:
    _assemble(responses, items, cut, False)


@FUZZ
@given(body=anything)
def test_whole_bodies(body: Any) -> None:
    for module in (openai, anthropic, responses):
        try:
            response = module.from_wire_response(body)
        except McaError:
            continue
        _check(response)

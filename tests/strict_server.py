"""A fake of OpenAI (Chat Completions, Responses) and Anthropic (Messages) that says no where the
real APIs do (tests/strict_rules.py), and otherwise plays a scripted turn: one tool call per
model call, then an answer, each reply thinking first where the model would.

Run it with tests.fakeserver.serve(StrictServer(...)). Every refusal is kept in `refused`, so a
test can say which rule mca broke; `usage` keeps what each answer reported. Anthropic's usage
comes from its documented prompt cache (tests/prompt_cache.py): what a request reads from the
cache and writes to it depends on where it puts its breakpoints.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.fakeserver import Received, Reply
from tests.prompt_cache import PromptCache
from tests.strict_rules import (
    Issued,
    Refusal,
    Signatures,
    chat_refusal,
    messages_refusal,
    reasons,
    responses_refusal,
)

Call = tuple[str, dict[str, Any]]
THREE_TOOLS: tuple[Call, ...] = (
    ("list_dir", {"path": "."}),
    ("read_file", {"path": "notes.txt"}),
    ("search_text", {"pattern": "MAGIC"}),
)
THINKERS = ("qwen3", "deepseek-r", "gpt-oss")  # compatible servers' models that stream reasoning
REASONING_TOKENS = 64
# Local servers that cannot stream a chat completion while tools are offered, and how each
# says so. llama-cpp-python 0.3.36 (its chatml-function-calling format raises "Automatic
# streaming tool choice is not supported" once the stream's headers are out, when the model
# chose to call a tool): 200 and an event stream with no event in it, at most a ping comment
# (fixtures/recorded/llama-cpp-python/stream-with-tools-unsupported.json). llama.cpp's
# llama-server before it streamed tool calls (ggml-org/llama.cpp#12379): HTTP 500, this body.
LLAMA_CPP_PYTHON, LLAMA_SERVER = "llama-cpp-python", "llama-server"
PING = b": ping - 2026-12-02 03:56:46.199227+00:00\n\n"  # sse-starlette's, as recorded
NO_STREAMED_TOOLS = {
    LLAMA_CPP_PYTHON: Reply(200, {"content-type": "text/event-stream; charset=utf-8"}, [PING]),
    LLAMA_SERVER: Reply(
        500,
        {"content-type": "application/json; charset=utf-8"},
        [
            json.dumps(
                {
                    "error": {
                        "code": 500,
                        "message": "Cannot use tools with stream",
                        "type": "server_error",
                    }
                }
            ).encode()
        ],
    ),
}


def _sse(event: dict[str, Any], name: str = "") -> bytes:
    head = f"event: {name}\n" if name else ""
    return (head + "data: " + json.dumps(event) + "\n\n").encode()


def _json(body: dict[str, Any], status: int = 200) -> Reply:
    return Reply(status, {"content-type": "application/json"}, [json.dumps(body).encode()])


def _stream(chunks: Sequence[bytes]) -> Reply:
    return Reply(200, {"content-type": "text/event-stream"}, list(chunks))


@dataclass(frozen=True)
class Step:
    """The reply to one model call: its thinking, then a tool call or the answer."""

    n: int
    thought: str
    call: Call | None
    answer: str
    prompt: int  # the request's size in tokens (a quarter of its bytes)


@dataclass
class StrictServer:
    """The handler: the rules first, then the script."""

    script: Sequence[Call] = THREE_TOOLS
    answer: str = "Three tools ran."
    refused: list[str] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    issued: Issued = field(default_factory=Issued)
    signed: Signatures = field(default_factory=dict)
    cache: PromptCache = field(default_factory=PromptCache)
    # a local server's refusal to stream with tools (a key of NO_STREAMED_TOOLS; '' : streams)
    no_streamed_tools: str = ""
    # a server with Chat Completions only (vLLM, llama-cpp-python, most proxies): its web
    # framework answers any other route 404 {"detail": "Not Found"} (FastAPI's words)
    chat_only: bool = False

    def __call__(self, request: Received) -> Reply:
        body = request.json if request.body else {}
        path = request.path.split("?")[0]
        if path.endswith("/chat/completions"):
            if self.no_streamed_tools and body.get("stream") and body.get("tools"):
                self.refused.append(f"{self.no_streamed_tools}: no stream with tools")
                return NO_STREAMED_TOOLS[self.no_streamed_tools]
            return self._answer(chat_refusal(body), body, self._chat)
        if path.endswith("/responses") and self.chat_only:
            self.refused.append("no Responses API")
            return _json({"detail": "Not Found"}, 404)
        if path.endswith("/responses"):
            return self._answer(responses_refusal(body, self.issued), body, self._responses)
        if path.endswith("/v1/messages"):
            refusal = messages_refusal(body, request.headers, self.signed)
            return self._answer(refusal, body, self._messages)
        return _json({"error": {"message": f"no route {path}"}}, 404)

    def _answer(self, refusal: Refusal | None, body: dict[str, Any], reply: Any) -> Reply:
        if refusal is not None:
            self.refused.append(refusal.message)
            return _json(refusal.body, refusal.status)
        result: Reply = reply(body)
        return result

    def _step(self, body: dict[str, Any], results: int) -> Step:
        n = results
        call = self.script[n] if n < len(self.script) else None
        said = json.dumps(body)
        answer = self.answer + (" The file says MAGIC-42." if "MAGIC-42" in said else "")
        what = f"call {call[0]}" if call else "answer"
        thought = f"Step {n + 1}: the next thing to do is to {what}."
        return Step(n, thought, call, answer, len(said) // 4)

    # -- Chat Completions ----------------------------------------------------------------------
    def _chat(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
        step = self._step(body, sum(m.get("role") == "tool" for m in messages[last_user:]))
        model = str(body.get("model"))
        thinks = model.startswith(THINKERS)
        field_name = "reasoning" if model.startswith("gpt-oss") else "reasoning_content"
        spent = REASONING_TOKENS if reasons(model) else 0
        usage = {
            "prompt_tokens": step.prompt,
            "completion_tokens": 20 + spent,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": spent},
        }
        self.usage.append(usage)
        calls = (
            [
                {
                    "id": f"call_{step.n}",
                    "type": "function",
                    "function": {"name": step.call[0], "arguments": json.dumps(step.call[1])},
                }
            ]
            if step.call
            else []
        )
        text = "" if step.call else step.answer
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            message |= {"tool_calls": calls} if calls else {}
            message |= {field_name: step.thought} if thinks else {}
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return _json({"choices": [choice], "usage": usage})

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return _sse({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        out = [chunk({"role": "assistant"})]
        if thinks:
            out += [chunk({field_name: piece}) for piece in _pieces(step.thought)]
        out += [chunk({"content": piece}) for piece in _pieces(text)]
        out += [chunk({"tool_calls": [{"index": i, **c}]}) for i, c in enumerate(calls)]
        out += [chunk({}, finish), _sse({"choices": [], "usage": usage}), b"data: [DONE]\n\n"]
        return _stream(out)

    # -- the Responses API ---------------------------------------------------------------------
    def _responses(self, body: dict[str, Any]) -> Reply:
        items = body.get("input") or []
        last_user = max((i for i, it in enumerate(items) if it.get("role") == "user"), default=0)
        outputs = sum(it.get("type") == "function_call_output" for it in items[last_user:])
        step = self._step(body, outputs)
        model = str(body.get("model"))
        output = self._reasoning_item(body, step) if reasons(model) else []
        if step.call:
            call_id = f"call_{step.n}_{len(self.usage)}"
            if output and output[0].get("encrypted_content"):
                self.issued.before_call[call_id] = output[0]["id"]
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{step.n}",
                    "call_id": call_id,
                    "name": step.call[0],
                    "arguments": json.dumps(step.call[1]),
                    "status": "completed",
                }
            )
        else:
            part = {"type": "output_text", "text": step.answer, "annotations": []}
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{step.n}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [part],
                }
            )
        spent = REASONING_TOKENS if reasons(model) else 0
        usage = {
            "input_tokens": step.prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20 + spent,
            "output_tokens_details": {"reasoning_tokens": spent},
        }
        self.usage.append(usage)
        response = {
            "id": f"resp_{len(self.usage)}",
            "object": "response",
            "status": "completed",
            "model": model,
            "output": output,
            "usage": usage,
            "error": None,
            "incomplete_details": None,
        }
        if not body.get("stream"):
            return _json(response)
        return _stream(_responses_events(response))

    def _reasoning_item(self, body: dict[str, Any], step: Step) -> list[dict[str, Any]]:
        rid = f"rs_{len(self.usage)}_{step.n}"
        item: dict[str, Any] = {"type": "reasoning", "id": rid, "summary": []}
        if (body.get("reasoning") or {}).get("summary"):
            item["summary"] = [{"type": "summary_text", "text": step.thought}]
        if "reasoning.encrypted_content" in (body.get("include") or []):
            item["encrypted_content"] = "gAAAA" + hashlib.sha256(rid.encode()).hexdigest()
            self.issued.reasoning[rid] = (item["encrypted_content"], str(body.get("model")))
        return [item]

    # -- Anthropic Messages --------------------------------------------------------------------
    def _messages(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        starts = [
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user"
            and not any(b.get("type") == "tool_result" for b in m.get("content") or [])
        ]
        after = messages[starts[-1] :] if starts else messages
        results = sum(b.get("type") == "tool_result" for m in after for b in m.get("content") or [])
        step = self._step(body, results)
        blocks: list[dict[str, Any]] = []
        if body.get("thinking"):
            signature = (
                "Eq" + hashlib.sha256(f"{step.thought}{len(self.usage)}".encode()).hexdigest()
            )
            self.signed[signature] = step.thought
            blocks.append({"type": "thinking", "thinking": step.thought, "signature": signature})
        if step.call:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{step.n}_{len(self.usage)}",
                    "name": step.call[0],
                    "input": step.call[1],
                }
            )
        else:
            blocks.append({"type": "text", "text": step.answer})
        cached = self.cache.use(body)
        usage = {
            "input_tokens": cached.fresh,
            "cache_creation_input_tokens": cached.written,
            "cache_read_input_tokens": cached.read,
            "output_tokens": 20,
        }
        self.usage.append(usage)
        stop = "tool_use" if step.call else "end_turn"
        message = {
            "id": f"msg_{len(self.usage)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": blocks,
            "stop_reason": stop,
            "usage": usage,
        }
        if not body.get("stream"):
            return _json(message)
        return _stream(_messages_events(message))


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _responses_events(response: dict[str, Any]) -> list[bytes]:
    """A completed response as the Responses API streams it."""
    out = [
        _sse(
            {
                "type": "response.created",
                "response": {**response, "status": "in_progress", "output": []},
            },
            "response.created",
        )
    ]
    for i, item in enumerate(response["output"]):
        bare = {
            k: v for k, v in item.items() if k not in ("summary", "content", "encrypted_content")
        }
        start = {**bare, "arguments": ""} if item["type"] == "function_call" else bare
        out.append(_sse({"type": "response.output_item.added", "output_index": i, "item": start}))
        for j, part in enumerate(item.get("summary") or []):
            out.append(
                _sse(
                    {
                        "type": "response.reasoning_summary_part.added",
                        "output_index": i,
                        "item_id": item["id"],
                        "summary_index": j,
                    }
                )
            )
            for piece in _pieces(part["text"]):
                out.append(
                    _sse(
                        {
                            "type": "response.reasoning_summary_text.delta",
                            "output_index": i,
                            "item_id": item["id"],
                            "summary_index": j,
                            "delta": piece,
                        }
                    )
                )
        for part in item.get("content") or []:
            for piece in _pieces(part["text"]):
                out.append(
                    _sse(
                        {
                            "type": "response.output_text.delta",
                            "output_index": i,
                            "item_id": item["id"],
                            "content_index": 0,
                            "delta": piece,
                        }
                    )
                )
        if item["type"] == "function_call":
            for piece in _pieces(item["arguments"]):
                out.append(
                    _sse(
                        {
                            "type": "response.function_call_arguments.delta",
                            "output_index": i,
                            "item_id": item["id"],
                            "delta": piece,
                        }
                    )
                )
        out.append(_sse({"type": "response.output_item.done", "output_index": i, "item": item}))
    out.append(_sse({"type": "response.completed", "response": response}))
    return out


def _block_events(b: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A content block's start and its deltas, as Anthropic streams them."""
    if b["type"] == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(b["thinking"])]
        sign = {"type": "signature_delta", "signature": b["signature"]}
        return {"type": "thinking", "thinking": "", "signature": ""}, [*deltas, sign]
    if b["type"] == "text":
        return {"type": "text", "text": ""}, [
            {"type": "text_delta", "text": p} for p in _pieces(b["text"])
        ]
    pieces = _pieces(json.dumps(b["input"]))
    return {**b, "input": {}}, [{"type": "input_json_delta", "partial_json": p} for p in pieces]


def _messages_events(message: dict[str, Any]) -> list[bytes]:
    """A message as Anthropic streams it."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    out = [_sse({"type": "message_start", "message": start}, "message_start")]
    for i, b in enumerate(message["content"]):
        first, deltas = _block_events(b)
        begin = {"type": "content_block_start", "index": i, "content_block": first}
        out.append(_sse(begin, "content_block_start"))
        out += [
            _sse({"type": "content_block_delta", "index": i, "delta": d}, "content_block_delta")
            for d in deltas
        ]
        out.append(_sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"]},
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    out += [_sse(delta, "message_delta"), _sse({"type": "message_stop"}, "message_stop")]
    return out

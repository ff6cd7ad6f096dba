"""The providers' documented request rules, as their APIs apply them: a request -> the error the
real API answers (status and body, in its own words), or None when it would be accepted.

A fake server that accepts every request proves only that mca can send one. These are the
rules mca broke or could break: OpenAI's reasoning models refuse `max_tokens` and sampling
parameters on Chat Completions, some models are served only by the Responses API, the
Responses API wants its reasoning items back before the function calls they led to (and
verifies them), strict function schemas; Anthropic wants thinking blocks back, first in the
assistant message before a tool_use, with their signatures intact, budgets within bounds, at
most four cache breakpoints, tool results that answer the previous message's tool uses.
The error texts follow the APIs' own wording where it is known (OpenAI's `max_tokens` and
Responses-only refusals, the missing reasoning item, Anthropic's thinking-block rule and its
breakpoint limit); the rest are close paraphrases. Statuses are the APIs' (400; 404 for a
model served only by the Responses API).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

REASONING = ("o1", "o3", "o4", "gpt-5", "codex-mini")  # OpenAI models that reason
NOT_REASONING = ("gpt-5-chat",)
RESPONSES_ONLY = ("gpt-5-pro", "gpt-5-codex", "o1-pro", "o3-pro", "codex-mini", "gpt-5.1-codex")
SAMPLING = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "logprobs")
EFFORTS = ("minimal", "low", "medium", "high")
ADAPTIVE_ONLY = ("claude-sonnet-5", "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5")
MAX_BREAKPOINTS = 4
MIN_BUDGET = 1024


@dataclass(frozen=True)
class Refusal:
    """What the real API answers to a request it refuses."""

    status: int
    body: dict[str, Any]

    @property
    def message(self) -> str:
        return str(self.body["error"]["message"])


def openai_error(message: str, param: str | None = None, status: int = 400) -> Refusal:
    code = "unsupported_parameter" if message.startswith("Unsupported parameter") else None
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return Refusal(status, {"error": error})


def anthropic_error(message: str, status: int = 400) -> Refusal:
    return Refusal(
        status, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    )


def reasons(model: str) -> bool:
    return model.startswith(REASONING) and not model.startswith(NOT_REASONING)


def efforts(model: str) -> tuple[str, ...]:
    """The reasoning efforts a model takes: the o-series low to high, gpt-5 from minimal,
    gpt-5.1 and later from none (OpenAI's reasoning guide)."""
    if model.startswith(("o1", "o3", "o4")):
        return ("low", "medium", "high")
    if model.startswith("gpt-5."):
        return ("none", "low", "medium", "high")
    return EFFORTS


def _effort_refusal(effort: Any, model: str, name: str) -> Refusal | None:
    """OpenAI's words for an effort the model does not take, with the values it does."""
    takes = efforts(model)
    if effort is None or effort in takes:
        return None
    listed = ", ".join(f"'{e}'" for e in takes[:-1]) + f", and '{takes[-1]}'"
    return openai_error(
        f"Unsupported value: '{name}' does not support {effort!r} with this model. Supported"
        f" values are: {listed}.",
        name,
    )


# -- OpenAI: what both of its APIs refuse --------------------------------------------------------
def _sampling(body: dict[str, Any], model: str) -> Refusal | None:
    for name in SAMPLING:
        if name in body and reasons(model):
            return openai_error(
                f"Unsupported parameter: '{name}' is not supported with this model.", name
            )
    return None


def chat_refusal(body: dict[str, Any]) -> Refusal | None:
    """POST /v1/chat/completions."""
    model = str(body.get("model", ""))
    if model.startswith(RESPONSES_ONLY):
        return openai_error(
            "This model is only supported in v1/responses and not in v1/chat/completions.",
            "model",
            404,
        )
    if "max_tokens" in body and reasons(model):
        return openai_error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use"
            " 'max_completion_tokens' instead.",
            "max_tokens",
        )
    if "reasoning_effort" in body and not reasons(model):
        return openai_error(
            "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
            "reasoning_effort",
        )
    if refusal := _effort_refusal(body.get("reasoning_effort"), model, "reasoning_effort"):
        return refusal
    if "stream_options" in body and not body.get("stream"):
        return openai_error(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        )
    return _sampling(body, model) or _chat_tool_order(body.get("messages") or [])


def _chat_tool_order(messages: Sequence[dict[str, Any]]) -> Refusal | None:
    pending: list[str] = []
    for m in messages:
        if pending and m.get("role") != "tool":
            return openai_error(
                "An assistant message with 'tool_calls' must be followed by tool messages"
                " responding to each 'tool_call_id'. The following tool_call_ids did not have"
                f" response messages: {', '.join(pending)}",
                "messages",
            )
        if m.get("role") == "tool":
            if m.get("tool_call_id") not in pending:
                return openai_error(
                    "Invalid parameter: messages with role 'tool' must be a response to a"
                    " preceeding message with 'tool_calls'.",
                    "messages",
                )
            pending.remove(m["tool_call_id"])
        if m.get("role") == "assistant":
            pending = [c["id"] for c in m.get("tool_calls") or []]
    return None


# -- the Responses API ---------------------------------------------------------------------------
@dataclass
class Issued:
    """What a fake Responses server handed out: reasoning items it must see again, verified."""

    reasoning: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (encrypted, model)
    before_call: dict[str, str] = field(default_factory=dict)  # call_id -> its reasoning's id


def responses_refusal(body: dict[str, Any], issued: Issued) -> Refusal | None:
    """POST /v1/responses."""
    model = str(body.get("model", ""))
    for moved, to in (("messages", "input"), ("max_tokens", "max_output_tokens")):
        if moved in body:
            return openai_error(
                f"Unsupported parameter: '{moved}'. In the Responses API, this parameter has"
                f" moved to '{to}'.",
                moved,
            )
    if "max_completion_tokens" in body:
        return openai_error(
            "Unsupported parameter: 'max_completion_tokens'.", "max_completion_tokens"
        )
    reasoning = body.get("reasoning")
    if reasoning is not None and not reasons(model):
        return openai_error(
            "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
            "reasoning.effort",
        )
    if isinstance(reasoning, dict) and (
        refusal := _effort_refusal(reasoning.get("effort"), model, "reasoning.effort")
    ):
        return refusal
    return (
        _sampling(body, model)
        or _strict_tools(body.get("tools") or [])
        or _input_items(body.get("input") or [], issued, model)
    )


def _strict_tools(tools: Sequence[dict[str, Any]]) -> Refusal | None:
    """A function tool is strict unless it says otherwise: then every property is required and
    no other is allowed."""
    for t in tools:
        params = t.get("parameters") or {}
        props = set((params.get("properties") or {}).keys())
        if t.get("strict", True) and (
            set(params.get("required") or []) != props
            or params.get("additionalProperties") is not False
        ):
            missing = sorted(props - set(params.get("required") or []))
            return openai_error(
                f"Invalid schema for function '{t.get('name')}': In context=(), 'required' is"
                " required to be supplied and to be an array including every key in properties."
                f" Missing '{missing[0] if missing else 'additionalProperties'}'.",
                "tools[0].parameters",
            )
    return None


def _input_items(items: Sequence[dict[str, Any]], issued: Issued, model: str) -> Refusal | None:
    calls: set[str] = set()
    unanswered: list[str] = []  # every function call needs its output before the input goes on
    seen_reasoning: set[str] = set()
    for item in [*items, {"role": "user"}]:
        kind = item.get("type")
        if unanswered and kind not in ("function_call", "function_call_output", "reasoning"):
            return openai_error(f"No tool output found for function call {unanswered[0]}.", "input")
        if kind == "function_call_output" and item.get("call_id") in unanswered:
            unanswered.remove(item["call_id"])
        elif kind == "function_call":
            unanswered.append(str(item.get("call_id")))
        if kind == "reasoning":
            rid = str(item.get("id", ""))
            known = issued.reasoning.get(rid)
            if known is None or known != (item.get("encrypted_content"), model):
                return openai_error(
                    f"The encrypted content for item {rid} could not be verified.", "input"
                )
            seen_reasoning.add(rid)
        elif kind == "function_call":
            needed = issued.before_call.get(str(item.get("call_id")))
            if needed and needed not in seen_reasoning:
                return openai_error(
                    f"Item with call_id '{item.get('call_id')}' of type 'function_call' was"
                    f" provided without its required 'reasoning' item: '{needed}'.",
                    "input",
                )
            calls.add(str(item.get("call_id")))
        elif kind == "function_call_output" and item.get("call_id") not in calls:
            return openai_error(
                f"No tool call found for function call output with call_id {item.get('call_id')}.",
                "input",
            )
    return None


# -- Anthropic Messages --------------------------------------------------------------------------
Signatures = dict[str, str]  # signature -> the thinking text it signs


def messages_refusal(
    body: dict[str, Any], headers: dict[str, str], signed: Signatures
) -> Refusal | None:
    """POST /v1/messages."""
    if "anthropic-version" not in headers:
        return anthropic_error("anthropic-version: header is required")
    if "max_tokens" not in body:
        return anthropic_error("max_tokens: Field required")
    checks: list[Callable[[], Refusal | None]] = [
        lambda: _thinking_config(body),
        lambda: _breakpoints(body),
        lambda: _turns(body.get("messages") or [], bool(body.get("thinking")), signed),
    ]
    for check in checks:
        refusal = check()
        if refusal is not None:
            return refusal
    return None


def _thinking_config(body: dict[str, Any]) -> Refusal | None:
    thinking = body.get("thinking") or {}
    model = str(body.get("model", ""))
    kind = thinking.get("type")
    if kind == "enabled" and model.startswith(ADAPTIVE_ONLY):
        return anthropic_error(
            f"thinking.type.enabled is not supported for this model ({model}). Use"
            " thinking.type.adaptive and output_config.effort instead."
        )
    if kind == "enabled":
        budget = thinking.get("budget_tokens", 0)
        if budget < MIN_BUDGET:
            return anthropic_error(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            )
        if body["max_tokens"] <= budget:
            return anthropic_error("`max_tokens` must be greater than `thinking.budget_tokens`.")
    if kind and body.get("temperature", 1) != 1:
        return anthropic_error("`temperature` may only be set to 1 when thinking is enabled.")
    if kind and "top_k" in body:
        return anthropic_error("`top_k` may not be set when thinking is enabled.")
    if kind and (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        return anthropic_error("Thinking may not be enabled when tool_choice forces tool use.")
    return None


def _blocks(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every block that may carry cache_control, with where it is."""
    out = [(f"tools.{i}", t) for i, t in enumerate(body.get("tools") or [])]
    system = body.get("system")
    out += [(f"system.{i}", b) for i, b in enumerate(system if isinstance(system, list) else [])]
    for i, m in enumerate(body.get("messages") or []):
        content = m.get("content")
        out += [
            (f"messages.{i}.content.{j}", b)
            for j, b in enumerate(content if isinstance(content, list) else [])
        ]
    return out


def _breakpoints(body: dict[str, Any]) -> Refusal | None:
    marked = [(where, b) for where, b in _blocks(body) if "cache_control" in b]
    if len(marked) > MAX_BREAKPOINTS:
        return anthropic_error(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found"
            f" {len(marked)}."
        )
    for where, b in marked:
        if b.get("type") in ("thinking", "redacted_thinking"):
            return anthropic_error(
                f"{where}.{b['type']}.cache_control: Extra inputs are not permitted"
            )
        if b.get("type") == "text" and not b.get("text"):
            return anthropic_error(f"{where}: cache_control cannot be set for empty text blocks")
    return None


def _turns(
    messages: Sequence[dict[str, Any]], thinking: bool, signed: Signatures
) -> Refusal | None:
    if messages and messages[0].get("role") != "user":
        return anthropic_error("messages.0.role: the first message must use the `user` role")
    uses: list[str] = []
    for i, m in enumerate(messages):
        role, content = m.get("role"), m.get("content") or []
        results = [b.get("tool_use_id") for b in content if b.get("type") == "tool_result"]
        if role == "user" and (missing := [u for u in uses if u not in results]):
            return anthropic_error(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks"
                f" immediately after: {', '.join(missing)}. Each `tool_use` block must have a"
                " corresponding `tool_result` block in the next message."
            )
        if role == "user" and (extra := [r for r in results if r not in uses]):
            return anthropic_error(
                f"messages.{i}.content.0: unexpected `tool_use_id` found in `tool_result` blocks:"
                f" {extra[0]}. Each `tool_result` block must have a corresponding `tool_use` block"
                " in the previous message."
            )
        for j, b in enumerate(content):
            if b.get("type") == "text" and not b.get("text"):
                return anthropic_error(
                    f"messages.{i}.content.{j}: text content blocks must be non-empty"
                )
            if b.get("type") == "thinking" and signed.get(b.get("signature", "")) != b.get(
                "thinking"
            ):
                return anthropic_error(
                    f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                )
        uses = (
            [b["id"] for b in content if b.get("type") == "tool_use"] if role == "assistant" else []
        )
    return _thinking_first(messages) if thinking else None


def _thinking_first(messages: Sequence[dict[str, Any]]) -> Refusal | None:
    """With thinking on, the assistant message whose tool uses the request answers (the last
    one, when the request ends in tool results) must start with a thinking block."""
    if len(messages) < 2 or not any(
        b.get("type") == "tool_result" for b in messages[-1].get("content") or []
    ):
        return None
    i = len(messages) - 2
    first = (messages[i].get("content") or [{}])[0].get("type")
    if first in ("thinking", "redacted_thinking"):
        return None
    return anthropic_error(
        f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found"
        f" `{first}`. When `thinking` is enabled, a final `assistant` message must start with a"
        " thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks)."
        " We recommend you include thinking blocks from previous turns. To avoid this"
        " requirement, disable `thinking`. Please consult our documentation at"
        " https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    )

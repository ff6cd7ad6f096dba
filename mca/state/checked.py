"""Records mca reads back from its own files (saved messages, ledgers), checked as untrusted
data: every field of the type and range mca writes, or the record is refused with ValueError.

$MCA_HOME is mca's, but anything that runs as the user can write there (another tool, a
command run without the sandbox, a synced folder), and a record of the wrong shape must not
become an internal error later, in a place far from where it was read (/ledger, a turn).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

from mca.ledger import Row, TurnLedger
from mca.types import (
    KIND_CANCELLED,
    KIND_CHAT,
    KIND_REFERENCE,
    KIND_SHELL,
    KIND_SKILLS,
    KIND_SUMMARY,
    KIND_UNDONE,
    Message,
    Reasoning,
    ToolCall,
)

__all__ = [
    "KINDS",
    "MAX_COUNT",
    "ROLES",
    "T",
    "count",
    "factor",
    "flag",
    "items",
    "ledger_from",
    "message_from",
    "obj",
    "optional",
    "text",
]

T = TypeVar("T")
ROLES = ("user", "assistant", "tool")
KINDS = (
    KIND_CHAT,
    KIND_SKILLS,
    KIND_REFERENCE,
    KIND_SUMMARY,
    KIND_SHELL,
    KIND_CANCELLED,
    KIND_UNDONE,
)
MAX_COUNT = 10**9  # characters, tokens, turns, calls: more is not a record mca wrote


def _bad(what: str) -> ValueError:
    return ValueError(f"not a record: {what}")


def text(value: Any, what: str = "a text field") -> str:
    if not isinstance(value, str):
        raise _bad(what)
    return value


def count(value: Any, what: str = "a count") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise _bad(what)
    return value


def flag(value: Any, what: str = "a flag") -> bool:
    if not isinstance(value, bool):
        raise _bad(what)
    return value


def factor(value: Any, what: str = "a factor") -> float:
    """A positive finite number (a calibration factor)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 < value < 1000:
        raise _bad(what)
    return float(value)


def optional(value: Any, check: Callable[[Any], T]) -> T | None:
    return None if value is None else check(value)


def obj(value: Any, what: str = "an object") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(what)
    return value


def items(value: Any, what: str = "a list") -> list[Any]:
    if not isinstance(value, list):
        raise _bad(what)
    return value


def _call(raw: Any) -> ToolCall:
    c = obj(raw, "a tool call")
    return ToolCall(text(c.get("id")), text(c.get("name")), obj(c.get("arguments"), "arguments"))


def _reasoning(raw: Any) -> Reasoning:
    r = obj(raw, "a piece of reasoning")
    return Reasoning(
        text(r.get("text", "")),
        text(r.get("origin", "")),
        signature=text(r.get("signature", "")),
        redacted=text(r.get("redacted", "")),
        item_id=text(r.get("item_id", "")),
        encrypted=text(r.get("encrypted", "")),
        at=count(r.get("at", 0)),
        tokens=count(r.get("tokens", 0)),
    )


def message_from(raw: Any) -> Message:
    """A message read back; ValueError when the record is not one mca could have written."""
    m = obj(raw, "a message")
    role, kind = m.get("role"), m.get("kind", KIND_CHAT)
    if role not in ROLES or kind not in KINDS:
        raise _bad("a message's role or kind")
    return Message(
        role,
        text(m.get("content")),
        tool_calls=tuple(_call(c) for c in items(m.get("tool_calls") or [])),
        tool_call_id=optional(m.get("tool_call_id"), text),
        tool_name=optional(m.get("tool_name"), text),
        is_error=flag(m.get("is_error", False)),
        kind=kind,
        protected=flag(m.get("protected", False)),
        turn=count(m.get("turn", 0)),
        skills=tuple(text(s) for s in items(m.get("skills") or [])),
        reasoning=tuple(_reasoning(r) for r in items(m.get("reasoning") or [])),
    )


def _row(raw: Any) -> Row:
    r = obj(raw, "a ledger row")
    label, kind = text(r.get("label")), text(r.get("kind"))
    return Row(
        label, kind, count(r.get("chars")), count(r.get("tokens")), text(r.get("reason", ""))
    )


def ledger_from(raw: Any) -> TurnLedger:
    """A turn's ledger read back; ValueError when the record is not one mca could have written."""
    d = obj(raw, "a ledger")
    return TurnLedger(
        count(d.get("turn")),
        [_row(r) for r in items(d.get("rows"))],
        count(d.get("window")),
        text(d.get("estimate", "")).removeprefix("estimated, "),
        provider_prompt_tokens=optional(d.get("provider_prompt_tokens"), count),
        cached_tokens=optional(d.get("provider_cached_tokens"), count),
        cache_write_tokens=optional(d.get("provider_cache_write_tokens"), count),
        reasoning_tokens=optional(d.get("provider_reasoning_tokens"), count),
        calibration=optional(d.get("calibration_factor"), factor),
        model_calls=count(d.get("model_calls", 1)),
        compaction=optional(d.get("compaction"), _compaction),
    )


def _compaction(raw: Any) -> dict[str, Any]:
    """A compaction note (ContextCompacted's fields): only what /ledger shows of it."""
    c = obj(raw, "a compaction")
    return {
        "turn": count(c.get("turn", 0)),
        "before_tokens": count(c.get("before_tokens")),
        "after_tokens": count(c.get("after_tokens")),
        "summarized_messages": count(c.get("summarized_messages", 0)),
        "protected_kept": [text(n) for n in items(c.get("protected_kept") or [])],
        "reason": text(c.get("reason", "")),
    }

"""/export: a conversation as Markdown. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Sequence

from mca.text.counts import plural
from mca.types import (
    KIND_CANCELLED,
    KIND_REFERENCE,
    KIND_SHELL,
    KIND_SKILLS,
    KIND_SUMMARY,
    KIND_UNDONE,
    Message,
)

MAX_RESULT_LINES = 40


def _block(text: str) -> str:
    """Text in a code fence longer than any run of backticks inside it."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"


def _cut(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= MAX_RESULT_LINES:
        return text
    return "\n".join(
        [*lines[:MAX_RESULT_LINES], f"… {plural(len(lines) - MAX_RESULT_LINES, 'more line')}"]
    )


def conversation_markdown(messages: Sequence[Message], title: str, meta: Sequence[str] = ()) -> str:
    """The conversation as a person would read it: sentences, answers, tool calls and short
    results; skill bodies and @references are named, not repeated."""
    out = [f"# {title}", ""]
    out += [f"- {line}" for line in meta]
    turn = 0
    for m in messages:
        if m.role == "user" and m.kind == "chat":
            turn = m.turn
            out += ["", f"## Turn {turn}", "", "**You:**", "", m.content.strip()]
        elif m.kind == KIND_SKILLS:
            out += ["", f"*Skills loaded: {', '.join(m.skills) or 'skills'} (bodies not shown)*"]
        elif m.kind == KIND_REFERENCE:
            out += ["", "*@references attached (not shown)*"]
        elif m.kind == KIND_SUMMARY:
            out += ["", "**Summary of earlier turns:**", "", m.content.strip()]
        elif m.kind == KIND_SHELL:
            out += ["", "**You ran a command:**", "", _block(_cut(m.content))]
        elif m.kind in (KIND_CANCELLED, KIND_UNDONE):
            out += ["", f"*{m.content.strip()}*"]
        elif m.role == "assistant":
            if m.content.strip():
                out += ["", "**mca:**", "", m.content.strip()]
            for c in m.tool_calls:
                args = json.dumps(dict(c.arguments), ensure_ascii=False, indent=1)
                out += ["", f"Tool call `{c.name}`:", "", _block(args)]
        elif m.role == "tool":
            mark = "failed" if m.is_error else "result"
            out += ["", f"Tool {mark} (`{m.tool_name}`):", "", _block(_cut(m.content))]
    return "\n".join(out).strip() + "\n"

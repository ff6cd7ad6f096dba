"""The student's words, marked as theirs: whatever a hand-in produced (what it printed, an
exception's message, any text its child sent) is quoted and attributed in a row, never read as
a sentence of the grader's (a hand-in that prints `use --unsandboxed` advises no one)."""

from __future__ import annotations

import re

from mca.text.sanitize import one_line, valid_text

__all__ = ["name", "printed", "quote", "said"]

LIMIT = 300  # characters of a hand-in's words a row quotes


def quote(text: str, limit: int = LIMIT) -> str:
    """The text as one quoted line: its own quotes escaped, cut at `limit` (ending in '…')."""
    escaped = valid_text(text).replace("\\", "\\\\").replace('"', '\\"')
    line = one_line(escaped)  # a newline as \n: its words cannot start a line of their own
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return f'"{line}"'


def printed(text: str) -> str:
    """'the hand-in printed: "…"': what it wrote on its output."""
    return f"the hand-in printed: {quote(text)}"


def said(text: str) -> str:
    """'the hand-in said: "…"': a message it made (an exception's, a reply's)."""
    return f"the hand-in said: {quote(text)}"


def name(kind: str) -> str:
    """An exception's type name as the hand-in gave it: a dotted identifier, nothing else."""
    return re.sub(r"[^\w.]", "", kind)[:60] or "an exception"

"""Unified diffs of file changes, for people (approval prompts, /diff). Pure functions."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 80
NEW_FILE_HEAD = 10
MAX_SESSION_DIFF_LINES = 400  # per file, in /diff


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines()


def unified(path: str, old: bytes | None, new: bytes, limit: int = MAX_DIFF_LINES) -> str:
    """A unified diff of one file (a new file: its head and line count), folded past `limit`."""
    new_lines = _lines(new)
    if old is None:
        head = [f"+{line}" for line in new_lines[:NEW_FILE_HEAD]]
        more = len(new_lines) - len(head)
        tail = [f"… {more} more lines"] if more > 0 else []
        return "\n".join([f"new file {path} ({len(new_lines)} lines)", *head, *tail])
    source = f"a/{path}" if old else "/dev/null"
    diff = list(difflib.unified_diff(_lines(old), new_lines, source, f"b/{path}", lineterm="", n=3))
    if not diff:
        return f"{path}: no change"
    if len(diff) > limit:
        hidden = len(diff) - limit
        diff = [*diff[:limit], f"… {hidden} more diff lines not shown"]
    return "\n".join(diff)


def session_diff(changes: list[tuple[str, bytes | None, bytes | None]]) -> str:
    """One diff of everything a session changed: (path, before, now) per file."""
    parts = []
    for rel, before, now in changes:
        if now is None:
            gone = len(_lines(before or b""))
            parts.append(f"deleted file {rel} (it had {gone} lines)")
        else:
            parts.append(unified(rel, before or b"", now, limit=MAX_SESSION_DIFF_LINES))
    return "\n".join(parts)

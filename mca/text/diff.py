"""Unified diffs of file changes, for people (approval prompts, /diff). Pure functions.

Lines are split at "\\n" only, as the file's readers (git, compilers, shells) split them: a
U+2028, a \\x1c or a lone \\r is part of its line and shown as a code (`file_line`), never a
line break the person cannot see. A diff shown for approval has no limit: it is never folded.
"""

from __future__ import annotations

import difflib

from mca.text.counts import plural
from mca.text.sanitize import exact, file_line

__all__ = [
    "CRLF_NOTE",
    "MAX_DIFF_LINES",
    "MAX_SESSION_DIFF_LINES",
    "NEW_FILE_HEAD",
    "NO_EOL",
    "session_diff",
    "unified",
]

MAX_DIFF_LINES = 80  # a diff shown after the fact (not for approval) is folded past this
NEW_FILE_HEAD = 10
MAX_SESSION_DIFF_LINES = 400  # per file, in /diff
NO_EOL = "\\ No newline at end of file"
CRLF_NOTE = "(CRLF line endings: lines end in \\r\\n, shown without them)"


def _crlf(data: bytes) -> bool:
    return b"\n" in data and data.count(b"\n") == data.count(b"\r\n")


def _lines(data: bytes, sep: str) -> list[str]:
    """The lines of a file split at `sep` only; a last line without one carries NO_EOL (after
    a "\\n", which no line holds), so a change of the final newline is a change."""
    text = data.decode("utf-8", errors="replace")
    if not text:
        return []
    lines = text.split(sep)
    if lines[-1]:
        lines[-1] += "\n" + NO_EOL
    else:
        lines.pop()
    return lines


def _show(line: str) -> str:
    """A diff line made readable: its prefix, then the file's line, every character visible."""
    body, _, no_eol = line[1:].partition("\n")
    return line[:1] + file_line(body) + (f"\n{no_eol}" if no_eol else "")


def unified(path: str, old: bytes | None, new: bytes, limit: int | None = MAX_DIFF_LINES) -> str:
    """A unified diff of one file (a new file: its lines), folded past `limit` (None: whole)."""
    crlf = _crlf(new) and (not old or _crlf(old))
    sep = "\r\n" if crlf else "\n"
    note = [CRLF_NOTE] if crlf else []
    new_lines = _lines(new, sep)
    shown_path = exact(path)
    if old is None:
        head = new_lines if limit is None else new_lines[:NEW_FILE_HEAD]
        more = len(new_lines) - len(head)
        tail = [f"… {plural(more, 'more line')}"] if more > 0 else []
        count = f"new file {shown_path} ({plural(len(new_lines), 'line')})"
        return "\n".join([count, *note, *(_show(f"+{line}") for line in head), *tail])
    source = f"a/{shown_path}" if old else "/dev/null"
    diff = list(
        difflib.unified_diff(
            _lines(old, sep), new_lines, source, f"b/{shown_path}", lineterm="", n=3
        )
    )
    if not diff:
        return f"{shown_path}: no change"
    body = [*note, *diff[:2], *(d if d.startswith("@@") else _show(d) for d in diff[2:])]
    if limit is not None and len(body) > limit:
        hidden = len(body) - limit
        body = [*body[:limit], f"… {plural(hidden, 'more diff line')} not shown"]
    return "\n".join(body)


def session_diff(changes: list[tuple[str, bytes | None, bytes | None]]) -> str:
    """One diff of everything a session changed: (path, before, now) per file."""
    parts = []
    for rel, before, now in changes:
        if now is None:
            gone = len(_lines(before or b"", "\n"))
            parts.append(f"deleted file {exact(rel)} (it had {plural(gone, 'line')})")
        else:
            parts.append(unified(rel, before or b"", now, limit=MAX_SESSION_DIFF_LINES))
    return "\n".join(parts)

"""Edits across line endings: read_file shows lines without their \\r, so a model's old_text has
\\n where a CRLF file has \\r\\n. Matching happens on an LF view of the file and is mapped back,
so only the matched region changes: every other byte (and line ending) stays as it was, and the
new text takes the line ending of the region it replaces."""

from __future__ import annotations

import bisect


def _crlf_positions(text: str) -> list[int]:
    """Where each \\r\\n's newline sits in the LF view of `text` (sorted)."""
    out: list[int] = []
    start = 0
    while (i := text.find("\r\n", start)) >= 0:
        out.append(i - len(out))
        start = i + 2
    return out


def _matches(view: str, old: str) -> list[int]:
    out: list[int] = []
    start = 0
    while (i := view.find(old, start)) >= 0:
        out.append(i)
        start = i + len(old)
    return out


def replace(text: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """(updated text, matches). Exact matches first; else an LF-view match when the file has
    CRLF endings. With more than one match and not replace_all, nothing is replaced."""
    count = text.count(old)
    if count or "\r\n" not in text or "\n" not in old:
        if count == 1 or (count > 1 and replace_all):
            return (text.replace(old, new) if replace_all else text.replace(old, new, 1)), count
        return text, count
    view = text.replace("\r\n", "\n")
    found = _matches(view, old)
    if len(found) != 1 and not (found and replace_all):
        return text, len(found)
    crlf = _crlf_positions(text)
    parts, end = [], len(text)
    for a in reversed(found):
        b = a + len(old)
        first, last = bisect.bisect_left(crlf, a), bisect.bisect_left(crlf, b)
        eol = "\r\n" if 2 * (last - first) >= old.count("\n") else "\n"
        oa, ob = a + first, b + last  # view offsets back to offsets in the file
        parts.append(text[ob:end])
        parts.append(new.replace("\r\n", "\n").replace("\n", eol))
        end = oa
    parts.append(text[:end])
    return "".join(reversed(parts)), len(found)

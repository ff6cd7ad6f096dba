"""Diffs of file changes as data: which lines a change removed and added, with the lines kept
around them, in hunks (`FileDiff`). The tools build one for each write (approval questions,
file.changed) and /diff one per file the session changed; how a diff looks is the faces'
(mca/ui/diff_view.py draws one, the same for the terminal, the approval screens and -p's stream).
Pure functions.

Lines are split at "\\n" only, as the file's readers (git, compilers, shells) split them: a
U+2028, a \\x1c or a lone \\r is part of its line, never a line break the person cannot see.
A diff asked about is never folded; one shown after the fact is folded past MAX_DIFF_LINES (a
new file past NEW_FILE_HEAD lines), and says how many lines it left out (`hidden`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "MAX_DIFF_LINES",
    "MAX_SESSION_DIFF_LINES",
    "NEW_FILE_HEAD",
    "DiffLine",
    "FileDiff",
    "Hunk",
    "file_diff",
    "fold",
    "session_diffs",
]

MAX_DIFF_LINES = 80  # a diff shown after the fact (not for approval) is folded past this
NEW_FILE_HEAD = 10  # a new file shown after the fact: its first lines
MAX_SESSION_DIFF_LINES = 400  # per file, in /diff
_NO_EOL = "\n\\"  # marks a last line without a newline, so that its change is a change
CONTEXT = 3  # lines kept around each change


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk: kept (" "), removed ("-") or added ("+"), as the file has it (decoded,
    undecodable bytes replaced; neither escaped nor scrubbed: the face does that)."""

    op: str
    text: str
    no_eol: bool = False  # the file's last line, with no newline at its end

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "text": self.text, "no_eol": self.no_eol}


@dataclass(frozen=True)
class Hunk:
    """A run of changes and the lines around them. The ranges are a unified diff's: `old_start`
    is the first old line (1-based; the line before, when `old_count` is 0), likewise new."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[DiffLine, ...]

    def to_json(self) -> dict[str, Any]:
        ranges = {"old_start": self.old_start, "old_lines": self.old_count}
        ranges |= {"new_start": self.new_start, "new_lines": self.new_count}
        return ranges | {"lines": [line.to_json() for line in self.lines]}


@dataclass(frozen=True)
class FileDiff:
    """One file's change. `kind`: "changed" (hunks), "created" (no file before: its lines, in
    one hunk), "unchanged", or "deleted" (/diff: `lines` it had). `was_empty`: a change from an
    empty file (or, in /diff, from none). `crlf`: both sides end their lines in \\r\\n, split
    there. `hidden`: what folding left out (diff lines, or for "created" the file's lines)."""

    path: str
    kind: str
    hunks: tuple[Hunk, ...] = ()
    was_empty: bool = False
    crlf: bool = False
    lines: int = 0  # "created" and "deleted": the file's lines
    hidden: int = 0

    def to_json(self) -> dict[str, Any]:
        """The diff as the events carry it (the path is the event's own)."""
        out: dict[str, Any] = {"kind": self.kind, "was_empty": self.was_empty}
        out |= {"crlf": self.crlf, "lines": self.lines, "hidden": self.hidden}
        return out | {"hunks": [h.to_json() for h in self.hunks]}


def _crlf(data: bytes) -> bool:
    return b"\n" in data and data.count(b"\n") == data.count(b"\r\n")


def _lines(data: bytes, sep: str) -> list[str]:
    """The lines of a file split at `sep` only; a last line without one carries _NO_EOL (after
    a "\\n", which no line holds), so a change of the final newline is a change."""
    text = data.decode("utf-8", errors="replace")
    if not text:
        return []
    lines = text.split(sep)
    if lines[-1]:
        lines[-1] += _NO_EOL
    else:
        lines.pop()
    return lines


def _line(op: str, line: str) -> DiffLine:
    text, mark, _ = line.partition("\n")
    return DiffLine(op, text, bool(mark))


def _range(start: int, stop: int) -> tuple[int, int]:
    """A unified diff's range of the lines [start, stop) (difflib's own arithmetic)."""
    count = stop - start
    return (start if count == 0 else start + 1), count


def _hunks(old: list[str], new: list[str]) -> tuple[Hunk, ...]:
    """The hunks of a unified diff of `old` and `new`, as difflib groups them."""
    out = []
    for group in difflib.SequenceMatcher(None, old, new).get_grouped_opcodes(CONTEXT):
        lines: list[DiffLine] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [_line(" ", s) for s in old[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                lines += [_line("-", s) for s in old[i1:i2]]
            if tag in ("replace", "insert"):
                lines += [_line("+", s) for s in new[j1:j2]]
        first, last = group[0], group[-1]
        old_range, new_range = _range(first[1], last[2]), _range(first[3], last[4])
        out.append(Hunk(*old_range, *new_range, tuple(lines)))
    return tuple(out)


def file_diff(
    path: str, old: bytes | None, new: bytes, limit: int | None = MAX_DIFF_LINES
) -> FileDiff:
    """The change of one file from `old` (None: there was none) to `new`, folded past `limit`
    (None: whole)."""
    crlf = _crlf(new) and (not old or _crlf(old))
    sep = "\r\n" if crlf else "\n"
    new_lines = _lines(new, sep)
    if old is None:  # folded or not, only the lines shown become DiffLines (a 10 MB file...)
        shown = new_lines if limit is None else new_lines[:NEW_FILE_HEAD]
        hunk = Hunk(0, 0, 1, len(new_lines), tuple(_line("+", s) for s in shown))
        hidden = len(new_lines) - len(shown)
        return FileDiff(path, "created", (hunk,), crlf=crlf, lines=len(new_lines), hidden=hidden)
    hunks = _hunks(_lines(old, sep), new_lines)
    kind = "changed" if hunks else "unchanged"
    whole = FileDiff(path, kind, hunks, was_empty=not old, crlf=crlf)
    return whole if limit is None else fold(whole, limit)


def fold(diff: FileDiff, limit: int) -> FileDiff:
    """The diff as shown after the fact: a new file's first NEW_FILE_HEAD lines; a change's
    first `limit` diff lines, counting the CRLF note, the two file lines and each hunk's head
    as a unified diff shows them (at least those three)."""
    if diff.kind == "created" and diff.hunks:
        (hunk,) = diff.hunks
        hidden = diff.hidden + max(0, len(hunk.lines) - NEW_FILE_HEAD)
        return replace(
            diff, hunks=(replace(hunk, lines=hunk.lines[:NEW_FILE_HEAD]),), hidden=hidden
        )
    if diff.kind != "changed":
        return diff
    budget = limit - 2 - (1 if diff.crlf else 0)
    if budget < 0:
        raise ValueError(f"a diff cannot be folded to {limit} lines")
    total = sum(1 + len(h.lines) for h in diff.hunks)
    if total <= budget:
        return diff
    kept, shown = [], 0
    for hunk in diff.hunks:
        if shown >= budget:
            break
        kept.append(replace(hunk, lines=hunk.lines[: budget - shown - 1]))
        shown += 1 + len(kept[-1].lines)
    return replace(diff, hunks=tuple(kept), hidden=diff.hidden + total - shown)


def session_diffs(changes: list[tuple[str, bytes | None, bytes | None]]) -> list[FileDiff]:
    """Each file a session changed: (path, before, now) -> its diff (a file the session made
    is a change from none; one it removed, "deleted")."""
    out = []
    for rel, before, now in changes:
        if now is None:
            gone = len(_lines(before or b"", "\n"))
            out.append(FileDiff(rel, "deleted", lines=gone))
        else:
            out.append(file_diff(rel, before or b"", now, limit=MAX_SESSION_DIFF_LINES))
    return out

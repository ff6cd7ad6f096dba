"""How a diff looks, in every face: a FileDiff (mca/text/diff.py) drawn as a unified diff, each
line of the file made readable (`file_line`: every character visible, tabs and spaces at the end
counted) and the path shown exactly; then, on a terminal, coloured. The terminal after a write,
the approval questions (terminal and without one), /diff and -p's stream-json (the `diff` text
of file.changed and approval.asked) all draw with `draw_diff`, so a change to how diffs are
shown is made here once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mca.text.counts import plural
from mca.text.sanitize import exact, file_line, visible
from mca.ui.ansi import CYAN, GREEN, RED, RESET

if TYPE_CHECKING:  # on the path to the first prompt: difflib is imported with the first diff
    from mca.text.diff import DiffLine, FileDiff, Hunk

__all__ = ["CRLF_NOTE", "DIFF_STYLES", "NO_EOL", "colour_diff", "draw_diff", "draw_diffs"]

NO_EOL = "\\ No newline at end of file"
CRLF_NOTE = "(CRLF line endings: lines end in \\r\\n, shown without them)"
DIFF_STYLES = {"+": GREEN, "-": RED, "@": CYAN}  # a diff line's style by its first character


def _line(line: DiffLine) -> str:
    """A diff line made readable: its mark, then the file's line, every character visible."""
    return line.op + file_line(line.text) + (f"\n{NO_EOL}" if line.no_eol else "")


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"


def _head(hunk: Hunk) -> str:
    old, new = _range(hunk.old_start, hunk.old_count), _range(hunk.new_start, hunk.new_count)
    return f"@@ -{old} +{new} @@"


def draw_diff(diff: FileDiff) -> str:
    """The diff as text: a unified diff (a new file: its lines under a count), with a line
    saying what folding left out. Plain: the terminal colours it (`colour_diff`)."""
    path = exact(diff.path)
    note = [CRLF_NOTE] if diff.crlf else []
    if diff.kind == "unchanged":
        return f"{path}: no change"
    if diff.kind == "deleted":
        return f"deleted file {path} (it had {plural(diff.lines, 'line')})"
    if diff.kind == "created":
        lines = [_line(line) for hunk in diff.hunks for line in hunk.lines]
        tail = [f"… {plural(diff.hidden, 'more line')}"] if diff.hidden > 0 else []
        count = f"new file {path} ({plural(diff.lines, 'line')})"
        return "\n".join([count, *note, *lines, *tail])
    body = [*note, f"--- {'/dev/null' if diff.was_empty else f'a/{path}'}", f"+++ b/{path}"]
    for hunk in diff.hunks:
        body += [_head(hunk), *(_line(line) for line in hunk.lines)]
    if diff.hidden > 0:
        body.append(f"… {plural(diff.hidden, 'more diff line')} not shown")
    return "\n".join(body)


def draw_diffs(diffs: Iterable[FileDiff]) -> str:
    """Several files' diffs, one after another (/diff)."""
    return "\n".join(draw_diff(d) for d in diffs)


def colour_diff(diff: str, colour: bool) -> str:
    """A drawn diff for the terminal: each line made safe first, then coloured (+ green,
    - red, @@ cyan) when colour is on."""
    out = []
    for line in diff.split("\n"):  # only there: a diff's lines hold no other break
        safe = visible(line)
        key = "" if line.startswith(("+++", "---")) else line[:1]
        style = DIFF_STYLES.get(key, "") if colour else ""
        out.append(f"{style}{safe}{RESET}" if style else safe)
    return "\n".join(out)

"""`mca lab grade --roster FILE`: who is in the class, whether or not they handed anything in.

A roster is a CSV with a `student` column (what a course's export has, extra columns ignored)
or one name a line (blank lines and `#` comments skipped). Each name is a hand-in folder's
name: every name gets a row (`missing (no folder)` when the class has no folder by that name),
and folders the roster does not name are reported, not graded.
"""

from __future__ import annotations

import csv
import io

__all__ = ["COLUMN", "RosterError", "parse_roster"]

COLUMN = "student"


class RosterError(ValueError):
    """The roster cannot be read as one; the message says where and why."""


def parse_roster(text: str) -> list[str]:
    """The roster's names, in its order, each once."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise RosterError("no names in it")
    header = [cell.strip().lower() for cell in next(csv.reader([lines[0]]))]
    if COLUMN in header:
        names = _column(text, header.index(COLUMN))
    elif len(header) > 1:
        raise RosterError(f"a CSV roster needs a `{COLUMN}` column (its header: {lines[0][:80]})")
    else:
        names = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)]
        names = [(n, name) for n, name in names if name and not name.startswith("#")]
    out: dict[str, None] = {}
    for n, name in names:
        why = _bad(name)
        if why:
            raise RosterError(f"line {n}: {name[:60]!r} {why}")
        out.setdefault(name, None)
    if not out:
        raise RosterError("no names in it")
    return list(out)


def _column(text: str, index: int) -> list[tuple[int, str]]:
    rows = list(csv.reader(io.StringIO(text)))
    found = []
    for n, cells in enumerate(rows[1:], 2):
        name = cells[index].strip() if index < len(cells) else ""
        if name:
            found.append((n, name))
    return found


def _bad(name: str) -> str:
    """Why `name` cannot be a hand-in folder's name ('' when it can)."""
    if "/" in name or "\\" in name or "\0" in name:
        return "is not a folder name (it has a path separator or a NUL)"
    if name.startswith("."):
        return "starts with a dot (hidden folders are not hand-ins)"
    return ""

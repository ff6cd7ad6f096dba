"""The fast path: flat frontmatter (one-line scalars, simple lists) without the full parser.

It must give exactly what the full parser gives, or None to hand the text over; the property
test in tests/skills/test_yaml_agreement.py holds it to that on generated documents.
"""

from __future__ import annotations

import re

from mca.skills.yaml.scalar import Parsed, Value

_SIMPLE_KEY = re.compile(r"([A-Za-z_][\w-]*):(?: +(.*))?\Z")
_SIMPLE_PLAIN = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`](?:[^:#]|:(?! )|(?<! )#)*\Z")
_SIMPLE_DQ = re.compile(r'"([^"\\]*)"\Z')
_SIMPLE_SQ = re.compile(r"'([^']*)'\Z")
_SIMPLE_FLOW = re.compile(r"\[([^\[\]{}\"'#:]*)\]\Z")


def _simple_scalar(value: str) -> str | None:
    """A one-line scalar the full parser would read the same way, or None."""
    if (m := _SIMPLE_DQ.match(value) or _SIMPLE_SQ.match(value)) is not None:
        return m.group(1)
    if _SIMPLE_PLAIN.match(value) and not value.endswith(":"):
        return value.rstrip()
    return None


def parse_fast(text: str, first_line: int) -> Parsed | None:
    """The common case (flat keys, one-line scalars, simple lists) without the full parser.

    Returns None as soon as anything is not obviously simple; the full parser then decides.
    """
    data: dict[str, Value] = {}
    lines: dict[str, int] = {}
    current: list[Value] | None = None
    item_indent = -1  # every item of one list at one indentation, or the full parser decides
    empty: set[str] = set()
    for n, raw in enumerate(text.split("\n")):
        line = raw.rstrip(" ")
        if not line:
            continue
        if line[0] == " " or line.startswith("- "):
            item = line.lstrip(" ")
            indent = len(line) - len(item)
            if current is None or not item.startswith("- ") or item_indent not in (-1, indent):
                return None
            value = _simple_scalar(item[2:].strip())
            if value is None:
                return None
            current.append(value)
            item_indent = indent
            continue
        m = _SIMPLE_KEY.match(line)
        if m is None or m.group(1) in data:
            return None
        key, rest = m.group(1), (m.group(2) or "").strip()
        lines[key] = first_line + n
        current, item_indent = None, -1
        if not rest:
            current = []
            data[key] = current
            empty.add(key)
            continue
        if rest[0] == "[":
            flow = _SIMPLE_FLOW.match(rest)
            if flow is None:
                return None
            items = [x.strip() for x in flow.group(1).split(",")]
            if items[-1] == "":
                items.pop()
            if any(not x or _simple_scalar(x) != x for x in items):
                return None
            data[key] = list(items)
            continue
        value = _simple_scalar(rest)
        if value is None:
            return None
        data[key] = value
    for key in empty:
        if data[key] == []:
            data[key] = ""  # a key with nothing under it is an empty value
    return Parsed(data, [], lines)

"""A skill body's "when to use" and "do not use" sections: pure text, no I/O.

Many public SKILL.md bodies say in a section when the skill is meant (`## When to Use This
Skill` in half of them) or not meant (`## Do not use this skill when`), in more words than the
description. The description index (mca.skills.relevance) reads those sections as evidence for
and against a skill.

A section is a Markdown heading whose whole title (case, emphasis and trailing punctuation
aside) is one of the patterns below, and the text after it up to the next heading of the same
or a higher level. A body is untrusted: only its first MAX_BODY characters are searched, at
most MAX_SECTIONS headings are read, and each kind's text is cut to MAX_SECTION characters, the
size of a description.

    when to use / apply / invoke / trigger / activate [this|it|the ...]
    when should I / you use [this|it|the ...]
    use this skill / this / it  when / for / if
    common / example / typical  use cases;  triggers;  activation
    --- evidence against ---
    when not to use [this|it|the ...];  when to avoid [...];  not for [...]
    do not / don't use this skill / this / it  [when / for / if]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_BODY = 64 * 1024  # characters of a body searched for the headings
MAX_SECTIONS = 16  # headings read per body
MAX_SECTION = 1024  # characters per kind, like a description

_HEADING = re.compile(r"^(#{1,6})[ \t]+([^\n]*)", re.M)
_EDGES = re.compile(r"^[\W_]+|[\W_]+$")
_SUFFIX = r"(?:\s+(?:this|it|the)(?:\s+\w+)?)?"
_USE = re.compile(
    r"(?:when\s+to\s+(?:use|apply|invoke|trigger|activate)|when\s+should\s+(?:i|you)\s+use"
    r"|use\s+(?:this\s+skill|this|it)\s+(?:when|for|if)"
    r"|(?:common\s+|example\s+|typical\s+)?use\s+cases|triggers?|activation)" + _SUFFIX
)
_AVOID = re.compile(
    r"(?:when\s+not\s+to\s+use|when\s+to\s+avoid|not\s+for"
    r"|(?:do\s+not|don'?t)\s+use\s+(?:this\s+skill|this|it)(?:\s+(?:when|for|if))?)" + _SUFFIX
)
KINDS = ("use", "avoid")


def kind(title: str) -> str | None:
    """'use', 'avoid' or None for a heading's title."""
    plain = " ".join(_EDGES.sub("", title.lower()).split())
    if _AVOID.fullmatch(plain):
        return "avoid"
    return "use" if _USE.fullmatch(plain) else None


def find(body: str) -> tuple[int, ...]:
    """Where the body's "when to use" and "do not use" headings start (at most MAX_SECTIONS)."""
    found = []
    for h in _HEADING.finditer(body, 0, MAX_BODY):
        if kind(h.group(2)) is not None:
            found.append(h.start())
            if len(found) == MAX_SECTIONS:
                break
    return tuple(found)


def read(body: str, offsets: Sequence[int]) -> tuple[str, str] | None:
    """The text under the headings at `offsets` by kind ('use', 'avoid'), each cut to
    MAX_SECTION; None when an offset is not such a heading (offsets must increase)."""
    if len(offsets) > MAX_SECTIONS:
        return None
    texts: dict[str, list[str]] = {k: [] for k in KINDS}
    last, size = -1, min(len(body), MAX_BODY)
    for off in offsets:
        if type(off) is not int or not last < off < size or (off and body[off - 1] != "\n"):
            return None
        h = _HEADING.match(body, off)
        which = kind(h.group(2)) if h else None
        if h is None or which is None:
            return None
        level, start = len(h.group(1)), h.end()
        end = min(len(body), start + MAX_SECTION)
        for nxt in _HEADING.finditer(body, start, end):
            if len(nxt.group(1)) <= level:
                end = nxt.start()
                break
        texts[which].append(body[start:end])
        last = off
    use, avoid = ("\n".join(texts[k])[:MAX_SECTION] for k in KINDS)
    return use, avoid

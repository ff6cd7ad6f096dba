"""A skill asked for by name but over the budget: the head that fits, cut where a reader
would stop (a heading, else a line, never inside a code fence left open), and one line
saying how to read the rest. Pure functions apart from the render they are given."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace

from mca.skills.inject import Block
from mca.skills.model import Skill

HEADING_SHARE = 0.75  # a heading boundary wins if it keeps this much of the best line cut
LINE_SHARE = 0.5  # below this much of the allowance, a long line is cut inside instead
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")


@dataclass(frozen=True)
class Cut:
    """The kept head of a body: `end` characters of it, and where the rest starts (1-based
    line and column, the coordinates read_file takes)."""

    text: str  # what is shown: body[:end], plus a closing fence when it cut inside one
    end: int
    line: int
    column: int


@dataclass
class _Scan:
    """Line starts within the allowance: outside fences, inside them, and headings."""

    outside: int = 0
    inside: int = 0
    inside_closer: str = ""
    heading: int = 0
    last: int = 0  # where the line the allowance ends in starts
    last_fence: str = ""  # the fence open at that line's start ('' when none)
    last_is_fence: bool = False  # that line is a fence line itself: never cut inside it


def _scan(body: str, limit: int) -> _Scan:
    s = _Scan()
    fence = ""
    pos = 0
    while pos <= limit and pos < len(body):
        nl = body.find("\n", pos, limit + 1)
        line = body[pos : nl if nl >= 0 else min(len(body), limit)]
        if pos > 0 and not fence:
            s.outside = pos
            if _HEADING.match(line):
                s.heading = pos
        elif pos > 0 and pos + len(fence) + 1 <= limit:
            s.inside, s.inside_closer = pos, fence
        s.last, s.last_fence, s.last_is_fence = pos, fence, bool(_FENCE.match(line))
        fence = _fence_after(line, fence)
        if nl < 0:
            break
        pos = nl + 1
    return s


def _fence_after(line: str, fence: str) -> str:
    """The fence open after this line: it opens one, or closes the open one (the same
    character, at least as long, nothing after it), or leaves it as it was."""
    m = _FENCE.match(line)
    if m is None:
        return fence
    if not fence:
        return m.group(1)
    mark = m.group(1)
    closes = mark[0] == fence[0] and len(mark) >= len(fence) and not line[m.end() :].strip()
    return "" if closes else fence


def _char_boundary(body: str, pos: int) -> int:
    """Back off so a combining mark, a variation selector or a joined emoji stays whole."""
    while pos > 0 and (
        unicodedata.category(body[pos]) in ("Mn", "Me")
        or body[pos] == "\u200d"
        or body[pos - 1] == "\u200d"
    ):
        pos -= 1
    return pos


def _inside_line(body: str, allowance: int, s: _Scan) -> tuple[int, str]:
    """A cut inside the long line the allowance ends in: after its last space in the second
    half of the allowance, else at a character; (0, '') when that line is a fence line."""
    closer = f"\n{s.last_fence}\n" if s.last_fence else ""
    limit = allowance - len(closer)
    if s.last_is_fence or limit <= s.last:
        return 0, ""
    space = max(body.rfind(" ", s.last, limit), body.rfind("\t", s.last, limit))
    pos = space + 1 if space >= limit * LINE_SHARE else _char_boundary(body, limit)
    return (pos, closer) if pos > s.last else (0, "")


def cut_body(body: str, allowance: int) -> Cut | None:
    """The longest sensible head of `body` within `allowance` characters, or None."""
    if allowance <= 0:
        return None
    if len(body) <= allowance:
        lines = body.count("\n")
        return Cut(body, len(body), lines + 1, 1)
    s = _scan(body, allowance)
    closer = ""
    if s.heading and s.heading >= s.outside * HEADING_SHARE:
        end = s.heading
    elif s.outside >= allowance * LINE_SHARE:
        end = s.outside
    elif s.inside >= allowance * LINE_SHARE:
        end, closer = s.inside, f"{s.inside_closer}\n"
    else:
        end, closer = _inside_line(body, allowance, s)
        if end <= s.outside:
            end, closer = s.outside, ""
    if end <= 0:
        return None
    start = body.rfind("\n", 0, end) + 1
    line = body.count("\n", 0, end) + 1
    return Cut(body[:end] + closer, end, line, end - start + 1)


def rest_line(name: str, cut: Cut, total: int) -> str:
    """The line after the head: how much is left and the read_file call that reads it."""
    where = f"offset={cut.line}" + (f" column={cut.column}" if cut.column > 1 else "")
    return (
        f"[mca: this is {cut.end} of the {total} characters of skill {name}: the rest did not"
        f" fit the skill budget. Read the other {total - cut.end} with read_file"
        f" skill:{name} {where}]"
    )


def partial_block(skill: Skill, render: Callable[[Skill], Block], left: int) -> Block | None:
    """The skill's block with as much of its body as fits in `left` characters (its tags,
    resources and scripts whole), or None when not even a line fits."""
    body, total = skill.body, len(skill.body)
    widest = rest_line(skill.name, Cut("", total, total + 1, total + 1), total)
    allowance = left - len(render(replace(skill, body="")).text) - len(widest) - 2
    for _ in range(4):  # escaping can lengthen the text: shrink by the overflow and retry
        cut = cut_body(body, allowance)
        if cut is None or cut.end >= total:
            return None
        note = rest_line(skill.name, cut, total)
        block = render(replace(skill, body=cut.text.rstrip() + "\n\n" + note))
        if len(block.text) <= left:
            where = note[note.index("read_file") : -1]
            block.partial = f"partial: {cut.end} of {total} chars; the rest: {where}"
            return block
        allowance -= len(block.text) - left
    return None

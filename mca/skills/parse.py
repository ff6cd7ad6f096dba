"""SKILL.md -> frontmatter fields + body, split by lines (a --- rule in the body is safe)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mca.fs.careful import FileTooLarge, read_regular
from mca.skills.model import Diagnostic
from mca.skills.yaml import Parsed, Value, YamlError, parse_yaml

__all__ = [
    "BOM",
    "FENCE",
    "MAX_SKILL_BYTES",
    "FrontmatterError",
    "ParsedSkill",
    "SplitFn",
    "parse_text",
    "read_skill_file",
    "recover_fields",
    "split_frontmatter",
]

FENCE = "---"
BOM = "\ufeff"
MAX_SKILL_BYTES = 1024 * 1024


class FrontmatterError(Exception):
    """No opening or no closing fence; `code` is the diagnostic code."""

    def __init__(self, code: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.line = line


@dataclass
class ParsedSkill:
    """What a SKILL.md says, before validation."""

    fields: dict[str, Value]
    body: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    key_lines: dict[str, int] = field(default_factory=dict)


# A fence line: --- with only whitespace (not a newline) around it, as str.strip() allows.
_CLOSING = re.compile(r"^[^\S\n]*---[^\S\n]*$", re.M)


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """(frontmatter, body, line of the body's first line). Raises FrontmatterError."""
    text = text.removeprefix(BOM)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    first, _, rest = text.partition("\n")
    if first.strip() != FENCE:
        raise FrontmatterError("no-frontmatter", "the first line of the file must be ---", 1)
    # The first later line that is --- alone (blanks around it allowed, as the seed's strip()
    # reads a fence) closes it: never split on the delimiter, a horizontal rule in the body or
    # 'foo---bar' in a value must not cut anything.
    m = _CLOSING.search(rest)
    if m is None:
        raise FrontmatterError(
            "unclosed-frontmatter",
            "the frontmatter has no closing --- line",
            text.count("\n") + 1,
        )
    pos, end = m.start(), m.end()
    end = -1 if end >= len(rest) else end
    head = rest[:pos] or "\n"
    body = "" if end < 0 else rest[end + 1 :]
    body_line = 3 + rest.count("\n", 0, pos)
    while body:  # skip blank lines before the body
        nl = body.find("\n")
        if (body if nl < 0 else body[:nl]).strip():
            break
        body = "" if nl < 0 else body[nl + 1 :]
        body_line += 1
    return head, body, body_line


SplitFn = Callable[[str], tuple[str, str, int]]


def parse_text(text: str, path: str, split: SplitFn = split_frontmatter) -> ParsedSkill:
    """Parse SKILL.md text; every failure is a diagnostic, never an exception."""
    try:
        head, body, _ = split(text)
    except FrontmatterError as e:
        return ParsedSkill({}, "", [Diagnostic(e.code, path, str(e), e.line)])
    try:
        parsed: Parsed = parse_yaml(head, first_line=2)
    except YamlError as e:
        message = (
            f"{e.message} ({e.construct}); mca reads a YAML subset,"
            " see Frontmatter in docs/skills.md (mca's source)"
        )
        recovered = recover_fields(head)
        if "description" not in recovered:
            return ParsedSkill({}, body, [Diagnostic("unsupported-yaml", path, message, e.line)])
        fields: dict[str, Value] = {k: v for k, (v, _) in recovered.items()}
        lines = {k: n for k, (_, n) in recovered.items()}
        where = ", ".join(f"{k} (line {n})" for k, (_, n) in recovered.items())
        note = f"{message}. Read line by line instead: {where}; every other field is ignored"
        return ParsedSkill(
            fields, body, [Diagnostic("frontmatter-recovered", path, note, e.line)], lines
        )
    diags = [_lenient(path, line, key, code) for line, key, code in parsed.warnings]
    return ParsedSkill(parsed.data, body, diags, parsed.lines)


_FIELD_LINE = re.compile(r"(name|description)[ \t]*:[ \t]*(.*?)[ \t]*\Z")


def recover_fields(head: str, first_line: int = 2) -> dict[str, tuple[str, int]]:
    """name and description from a frontmatter that does not parse, one line each (seed 002's
    lenient reading): {field: (value, line)} for the ones found with a value."""
    out: dict[str, tuple[str, int]] = {}
    for n, line in enumerate(head.replace("\r\n", "\n").split("\n")):
        m = _FIELD_LINE.match(line)
        if m is None or m.group(1) in out:
            continue
        value = m.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if value.strip():
            out[m.group(1)] = (value.strip(), first_line + n)
    return out


def _lenient(path: str, line: int, key: str, code: str) -> Diagnostic:
    if code == "duplicate-key":
        message = f"{key!r} is given twice; the later value (this line) is used, as YAML does"
    elif code == "unquoted-colon":
        message = (
            f"the value of {key!r} contains ': ' without quotes; strict YAML parsers reject this"
            " file. mca kept the whole text; put the value in double quotes"
        )
    else:
        message = (
            f"the value of {key!r} starts with a reserved YAML character; strict parsers reject"
            " it. mca kept the text; put the value in double quotes"
        )
    return Diagnostic(code, path, message, line)


def read_skill_file(path: Path, split: SplitFn = split_frontmatter) -> ParsedSkill:
    """Read and parse one SKILL.md: a regular file (never a FIFO or a device), capped in size,
    undecodable bytes replaced."""
    try:
        data = read_regular(path, cap=MAX_SKILL_BYTES)
    except FileTooLarge:
        message = f"SKILL.md is over {MAX_SKILL_BYTES} bytes; not loaded"
        return ParsedSkill({}, "", [Diagnostic("unreadable", str(path), message)])
    except OSError as e:
        why = e.strerror or str(e)
        return ParsedSkill({}, "", [Diagnostic("unreadable", str(path), f"cannot read: {why}")])
    return parse_text(data.decode("utf-8", errors="replace"), str(path), split)

"""Scalars, folding and shared types of mca's YAML subset (see __init__.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeAlias

Value: TypeAlias = str | list["Value"] | dict[str, "Value"]

_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX = {"x": 2, "u": 4, "U": 8}
DQ_END = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
SQ_END = re.compile(r"'(?:[^']|'')*'(?!')", re.S)
INDICATORS = "&*!|>%@`"


class YamlError(Exception):
    """A construct outside the subset, or malformed YAML; carries the 1-based line."""

    def __init__(self, line: int, construct: str, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.construct = construct
        self.message = message


@dataclass
class Parsed:
    """The top-level mapping plus lenient-parse warnings (line, key, code)."""

    data: dict[str, Value]
    warnings: list[tuple[int, str, str]] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # top-level key -> line


def indent_of(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def strip_comment(text: str) -> str:
    """Drop a trailing ' #...' comment from a plain (unquoted) fragment."""
    if text.startswith("#"):
        return ""
    pos = text.find(" #")
    tab = text.find("\t#")
    cut = min(p for p in (pos, tab, len(text)) if p >= 0)
    return text[:cut].rstrip()


def find_colon(text: str) -> int:
    """Index of the first ':' that ends a plain key (followed by space or end), or -1."""
    i = 0
    while True:
        i = text.find(":", i)
        if i < 0:
            return -1
        if i + 1 == len(text) or text[i + 1] in " \t":
            return i
        i += 1


def fold_plain(parts: list[str]) -> str:
    """Fold plain-scalar lines: a single break becomes a space, blank lines become newlines."""
    out = ""
    pending_newlines = 0
    for p in parts:
        if not p:
            pending_newlines += 1
            continue
        if out:
            out += "\n" * pending_newlines if pending_newlines else " "
        out += p
        pending_newlines = 0
    return out


def _fold_quoted(body: str) -> str:
    """Fold a quoted scalar's lines: a break becomes a space, n empty lines become n breaks."""
    lines = body.split("\n")
    if len(lines) == 1:
        return body
    parts = [lines[0].rstrip(" \t")] + [ln.strip(" \t") for ln in lines[1:-1]]
    parts.append(lines[-1].lstrip(" \t"))
    out = parts[0]
    blanks = 0
    for n, p in enumerate(parts[1:], 2):
        if p == "" and n < len(parts):
            blanks += 1
            continue
        out += ("\n" * blanks if blanks else " ") + p
        blanks = 0
    return out


def fold_block(lines: list[str]) -> str:
    """Folded (>) block: lines join with spaces; blank and more-indented lines keep breaks."""
    out = ""
    prev_more = False
    blanks = 0
    for ln in lines:
        if ln == "":
            blanks += 1
            continue
        more = ln.startswith((" ", "\t"))
        if not out:
            out += "\n" * blanks + ln
        elif blanks:
            out += "\n" * (blanks + (1 if (more or prev_more) else 0)) + ln
        else:
            out += ("\n" if (more or prev_more) else " ") + ln
        blanks = 0
        prev_more = more
    return out


def decode_single(body: str) -> str:
    """The value of a single-quoted scalar's body."""
    return _fold_quoted(body).replace("''", "'")


def decode_double(body: str, line: int) -> str:
    """The value of a double-quoted scalar's body (escapes decoded)."""
    # Fold the source lines first, then unescape: an escaped \n is content, not a break.
    lines = body.split("\n")
    for n in range(len(lines) - 1):
        ln = lines[n]
        if (len(ln) - len(ln.rstrip("\\"))) % 2 == 1:  # an escaped line break
            lines[n] = ln[:-1] + "\x00"
    folded = _fold_quoted("\n".join(lines)).replace("\x00 ", "").replace("\x00", "")
    return _unescape(folded, line)


def _unescape(text: str, line: int) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in _HEX:
            digits = text[i + 2 : i + 2 + _HEX[nxt]]
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                raise YamlError(line, "escape", f"bad escape \\{nxt}{digits}") from None
            i += 2 + _HEX[nxt]
        else:
            raise YamlError(line, "escape", f"unknown escape \\{nxt}")
    return "".join(out)

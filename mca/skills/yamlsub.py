"""A YAML subset for SKILL.md frontmatter, measured on real skills. No YAML library at run time.

Covered: plain, single- and double-quoted scalars (multi-line too), plain scalars wrapped onto
indented lines, block scalars | and > with -/+ chomping, block sequences (indentless too), nested
block maps, flow sequences and maps ([a, b], {k: v}, nested, multi-line), comments, empty values.
Every value stays a string. Anything else (anchors, aliases, tags, merge keys, directives,
several documents, complex keys) is a YamlError naming the line and the construct: never a guess.

One deliberate leniency: a plain value containing ": " (`description: Use when: x`) is kept whole
and reported as a warning, because that is the commonest breakage in real skills.
"""

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
_INDICATORS = "&*!|>%@`"
_DQ_END = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SQ_END = re.compile(r"'(?:[^']|'')*'(?!')", re.S)


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


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _strip_comment(text: str) -> str:
    """Drop a trailing ' #...' comment from a plain (unquoted) fragment."""
    if text.startswith("#"):
        return ""
    pos = text.find(" #")
    tab = text.find("\t#")
    cut = min(p for p in (pos, tab, len(text)) if p >= 0)
    return text[:cut].rstrip()


def _find_colon(text: str) -> int:
    """Index of the first ':' that ends a plain key (followed by space or end), or -1."""
    i = 0
    while True:
        i = text.find(":", i)
        if i < 0:
            return -1
        if i + 1 == len(text) or text[i + 1] in " \t":
            return i
        i += 1


class _Parser:
    def __init__(self, text: str, first_line: int) -> None:
        self.raw = text.split("\n")
        self.first = first_line
        self.pos = 0
        self.warnings: list[tuple[int, str, str]] = []
        # A virtual line lets a compact "- key: v" be parsed as a map at a deeper column.
        self.virtual: dict[int, tuple[int, str]] = {}
        # (indent, content) per line, computed once: the parser looks at lines many times.
        self.cooked: list[tuple[int, str] | None] = [None] * len(self.raw)

    # -- line access -----------------------------------------------------------------------
    def lineno(self, i: int | None = None) -> int:
        return self.first + (self.pos if i is None else i)

    def line(self, i: int) -> tuple[int, str]:
        """(indent, content) of line i, content without indentation."""
        if self.virtual and i in self.virtual:
            return self.virtual[i]
        cooked = self.cooked[i]
        if cooked is not None:
            return cooked
        text = self.raw[i].rstrip(" \t")
        content = text.lstrip(" ")
        if content.startswith("\t") and not content.lstrip("\t").startswith("#"):
            raise YamlError(self.lineno(i), "tab", "a tab character is used for indentation")
        cooked = self.cooked[i] = (len(text) - len(content), content)
        return cooked

    def blank(self, i: int) -> bool:
        content = self.line(i)[1]
        return not content or content[0] == "#"

    def next_content(self, i: int) -> int:
        n = len(self.raw)
        while i < n and self.blank(i):
            i += 1
        return i

    def error(self, construct: str, message: str, i: int | None = None) -> YamlError:
        return YamlError(self.lineno(i), construct, message)

    # -- structure -------------------------------------------------------------------------
    def document(self) -> dict[str, Value]:
        i = self.next_content(0)
        if i >= len(self.raw):
            return {}
        indent, content = self.line(i)
        self._reject_document_level(i, content)
        if indent != 0:
            raise self.error("indentation", "the first key must not be indented", i)
        self.pos = i
        value = self.block(0)
        self.pos = self.next_content(self.pos)
        if self.pos < len(self.raw):
            raise self.error("structure", "unexpected content after the mapping")
        if not isinstance(value, dict):
            raise self.error("structure", "the frontmatter must be a mapping of keys to values", i)
        return value

    def _reject_document_level(self, i: int, content: str) -> None:
        if content.startswith("%"):
            raise self.error("directive", "YAML directives (%) are not supported", i)
        if content in ("---", "...") or content.startswith(("--- ", "... ")):
            raise self.error("document", "several YAML documents are not supported", i)

    def block(self, indent: int) -> Value:
        """A node whose first line is self.pos, at exactly `indent`."""
        _, content = self.line(self.pos)
        if content == "-" or content.startswith("- "):
            return self.sequence(indent)
        if content.startswith("? "):
            raise self.error("complex-key", "complex mapping keys (?) are not supported")
        if self._key_split(content) is not None:
            return self.mapping(indent)
        return self.scalar_node(content, indent - 1)

    def _key_split(self, content: str) -> tuple[str, str] | None:
        """(key, rest) when the line is 'key: rest', else None."""
        if content[:1] in "\"'":
            close = self._quoted_end(content)
            if close > 0 and content[close + 1 : close + 2] == ":":
                rest = content[close + 2 :]
                if rest == "" or rest[0] in " \t":
                    return self._unquote_key(content[: close + 1]), rest.strip()
            return None
        if content[:1] in "[{":
            return None
        colon = _find_colon(content)
        if colon <= 0 or " #" in content[:colon]:
            return None
        return content[:colon].rstrip(), content[colon + 1 :].strip()

    def _quoted_end(self, content: str) -> int:
        """Index of the closing quote of the scalar that starts content, or -1."""
        m = (_DQ_END if content[0] == '"' else _SQ_END).match(content)
        return m.end() - 1 if m else -1

    def _unquote_key(self, token: str) -> str:
        return self._single(token[1:-1]) if token[0] == "'" else self._double(token[1:-1])

    def mapping(self, indent: int) -> dict[str, Value]:
        out: dict[str, Value] = {}
        while self.pos < len(self.raw):
            i = self.next_content(self.pos)
            if i >= len(self.raw):
                self.pos = i
                break
            ind, content = self.line(i)
            if ind < indent:
                self.pos = i
                break
            if ind > indent:
                raise self.error("indentation", "this line is indented more than its mapping", i)
            if content == "-" or content.startswith("- "):
                if indent == 0 and not out:
                    raise self.error("structure", "a sequence where a key was expected", i)
                self.pos = i
                break
            self._reject_document_level(i, content)
            split = self._key_split(content)
            if split is None:
                raise self.error("structure", f"expected 'key: value', found {content[:40]!r}", i)
            key, rest = split
            if key == "<<":
                raise self.error("merge-key", "merge keys (<<) are not supported", i)
            if key.startswith(("&", "*", "!")):
                raise self.error("anchor", "anchors, aliases and tags are not supported", i)
            self.pos = i
            out[key] = self.value_after_key(rest, indent, key)
            if indent == 0:
                self.key_lines.setdefault(key, self.lineno(i))
        return out

    key_lines: dict[str, int]

    def value_after_key(self, rest: str, indent: int, key: str) -> Value:
        """The value of `key: rest` on line self.pos; moves self.pos past it."""
        start = self.pos
        if rest == "" or rest.startswith("#"):
            j = self.next_content(start + 1)
            if j < len(self.raw):
                ind, content = self.line(j)
                is_item = content == "-" or content.startswith("- ")
                if ind > indent or (ind == indent and is_item):
                    self.pos = j
                    return self.block(ind)
            self.pos = start + 1
            return ""
        return self.inline_value(rest, indent, key)

    def inline_value(self, rest: str, indent: int, key: str) -> Value:
        """A value that starts on the current line after 'key:' or '- '."""
        first = rest[0]
        if first in "&*!":
            what = {"&": "an anchor", "*": "an alias", "!": "a tag"}[first]
            raise self.error(
                {"&": "anchor", "*": "alias", "!": "tag"}[first], f"{what} is not supported"
            )
        if first in "|>":
            return self.block_scalar(rest, indent)
        if first in "[{":
            return self.flow_node(rest)
        if first in "\"'":
            return self.quoted(rest, indent)
        return self.plain(rest, indent, key)

    def sequence(self, indent: int) -> list[Value]:
        out: list[Value] = []
        while self.pos < len(self.raw):
            i = self.next_content(self.pos)
            if i >= len(self.raw):
                self.pos = i
                break
            ind, content = self.line(i)
            if ind != indent or not (content == "-" or content.startswith("- ")):
                if ind > indent:
                    raise self.error("indentation", "unexpected indentation in a sequence", i)
                self.pos = i
                break
            self.pos = i
            rest = content[1:].lstrip(" ")
            if rest == "" or rest.startswith("#"):
                out.append(self.value_after_key("", indent, "-"))
                continue
            column = indent + (len(content) - len(rest))
            if self._key_split(rest) is not None or rest == "-" or rest.startswith("- "):
                self.virtual[i] = (column, rest)
                out.append(self.block(column))
                del self.virtual[i]
            else:
                out.append(self.inline_value(rest, indent, "-"))
        return out

    # -- scalars ---------------------------------------------------------------------------
    def continuation(self, indent: int) -> list[str]:
        """Following lines that belong to a multi-line scalar (more indented, or blank)."""
        lines: list[str] = []
        j = self.pos + 1
        while j < len(self.raw):
            text = self.raw[j].rstrip(" \t")
            if text.strip() and _indent(text) <= indent:
                break
            lines.append(text.strip())
            j += 1
        while lines and not lines[-1]:
            lines.pop()
        self.pos += 1 + len(lines)
        return lines

    def scalar_node(self, content: str, indent: int) -> Value:
        return self.inline_value(content, indent, "")

    def plain(self, rest: str, indent: int, key: str) -> str:
        reserved = rest[0] in _INDICATORS or rest.startswith(("- ", "? ", ": "))
        if reserved and rest[0] not in "@`%":
            raise self.error("indicator", f"a plain value cannot start with {rest[0]!r}")
        line = self.lineno()
        parts = [_strip_comment(rest)]
        for extra in self.continuation(indent):
            if extra.startswith("#"):
                break
            parts.append(_strip_comment(extra) if extra else "")
        text = _fold(parts)
        if rest[0] in "@`%":
            self.warnings.append((line, key, "unquoted-indicator"))
        elif _find_colon(text) >= 0:
            self.warnings.append((line, key, "unquoted-colon"))
        return text

    def quoted(self, rest: str, indent: int) -> str:
        """A single- or double-quoted scalar, possibly spanning lines."""
        q = rest[0]
        buf = rest
        start = self.pos
        j = self.pos
        while True:
            end = self._quoted_end(buf)
            if end > 0:
                break
            j += 1
            if j >= len(self.raw):
                raise self.error("quote", f"unterminated {q}-quoted string", start)
            buf += "\n" + self.raw[j].strip()
        tail = _strip_comment(buf[end + 1 :].strip())
        if tail:
            raise self.error("quote", f"unexpected text after the closing quote: {tail[:30]!r}", j)
        self.pos = j + 1
        body = buf[1:end]
        return self._single(body) if q == "'" else self._double(body)

    def _single(self, body: str) -> str:
        return _fold_quoted(body).replace("''", "'")

    def _double(self, body: str) -> str:
        # Fold the source lines first, then unescape: an escaped \n is content, not a break.
        lines = body.split("\n")
        for n in range(len(lines) - 1):
            ln = lines[n]
            if (len(ln) - len(ln.rstrip("\\"))) % 2 == 1:  # an escaped line break
                lines[n] = ln[:-1] + "\x00"
        folded = _fold_quoted("\n".join(lines)).replace("\x00 ", "").replace("\x00", "")
        return self._unescape(folded)

    def _unescape(self, text: str) -> str:
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
                    raise self.error("escape", f"bad escape \\{nxt}{digits}") from None
                i += 2 + _HEX[nxt]
            else:
                raise self.error("escape", f"unknown escape \\{nxt}")
        return "".join(out)

    def block_scalar(self, header: str, indent: int) -> str:
        head = _strip_comment(header)
        style, chomp, explicit = head[0], "", 0
        for ch in head[1:]:
            if ch in "+-" and not chomp:
                chomp = ch
            elif ch in "123456789" and not explicit:
                explicit = int(ch)
            else:
                raise self.error("block-scalar", f"bad block scalar header {head!r}")
        raw: list[str] = []
        j = self.pos + 1
        while j < len(self.raw):
            text = self.raw[j].rstrip("\r")
            if text.strip() and _indent(text) <= indent:
                break
            raw.append(text)
            j += 1
        self.pos = j
        content_indent = indent + explicit if explicit else 0
        if not content_indent:
            first = next((t for t in raw if t.strip()), "")
            content_indent = _indent(first) if first else indent + 1
        lines = [t[content_indent:] if t.strip() else "" for t in raw]
        body_end = len(lines)
        while body_end and not lines[body_end - 1]:
            body_end -= 1
        trailing = len(lines) - body_end
        body = lines[:body_end]
        text = "\n".join(body) if style == "|" else _fold_block(body)
        if not body:
            return "\n" * trailing if chomp == "+" else ""
        if chomp == "-":
            return text
        if chomp == "+":
            return text + "\n" + "\n" * trailing
        return text + "\n"

    def flow_node(self, rest: str) -> Value:
        buf = rest
        start = self.pos
        j = self.pos
        while True:
            try:
                value, end = _Flow(buf, self.lineno(start)).parse()
                break
            except _Incomplete:
                j += 1
                if j >= len(self.raw):
                    raise self.error(
                        "flow", "unclosed [ or { in a flow collection", start
                    ) from None
                buf += " " + _strip_comment(self.raw[j].strip())
        tail = _strip_comment(buf[end:].strip())
        if tail:
            raise self.error("flow", f"unexpected text after a flow collection: {tail[:30]!r}", j)
        self.pos = j + 1
        return value


def _fold(parts: list[str]) -> str:
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


def _fold_block(lines: list[str]) -> str:
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


class _Incomplete(Exception):
    """The flow collection continues on the next line."""


class _Flow:
    """Recursive descent over one flow collection: [a, b], {k: v}, nested."""

    def __init__(self, text: str, line: int) -> None:
        self.s = text
        self.i = 0
        self.line = line

    def parse(self) -> tuple[Value, int]:
        value = self.node()
        return value, self.i

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t\n":
            self.i += 1
        if self.i >= len(self.s):
            raise _Incomplete

    def node(self) -> Value:
        self.ws()
        c = self.s[self.i]
        if c == "[":
            return self.seq()
        if c == "{":
            return self.map()
        if c in "\"'":
            return self.quoted()
        if c in "&*!":
            raise YamlError(
                self.line,
                {"&": "anchor", "*": "alias", "!": "tag"}[c],
                "anchors, aliases and tags are not supported",
            )
        return self.plain()

    def seq(self) -> list[Value]:
        self.i += 1
        out: list[Value] = []
        while True:
            self.ws()
            if self.s[self.i] == "]":
                self.i += 1
                return out
            item = self.node()
            self.ws()
            if self.s[self.i] == ":" and isinstance(item, str):  # [a: b] is a one-pair map
                self.i += 1
                out.append({item: self.node()})
                self.ws()
            else:
                out.append(item)
            self.sep("]")

    def map(self) -> dict[str, Value]:
        self.i += 1
        out: dict[str, Value] = {}
        while True:
            self.ws()
            if self.s[self.i] == "}":
                self.i += 1
                return out
            key = self.node()
            if not isinstance(key, str):
                raise YamlError(self.line, "complex-key", "flow map keys must be scalars")
            self.ws()
            value: Value = ""
            if self.s[self.i] == ":":
                self.i += 1
                self.ws()
                if self.s[self.i] not in ",}":
                    value = self.node()
            out[key] = value
            self.ws()
            self.sep("}")

    def sep(self, close: str) -> None:
        self.ws()
        c = self.s[self.i]
        if c == ",":
            self.i += 1
        elif c != close:
            raise YamlError(self.line, "flow", f"expected ',' or '{close}' in a flow collection")

    def quoted(self) -> str:
        q = self.s[self.i]
        j = self.i + 1
        while True:
            if j >= len(self.s):
                raise _Incomplete
            if q == '"' and self.s[j] == "\\":
                j += 2
                continue
            if self.s[j] == q:
                if q == "'" and self.s[j + 1 : j + 2] == "'":
                    j += 2
                    continue
                break
            j += 1
        body = self.s[self.i + 1 : j]
        self.i = j + 1
        p = _Parser("", self.line)
        return p._single(body) if q == "'" else p._double(body)

    def plain(self) -> str:
        start = self.i
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in ",[]{}":
                break
            if c == ":" and (self.i + 1 >= len(self.s) or self.s[self.i + 1] in " ,]}"):
                break
            if c == "#" and self.s[self.i - 1] in " \t":
                raise YamlError(self.line, "comment", "a comment inside a flow collection")
            self.i += 1
        if self.i >= len(self.s):
            raise _Incomplete
        return self.s[start : self.i].strip()


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


def _fast(text: str, first_line: int) -> Parsed | None:
    """The common case (flat keys, one-line scalars, simple lists) without the full parser.

    Returns None as soon as anything is not obviously simple; the full parser then decides.
    """
    data: dict[str, Value] = {}
    lines: dict[str, int] = {}
    current: list[Value] | None = None
    for n, raw in enumerate(text.split("\n")):
        line = raw.rstrip(" ")
        if not line:
            continue
        if line[0] == " ":
            item = line.lstrip(" ")
            if current is None or not item.startswith("- "):
                return None
            value = _simple_scalar(item[2:].strip())
            if value is None:
                return None
            current.append(value)
            continue
        m = _SIMPLE_KEY.match(line)
        if m is None or m.group(1) in data:
            return None
        key, rest = m.group(1), (m.group(2) or "").strip()
        lines[key] = first_line + n
        current = None
        if not rest:
            data[key] = ""
            current = []
            data[key] = current
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
    for key in [k for k, v in data.items() if v == []]:
        data[key] = ""  # a key with nothing under it is an empty value
    return Parsed(data, [], lines)


def parse_yaml(text: str, first_line: int = 2) -> Parsed:
    """Parse frontmatter text (lines start at `first_line` in the file)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fast = _fast(text, first_line) if "\t" not in text else None
    if fast is not None:
        return fast
    return parse_yaml_full(text, first_line)


def parse_yaml_full(text: str, first_line: int = 2) -> Parsed:
    """The full subset parser (what _fast falls back to)."""
    p = _Parser(text, first_line)
    p.key_lines = {}
    data = p.document()
    return Parsed(data, p.warnings, p.key_lines)

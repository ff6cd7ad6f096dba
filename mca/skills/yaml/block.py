"""Block structure of mca's YAML subset: mappings, sequences, plain/quoted/block scalars."""

from __future__ import annotations

from mca.skills.yaml.flow import Flow, Incomplete
from mca.skills.yaml.scalar import (
    DQ_END,
    INDICATORS,
    SQ_END,
    Value,
    YamlError,
    decode_double,
    decode_single,
    find_colon,
    fold_block,
    fold_plain,
    indent_of,
    strip_comment,
)


class BlockParser:
    def __init__(self, text: str, first_line: int) -> None:
        self.raw = text.split("\n")
        if len(self.raw) > 1 and self.raw[-1] == "":
            self.raw.pop()  # what follows the last line break is not a line
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

    def next_line(self) -> tuple[int, int, str] | None:
        """(index, indent, content) of the next line with content from self.pos; None (and
        self.pos at the end) when there is none."""
        i = self.next_content(self.pos)
        if i >= len(self.raw):
            self.pos = i
            return None
        return (i, *self.line(i))

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
        if _is_item(content):
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
        colon = find_colon(content)
        if colon <= 0 or " #" in content[:colon]:
            return None
        return content[:colon].rstrip(), content[colon + 1 :].strip()

    def _quoted_end(self, content: str) -> int:
        """Index of the closing quote of the scalar that starts content, or -1."""
        m = (DQ_END if content[0] == '"' else SQ_END).match(content)
        return m.end() - 1 if m else -1

    def _unquote_key(self, token: str) -> str:
        if token[0] == "'":
            return decode_single(token[1:-1])
        return decode_double(token[1:-1], self.lineno())

    def mapping(self, indent: int) -> dict[str, Value]:
        out: dict[str, Value] = {}
        while (found := self.next_line()) is not None:
            i, ind, content = found
            if ind < indent:
                self.pos = i
                break
            if ind > indent:
                raise self.error("indentation", "this line is indented more than its mapping", i)
            if _is_item(content):
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
            if key in out:
                self.warnings.append((self.lineno(i), key, "duplicate-key"))
            out[key] = self.value_after_key(rest, indent, key)
            if indent == 0:
                self.key_lines[key] = self.lineno(i)
        return out

    key_lines: dict[str, int]

    def value_after_key(self, rest: str, indent: int, key: str) -> Value:
        """The value of `key: rest` on line self.pos; moves self.pos past it."""
        start = self.pos
        if rest == "" or rest.startswith("#"):
            j = self.next_content(start + 1)
            if j < len(self.raw):
                ind, content = self.line(j)
                is_item = _is_item(content)
                # a key's items may sit at its own column (`key:\n- a`); after an empty item
                # (`-`) an item at that column is the next item, not this one's value
                if ind > indent or (ind == indent and is_item and key != "-"):
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
        while (found := self.next_line()) is not None:
            i, ind, content = found
            if ind != indent or not _is_item(content):
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
    def lines_below(self, indent: int) -> list[str]:
        """The lines after self.pos that are blank or indented more than `indent`, as written."""
        j = self.pos + 1
        while j < len(self.raw) and (not self.raw[j].strip() or indent_of(self.raw[j]) > indent):
            j += 1
        return self.raw[self.pos + 1 : j]

    def continuation(self, indent: int) -> list[str]:
        """Following lines that belong to a multi-line scalar (more indented, or blank)."""
        lines = [text.strip() for text in self.lines_below(indent)]
        while lines and not lines[-1]:
            lines.pop()
        self.pos += 1 + len(lines)
        return lines

    def scalar_node(self, content: str, indent: int) -> Value:
        return self.inline_value(content, indent, "")

    def plain(self, rest: str, indent: int, key: str) -> str:
        reserved = rest[0] in INDICATORS or rest.startswith(("- ", "? ", ": "))
        if reserved and rest[0] not in "@`%":
            raise self.error("indicator", f"a plain value cannot start with {rest[0]!r}")
        line = self.lineno()
        parts = [strip_comment(rest)]
        commented = parts[0] != rest.strip()
        for extra in self.continuation(indent):
            if commented and extra:
                raise self.error(
                    "comment",
                    "a comment inside a multi-line value: the lines after it would be lost"
                    " (quote the value, or move the comment)",
                    line - self.first,
                )
            if extra.startswith("#"):
                commented = True
                continue
            parts.append(strip_comment(extra) if extra else "")
            commented = bool(extra) and parts[-1] != extra
        text = fold_plain(parts)
        if rest[0] in "@`%":
            self.warnings.append((line, key, "unquoted-indicator"))
        elif find_colon(text) >= 0:
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
        tail = strip_comment(buf[end + 1 :].strip())
        if tail:
            raise self.error("quote", f"unexpected text after the closing quote: {tail[:30]!r}", j)
        self.pos = j + 1
        body = buf[1:end]
        return decode_single(body) if q == "'" else decode_double(body, self.lineno(start))

    def block_scalar(self, header: str, indent: int) -> str:
        head = strip_comment(header)
        style, chomp, explicit = head[0], "", 0
        for ch in head[1:]:
            if ch in "+-" and not chomp:
                chomp = ch
            elif ch in "123456789" and not explicit:
                explicit = int(ch)
            else:
                raise self.error("block-scalar", f"bad block scalar header {head!r}")
        raw = self.lines_below(indent)
        j = self.pos = self.pos + 1 + len(raw)
        content_indent = indent + explicit if explicit else 0
        if not content_indent:
            first = next((t for t in raw if t.strip()), "")
            # no text at all: the deepest blank line sets the indentation, so all are empty
            content_indent = indent_of(first) if first else max(map(len, raw), default=indent + 1)
            lead = raw[: raw.index(first)] if first else raw
            if first and any(len(t) > content_indent for t in lead):
                raise self.error(
                    "block-scalar", "a blank line before the text is indented more than the text"
                )
        # a text line indented less than the text ends the scalar (what follows must fit the
        # structure around it, or it is an error there)
        for k, t in enumerate(raw):
            if t.strip() and indent_of(t) < content_indent:
                self.pos = j - (len(raw) - k)
                raw = raw[:k]
                break
        # spaces beyond the indentation are text, even on a line that is only spaces
        lines = [t[content_indent:] for t in raw]
        body_end = len(lines)
        while body_end and not lines[body_end - 1]:
            body_end -= 1
        trailing = len(lines) - body_end
        body = lines[:body_end]
        text = "\n".join(body) if style == "|" else fold_block(body)
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
                value, end = Flow(buf, self.lineno(start)).parse()
                break
            except Incomplete:
                j += 1
                if j >= len(self.raw):
                    raise self.error(
                        "flow", "unclosed [ or { in a flow collection", start
                    ) from None
                buf += " " + strip_comment(self.raw[j].strip())
        tail = strip_comment(buf[end:].strip())
        if tail:
            raise self.error("flow", f"unexpected text after a flow collection: {tail[:30]!r}", j)
        self.pos = j + 1
        return value


def _is_item(content: str) -> bool:
    """Does this line (without its indentation) start a block sequence item?"""
    return content == "-" or content.startswith("- ")

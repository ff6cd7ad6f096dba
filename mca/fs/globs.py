"""Globs over /-separated relative paths: one translator for find_files, search_text's `path`,
a skill's `paths:` and .gitignore lines.

`*` and `?` stay within a name, `**` spans directories (`**/` also matches no directory),
`[abc]`, `[a-z]` and `[!a]` (or `[^a]`) match one character of a name, and a backslash makes
the next character literal.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "WILDCARDS",
    "UnclosedClass",
    "compile_glob",
    "glob_match",
    "literal_prefix",
    "translate",
]

WILDCARDS = "*?["
_WILD_OR_ESCAPE = re.compile("[" + re.escape(WILDCARDS + "\\") + "]")


class UnclosedClass(ValueError):
    """A `[` with no `]` after it: git ignores such a .gitignore line."""


def translate(pattern: str, strict: bool = False) -> str:
    """The regex (without anchors) matching what `pattern` matches. An unclosed `[` is a
    literal `[`, as in fnmatch, unless `strict`."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (end := _class_end(pattern, i)) > 0:
            out.append(_char_class(pattern[i + 1 : end]))
            i = end + 1
        elif c == "[" and strict:
            raise UnclosedClass(pattern)
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _class_end(pattern: str, i: int) -> int:
    """The index of the `]` closing the class opened at `i`, or -1 (a `]` first is literal)."""
    j = i + 1
    if pattern[j : j + 1] in ("!", "^"):
        j += 1
    return pattern.find("]", j + 1)


def _char_class(body: str) -> str:
    """A class body (`!a-z`, `]x`) as a regex matching one character of a name, never `/`."""
    negate = body[:1] in ("!", "^")
    body = body[1:] if negate else body
    parts, k = [], 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            lo, hi = body[k], body[k + 2]
            if lo <= hi:  # a reversed range matches nothing
                parts.append(f"{re.escape(lo)}-{re.escape(hi)}")
            k += 3
        else:
            parts.append(re.escape(body[k]))
            k += 1
    if negate:
        return f"[^/{''.join(parts)}]"
    return f"(?!/)[{''.join(parts)}]" if parts else "(?!)"


@functools.lru_cache(maxsize=65536)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The whole-path regex for a glob."""
    return re.compile(translate(pattern) + r"\Z")


@functools.lru_cache(maxsize=65536)
def literal_prefix(pattern: str) -> str:
    """The part of a glob before its first wildcard or escape (a cheap pre-check)."""
    m = _WILD_OR_ESCAPE.search(pattern)
    return pattern if m is None else pattern[: m.start()]


def glob_match(pattern: str, rel: str) -> bool:
    """Match a relative path against a glob; a pattern without / also matches the base name."""
    regex = compile_glob(pattern)
    if "/" not in pattern:
        if regex.match(rel.rsplit("/", 1)[-1]):
            return True
    elif not rel.startswith(literal_prefix(pattern)):
        return False
    return regex.match(rel) is not None

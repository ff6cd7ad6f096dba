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

from mca.skills.yaml.block import BlockParser
from mca.skills.yaml.fast import parse_fast
from mca.skills.yaml.scalar import Parsed, Value, YamlError

__all__ = ["Parsed", "Value", "YamlError", "parse_yaml"]


def parse_yaml(text: str, first_line: int = 2) -> Parsed:
    """Parse frontmatter text (lines start at `first_line` in the file)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fast = parse_fast(text, first_line) if "\t" not in text else None
    if fast is not None:
        return fast
    return parse_yaml_full(text, first_line)


def parse_yaml_full(text: str, first_line: int = 2) -> Parsed:
    """The full subset parser (what the fast path falls back to)."""
    p = BlockParser(text, first_line)
    p.key_lines = {}
    data = p.document()
    return Parsed(data, p.warnings, p.key_lines)

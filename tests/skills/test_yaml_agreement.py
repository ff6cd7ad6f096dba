"""The parser never misreads.

1. The fast path and the full parser agree on every input: the fast path returns exactly what
   the full parser returns, or None (never a different value).
2. Against PyYAML (BaseLoader: every scalar a string) on generated documents within the subset:
   each document parses to PyYAML's value, or is a named diagnostic (a YamlError, or a lenient
   warning), never a different value.

A few hundred examples in `make test`; MCA_YAML_EXAMPLES (50,000 in `make stress`) for more.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mca.skills.yaml import YamlError, parse_yaml
from mca.skills.yaml.block import BlockParser
from mca.skills.yaml.fast import parse_fast
from mca.skills.yaml.scalar import Parsed

EXAMPLES = int(os.environ.get("MCA_YAML_EXAMPLES", "300"))
PROPS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = st.from_regex(r"[a-z][a-z0-9_-]{0,5}", fullmatch=True)
WORD = st.from_regex(r"[A-Za-z0-9ü日][A-Za-z0-9 ._/ü日-]{0,8}[A-Za-z0-9ü日]?", fullmatch=True)
PLAIN = st.one_of(
    WORD,
    st.sampled_from(
        [
            "deploy",
            "a:b",
            "x#y",
            "x #y",
            "a: b",
            "- x",
            "? q",
            "foo---bar",
            "v1.2",
            "true",
            "null",
            "~",
            "0x1F",
            "1e3",
            "über",
            "日本語",
            "a, b",
            "[x]",
            "{k: v}",
            "&a x",
            "*b",
            "!tag x",
            "%x",
            "@x",
            "`x`",
            "|",
            ">",
            "'q'",
            '"d\\n"',
            "'it''s'",
            '"a \\"b\\""',
            '"\\u00e9"',
            "'multi word'",
            "x  y",
            "trailing ",
        ]
    ),
)
COMMENT = st.sampled_from(["# note", "#", "  # indented note", "    #deep"])
EOL = st.sampled_from(["\n", "\r\n"])


@st.composite
def sequence(draw: st.DrawFn) -> list[str]:
    indent = draw(st.sampled_from([0, 2, 4]))
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        extra = draw(st.sampled_from([0, 0, 0, 2, 4]))
        item = "-" if draw(st.integers(0, 7)) == 0 else "- " + draw(PLAIN)  # "-": an empty item
        lines.append(" " * (indent + extra) + item)
        if draw(st.integers(0, 5)) == 0:
            lines.append(" " * draw(st.sampled_from([0, 2, 4, 6])) + draw(COMMENT).strip())
    return lines


@st.composite
def block_scalar(draw: st.DrawFn) -> list[str]:
    header = draw(st.sampled_from(["|", ">", "|-", ">-", "|+", ">+", "|2", ">1-"]))
    lines = [header]
    for _ in range(draw(st.integers(0, 3))):
        lines.append(" " * draw(st.sampled_from([2, 2, 4])) + draw(WORD | st.just("")))
    return lines


@st.composite
def entry(draw: st.DrawFn, key: str) -> list[str]:
    kind = draw(
        st.sampled_from(["plain", "plain", "wrapped", "seq", "flow", "block", "map", "empty"])
    )
    if kind == "plain":
        return [f"{key}: {draw(PLAIN)}"]
    if kind == "wrapped":
        out = [f"{key}: {draw(WORD)}"]
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 3)) == 0:
                out.append(draw(COMMENT))
            out.append("  " + draw(WORD))
        return out
    if kind == "seq":
        return [f"{key}:", *draw(sequence())]
    if kind == "flow":
        items = draw(
            st.lists(PLAIN.filter(lambda s: not any(c in s for c in "[]{},#")), max_size=3)
        )
        return [f"{key}: [{', '.join(items)}]"]
    if kind == "block":
        first, *rest = draw(block_scalar())
        return [f"{key}: {first}", *rest]
    if kind == "map":
        out = [f"{key}:"]
        for sub in draw(st.lists(KEYS, min_size=1, max_size=2, unique=True)):
            out.append(f"  {sub}: {draw(PLAIN)}")
        return out
    return [f"{key}:"]


@st.composite
def document(draw: st.DrawFn) -> str:
    keys = draw(st.lists(KEYS, min_size=1, max_size=5))
    if draw(st.integers(0, 9)) == 0 and keys:
        keys.append(keys[0])  # a duplicated key
    lines: list[str] = []
    for key in keys:
        if draw(st.integers(0, 6)) == 0:
            lines.append(draw(COMMENT))
        if draw(st.integers(0, 8)) == 0:
            lines.append("")
        lines += draw(entry(key))
    eol = draw(EOL)
    return eol.join(lines) + eol


def _full(text: str) -> Parsed:
    p = BlockParser(text.replace("\r\n", "\n").replace("\r", "\n"), 2)
    p.key_lines = {}
    return Parsed(p.document(), p.warnings, p.key_lines)


@pytest.mark.slow
@PROPS
@given(document())
@example("triggers:\n- deploy\n    - production\n")
@example("description: first part\n# a comment\n  second part\n")
@example("name: a\nname: b\n")
def test_fast_path_agrees_with_the_full_parser(text: str) -> None:
    norm = text.replace("\r\n", "\n")
    fast = parse_fast(norm, 2) if "\t" not in norm else None
    if fast is None:
        return
    try:
        full = _full(text)
    except YamlError as e:
        raise AssertionError(
            f"the fast path read {fast.data!r}, the full parser refused: {e}"
        ) from e
    assert (fast.data, fast.warnings, fast.lines) == (full.data, full.warnings, full.lines)


def _strings(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v) for v in value]
    return "" if value is None else str(value)


@pytest.mark.slow
@PROPS
@given(document())
@example("triggers:\n- deploy\n    - production\n")
@example("description: first part\n# a comment\n  second part\n")
@example("name: a\nname: b\n")
@example("tags:\n  -\n  - x\n")
def test_every_document_is_read_as_pyyaml_reads_it_or_refused(text: str) -> None:
    try:
        ours = parse_yaml(text)
    except YamlError:
        return  # a named diagnostic
    if ours.warnings:
        return  # kept leniently, and said so
    try:
        theirs = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError as e:
        raise AssertionError(f"mca read {ours.data!r} from a document PyYAML refuses: {e}") from e
    assert ours.data == _strings(theirs or {}), text

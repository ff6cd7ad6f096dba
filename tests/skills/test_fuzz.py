"""Hypothesis: random and mutated frontmatter never makes the parser or validator raise."""

from __future__ import annotations

import contextlib
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mca.skills.parse import parse_text
from mca.skills.validate import validate
from mca.skills.yaml import YamlError, parse_yaml

pytestmark = [
    pytest.mark.stress,
    pytest.mark.slow,  # the reliability suite (make stress runs it at full size)
]
EXAMPLES = int(os.environ.get("MCA_FUZZ_EXAMPLES", "300"))
PIECES = [
    "---",
    "name: x",
    "description: d",
    "  - a",
    "- b",
    "key: [a, {b: c}]",
    "k: |",
    "  lit",
    "k: >-",
    "'q",
    '"d\\',
    "a: b: c",
    "&a",
    "*a",
    "!t",
    "? k",
    "%YAML",
    "\t",
    "#",
    ":",
    "{",
    "]",
    "priority: high",
    "triggers: [",
    "paths: [../x]",
    "metadata:",
    "  a: b",
    "\r",
    "\ufeff",
    "…",
]
line = st.one_of(st.sampled_from(PIECES), st.text(max_size=30))
document = st.lists(line, max_size=25).map("\n".join)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(document)
def test_parse_and_validate_never_raise(text: str) -> None:
    parsed = parse_text("---\n" + text + "\n---\nbody\n", "fuzz/SKILL.md")
    from pathlib import Path

    cand = validate(Path("/fuzz/x/SKILL.md"), parsed, None)
    assert (cand.skill is not None) != cand.has_error


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=200))
def test_yaml_subset_only_raises_yamlerror(text: str) -> None:
    with contextlib.suppress(YamlError):
        parse_yaml(text)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=300))
def test_whole_files_never_raise(text: str) -> None:
    parse_text(text, "fuzz")

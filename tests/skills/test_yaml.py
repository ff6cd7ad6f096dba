"""The YAML subset: every construct real skills use, and named errors for the rest."""

from __future__ import annotations

import pytest
import yaml

from mca.skills.yaml import YamlError, parse_yaml

AGREE_WITH_PYYAML = [
    "name: plain value\n",
    "a: 'single ''quoted'''\nb: \"double \\\"q\\\" \\u00e9\\n\"\n",
    "description: a plain value\n  wrapped onto\n  indented lines\n",
    "description: 'quoted over\n  two lines\n\n  and a blank'\n",
    'description: "double\n  folded \\\n  escaped break"\n',
    "d: |\n  line one\n  line two\n\n",
    "d: |-\n  keep\n  no newline\n",
    "d: |+\n  keep all\n\n\nnext: x\n",
    "d: >\n  folded\n  text\n\n  para\n",
    "d: >-\n  folded\n    more indented\n  back\n",
    "t: [a, b, 'c d', \"e\"]\n",
    "t: [a, [b, c], {k: v}]\n",
    "m: {a: 1, b: [x, y], c: {d: e}}\n",
    "t:\n  - one\n  - two\n",
    "t:\n- indentless\n- list\n",
    "metadata:\n  author: x\n  deep:\n    deeper:\n      deepest: y\n",
    "items:\n  - name: a\n    val: 1\n  - name: b\n",
    "# comment\nname: x # trailing comment\nempty:\nalso: ''\n",
    "url: http://example.com/a#frag\n",
    "key: value with - dash and foo---bar\n",
    "flow:\n  [a, b,\n   c]\n",
    "nested:\n  - - a\n    - b\n",
    "version: 1.0\nflag: true\ndate: 2026-01-02\n",
    "tags:\n  -\n  - x\n",  # an empty item is an empty value, not the next item's parent
    "tags:\n-\n- x\n",
    "tags:\n  - a\n  - # nothing here\n  - b\n  -\n",
    "tags:\n  -\n    - x\n",
    "tags:\n  -\n    k: v\n  -\n",
]


def _strings(v: object) -> object:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, list):
        return [_strings(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _strings(x) for k, x in v.items()}
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


@pytest.mark.parametrize("text", AGREE_WITH_PYYAML)
def test_agrees_with_pyyaml_as_strings(text: str) -> None:
    assert parse_yaml(text).data == _strings(yaml.safe_load(text))


def test_values_stay_strings() -> None:
    data = parse_yaml("a: true\nb: no\nc: 2026-01-01\nd: 010\ne: ~\n").data
    assert data == {"a": "true", "b": "no", "c": "2026-01-01", "d": "010", "e": "~"}


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        ("a: &anchor x\n", "anchor"),
        ("a: *alias\n", "alias"),
        ("a: !tag x\n", "tag"),
        ("<<: {a: b}\n", "merge-key"),
        ("%YAML 1.2\na: b\n", "directive"),
        ("a: b\n---\nc: d\n", "document"),
        ("? complex\n: key\n", "complex-key"),
        ("a: 'unterminated\n", "quote"),
        ("a: [1, 2\n", "flow"),
        ("a: b\n\tc: d\n", "tab"),
        ("a:\n    b: c\n  d: e\n", "indentation"),
    ],
)
def test_outside_the_subset_is_a_named_error(text: str, construct: str) -> None:
    with pytest.raises(YamlError) as info:
        parse_yaml(text, first_line=2)
    assert info.value.construct == construct
    assert str(info.value).startswith("line ")


def test_error_line_numbers_are_file_lines() -> None:
    with pytest.raises(YamlError) as info:
        parse_yaml("name: x\ndescription: y\nbad: &a z\n", first_line=2)
    assert info.value.line == 4


def test_unquoted_colon_keeps_the_whole_text_and_warns() -> None:
    parsed = parse_yaml("description: Use when the user says: commit\n", first_line=2)
    assert parsed.data["description"] == "Use when the user says: commit"
    assert parsed.warnings == [(2, "description", "unquoted-colon")]
    assert yaml.__name__  # strict YAML rejects it:
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load("description: Use when the user says: commit\n")


def test_unknown_keys_keep_any_well_formed_value() -> None:
    data = parse_yaml("hooks:\n  pre: [a, {b: c}]\nx-custom: |\n  text\n").data
    assert data["hooks"] == {"pre": ["a", {"b": "c"}]} and data["x-custom"] == "text\n"


def test_key_lines_are_recorded() -> None:
    assert parse_yaml("a: 1\n\nb: 2\n", first_line=2).lines == {"a": 2, "b": 4}


@pytest.mark.parametrize("header", ["|²", ">٣", "|0", "|+-", "|12"])
def test_bad_block_scalar_headers_are_named_errors(header: str) -> None:
    """Found by the 100,000-example fuzz run: '²'.isdigit() is True but int('²') fails."""
    with pytest.raises(YamlError) as info:
        parse_yaml(f"k: {header}\n  text\n")
    assert info.value.construct == "block-scalar"


def test_bad_escape_names_its_line() -> None:
    with pytest.raises(YamlError) as info:
        parse_yaml('name: x\ndescription: "bad \\q escape"\n', first_line=2)
    assert info.value.construct == "escape" and info.value.line == 3

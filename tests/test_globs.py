"""One glob translator for find_files, search_text, a skill's `paths:` and .gitignore lines."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mca.fs.globs import UnclosedClass, glob_match, literal_prefix, translate
from mca.skills.catalog import Budget
from mca.skills.discover import char_fits, discover
from mca.skills.model import Root
from mca.skills.trigger import judge
from mca.workspace.ignore import parse_rules


@pytest.mark.parametrize(
    ("pattern", "rel", "hit"),
    [
        ("src/[ab].py", "src/a.py", True),
        ("src/[ab].py", "src/c.py", False),
        ("src/[!ab].py", "src/c.py", True),
        ("src/[!ab].py", "src/a.py", False),
        ("src/[^ab].py", "src/c.py", True),
        ("v[0-9].txt", "v7.txt", True),
        ("v[0-9].txt", "v.txt", False),
        ("v[9-0].txt", "v5.txt", False),  # a reversed range matches nothing
        ("[]]x", "]x", True),
        ("a[!b]c", "a/c", False),  # a class is one character of a name, never '/'
        ("a[/]c", "a/c", False),
        ("a[.txt", "a[.txt", True),  # an unclosed [ is literal, as in fnmatch
        (r"a\*.txt", "a*.txt", True),
        (r"a\*.txt", "ab.txt", False),
        ("[[]x", "[x", True),
        ("[&&]x", "&x", True),  # characters that mean something inside a regex class
        ("*.py", "deep/dir/x.py", True),  # no '/': the base name may match
        ("src/**/[ab].py", "src/x/y/b.py", True),
    ],
)
def test_glob_rules(pattern: str, rel: str, hit: bool) -> None:
    # (*, ? and ** are in tests/test_tools.py::test_glob_match_rules)
    assert glob_match(pattern, rel) is hit


@given(st.text("ab*?[]!^-.", max_size=8), st.text("ab[]!^-.", max_size=6))
def test_a_name_matches_as_fnmatch_says(pattern: str, name: str) -> None:
    # within one name (no '/', no '**', no backslash) the translator is fnmatch's, except
    # where fnmatch differs from git: `[^a]` negates (git) and a reversed range is dropped
    # before '!' is read (fnmatch: `[?-.!]` then matches anything)
    reversed_range = any(a > b for a, b in re.findall(r"(?=(.)-(.))", pattern))
    if "**" not in pattern and "[^" not in pattern and not reversed_range:
        assert glob_match(pattern, name) is fnmatch.fnmatchcase(name, pattern)


def test_literal_prefix_stops_at_the_first_wildcard_or_escape() -> None:
    assert literal_prefix("src/[ab]/x") == "src/"
    assert literal_prefix(r"src/a\*") == "src/a"
    assert literal_prefix("src/a.py") == "src/a.py"


def test_gitignore_lines_use_the_same_classes_and_skip_an_unclosed_one() -> None:
    (rule,) = parse_rules("build-[ab]/\n[unclosed\n", "")
    assert rule.regex.match("build-a") and not rule.regex.match("build-c")
    with pytest.raises(UnclosedClass):
        translate("[unclosed", strict=True)


def test_a_skill_whose_paths_use_a_class_matches(tmp_path: Path) -> None:
    (tmp_path / "picky").mkdir()
    (tmp_path / "picky" / "SKILL.md").write_text(
        "---\nname: picky\ndescription: Use when testing.\npaths:\n  - src/[ab].py\n---\nBody.\n"
    )
    skills = discover([Root(tmp_path, "explicit", 400)], Budget(10**6, "chars", "t"), char_fits)
    picky = skills.skills["picky"]
    assert picky.paths == ("src/[ab].py",)
    hit = judge([picky], "fix src/a.py", [("src/a.py", "sentence")])
    assert [str(r) for r in hit[0].reasons] == ["path src/a.py (10)"]
    assert judge([picky], "fix src/c.py", [("src/c.py", "sentence")]) == []

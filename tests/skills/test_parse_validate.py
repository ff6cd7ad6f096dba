"""Splitting frontmatter by lines, and validation that collects every issue."""

from __future__ import annotations

from pathlib import Path

import pytest

from mca.skills.model import DESCRIPTION_MAX, NAME_MAX
from mca.skills.parse import FrontmatterError, parse_text, split_frontmatter
from mca.skills.scan import load_candidate
from mca.skills.validate import name_problem
from tests.conftest import REPO
from tests.skills.conftest import MakeSkill, skill_text

BODY_WITH_RULE = "# Title\n\nabove\n\n---\n\nbelow the rule\n"


def codes(path: Path) -> list[str]:
    return [d.code for d in load_candidate(path, None).diagnostics]


def test_horizontal_rule_in_the_body_leaves_it_whole() -> None:
    text = skill_text(body=BODY_WITH_RULE)
    head, body, line = split_frontmatter(text)
    assert body == BODY_WITH_RULE and "name: demo" in head and line == 5


def test_delimiter_inside_a_value_does_not_cut() -> None:
    text = "---\nname: demo\ndescription: foo---bar and ---\n---\nbody\n"
    parsed = parse_text(text, "x")
    assert parsed.fields["description"] == "foo---bar and ---" and parsed.body == "body\n"


def test_crlf_and_bom_parse_like_lf() -> None:
    lf = skill_text(body=BODY_WITH_RULE)
    crlf = "\ufeff" + lf.replace("\n", "\r\n")
    a, b = parse_text(lf, "x"), parse_text(crlf, "x")
    assert (a.fields, a.body) == (b.fields, b.body)


def test_fence_with_trailing_spaces_closes() -> None:
    assert split_frontmatter("---\na: b\n---   \nbody")[1] == "body"


@pytest.mark.parametrize(
    ("text", "code"),
    [("no fence here\n", "no-frontmatter"), ("---\nname: x\nbody\n", "unclosed-frontmatter")],
)
def test_missing_fences_are_named_errors(text: str, code: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        split_frontmatter(text)
    assert info.value.code == code
    assert [d.code for d in parse_text(text, "x").diagnostics] == [code]


def test_unsupported_yaml_names_line_and_construct() -> None:
    diag = parse_text("---\nname: x\ntriggers: &a [y]\n---\n", "p").diagnostics[0]
    assert diag.code == "unsupported-yaml" and diag.line == 3 and "anchor" in diag.message


def test_a_frontmatter_that_does_not_parse_still_gives_name_and_description() -> None:
    text = '---\nname: x\ndescription: "Use when x."\ntriggers: &a [y]\n---\nbody\n'
    parsed = parse_text(text, "p")
    assert parsed.fields == {"name": "x", "description": "Use when x."}
    [diag] = parsed.diagnostics
    assert diag.code == "frontmatter-recovered" and diag.level == "warning" and diag.line == 4
    assert "name (line 2), description (line 3)" in diag.message


def test_missing_description_is_an_error_naming_the_field(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    cand = load_candidate(make_skill(tmp_path, "x", skill_text(name="x", description=None)), None)
    assert cand.skill is None and cand.status == "skipped"
    assert [d.code for d in cand.diagnostics] == ["missing-description"]
    assert "description" in cand.diagnostics[0].message


def test_empty_description_is_an_error(tmp_path: Path, make_skill: MakeSkill) -> None:
    path = make_skill(tmp_path, "x", "---\nname: x\ndescription:\n---\n")
    assert codes(path) == ["missing-description"]


def test_name_defaults_to_directory(tmp_path: Path, make_skill: MakeSkill) -> None:
    cand = load_candidate(make_skill(tmp_path, "my-skill", skill_text(name=None)), None)
    assert cand.skill is not None and cand.skill.name == "my-skill"
    assert [d.code for d in cand.diagnostics] == ["name-defaulted"]


def test_name_mismatch_and_invalid_names_warn_but_load(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    cand = load_candidate(make_skill(tmp_path, "dir", skill_text(name="Bad_Name")), None)
    assert cand.skill is not None
    assert {d.code for d in cand.diagnostics} == {"name-invalid", "name-mismatch"}
    assert all(d.level == "warning" for d in cand.diagnostics)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("pdf", True),
        ("a-b-c", True),
        ("café", True),
        ("ＡＢ", False),
        ("-a", False),
        ("a--b", False),
        ("a-", False),
        ("A", False),
        ("a_b", False),
        ("日本語", True),
    ],
)
def test_name_rules(name: str, ok: bool) -> None:
    assert (name_problem(name) == "") is ok


def test_spec_limits_at_the_boundary_with_multibyte_text(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    exact = "é" * NAME_MAX
    assert "name-too-long" not in codes(make_skill(tmp_path, exact, skill_text(name=exact)))
    over = "é" * (NAME_MAX + 1)
    assert "name-too-long" in codes(make_skill(tmp_path, over, skill_text(name=over)))
    d = make_skill(tmp_path, "d1", skill_text(name="d1", description="ü" * DESCRIPTION_MAX))
    assert "description-too-long" not in codes(d)
    d = make_skill(tmp_path, "d2", skill_text(name="d2", description="ü" * (DESCRIPTION_MAX + 1)))
    assert "description-too-long" in codes(d)
    c = make_skill(tmp_path, "c1", skill_text(name="c1", compatibility="x" * 501))
    assert "compatibility-too-long" in codes(c)


def test_extension_fields_parse(tmp_path: Path, make_skill: MakeSkill) -> None:
    text = skill_text(
        name="ext",
        domain="calc",
        priority="-5",
        triggers="[a, 'b c']",
        paths="\n  - src/*.js\n  - 'test/**'",
    )
    skill = load_candidate(make_skill(tmp_path, "ext", text), None).skill
    assert skill is not None
    assert (skill.domain, skill.priority, skill.triggers, skill.paths) == (
        "calc",
        -5,
        ("a", "b c"),
        ("src/*.js", "test/**"),
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("priority", "high"),
        ("priority", "[1]"),
        ("domain", "Not A Name"),
        ("triggers", "just-a-string"),
        ("triggers", "[a, '']"),
        ("paths", "[../outside/*.js]"),
        ("paths", "[/etc/*]"),
    ],
)
def test_wrong_type_extension_fields_are_dropped_with_a_warning(
    tmp_path: Path, make_skill: MakeSkill, field: str, value: str
) -> None:
    cand = load_candidate(make_skill(tmp_path, "w", skill_text(name="w", **{field: value})), None)
    assert cand.skill is not None  # an extension field is not worth losing the skill over
    warns = [d for d in cand.diagnostics if d.code == "field-dropped"]
    assert warns and f"'{field}'" in warns[0].message and warns[0].line == 4
    assert warns[0].level == "warning" and "ignored" in warns[0].message


def test_a_wrong_description_is_still_an_error(tmp_path: Path, make_skill: MakeSkill) -> None:
    text = "---\nname: w\ndescription: [a, b]\n---\nbody\n"
    cand = load_candidate(make_skill(tmp_path, "w", text), None)
    assert cand.skill is None  # required: without a description nothing can select the skill
    assert any(d.code == "invalid-field" and "'description'" in d.message for d in cand.diagnostics)


def test_every_issue_is_collected(tmp_path: Path, make_skill: MakeSkill) -> None:
    text = skill_text(name="Bad_Name", priority="high", domain="BAD", color="blue")
    found = set(codes(make_skill(tmp_path, "dir", text)))
    assert {"name-invalid", "name-mismatch", "field-dropped", "unknown-field"} <= found


def test_unknown_fields_are_info_and_kept(tmp_path: Path, make_skill: MakeSkill) -> None:
    cand = load_candidate(make_skill(tmp_path, "u", skill_text(name="u", version="'1.0'")), None)
    assert cand.skill is not None and cand.skill.fields["version"] == "1.0"
    assert [d.level for d in cand.diagnostics] == ["info"]


def test_bare_colon_fixture_loads_with_a_warning() -> None:
    cand = load_candidate(REPO / "fixtures/broken-packs/bare-colon/SKILL.md", None)
    assert cand.skill is not None
    assert cand.skill.description.endswith("says: commit this, or asks for a message")
    assert [d.code for d in cand.diagnostics] == ["unquoted-colon"]
    assert "quote" in cand.diagnostics[0].message


def test_broken_fixtures() -> None:
    base = REPO / "fixtures/broken-packs"
    assert codes(base / "missing-description/SKILL.md") == ["missing-description"]
    assert codes(base / "name-mismatch/SKILL.md") == ["name-mismatch"]
    assert codes(base / "no-closing-fence/SKILL.md") == ["unclosed-frontmatter"]
    assert codes(base / "bad-priority/SKILL.md") == ["field-dropped"]


def test_huge_and_binary_files_are_diagnostics(tmp_path: Path, make_skill: MakeSkill) -> None:
    big = make_skill(tmp_path, "big", skill_text(name="big", body="x" * (1024 * 1024 + 10)))
    assert codes(big) == ["unreadable"]
    binary = make_skill(tmp_path, "bin", "")
    binary.write_bytes(b"---\nname: bin\ndescription: \xff\xfe ok\n---\n")
    cand = load_candidate(binary, None)
    assert cand.skill is not None and "\ufffd" in cand.skill.description

"""Issue 35 item 5: where the skill runtime still read SKILL.md differently from the seeds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mca.skills.parse import parse_text, split_frontmatter
from mca.skills.scan import load_candidate
from tests.skills.conftest import MakeSkill, skill_text


@pytest.mark.parametrize("fence", [" ---", "  ---", "\t---", "--- "])
def test_a_fence_with_blanks_around_it_opens_and_closes(fence: str) -> None:
    text = f"{fence}\nname: demo\ndescription: Use when testing.\n{fence}\nBody.\n"
    head, body, line = split_frontmatter(text)
    assert "name: demo" in head and body == "Body.\n" and line == 5
    parsed = parse_text(text, "x")
    assert parsed.fields == {"name": "demo", "description": "Use when testing."}
    assert not parsed.diagnostics


def test_an_indented_first_fence_loads_the_skill_from_disk(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    path = make_skill(tmp_path, "demo", "  ---\nname: demo\ndescription: Use when x.\n---\nB\n")
    cand = load_candidate(path, None)
    assert cand.skill is not None and cand.skill.body == "B\n"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("metadata", "a string"),
        ("metadata", "[a, b]"),
        ("name", "[a, b]"),
        ("name", "{x: y}"),
        ("compatibility", "[linux, mac]"),
        ("allowed-tools", "{Bash: yes}"),
        ("allowed-tools", "[Read, {Bash: yes}]"),
    ],
)
def test_a_wrong_typed_optional_field_drops_that_field_not_the_skill(
    tmp_path: Path, make_skill: MakeSkill, field: str, value: str
) -> None:
    text = f'---\ndescription: "Use when testing."\n{field}: {value}\n---\nBody.\n'
    cand = load_candidate(make_skill(tmp_path, "demo", text), None)
    assert cand.skill is not None and cand.skill.name == "demo"  # the directory's name
    assert field not in cand.skill.fields  # dropped: nothing downstream reads the bad value
    assert not cand.has_error
    [diag] = [d for d in cand.diagnostics if d.code == "field-dropped"]
    assert diag.code == "field-dropped" and diag.level == "warning" and diag.line == 3
    assert f"'{field}'" in diag.message and "ignored" in diag.message


def _check_json(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    from mca.cli import main

    code = main(["skills", "check", str(path), "--json"], {})
    return code, json.loads(capsys.readouterr().out)


def test_skills_check_warns_on_a_body_over_500_lines(
    tmp_path: Path, make_skill: MakeSkill, capsys: pytest.CaptureFixture[str]
) -> None:
    at_limit = make_skill(tmp_path, "ok", skill_text(name="ok", body="line\n" * 500))
    code, [row] = _check_json(at_limit.parent, capsys)
    assert code == 0 and not row["diagnostics"]
    over = make_skill(tmp_path, "long", skill_text(name="long", body="line\n" * 500 + "501"))
    code, [row] = _check_json(over.parent, capsys)
    [diag] = row["diagnostics"]
    assert code == 0 and row["status"] == "loaded"  # advice, not a refusal
    assert diag["code"] == "body-too-long" and diag["level"] == "warning"
    assert "501 lines" in diag["message"]


@pytest.mark.parametrize("word", ["the", "a", "is", "The"])
def test_skills_check_warns_on_a_stop_word_trigger(
    tmp_path: Path, make_skill: MakeSkill, capsys: pytest.CaptureFixture[str], word: str
) -> None:
    text = skill_text(name="calc", triggers=f"[divide, {word}, the end]")
    code, [row] = _check_json(make_skill(tmp_path, "calc", text).parent, capsys)
    [diag] = row["diagnostics"]
    assert code == 0 and diag["code"] == "trigger-stop-word" and diag["level"] == "warning"
    assert repr(word) in diag["message"]  # only the stop word, not 'divide' or 'the end'

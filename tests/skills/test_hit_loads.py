"""Issue 35 item 1: a hit always loads something. A skill without `triggers` (the ecosystem's)
whose body is over the budget loads the part that fits when the sentence names it or its
description is judged a hit, cut as an explicit wish ($name) cuts it; a skill with `triggers`
keeps the seed's budget gate and its exact message."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.skills.conftest import MakeSkill, skill_text

DESCRIPTION = (
    "Use when reviewing a long document in repeated passes until no issues remain, checking"
    " every claim for a source."
)
BUDGET = 12_000  # MCA_SKILL_BUDGET's default


def long_body() -> str:
    """A real long SKILL.md body: 40 sections, about 27,000 characters."""
    passes = [
        f"## Pass {i}\n\n"
        + "\n".join(
            f"- Check item {i}.{j}: read the section again and note every claim without a source."
            for j in range(8)
        )
        + "\n"
        for i in range(40)
    ]
    return "# Deep review loop\n\n" + "\n".join(passes)


def why(ws: Path, root: Path, sentence: str, capsys: pytest.CaptureFixture[str]) -> Any:
    """`mca skills why SENTENCE --json`: the pre-turn stage, as a turn would run it."""
    from mca.cli import main

    argv = ["skills", "why", sentence, "--json", "-C", str(ws), "--skills-dir", str(root)]
    assert main(argv, {"HOME": str(ws), "MCA_HOME": str(ws / ".h")}) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def installed(tmp_path: Path, make_skill: MakeSkill) -> tuple[Path, Path]:
    root, ws = tmp_path / "skills", tmp_path / "ws"
    ws.mkdir()
    text = skill_text(name="deep-review-loop", description=DESCRIPTION, body=long_body())
    make_skill(root, "deep-review-loop", text)
    return ws, root


def _assert_head_and_rest_line(result: Any) -> str:
    """The head of the body went in, cut before a line, with the line that says where the rest
    is; that line's offset is where the head stopped (checked against the body itself)."""
    [dec] = result["decisions"]
    assert dec["loaded"] and dec["reason"].startswith("partial: ")
    text = result["injected_text"]
    assert 0 < len(text) <= BUDGET
    m = re.search(r"read_file skill:deep-review-loop offset=(\d+)\]", text)
    assert m is not None, text[-400:]
    lines = long_body().splitlines()
    offset = int(m.group(1))
    kept, rest = lines[: offset - 1], lines[offset - 1 :]
    assert "\n".join(kept).rstrip() in text  # every line before the offset, whole
    assert rest[0].strip() and rest[0] not in text  # and the first line after, not at all
    return str(dec["reason"])


def test_a_bare_mention_loads_the_part_that_fits_as_a_wish_does(
    installed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, root = installed
    bare = why(ws, root, "帮我用 deep-review-loop 检查这份长文档", capsys)
    assert bare["hits"][0]["reasons"] == ["mention deep-review-loop (100)"]
    reason = _assert_head_and_rest_line(bare)
    wish = why(ws, root, "帮我用 $deep-review-loop 检查这份长文档", capsys)
    assert wish["decisions"][0]["reason"] == reason  # the same cut as the explicit wish


def test_a_judged_hit_loads_the_part_that_fits(
    installed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, root = installed
    sentence = "review this long document in repeated passes and check every claim has a source"
    result = why(ws, root, sentence, capsys)
    [hit] = result["hits"]
    assert hit["reasons"][0].startswith("description ")  # the judgment, no name in the sentence
    _assert_head_and_rest_line(result)


@pytest.mark.parametrize("sentence", ["do a deep review pass", "use deep-review-loop here"])
def test_a_skill_with_triggers_keeps_the_seed_budget_gate(
    tmp_path: Path, make_skill: MakeSkill, capsys: pytest.CaptureFixture[str], sentence: str
) -> None:
    root, ws = tmp_path / "skills", tmp_path / "ws"
    ws.mkdir()
    text = skill_text(
        name="deep-review-loop", description=DESCRIPTION, body=long_body(), triggers="[deep review]"
    )
    make_skill(root, "deep-review-loop", text)
    result = why(ws, root, sentence, capsys)
    [dec] = result["decisions"]
    assert not dec["loaded"] and result["injected_text"] == ""
    assert re.fullmatch(rf"body is \d+ chars, only {BUDGET} left", dec["reason"]), dec["reason"]

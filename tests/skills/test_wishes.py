"""Explicit wishes win: a named skill over the budget loads its head and says how to read the
rest; a file named like the skill is evidence; a skill's own switches are honoured; a skill the
stage did not pick stays readable from the catalog."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mca.skills.catalog import Budget, build_catalog, render
from mca.skills.discover import char_fits
from mca.skills.inject import render_skill
from mca.skills.model import Skill
from mca.skills.parse import parse_text, read_skill_file
from mca.skills.partial import cut_body, partial_block
from mca.skills.stage import SkillStage, evaluate
from mca.skills.switches import SWITCHES, argument_hint, model_invocable, user_invocable
from mca.skills.trigger import FILE_POINTS, MENTION_POINTS, judge
from mca.skills.validate import validate
from mca.tools import get_tool
from mca.tools.base import ToolEnv, TurnState
from mca.types import KIND_SKILLS, Message
from tests.conftest import CORPUS
from tests.helpers import FakeModel, call, lab_session, say
from tests.skills.conftest import MakeSkill, skill_text

BUDGET = 12_000
ROOT = Path("/nowhere")


def sk(name: str, body: str, **fields: Any) -> Skill:
    return Skill(name, "Use when testing.", ROOT / name / "SKILL.md", body, fields=fields)


def planner_body(steps: int = 100) -> str:
    """A body like the public skills over 12,000 characters: headings, prose, code fences."""
    step = (
        "## Step {i}\n\nDo thing {i} carefully. "
        + "Explain why. " * 25
        + "\n\n```sh\necho {i}\n```\n\n"
    )
    return "# Planner\n\nIntro.\n\n" + "".join(step.format(i=i) for i in range(steps))


def open_fence(text: str) -> bool:
    """Whether a fence is left open at the end of `text` (the cut's own rule, restated)."""
    fence = ""
    for line in text.split("\n"):
        m = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if m and not fence:
            fence = m.group(1)
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            fence = "" if not line[m.end() :].strip() else fence
    return bool(fence)


def rest_at(body: str, line: int, column: int) -> str:
    """The body from a read_file position (1-based line and column)."""
    lines = body.split("\n")
    return "\n".join([lines[line - 1][column - 1 :], *lines[line:]])


# -- the cut ----------------------------------------------------------------------------------
def test_the_cut_prefers_a_heading_and_says_where_the_rest_starts() -> None:
    body = planner_body()
    cut = cut_body(body, 5_000)
    assert cut is not None and cut.text == body[: cut.end] and cut.end <= 5_000
    assert body[cut.end :].startswith("## Step ") and cut.column == 1
    assert rest_at(body, cut.line, cut.column) == body[cut.end :]


def test_the_cut_never_leaves_a_code_fence_open() -> None:
    body = "# T\n\nintro\n\n```python\n" + "x = 1\n" * 3_000 + "```\n\nafter\n"
    cut = cut_body(body, 4_000)  # the only line boundaries that fit are inside the fence
    assert cut is not None and not open_fence(cut.text)
    assert cut.text.endswith("x = 1\n```\n") and cut.end < 4_000
    assert rest_at(body, cut.line, cut.column) == body[cut.end :]


def test_a_body_of_one_giant_line_is_cut_inside_it_at_a_space() -> None:
    body = "word " * 200_000  # 1 MB, no newline
    cut = cut_body(body, 10_000)
    assert cut is not None and cut.line == 1 and cut.column == cut.end + 1
    assert cut.text.endswith("word ") and 5_000 <= cut.end <= 10_000


def test_a_cut_inside_a_line_keeps_characters_whole() -> None:
    body = "e\u0301" * 8_000  # é as e + a combining accent, one line, no spaces
    cut = cut_body(body, 5_001)
    assert cut is not None and cut.end % 2 == 0  # never between a letter and its accent
    flags = "\U0001f468\u200d\U0001f4bb" * 3_000  # a joined emoji, no spaces
    cut = cut_body(flags, 4_000)
    assert cut is not None and cut.text.encode("utf-8").decode("utf-8") == cut.text
    assert cut.end % 3 == 0


LINES = st.sampled_from(
    ["# Head", "## Sub", "text line", "", "```", "```py", "~~~", "x" * 700, "é€😀 ünï", "    ```"]
)


@given(st.lists(LINES, max_size=60), st.integers(min_value=1, max_value=6_000))
@settings(
    max_examples=int(os.environ.get("WISHES_EXAMPLES", "300")), deadline=None, derandomize=True
)
def test_every_cut_fits_closes_its_fences_and_points_at_the_rest(
    lines: list[str], allowance: int
) -> None:
    body = "\n".join(lines)
    cut = cut_body(body, allowance)
    if cut is None:
        return
    assert len(cut.text) <= allowance
    assert cut.text.startswith(body[: cut.end]) and (0 < cut.end <= len(body) or not body)
    if cut.end < len(body):
        assert not open_fence(cut.text)
        assert rest_at(body, cut.line, cut.column) == body[cut.end :]


# -- named skills over the budget -------------------------------------------------------------
def test_slash_planner_loads_the_part_that_fits() -> None:
    """Today's failure: "/planner Add user profile editing" loaded nothing."""
    planner = sk("planner", planner_body())
    assert len(render_skill(planner).text) > BUDGET
    result = evaluate([planner], "/planner Add user profile editing", budget=BUDGET, root=ROOT)
    [decision] = result.decisions
    assert decision.loaded and decision.chars <= BUDGET
    total = len(planner.body)
    assert re.fullmatch(
        rf"partial: (\d+) of {total} chars; the rest: read_file skill:planner offset=\d+",
        decision.reason,
    )
    assert "## Step 0" in result.injected_text and "## Step 99" not in result.injected_text
    assert f"of the {total} characters of skill planner" in result.injected_text
    assert not open_fence(result.injected_text)


@pytest.mark.parametrize("sentence", ["$planner go", "use the planner skill", "plan it"])
def test_only_an_explicit_wish_loads_a_head(sentence: str) -> None:
    planner = replace(sk("planner", planner_body()), triggers=("plan it",))
    [decision] = evaluate([planner], sentence, budget=BUDGET, root=ROOT).decisions
    assert decision.loaded == sentence.startswith("$")
    if not decision.loaded:
        assert decision.reason.startswith("body is ")


def test_a_name_with_regex_metacharacters_is_named_literally() -> None:
    odd = sk("a.b+c(d)*", planner_body(60))
    result = evaluate([odd], "run $a.b+c(d)* now", budget=BUDGET, root=ROOT)
    assert result.decisions[0].loaded and result.decisions[0].reason.startswith("partial: ")
    assert "read_file skill:a.b+c(d)* offset=" in result.injected_text
    assert evaluate([odd], "run $aXb+c(d)* now", budget=BUDGET, root=ROOT).hits == []


def test_a_megabyte_body_and_a_crlf_body() -> None:
    huge = sk("huge", "# Huge\n\n" + ("a line of text\n" * 70_000))  # ~1 MB
    block = partial_block(huge, render_skill, BUDGET)
    assert block is not None and len(block.text) <= BUDGET
    crlf = "---\r\nname: crlf\r\ndescription: D.\r\n---\r\n" + "## H\r\nline\r\n" * 3_000
    parsed = parse_text(crlf, "crlf/SKILL.md")
    skill = sk("crlf", parsed.body)
    block = partial_block(skill, render_skill, 2_000)
    assert block is not None and "\r" not in block.text and "offset=" in block.partial


def test_a_budget_too_small_for_one_line_still_refuses() -> None:
    planner = sk("planner", planner_body())
    [decision] = evaluate([planner], "/planner x", budget=100, root=ROOT).decisions
    assert not decision.loaded and decision.reason.startswith("body is ")


def test_the_head_still_leaves_room_for_a_smaller_named_skill_first() -> None:
    small = sk("small", "Small body.")
    planner = sk("planner", planner_body())
    result = evaluate([small, planner], "$small and $planner", budget=BUDGET, root=ROOT)
    loaded = {d.name: d.chars for d in result.decisions if d.loaded}
    assert set(loaded) == {"small", "planner"} and sum(loaded.values()) <= BUDGET


# -- a file named like the skill --------------------------------------------------------------
@pytest.mark.parametrize(
    ("sentence", "name", "detail"),
    [
        (
            "ok so my boss sent me Q4 sales final.xlsx and wants a margin column",
            "xlsx",
            "final.xlsx",
        ),
        ("the refund.bpmn diagram is wrong", "bpmn", "refund.bpmn"),
        ("convert all the .bpmn files", "bpmn", ".bpmn"),
    ],
)
def test_a_file_named_like_the_skill_is_evidence(sentence: str, name: str, detail: str) -> None:
    [hit] = judge([sk(name, "b")], sentence, [])
    assert [(r.kind, r.detail) for r in hit.reasons] == [("file", detail)]
    assert FILE_POINTS < MENTION_POINTS


@pytest.mark.parametrize("sentence", ["final.xlsx2", "xlsxfile", "an xlsx-like thing.docx"])
def test_no_file_evidence_without_the_extension(sentence: str) -> None:
    assert all(r.kind != "file" for h in judge([sk("xlsx", "b")], sentence, []) for r in h.reasons)


def test_a_mention_outranks_a_file() -> None:
    hits = judge([sk("xlsx", "b"), sk("pdf", "b")], "use $pdf on report.xlsx", [])
    assert [h.skill.name for h in hits] == ["pdf", "xlsx"]


# -- disable-model-invocation, user-invocable --------------------------------------------------
def named_only(name: str = "deploy", body: str = "Deploy body.") -> Skill:
    skill = sk(name, body, **{"disable-model-invocation": "true"})
    return replace(skill, triggers=("deploy",), paths=("deploy/**",))


@pytest.mark.parametrize("sentence", ["deploy it", "see deploy/x.yml", "the deploy skill"])
def test_a_named_only_skill_is_never_loaded_by_a_match(sentence: str) -> None:
    result = evaluate([named_only()], sentence, budget=BUDGET, root=ROOT)
    [decision] = result.decisions
    assert not decision.loaded and result.injected_text == ""
    assert decision.reason.startswith("disable-model-invocation: loads only when you name it")


def test_a_named_only_skill_loads_when_named_and_keeps_no_domain_otherwise() -> None:
    for sentence in ("$deploy now", "/deploy now"):
        result = evaluate([named_only()], sentence, budget=BUDGET, root=ROOT)
        assert [d.loaded for d in result.decisions] == [True]
    rival = replace(sk("ship", "Ship body."), triggers=("deploy",), domain="release")
    quiet = replace(named_only(), domain="release")
    result = evaluate([quiet, rival], "deploy it", budget=BUDGET, root=ROOT)
    assert {d.name: d.loaded for d in result.decisions} == {"ship": True, "deploy": False}


def test_switch_values_and_diagnostics(tmp_path: Path, make_skill: MakeSkill) -> None:
    text = skill_text(
        "odd", body="b\n", disable_model_invocation="maybe", user_invocable="false", hooks="x"
    )
    path = make_skill(tmp_path, "odd", text)
    cand = validate(path, parse_text(text, str(path)), None)
    assert cand.skill is not None
    assert model_invocable(cand.skill) and not user_invocable(cand.skill)
    codes = {(d.code, d.message) for d in cand.diagnostics}
    wrong = (
        "field 'disable-model-invocation' must be true or false, got 'maybe'; the field is ignored"
    )
    assert ("field-dropped", wrong) in codes
    assert any(d.code == "unknown-field" and "hooks" in d.message for d in cand.diagnostics)
    assert not any("user-invocable" in d.message for d in cand.diagnostics)


def test_the_catalog_marks_a_named_only_skill() -> None:
    skills = [named_only(), sk("plain", "b")]
    text = build_catalog(skills, Budget(10_000, "chars", "t"), char_fits).text
    assert "- deploy: (only when the user names it) Use when testing." in text
    assert "- plain: Use when testing." in text
    names_only = render(skills, None, True, 0)  # descriptions dropped to fit
    assert "- deploy: (only when the user names it)\n- plain" in names_only


# -- what the stage did not pick stays readable (item 5) ---------------------------------------
def run_tool(env: ToolEnv, state: TurnState, **args: Any) -> str:
    return get_tool("read_file").run(env, state, args)


@pytest.fixture
def stage_env(env: ToolEnv) -> tuple[SkillStage, ToolEnv]:
    skills = {s.name: s for s in (sk("planner", planner_body()), named_only())}
    stage = SkillStage(skills, budget=BUDGET, root=ROOT, emit=lambda e: None)
    return stage, replace(env, skills=stage)


def test_an_over_budget_skill_the_model_reads_loads_its_head_then_the_rest(
    stage_env: tuple[SkillStage, ToolEnv],
) -> None:
    stage, env = stage_env
    stage("what should I do today?", [], 1)  # nothing matched: both only in the catalog
    assert stage.last is not None and stage.last.decisions == []
    state = TurnState(1)
    note = run_tool(env, state, path="skill:planner")
    [message] = state.pending
    assert "put the skill 'planner'" in note and message.skills == ("planner",)
    m = re.search(r"read_file skill:planner offset=(\d+)", message.content)
    assert m is not None and len(message.content) <= BUDGET + 200
    rest = run_tool(env, state, path="skill:planner", offset=int(m.group(1)))
    body = stage.skill_set.by_name["planner"].body
    first = rest.split("\n")[1].split("\t", 1)[1]
    assert first == body.split("\n")[int(m.group(1)) - 1] and "## Step 99" in rest


def test_a_named_only_skill_is_still_read_by_the_model(
    stage_env: tuple[SkillStage, ToolEnv],
) -> None:
    stage, env = stage_env
    stage("deploy it", [], 1)
    assert stage.last is not None and not stage.last.decisions[0].loaded
    state = TurnState(1)
    run_tool(env, state, path="skill:deploy")
    assert [m.skills for m in state.pending] == [("deploy",)]
    assert "Deploy body." in state.pending[0].content


def test_reading_on_needs_the_skill_in_context(stage_env: tuple[SkillStage, ToolEnv]) -> None:
    from mca.errors import ToolError

    _, env = stage_env
    with pytest.raises(ToolError, match="not in the conversation"):
        run_tool(env, TurnState(1), path="skill:planner", offset=40)
    with pytest.raises(ToolError, match="no skill named 'nope'"):
        run_tool(env, TurnState(1), path="skill:nope", offset=2)
    held = [Message("user", "x", kind=KIND_SKILLS, turn=1, skills=("deploy",))]
    out = run_tool(env, TurnState(2, history=held), path="skill:deploy", offset=1, column=3)
    assert "\tploy body. … [line 1 has 12 characters; shown: 3-12]" in out


def test_a_session_shows_partial_in_the_ledger(ws: Path, make_skill: MakeSkill) -> None:
    make_skill(ws / ".agents" / "skills", "planner", skill_text("planner", body=planner_body()))
    model = FakeModel([call("read_file", "1", path="skill:planner", offset=3), say("ok")])
    session = lab_session(ws, model)
    session.run_turn("/planner Add user profile editing")
    session.close()
    assert session.ledger.last is not None
    rows = {r.label: r.reason for r in session.ledger.last.rows}
    assert re.search(r"→ partial: \d+ of \d+ chars", rows["skill body: planner"])
    assert "\tIntro." in model.requests[-1].messages[-1].content


@given(st.lists(LINES, min_size=1, max_size=80), st.integers(min_value=0, max_value=8_000))
@settings(
    max_examples=int(os.environ.get("WISHES_EXAMPLES", "200")), deadline=None, derandomize=True
)
def test_a_head_block_always_fits_what_is_left(lines: list[str], left: int) -> None:
    # (a body starts with its title: the render strips the body, so leading spaces would go)
    skill = sk("s", "# T\n" + "\n".join(lines) + "\n<skill> </skill> tags are escaped\n" * 3)
    block = partial_block(skill, render_skill, left)
    if block is not None:
        assert len(block.text) <= left and block.partial.startswith("partial: ")
        assert not open_fence(block.body)


# -- the switches found in public skills ------------------------------------------------------
@pytest.mark.stress
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not here ({CORPUS})")
def test_the_switch_table_counts_the_corpus() -> None:
    """SWITCHES says how many of the public SKILL.md files use each client switch; Claude
    Code's other fields (model, context, agent, effort) appear in none of them."""
    counts: Counter[str] = Counter()
    for path in sorted(CORPUS.rglob("SKILL.md")):
        counts.update(read_skill_file(path).fields.keys())
    assert {k: counts[k] for k in SWITCHES} == {k: n for k, (n, _) in SWITCHES.items()}
    assert [counts[k] for k in ("model", "context", "agent", "effort")] == [0, 0, 0, 0]


def test_a_name_with_capitals_is_named_in_any_case() -> None:
    """Public skills named 'SEOAgent' or 'Git Commit Helper' were never named explicitly."""
    for sentence in ("/SEOAgent audit this page", "/seoagent audit", "use $SeoAgent"):
        [hit] = judge([sk("SEOAgent", "b")], sentence, [])
        assert hit.reasons[0].kind == "mention" and hit.reasons[0].detail[0] in "$/"


def test_a_head_is_taken_out_whole_when_a_rival_is_named() -> None:
    """The text retired is the text that went in (a head), so the other skill of the same
    message stays."""
    planner = replace(sk("planner", planner_body()), domain="plan")
    rival = replace(sk("roadmap", "ROADMAP-BODY"), domain="plan")
    small = sk("small", "SMALL-BODY")
    stage = SkillStage(
        {s.name: s for s in (planner, rival, small)}, budget=BUDGET, root=ROOT, emit=lambda e: None
    )
    history = stage("$small and /planner please", [], 1)
    assert set(history[0].skills) == {"small", "planner"} and "## Step 0" in history[0].content
    history += stage("now use $roadmap", history, 2)
    assert history[0].skills == ("small",) and "SMALL-BODY" in history[0].content
    assert "## Step 0" not in history[0].content and "ROADMAP-BODY" in history[1].content


@pytest.mark.parametrize(
    ("value", "shown"),
    [('"what to plan"', "what to plan"), ("[file or directory]", "[file or directory]")],
)
def test_an_argument_hint_as_text_or_as_claude_code_writes_it(
    tmp_path: Path, make_skill: MakeSkill, value: str, shown: str
) -> None:
    text = skill_text("h", body="b\n", argument_hint=value)
    path = make_skill(tmp_path, "h", text)
    cand = validate(path, parse_text(text, str(path)), None)
    assert cand.skill is not None and argument_hint(cand.skill) == shown
    assert not [d for d in cand.diagnostics if "argument-hint" in d.message]

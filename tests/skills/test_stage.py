"""The pre-turn stage: judgment, gates, injection, attachments, dedup, references, containment."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mca.agent import Agent
from mca.errors import PathRefused, ToolError
from mca.events import Event, Notice, drop
from mca.skills.catalog import Budget
from mca.skills.discover import char_fits, discover
from mca.skills.gates import apply_gates
from mca.skills.inject import command_line, render_skill
from mca.skills.model import Root, Skill
from mca.skills.stage import HISTORY_KEPT, SkillStage, evaluate
from mca.skills.trigger import SkillSet, _score, has_word, judge, sentence_paths
from mca.tools import TOOL_NAMES, get_tool
from mca.tools.base import ToolEnv, TurnState
from mca.types import KIND_REFERENCE, KIND_SKILLS
from tests.conftest import REPO
from tests.helpers import FakeModel, SkillDirs, call, engine, say
from tests.skills.conftest import MakeSkill, skill_text

LAB = REPO / "skills"


def lab_skills() -> dict[str, Skill]:
    return discover([Root(LAB, "explicit", 400)], Budget(10**6, "chars", "t"), char_fits).skills


def sk(name: str, **kw: Any) -> Skill:
    return Skill(name, "Use when testing.", Path(f"/nowhere/{name}/SKILL.md"), f"{name} body", **kw)


# -- judgment ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "word", "hit"),
    [
        ("run the test", "test", True),
        ("the latest release", "test", False),
        ("a contest", "test", False),
        ("Test it", "test", True),
        ("run node --test now", "node --test", True),
        ("tests/foo", "test", False),
        ("fix divide-by-zero", "divide-by-zero", True),
        ("用户登录失败了", "登录", True),
        ("café au lait", "café", True),
        ("", "test", False),
        ("anything", "  ", False),
        ("a.b(c)", "b(c", True),
    ],
)
def test_has_word(text: str, word: str, hit: bool) -> None:
    assert has_word(text, word) is hit


def test_scores_and_reasons() -> None:
    calc = sk("calc", paths=("src/calc.js", "test/*.js"), triggers=("divide", "zero divisor"))
    hits = judge([calc], "fix divide in src/calc.js", [(p, "sentence") for p in ["src/calc.js"]])
    assert hits[0].score == 13
    assert hits[0].line() == 'calc  score 13  path src/calc.js (10) + keyword "divide" (3)'


def test_explicit_mention_outranks_keywords() -> None:
    a = sk("alpha", triggers=("x", "y", "z"))
    b = sk("beta")
    for sentence in ("use $beta for x y z", "/beta x y z", "the beta skill please, x y z"):
        hits = judge([a, b], sentence, [])
        assert hits[0].skill.name == "beta" and hits[0].score == 100


def test_priority_only_breaks_ties() -> None:
    low = sk("aaa", triggers=("word",), priority=1)
    high = sk("zzz", triggers=("word",), priority=99)
    unrelated = sk("mmm", triggers=("other",), priority=1000)
    hits = judge([low, high, unrelated], "a word", [])
    assert [h.skill.name for h in hits] == ["zzz", "aaa"]  # mmm never matched


def test_path_globs_and_path_sources() -> None:
    s = sk("globby", paths=("src/**/*.ts", "docs/?.md"))
    paths = [("src/a/b/c.ts", "read or written last turn"), ("docs/x.md", "sentence")]
    hit = judge([s], "nothing", paths)[0]
    assert [str(r) for r in hit.reasons] == [
        "path src/a/b/c.ts, read or written last turn (10)",
        "path docs/x.md (10)",
    ]


def test_sentence_paths() -> None:
    assert sentence_paths("fix src/calc.js and @test/calc.test.js, then ./README.md.") == [
        "test/calc.test.js",
        "src/calc.js",
        "README.md",
    ]
    assert sentence_paths("no paths at all, v1.2 maybe") == ["v1.2"]


# -- gates ------------------------------------------------------------------------------------
def test_domain_gate_loads_only_the_winner() -> None:
    result = evaluate(
        list(lab_skills().values()), "fix the divide-by-zero problem", budget=12_000, root=REPO
    )
    names = [(d.name, d.loaded) for d in result.decisions]
    assert names == [("calc-conventions", True), ("calc-conventions-archived", False)]
    assert result.decisions[1].reason == "same calc domain as calc-conventions, which won"
    assert result.hits[0].score > result.hits[1].score
    assert "must throw" in result.injected_text and "returns `Infinity`" not in result.injected_text


def test_budget_gate_says_why() -> None:
    skills = [sk("a", triggers=("go",)), sk("b", triggers=("go",))]
    size = len(render_skill(skills[0]).text)
    decisions = apply_gates(judge(skills, "go", []), size + 10, render_skill, {})
    assert decisions[0].loaded and not decisions[1].loaded
    assert decisions[1].reason == f"body is {size} chars, only 10 left"


def test_nothing_matched_injects_zero_chars() -> None:
    result = evaluate(
        list(lab_skills().values()), "what does this project do?", budget=12_000, root=REPO
    )
    assert result.hits == [] and result.injected_text == ""


# -- injection --------------------------------------------------------------------------------
def test_release_block_offers_a_command_line_and_never_the_script() -> None:
    skills = lab_skills()
    block = render_skill(skills["release-notes"])
    script = LAB / "release-notes/scripts/bump-version.mjs"
    assert f"node {script}" in block.text and block.attachments == [f"node {script}"]
    assert f'dir="{LAB / "release-notes"}"' in block.text
    assert "do not read" in block.text
    for name in ("bumpSemverTriple", "writePackageManifestAtomically"):
        assert name in script.read_text() and name not in block.text


def test_script_contents_are_never_opened(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill(tmp_path, "s")
    scripts = tmp_path / "s" / "scripts"
    scripts.mkdir()
    (scripts / "run.py").write_text("def distinctiveFunctionName(): pass\n")
    (scripts / "run.py").chmod(0)  # unreadable: rendering must still work
    (tmp_path / "s" / "references").mkdir()
    (tmp_path / "s" / "references" / "guide.md").write_text("SECRET GUIDE TEXT")
    skill = discover([Root(tmp_path, "t", 1)], Budget(10**6, "chars", "t"), char_fits).skills["s"]
    block = render_skill(skill)
    assert f"python3 {scripts / 'run.py'}" in block.text
    assert "distinctiveFunctionName" not in block.text and "SECRET GUIDE" not in block.text
    assert "references/: guide.md" in block.text


@pytest.mark.parametrize(
    ("name", "expected"),
    [("a.py", "python3 "), ("a.sh", "bash "), ("a.mjs", "node "), ("a.rb", "ruby "), ("tool", "")],
)
def test_interpreter_by_extension(name: str, expected: str) -> None:
    assert command_line(Path("/x") / name) == f"{expected}/x/{name}"


def test_one_user_message_before_reference_and_sentence(env: ToolEnv, ws: Path) -> None:
    shutil.copytree(REPO / "fixtures/workspace", ws, dirs_exist_ok=True)
    stage = SkillStage(lab_skills(), budget=12_000, root=ws, emit=drop)
    model = FakeModel([say("ok")])
    agent = Agent(engine(model, "s"), env, pre_turn=stage)
    agent.run_turn("fix the divide-by-zero problem, see @src/calc.js")
    sent = model.requests[0].messages
    assert [(m.role, m.kind) for m in sent] == [
        ("user", KIND_SKILLS),
        ("user", KIND_REFERENCE),
        ("user", "chat"),
    ]
    assert sent[0].protected and sent[0].skills == ("calc-conventions",)
    assert "function divide" in sent[1].content and 'path="src/calc.js"' in sent[1].content


def test_a_long_session_keeps_only_the_latest_stage_results(ws: Path) -> None:
    stage = SkillStage(lab_skills(), budget=12_000, root=ws, emit=drop)
    for turn in range(1, 3 * HISTORY_KEPT):
        stage(f"hello {turn}", [], turn)
    assert [t for t, _ in stage.history] == list(range(2 * HISTORY_KEPT, 3 * HISTORY_KEPT))
    assert stage.last is stage.history[-1][1]


def test_dedup_across_turns(env: ToolEnv) -> None:
    events: list[Event] = []
    stage = SkillStage(lab_skills(), budget=12_000, root=REPO, emit=events.append)
    model = FakeModel([say("one"), say("two")])
    agent = Agent(engine(model, "s"), env, pre_turn=stage)
    agent.run_turn("fix the divide-by-zero problem")
    agent.run_turn("and the divide function again")
    assert stage.last is not None and stage.last.injected_text == ""
    assert stage.last.decisions[0].reason == "already in context since turn 1"
    # the archived one still loses its domain to the convention already in context
    assert stage.last.decisions[1].reason.startswith("same calc domain as calc-conventions")
    skill_msgs = [m for m in agent.messages if m.kind == KIND_SKILLS]
    assert len(skill_msgs) == 1
    agent.clear()
    agent.messages.clear()
    model.replies.append(say("three"))
    agent.run_turn("divide again")
    assert stage.last.decisions[0].loaded  # no longer in context, so injected again


def test_files_touched_last_turn_count_as_paths(env: ToolEnv, ws: Path) -> None:
    shutil.copytree(REPO / "fixtures/workspace", ws, dirs_exist_ok=True)
    stage = SkillStage(lab_skills(), budget=12_000, root=ws, emit=drop)
    model = FakeModel([call("read_file", path="src/calc.js"), say("read"), say("ok")])
    agent = Agent(engine(model, "s"), env, pre_turn=stage)
    agent.run_turn("show me the code")
    agent.run_turn("what do you think?")
    assert stage.last is not None
    reasons = [str(r) for h in stage.last.hits for r in h.reasons]
    assert "path src/calc.js, read or written last turn (10)" in reasons


def test_reference_is_contained_and_capped(ws: Path) -> None:
    (ws / "big.txt").write_text("x" * 30_000)
    result = evaluate([], "look at @big.txt and @../secret and @missing.txt", budget=1, root=ws)
    texts = dict(result.references)
    assert "cut at 20,000 characters" in texts["big.txt"] and len(texts["big.txt"]) < 21_000
    assert "refused" in texts["../secret"] and "no such file" in texts["missing.txt"]


# -- skill resources through read_file ---------------------------------------------------------
def test_skill_resources_are_readable_but_contained(env: ToolEnv, tmp_path: Path) -> None:
    skill_dir = tmp_path / "skills" / "guide"
    (skill_dir / "references").mkdir(parents=True)
    (skill_dir / "references" / "a.md").write_text("inside\n")
    (tmp_path / "skills" / "secret.txt").write_text("secret\n")
    (skill_dir / "references" / "escape.md").symlink_to(tmp_path / "skills" / "secret.txt")
    events: list[Event] = []
    env = replace(env, emit=events.append, skills=SkillDirs({"guide": skill_dir}))

    def read(args: dict[str, object]) -> str:
        return get_tool("read_file").run(env, TurnState(1), args)

    assert "inside" in read({"path": str(skill_dir / "references/a.md")})
    record = events[-1].to_json()
    assert events[-1].kind == "skill.resource.loaded" and record["skill"] == "guide"
    assert record["bytes"] == 7 and record["resource"] == "references/a.md"
    for bad in (
        str(skill_dir / "../secret.txt"),
        str(skill_dir / "references/escape.md"),
        "/etc/passwd",
        str(skill_dir / "references/../../secret.txt"),
    ):
        with pytest.raises(PathRefused):
            read({"path": bad})
    with pytest.raises(ToolError, match="no such file"):
        read({"path": str(skill_dir / "references/missing.md")})


def test_registry_stays_eight_whatever_loads(env: ToolEnv) -> None:
    before = TOOL_NAMES
    stage = SkillStage(lab_skills(), budget=12_000, root=REPO, emit=drop)
    model = FakeModel([say("ok")])
    Agent(engine(model, "s"), env, pre_turn=stage).run_turn("cut a release and test it")
    assert before == TOOL_NAMES and len(model.requests[0].tools) == 8


def test_skills_why_json(capsys: pytest.CaptureFixture[str], ws: Path) -> None:
    from mca.cli import main

    argv = [
        "skills",
        "why",
        "fix the divide-by-zero problem",
        "--json",
        "-C",
        str(ws),
        "--skills-dir",
        str(LAB),
        "--path",
        "src/calc.js",
    ]
    assert main(argv, {"HOME": str(ws)}) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["hits"][0] == {
        "name": "calc-conventions",
        "score": 16,
        "reasons": [
            "path src/calc.js, given with --path (10)",
            'keyword "divide" (3)',
            'keyword "divide-by-zero" (3)',
        ],
    }
    assert [d["loaded"] for d in obj["decisions"]] == [True, False]
    assert obj["injected_chars"] == len(obj["injected_text"]) > 0 and obj["injected_tokens"] > 0
    assert (
        main(
            ["skills", "why", "hello there", "--json", "-C", str(ws), "--skills-dir", str(LAB)],
            {"HOME": str(ws)},
        )
        == 0
    )
    obj = json.loads(capsys.readouterr().out)
    assert obj["injected_text"] == "" and obj["injected_chars"] == 0 and obj["hits"] == []


def test_skills_list_and_check_json(capsys: pytest.CaptureFixture[str], ws: Path) -> None:
    from mca.cli import main

    assert (
        main(
            ["skills", "list", "--json", "-C", str(ws), "--skills-dir", str(LAB)], {"HOME": str(ws)}
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)["skills"]
    by_name = {r["name"]: r for r in rows}
    assert by_name["broken-pack"]["status"] == "skipped"
    assert by_name["broken-pack"]["diagnostics"][0]["code"] == "missing-description"
    assert by_name["calc-conventions"]["fields"]["domain"] == "calc"
    assert (
        by_name["calc-conventions"]["scope"] == "explicit"
        and by_name["calc-conventions"]["rank"] == 400
    )
    assert set(rows[0]) >= {
        "path",
        "name",
        "description",
        "status",
        "scope",
        "rank",
        "fields",
        "diagnostics",
    }
    assert main(["skills", "check", str(REPO / "fixtures/broken-packs/name-mismatch")], {}) == 0
    assert "name-mismatch" in capsys.readouterr().out
    assert main(["skills", "check", str(REPO / "fixtures/broken-packs"), "--json"], {}) == 1
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"]: r["status"] for r in rows} == {
        "bad-priority": "loaded",
        "bad-yaml": "loaded",
        "bare-colon": "loaded",
        "missing-description": "skipped",
        "a-different-name": "loaded",
        "no-closing-fence": "skipped",
    }
    assert all(r["scope"] is None and r["rank"] is None for r in rows)


def test_strict_skills_refuses_before_any_model(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mca.cli import main

    code = main(
        ["-C", str(ws), "--skills-dir", str(LAB), "--strict-skills", "-p", "hi"],
        {"HOME": str(ws), "MCA_HOME": str(ws / "home")},
    )
    err = capsys.readouterr().err
    assert (
        code == 1
        and "--strict-skills" in err
        and "broken-pack" in err
        and "missing-description" in err
    )


def test_skill_text_helper_round_trips(tmp_path: Path, make_skill: MakeSkill) -> None:
    path = make_skill(tmp_path, "x", skill_text(name="x", triggers="[a]"))
    assert "triggers: [a]" in path.read_text()


# -- the judgment index never changes the result -------------------------------------------------
WORDS = ["test", "latest", "node --test", "divide", "by-zero", "登录", "café", "src", "a.b", "x"]


@pytest.mark.slow
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["alpha", "beta-gamma", "test", "calc", "登录"]),
            st.lists(st.sampled_from(WORDS), max_size=3),
            st.lists(
                st.sampled_from(["src/*.js", "**/x.py", "docs/", "*.md", "src/a/**"]), max_size=2
            ),
        ),
        max_size=8,
    ),
    st.lists(
        st.sampled_from([*WORDS, "alpha", "$beta-gamma", "/calc", "src/a/b.js", "x.md", " ", "-"]),
        max_size=8,
    ),
)
@settings(max_examples=300, deadline=None)
def test_index_agrees_with_brute_force(
    specs: list[tuple[str, list[str], list[str]]], words: list[str]
) -> None:
    skills = [
        sk(f"{n}{i}" if i else n, triggers=tuple(t), paths=tuple(p))
        for i, (n, t, p) in enumerate(specs)
    ]
    sentence = " ".join(words)
    paths = [(p, "sentence") for p in sentence_paths(sentence)]
    low = sentence.lower()
    brute = [(s.name, [str(r) for r in _score(s, sentence, low, paths)]) for s in skills]
    brute = sorted((b for b in brute if b[1]), key=lambda b: b[0])
    # the trigger index against brute force: description hits are the relevance index's
    # (tests/skills/test_relevance.py), so they are left out here
    fast = [
        (h.skill.name, [str(r) for r in h.reasons if r.kind != "description"])
        for h in judge(skills, sentence, paths)
    ]
    fast = sorted((f for f in fast if f[1]), key=lambda b: b[0])
    assert fast == brute


def test_a_convention_in_context_keeps_its_domain_in_later_turns(env: ToolEnv) -> None:
    stage = SkillStage(lab_skills(), budget=12_000, root=REPO, emit=drop)
    model = FakeModel([say("one"), say("two")])
    agent = Agent(engine(model, "s"), env, pre_turn=stage)
    agent.run_turn("fix the divide-by-zero problem")
    agent.run_turn("how did the v1 calc handle infinity?")  # matches only the archived one
    assert stage.last is not None
    decision = next(d for d in stage.last.decisions if d.name == "calc-conventions-archived")
    assert not decision.loaded
    assert (
        decision.reason == "same calc domain as calc-conventions, already in context since turn 1"
    )
    assert [m.skills for m in agent.messages if m.kind == KIND_SKILLS] == [("calc-conventions",)]


def test_reading_a_skill_is_an_activation(ws: Path) -> None:
    """read_file skill:NAME (or the SKILL.md path) goes through the same gates, dedup and
    protection as a matched body, and the ledger shows it."""
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI
    from tests.helpers import FakeModel, call, say

    calc_md = str(LAB / "calc-conventions" / "SKILL.md")
    model = FakeModel(
        [
            call("read_file", "1", path="skill:calc-conventions-archived"),
            call("read_file", "2", path=calc_md),  # a rival of the same domain: refused
            call("read_file", "3", path="skill:calc-conventions-archived"),  # dedup
            call("read_file", "4", path="skill:nope"),
            say("done"),
        ]
    )
    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "h")}, workspace=ws)
    session = open_session(settings.with_(skills_dirs=(LAB,)), HeadlessUI(), model=model)
    result = session.run_turn("hello there")
    outcome = [(t.ok, t.result) for t in result.tools]
    assert outcome[0][0] and "put the skill 'calc-conventions-archived'" in outcome[0][1]
    assert not outcome[1][0] and "same calc domain as calc-conventions-archived" in outcome[1][1]
    assert not outcome[2][0] and "already in context since turn 1" in outcome[2][1]
    assert not outcome[3][0] and "no skill named 'nope'" in outcome[3][1]
    read = [m for m in session.agent.messages if m.kind == "skills"]
    assert len(read) == 1 and read[0].protected and read[0].skills == ("calc-conventions-archived",)
    assert "returns `Infinity`" in read[0].content
    assert session.ledger.last is not None
    rows = [r.label for r in session.ledger.last.rows]
    assert "skill read by the model: calc-conventions-archived" in rows
    session.close()


def test_the_domain_stays_with_its_winner_even_over_budget() -> None:
    skills = discover([Root(LAB, "explicit", 400)], Budget(10**6, "chars", "t"), char_fits).skills
    result = evaluate(
        SkillSet(skills[k] for k in sorted(skills)),
        "fix the divide-by-zero problem",
        budget=800,
        root=REPO,
    )
    by_name = {d.name: d for d in result.decisions}
    assert not by_name["calc-conventions"].loaded
    assert by_name["calc-conventions"].reason.startswith("body is ")
    assert by_name["calc-conventions-archived"].reason == (
        "same calc domain as calc-conventions, which won but did not fit the budget"
    )
    assert "Infinity" not in result.injected_text


def test_naming_a_rival_replaces_the_held_skill(ws: Path) -> None:
    from mca.skills.stage import SkillStage
    from mca.types import Message

    skills = discover([Root(LAB, "explicit", 400)], Budget(10**6, "chars", "t"), char_fits).skills
    stage = SkillStage(skills, budget=12_000, root=ws, emit=drop)
    history: list[Message] = []
    history += stage("how did v1 calc handle infinity?", history, 1)
    assert [m.skills for m in history] == [("calc-conventions-archived",)]
    history.append(Message("user", "how did v1 calc handle infinity?", turn=1))
    new = stage("use $calc-conventions now", history, 2)
    assert stage.last is not None
    [decision] = [d for d in stage.last.decisions if d.name == "calc-conventions"]
    assert decision.loaded and decision.replaces == "calc-conventions-archived"
    assert "replaces calc-conventions-archived (in context since turn 1)" in decision.reason
    assert "returns `Infinity`" not in history[0].content and history[0].skills == ()
    assert new[0].skills == ("calc-conventions",)


def test_the_catalog_follows_skills_changing_on_disk(ws: Path, tmp_path: Path) -> None:
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI
    from tests.helpers import FakeModel, say

    events: list[str] = []

    class UI(HeadlessUI):
        def event(self, event: Event) -> None:
            if isinstance(event, Notice):
                events.append(event.message)

    root = tmp_path / "skills"
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "SKILL.md").write_text("---\nname: alpha\ndescription: Alpha.\n---\na\n")
    settings = load_settings({"MOCK": "1", "MCA_HOME": str(tmp_path / "h")}, workspace=ws)
    model = FakeModel([say("1"), say("2"), say("3")])
    session = open_session(settings.with_(skills_dirs=(root,)), UI(), model=model)
    events.clear()  # what opening said (what the sandbox holds on this system, say)
    session.run_turn("one")
    assert events == [] and "- alpha: Alpha." in model.requests[-1].system
    (root / "beta").mkdir()
    (root / "beta" / "SKILL.md").write_text("---\nname: beta\ndescription: Beta.\n---\nb\n")
    (root / "alpha" / "SKILL.md").write_text("---\nname: alpha\ndescription: Alpha two.\n---\na\n")
    session.run_turn("two")
    assert len(events) == 1 and "added beta; edited alpha" in events[0]
    assert "- beta: Beta." in model.requests[-1].system
    assert "- alpha: Alpha two." in model.requests[-1].system
    session.run_turn("three")  # nothing changed: no rescan, no line
    assert len(events) == 1
    session.close()


def test_a_skill_body_passes_its_gates_by_any_name(ws: Path, tmp_path: Path) -> None:
    """A hard link to a SKILL.md is that skill (reading it activates it, gates and all), and
    search_text does not return a loaded skill's body."""
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI

    root = ws / ".agents" / "skills"
    for name, priority, body in (("alpha", 20, "ALPHA-BODY"), ("beta", 10, "BETA-SECRET")):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Frob, {name} way.\ndomain: frob\n"
            f"priority: {priority}\ntriggers: [frobnicate]\n---\n{body}\n"
        )
    (root.parent.parent / "notes.md").hardlink_to(root / "beta" / "SKILL.md")
    model = FakeModel(
        [
            call("read_file", "1", path="notes.md"),
            call("search_text", "2", pattern="BETA-[A-Z]+"),
            say("done"),
        ]
    )
    env = {"MOCK": "1", "MCA_HOME": str(tmp_path / "h"), "HOME": str(tmp_path)}
    session = open_session(load_settings(env, workspace=ws), HeadlessUI(), model=model)
    result = session.run_turn("frobnicate the widget")
    session.close()
    (read_ok, read), (search_ok, search) = [(t.ok, t.result) for t in result.tools]
    assert not read_ok and "same frob domain as alpha" in read and "BETA-SECRET" not in read
    assert search_ok and "BETA-SECRET" not in search
    assert search == "no matches for BETA-[A-Z]+\n(the SKILL.md of alpha, beta not searched:" + (
        " read_file skill:NAME)"
    )


def test_tilde_is_the_home_of_a_skill_s_files(env: ToolEnv, ws: Path, tmp_path: Path) -> None:
    skill = tmp_path / "home" / ".agents" / "skills" / "helper"
    (skill / "references").mkdir(parents=True)
    (skill / "references" / "guide.md").write_text("REAL guide\n")
    planted = ws / "~" / ".agents" / "skills" / "helper" / "references"
    planted.mkdir(parents=True)
    (planted / "guide.md").write_text("PLANTED guide\n")
    env = replace(env, skills=SkillDirs({"helper": skill}), user_home=tmp_path / "home")
    read = get_tool("read_file")
    path = "~/.agents/skills/helper/references/guide.md"
    assert "REAL guide" in read.run(env, TurnState(1), {"path": path})
    assert "PLANTED guide" in read.run(env, TurnState(1), {"path": f"./{path}"})  # by its name
    with pytest.raises(PathRefused, match="only a loaded skill's own files"):
        read.run(env, TurnState(1), {"path": "~/.ssh/id_rsa"})
    with pytest.raises(PathRefused):
        read.run(env, TurnState(1), {"path": "~/.agents/skills/helper/../../../.ssh/id_rsa"})

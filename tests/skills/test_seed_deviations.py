"""Issue 35 item 5: where the skill runtime still read SKILL.md differently from the seeds."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mca.skills.parse import parse_text, split_frontmatter
from mca.skills.scan import load_candidate
from tests.conftest import REPO
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


def _list_json(ws: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    from mca.cli import main

    argv = ["skills", "list", "--json", "-C", str(ws), "--skills-dir", str(root)]
    assert main(argv, {"HOME": str(ws), "MCA_HOME": str(ws / ".mca-home")}) == 0
    obj: dict[str, Any] = json.loads(capsys.readouterr().out)
    return obj


@pytest.mark.parametrize("count", [3, 120])  # 120 skills overflow the catalog's budget
def test_skills_list_json_gives_each_skill_its_catalog_cost_and_the_budget_used(
    tmp_path: Path, make_skill: MakeSkill, capsys: pytest.CaptureFixture[str], count: int
) -> None:
    from mca.tokens import load_encoding

    root, ws = tmp_path / "skills", tmp_path / "ws"
    ws.mkdir()
    for i in range(count):
        words = " ".join(f"w{i}x{j}" for j in range(30))
        make_skill(root, f"s{i:03}", skill_text(name=f"s{i:03}", description=f"Use when {words}."))
    make_skill(root, "broken", skill_text(name="broken", description=None))
    obj = _list_json(ws, root, capsys)
    cat, rows = obj["catalog"], {r["name"]: r for r in obj["skills"]}
    assert rows["broken"]["catalog"] is None  # skipped: it costs nothing
    budget = cat["budget"]  # the mock model's window is known: 2% of it, in tokens
    assert budget["unit"] == "tokens" and "context window" in budget["reason"]
    assert cat["tokenizer"] == "estimated, o200k_base"
    assert cat["used"] == cat["tokens"] <= budget["limit"]
    enc = load_encoding("o200k_base")
    published = [r["catalog"] for r in rows.values() if r["catalog"] is not None]
    assert len(published) == cat["skills"] and cat["skills"] >= 3
    cuts = [d for r in rows.values() for d in r["diagnostics"] if d["code"] == "catalog-cut"]
    assert bool(cuts) == (count > 3)  # the published line is the cut one
    text = _catalog_text(ws, root)
    lines = [x for x in text.splitlines() if x.startswith("- ")]
    for row in rows.values():
        if row["catalog"] is None:
            continue
        line = f"- {row['name']}"
        cost = row["catalog"]
        assert cost["tokenizer"] == "estimated, o200k_base"
        # the oracle: the catalog's own line for this skill, counted by tiktoken directly
        [found] = [x for x in lines if x.startswith(line + ":") or x == line]
        assert cost["chars"] == len(found)
        assert cost["tokens"] == len(enc.encode_ordinary(found))
    assert cat["tokens"] == len(enc.encode_ordinary(text))


def _catalog_text(ws: Path, root: Path) -> str:
    from mca.assembly.wiring import skills_config
    from mca.config.settings import load_settings
    from mca.skills.runtime import run_discovery
    from mca.tokens import Estimator

    env = {"HOME": str(ws), "MCA_HOME": str(ws / ".mca-home")}
    settings = load_settings(env, workspace=ws, overrides={"skills_dirs": (root,)})
    config = skills_config(settings)
    return run_discovery(config, Estimator(config.encoding)).catalog.text


def _session_log(ws: Path, home: Path, sentence: str, *extra: str) -> list[dict[str, Any]]:
    """One `mca -p` turn with the mock model; the events its session log holds on disk."""
    from mca.cli import main

    env = {"MOCK": "1", "MCA_HOME": str(home), "HOME": str(ws.parent)}
    main(["-C", str(ws), *extra, "-p", sentence], env)
    [log] = (home / "logs").glob("*.jsonl")
    return [json.loads(x) for x in log.read_text().splitlines()]


def test_the_log_says_why_a_missing_description_cannot_be_omitted(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    ws = tmp_path / "ws"
    make_skill(ws / ".agents" / "skills", "nodesc", skill_text(name="nodesc", description=None))
    events = _session_log(ws, tmp_path / "h", "hello")
    [diag] = [e for e in events if e.get("event") == "skills.diagnostic"]
    assert diag["code"] == "missing-description" and diag["level"] == "error"
    assert "nodesc" in diag["path"]  # the directory
    assert "'description'" in diag["message"] and "cannot be omitted" in diag["message"]
    assert "only text the model sees" in diag["message"]  # why


def test_a_project_skill_resource_read_is_logged_relative_to_its_skill_with_why(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    ws = tmp_path / "ws"
    skill = make_skill(ws / ".agents" / "skills", "guide", skill_text(name="guide")).parent
    (skill / "references").mkdir()
    (skill / "references" / "style.md").write_text("the house style\n")
    (ws / "notes.md").write_text("not a skill's\n")
    events = _session_log(ws, tmp_path / "h", "read .agents/skills/guide/references/style.md")
    [loaded] = [e for e in events if e.get("event") == "skill.resource.loaded"]
    assert loaded["skill"] == "guide" and loaded["resource"] == "references/style.md"
    assert "read_file" in loaded["reason"] and "turn 1" in loaded["reason"]
    assert loaded["bytes"] == len("the house style\n")
    again = _session_log(ws, tmp_path / "h2", "read notes.md")  # a workspace file is no resource
    assert not [e for e in again if e.get("event") == "skill.resource.loaded"]


def test_the_roots_say_who_can_write_each(tmp_path: Path, make_skill: MakeSkill) -> None:
    import pwd

    ws = tmp_path / "ws"
    make_skill(ws / ".agents" / "skills", "guide", skill_text(name="guide"))
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    events = _session_log(ws, tmp_path / "h", "hello", "--skills-dir", str(shared))
    roots = {e["path"]: e["writers"] for e in events if e.get("event") == "skills.root"}
    me = pwd.getpwuid(os.geteuid()).pw_name
    project = roots[str(ws / ".agents" / "skills")]
    assert project.startswith(f"you ({me})") and "commit" in project  # the repository writes too
    assert "everyone" in roots[str(shared)] and "commit" not in roots[str(shared)]
    assert roots[str(ws / ".mca" / "skills")].startswith("absent; you")


def test_clear_forgets_the_last_turn_file_paths(tmp_path: Path) -> None:
    """After /clear, a sentence that names no file loads no skill: the paths the cleared
    conversation read picked calc-conventions again (1,403 characters) before."""
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI

    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "calc.js").write_text("export function divide(a, b) { return a / b }\n")
    settings = load_settings({"MOCK": "1", "MCA_HOME": str(tmp_path / "h")}, workspace=ws)
    session = open_session(settings.with_(skills_dirs=(REPO / "skills",)), HeadlessUI())
    try:
        session.run_turn("read src/calc.js")
        first = session.ledger.last
        assert first is not None and first.stage_tokens("stage2") > 0  # the path loaded it
        session.clear()
        session.run_turn("what does this project do?")
        ledger = session.ledger.last
        assert ledger is not None
        stage2 = [r for r in ledger.rows if r.kind == "stage2"]
        assert sum(r.chars for r in stage2) == 0, [(r.label, r.chars, r.reason) for r in stage2]
        assert not [m for m in session.agent.messages if m.kind == "skills"]
    finally:
        session.close()

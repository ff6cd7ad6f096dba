"""The offline models: MockModel's intents drive real tools; ScriptedModel replays a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mca.agent import Agent
from mca.errors import ScriptExhausted
from mca.models.mock import MockModel, ScriptedModel, calc_convention, script_line
from mca.tools.base import ToolEnv
from mca.types import KIND_SKILLS, Message, Request, Usage
from tests.conftest import REPO
from tests.helpers import engine


def mock_agent(env: ToolEnv) -> Agent:
    return Agent(engine(MockModel(), "sys"), env)


def test_read_list_search_run(env: ToolEnv, ws: Path) -> None:
    (ws / "notes.md").write_text("# Notes\nalpha beta\n")
    agent = mock_agent(env)
    r = agent.run_turn("please read notes.md")
    assert r.tools[0].name == "read_file" and "alpha beta" in r.answer
    assert agent.run_turn("list the files").tools[0].name == "list_dir"
    r = agent.run_turn("search for alpha")
    assert "notes.md:2:alpha beta" in r.answer
    r = agent.run_turn("run `echo hi there`")
    assert r.tools[0].name == "run_command" and "hi there" in r.answer


def test_edit_and_create(env: ToolEnv, ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    agent = mock_agent(env)
    agent.run_turn('replace "world" with "mca" in a.txt')
    assert (ws / "a.txt").read_text() == "hello mca\n"
    agent.run_turn('create b.txt with "line one\\nline two"')
    assert (ws / "b.txt").read_text() == "line one\nline two\n"


def test_unknown_intent_explains_itself(env: ToolEnv) -> None:
    r = mock_agent(env).run_turn("what is the meaning of life?")
    assert "offline mock model" in r.answer and not r.tools


def _skills_msg(text: str) -> Message:
    return Message("user", text, kind=KIND_SKILLS)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("**Rule:** `divide(a, 0)` must throw a `RangeError`.", "throw"),
        ("**Rule:** `divide(a, 0)` returns `Infinity`.", "infinity"),
        ("nothing about calc here", "none"),
    ],
)
def test_calc_convention_comes_from_the_context(body: str, expected: str) -> None:
    req = Request("sys", (_skills_msg(body), Message("user", "fix it")), ())
    assert calc_convention(req) == expected


@pytest.mark.parametrize("rule", ["throw", "infinity", "none"])
def test_divide_fix_depends_on_the_injected_convention(env: ToolEnv, ws: Path, rule: str) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    shutil.copytree(REPO / "fixtures" / "workspace", ws, dirs_exist_ok=True)
    bodies = {
        "throw": "**Rule:** `divide(a, 0)` must throw a `RangeError`.",
        "infinity": "**Rule:** `divide(a, 0)` returns `Infinity`.",
        "none": "",
    }

    def pre(sentence: str, history: object, turn: int, touched: object) -> list[Message]:
        return [_skills_msg(bodies[rule])] if bodies[rule] else []

    agent = Agent(engine(MockModel(), "sys"), env, pre_turn=pre)
    r = agent.run_turn("fix the divide-by-zero problem in src/calc.js")
    source = (ws / "src/calc.js").read_text()
    if rule == "throw":
        assert "throw new RangeError" in source and "the tests pass" in r.answer
    elif rule == "infinity":
        assert "return Infinity" in source and "the tests still fail" in r.answer
    else:
        assert source == (REPO / "fixtures/workspace/src/calc.js").read_text()
        assert [t.name for t in r.tools] == ["read_file"]


def test_scripted_model_replays_and_names_the_file_when_exhausted(
    env: ToolEnv, ws: Path, tmp_path: Path
) -> None:
    (ws / "a.txt").write_text("x\n")
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]})
        + "\n"
        + json.dumps({"content": "read it", "usage": {"prompt_tokens": 5, "completion_tokens": 2}})
        + "\n"
    )
    agent = Agent(engine(ScriptedModel(script), "sys"), env)
    r = agent.run_turn("go")
    assert r.answer == "read it" and r.tools[0].ok and r.usage == Usage(5, 2)
    with pytest.raises(ScriptExhausted, match=str(script)):
        agent.run_turn("again")
    assert len(agent.messages) == 4  # the failed turn left nothing behind


def test_script_line_round_trips(tmp_path: Path) -> None:
    from mca.types import ToolCall

    msg = Message("assistant", "hi", tool_calls=(ToolCall("id1", "list_dir", {"path": "."}),))
    path = tmp_path / "s.jsonl"
    path.write_text(script_line(msg, Usage(3, 4)) + "\n")
    resp = ScriptedModel(path).complete(Request("", (), ()))
    assert resp.message == msg and resp.usage == Usage(3, 4)


def test_bad_script_line_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("{not json\n")
    with pytest.raises(ScriptExhausted, match=r"s.jsonl:1: not valid JSON"):
        ScriptedModel(path).complete(Request("", (), ()))


def test_fixture_script_replays_through_the_real_loop(env: ToolEnv, ws: Path) -> None:
    shutil.copytree(REPO / "fixtures" / "workspace", ws, dirs_exist_ok=True)
    script = REPO / "fixtures" / "mock-scripts" / "read-and-answer.jsonl"
    agent = Agent(engine(ScriptedModel(script), "sys"), env)
    result = agent.run_turn("explain divide")
    assert [t.name for t in result.tools] == ["update_plan", "read_file", "update_plan"]
    assert all(t.ok for t in result.tools) and agent.state.plan[-1]["status"] == "completed"
    assert "Infinity" in result.answer and result.usage == Usage(1500, 20)

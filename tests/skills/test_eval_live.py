"""`mca skills eval FILE --live`: each query a read-only turn through the configured model, a
trigger counted when the stage loads the skill or the model reads its SKILL.md, the model's
reads of the wrong skill reported. Against a fake server that refuses what the real API
refuses (tests/strict_rules.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mca.events import Event, SkillDecision, SkillRead
from mca.skills.eval_live import Asked, LiveRun, score_live
from mca.skills.evals import EvalFile, EvalItem
from tests.fakeserver import FakeServer, Received, Reply, openai_reply, serve
from tests.skills.conftest import MakeSkill, skill_text
from tests.strict_rules import chat_refusal

MCA = Path(sys.executable).parent / "mca"
NOTES = "Write release notes from the commits since the last tag, grouped by kind of change."
XLSX = "Open, read, edit or create .xlsx spreadsheet files, formulas and pivot tables."
QUERIES = [
    {"query": "$release-notes for v2.1", "should_trigger": True},  # an explicit wish: the stage
    {"query": "summarise for our customers what is new in v2.1", "should_trigger": True},
    {"query": "sum the second column of budget.xlsx", "should_trigger": False},
    {"query": "what is the capital of france", "should_trigger": False},
]
READS = {"our customers": "release-notes", "budget.xlsx": "xlsx"}  # what the model reads, by query


class Model:
    """Reads a skill where READS says (once per turn), then answers; refuses what OpenAI does.
    Keeps each request's system prompt."""

    def __init__(self) -> None:
        self.systems: list[str] = []
        self.refused: list[str] = []

    def __call__(self, request: Received) -> Reply:
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, chunks=[b"{}"])
        body: dict[str, Any] = request.json
        if (refusal := chat_refusal(body)) is not None:
            self.refused.append(refusal.message)
            return Reply(status=refusal.status, chunks=[json.dumps(refusal.body).encode()])
        messages = body["messages"]
        self.systems.append(str(messages[0]["content"]))
        if messages[-1]["role"] == "tool":
            return openai_reply(request, "done")
        asked = str(messages[-1]["content"])
        skill = next((s for key, s in READS.items() if key in asked), None)
        calls = [("read_file", {"path": f"skill:{skill}"})] if skill else []
        return openai_reply(request, "" if calls else "ok", calls)


@pytest.fixture
def model() -> Iterator[tuple[FakeServer, Model]]:
    rules = Model()
    with serve(rules) as srv:
        yield srv, rules


def test_each_half_is_scored_from_one_turn_per_query() -> None:
    """In-process: the stage's loads and the model's reads, scored apart and together; a query
    asked twice runs once."""
    turns: list[str] = []
    seen: dict[str, list[Event]] = {
        "a": [SkillDecision(1, "notes", True, "explicit", 10)],
        "b": [SkillRead(1, "notes", True, "read", "")],
        "c": [SkillRead(1, "xlsx", True, "read", "")],
        "d": [],
    }

    def turn(query: str) -> list[Event]:
        turns.append(query)
        return list(seen[query])

    items = (
        EvalItem("a", True),
        EvalItem("b", True),
        EvalItem("c", False),
        EvalItem("d", False),
        EvalItem("a", True),
    )
    run = LiveRun(turn)
    got = score_live(EvalFile(Path("e.json"), "single", items), "notes", run)
    assert turns == ["a", "b", "c", "d"]
    stage, model, either = (got.scores[h] for h in ("stage", "model", "either"))
    assert (stage.tp, stage.fn) == (2, 1) and (model.tp, model.fn) == (1, 2)
    assert (either.tp, either.fn, either.fp) == (3, 0, 0)
    assert got.wrong_reads == [{"query": "c", "read": ["xlsx"]}]
    assert Asked(("x",), ("x", "y")).fired("either") == ["x", "y"]


@pytest.mark.e2e
@pytest.mark.slow  # the installed mca, twice
def test_live_eval_counts_the_stage_and_the_models_reads(
    tmp_path: Path, make_skill: MakeSkill, model: tuple[FakeServer, Model]
) -> None:
    srv, rules = model
    skills = tmp_path / "skills"
    make_skill(skills, "release-notes", skill_text("release-notes", NOTES))
    make_skill(tmp_path / "installed", "xlsx", skill_text("xlsx", XLSX))
    evals = skills / "release-notes" / "evals.json"
    evals.write_text(json.dumps(QUERIES))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("as it was\n")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "MCA_HOME": str(tmp_path / ".mca"),
        "MCA_PROVIDER": "openai",
        "MCA_BASE_URL": f"{srv.url}/v1",
        "MCA_API_KEY": "sk-live-eval-0123456789abcdef",
        "MCA_MODEL": "gpt-4.1-mini",
    }
    argv = [str(MCA), "skills", "eval", str(evals), "--live"]
    argv += ["--skills-dir", str(tmp_path / "installed")]  # the skill beside the file is tested
    r = subprocess.run(
        [*argv, "-C", str(ws), "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert rules.refused == []
    (got,) = json.loads(r.stdout)["files"]
    assert got["skill"] == "release-notes"
    assert got["stage"]["recall"] == 0.5  # the wish, not the paraphrase
    assert got["model"]["recall"] == 0.5  # the paraphrase, read
    assert got["either"]["recall"] == 1.0 and got["either"]["false_activations"] == 0.0
    assert got["wrong_reads"] == [{"query": QUERIES[2]["query"], "read": ["xlsx"]}]
    # each query a conversation of its own, with the catalog in the system prompt
    assert all("release-notes" in s and "xlsx" in s for s in rules.systems)
    assert sorted(p.name for p in ws.iterdir()) == ["keep.txt"]  # read-only: nothing written
    text = subprocess.run(
        [*argv, "-C", str(ws)], env=env, capture_output=True, text=True, timeout=120
    )
    assert text.returncode == 0, text.stderr
    assert "live, through gpt-4.1-mini" in text.stdout
    assert "should not have: 1 queries" in text.stdout

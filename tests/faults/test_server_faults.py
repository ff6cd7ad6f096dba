"""A misbehaving model server, both wires: every case ends in a successful retry or one clear
error (from mca's own error tree), and the conversation is exactly as it was before the turn."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mca.agent import Agent
from mca.assembly.wiring import model_options
from mca.errors import McaError
from mca.models.anthropic import AnthropicModel
from mca.models.http import HttpModel
from mca.models.openai import OpenAIModel
from mca.models.retry import RetryPolicy
from mca.tools.base import ToolEnv
from tests.fakeserver import Received, Reply, serve
from tests.faults.cases import CASES, Case
from tests.helpers import FakeModel, engine, say, settings_for


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 40, len(CASES)


def _model(case: Case, url: str, home: Path) -> HttpModel:
    settings = settings_for(case.wire, home, case.stream, server=url, MCA_MODEL="m").with_(
        **case.settings
    )
    cls = OpenAIModel if case.wire == "openai" else AnthropicModel
    return cls(model_options(settings), policy=RetryPolicy(base=0.01, cap=0.05))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_server_fault(name: str, env: ToolEnv, tmp_path: Path) -> None:
    case = CASES[name]
    replies = list(case.replies)

    def handle(request: Received) -> Reply:
        return replies.pop(0)(request) if replies else Reply(status=500, chunks=[b"no more"])

    agent = Agent(engine(FakeModel([say("first answer")]), "s"), env)
    agent.run_turn("one")
    before = list(agent.messages)
    with serve(handle) as server:
        agent.engine.model = _model(case, server.url, tmp_path)
        try:
            result = agent.run_turn("two")
        except McaError as e:
            assert case.expect != "ok", f"expected success, got: {e}"
            assert re.search(case.expect, str(e)), f"{e!r} does not match {case.expect!r}"
            assert agent.messages == before
            return
        finally:
            agent.engine.model.close()
    assert case.expect == "ok", f"expected an error matching {case.expect!r}, got {result.answer!r}"
    assert case.answer is None or result.answer == case.answer, result.answer
    result.answer.encode("utf-8")  # whole characters only

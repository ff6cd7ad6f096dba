"""The loop: answers, tool round trips, errors as results, step limit, rollback."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mca.agent import Agent
from mca.errors import ModelError
from mca.tools.base import ToolEnv
from mca.turn import StopReason
from mca.types import Message
from mca.workspace.store import WorkspaceStore
from mca.workspace.walk import OFF
from tests.helpers import FakeModel, Reply, call, engine, say


def agent_with(env: ToolEnv, *replies: Reply, **kw: Any) -> tuple[Agent, FakeModel]:
    model = FakeModel(replies)
    return Agent(engine(model), env, **kw), model


def test_plain_answer(env: ToolEnv) -> None:
    agent, model = agent_with(env, say("hello"))
    result = agent.run_turn("hi")
    assert result.answer == "hello"
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert model.requests[0].system == "sys" and len(model.requests[0].tools) == 8


def test_tool_results_go_back_to_the_model(env: ToolEnv, ws: Path) -> None:
    (ws / "a.txt").write_text("content\n")
    agent, model = agent_with(env, call("read_file", path="a.txt"), say("done"))
    result = agent.run_turn("read it")
    tool_msg = model.requests[1].messages[-1]
    assert (
        tool_msg.role == "tool" and tool_msg.tool_call_id == "c1" and "content" in tool_msg.content
    )
    assert result.tools[0].ok and result.answer == "done"


@pytest.mark.parametrize(
    ("reply", "expect"),
    [
        (call("read_file", path="missing.txt"), "no such file"),
        (call("read_file", path="../x"), "outside the workspace"),
        (call("read_file"), "missing required argument"),
        (call("no_such_tool"), "unknown tool"),
        (call("run_command", command="exit 2"), "exit code 2"),
    ],
)
def test_tool_errors_become_results(env: ToolEnv, reply: Reply, expect: str) -> None:
    agent, model = agent_with(env, reply, say("ok"))
    result = agent.run_turn("go")
    last = model.requests[1].messages[-1]
    assert last.is_error and expect in last.content
    assert result.answer == "ok" and not result.tools[0].ok


def test_the_step_limit_counts_model_calls_not_tool_calls(env: ToolEnv) -> None:
    from mca.types import Response, ToolCall

    two = Response(Message("assistant", "", tool_calls=(ToolCall("a", "list_dir", {}),) * 2))
    agent, _ = agent_with(env, *[two] * 5, max_steps=3)
    result = agent.run_turn("loop forever")
    assert result.stopped_early and "step limit of 3 model calls" in result.answer
    assert result.stop is StopReason.STEP_LIMIT and result.committed
    # three model calls, each reply's two tool calls all run: six tools, not "3 steps"
    assert len(result.requests) == 3 and len(result.tools) == 6
    assert agent.messages[-1].role == "tool" and not agent.messages[-1].is_error


def test_at_the_step_limit_the_person_may_let_the_turn_go_on(env: ToolEnv) -> None:
    asked: list[tuple[int, int]] = []

    def more(calls: int, extra: int) -> bool:
        asked.append((calls, extra))
        return len(asked) == 1  # yes once, then no

    replies = [call("list_dir", call_id=f"c{i}") for i in range(9)]
    agent, _ = agent_with(env, *replies, max_steps=2, more_steps=more)
    result = agent.run_turn("loop forever")
    assert asked == [(2, 2), (4, 2)]
    assert len(result.requests) == 4 and "step limit of 4 model calls" in result.answer


def test_the_default_step_limit_lets_a_long_turn_finish(env: ToolEnv) -> None:
    """A turn of 40 rounds (read, edit, test, ...) is real work, not a runaway loop."""
    replies = [call("list_dir", call_id=f"c{i}") for i in range(40)]
    agent, _ = agent_with(env, *replies, say("done"))
    assert agent.run_turn("fix it").answer == "done"


def test_model_exception_rolls_the_conversation_back(env: ToolEnv) -> None:
    agent, _ = agent_with(env, say("first"), ModelError("boom"))  # before any step completed
    agent.run_turn("one")
    before = list(agent.messages)
    with pytest.raises(ModelError, match="boom"):
        agent.run_turn("two")
    assert agent.messages == before


def test_ctrl_c_rolls_back(env: ToolEnv) -> None:
    agent, _ = agent_with(env, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        agent.run_turn("one")
    assert agent.messages == []


def test_pre_turn_messages_go_before_the_sentence(env: ToolEnv) -> None:
    def pre(sentence: str, history: object, turn: int, touched: object) -> list[Message]:
        return [Message("user", f"injected for {sentence}", kind="skills", turn=turn)]

    agent, model = agent_with(env, say("ok"), pre_turn=pre)
    agent.run_turn("hello")
    sent = model.requests[0].messages
    assert [m.content for m in sent] == ["injected for hello", "hello"]


def test_turn_numbers_and_touched_files(env: ToolEnv, ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    agent, _ = agent_with(env, call("read_file", path="a.txt"), say("ok"), say("again"))
    agent.run_turn("one")
    assert agent.state.touched == {"a.txt"}
    agent.run_turn("two")
    assert agent.turn == 2 and agent.state.touched == set()


def test_unexpected_os_errors_become_results(env: ToolEnv, ws: Path) -> None:
    gone = ws / "gone"
    gone.mkdir()
    store = WorkspaceStore(gone, env.workspace.base, "test01", "20260101T000000", OFF)
    env = replace(env, workspace=store)
    gone.rmdir()  # the workspace vanished under the command
    agent, _ = agent_with(env, call("run_command", command="true"), say("ok"))
    result = agent.run_turn("go")
    assert not result.tools[0].ok and "run_command failed" in result.tools[0].result
    assert result.answer == "ok"


def test_tool_calls_in_one_reply_are_capped(env: ToolEnv) -> None:
    from mca.types import Message, Response, ToolCall

    calls = tuple(ToolCall(f"c{i}", "list_dir", {}) for i in range(23))
    many = Response(Message("assistant", "", tool_calls=calls))
    agent, _ = agent_with(env, many, say("done"), max_steps=50)
    result = agent.run_turn("go")
    assert len(result.tools) == 8 and result.answer == "done"
    skipped = [m for m in agent.messages if m.role == "tool" and m.content.startswith("not run")]
    assert len(skipped) == 15  # every call gets an answer, as both wire protocols require


def test_a_cut_or_empty_answer_is_said(env: ToolEnv) -> None:
    from mca.types import Message, Response

    agent, _ = agent_with(env, Response(Message("assistant", "half an ans"), cut=True), say(""))
    assert "stopped at the output limit" in agent.run_turn("one").notice
    assert agent.run_turn("two").notice == "the model returned an empty answer"


def test_a_context_overflow_compacts_and_retries_once(env: ToolEnv) -> None:
    from mca.errors import ContextOverflow

    class Keeper:
        compacted = 0

        def __call__(self, history: list[Message], turn: int) -> list[Message]:
            return history

        def output_budget(self, history: list[Message]) -> int:
            return 512

        def overflowed(self, history: list[Message], turn: int) -> list[Message]:
            self.compacted += 1
            return history[-1:]

    keeper = Keeper()
    replies = (say("a"), say("b"), ContextOverflow("too long"), say("fine"))
    agent, model = agent_with(env, *replies, before_model=keeper)
    agent.run_turn("one")
    agent.run_turn("two")
    assert agent.run_turn("three").answer == "fine" and keeper.compacted == 1
    assert model.requests[-1].max_output == 512
    overflows = (ContextOverflow("too long"), ContextOverflow("still"))
    agent2, _ = agent_with(env, *overflows, before_model=keeper)
    with pytest.raises(ContextOverflow, match="still too long after compacting"):
        agent2.run_turn("x")


def test_a_step_limit_of_one_says_one_model_call(env: ToolEnv) -> None:
    agent, _ = agent_with(env, call("list_dir"), say("never"), max_steps=1)
    assert "step limit of 1 model call;" in agent.run_turn("go").answer


def test_an_error_after_completed_steps_keeps_them_as_a_cancel_does(env: ToolEnv) -> None:
    from mca.types import KIND_CANCELLED

    agent, model = agent_with(
        env, call("list_dir"), call("list_dir", "c2"), ModelError("HTTP 500: boom"), say("on")
    )
    with pytest.raises(ModelError) as failed:
        agent.run_turn("look around")
    said = str(failed.value)
    assert said.startswith("HTTP 500: boom; the turn's 2 completed tool calls are kept")
    assert "say 'continue' to go on" in said
    last = agent.last
    assert last is not None and last.committed and last.stop is StopReason.ERROR
    roles = [m.role for m in agent.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "user"]
    assert (
        agent.messages[-1].kind == KIND_CANCELLED and "HTTP 500: boom" in agent.messages[-1].content
    )
    assert agent.run_turn("continue").answer == "on"
    assert len(model.requests[-1].messages) == 7  # the kept steps went to the model


def test_an_error_before_any_step_puts_the_conversation_back(env: ToolEnv) -> None:
    agent, _ = agent_with(env, say("a"), ModelError("HTTP 500: boom"))
    agent.run_turn("one")
    with pytest.raises(ModelError) as failed:
        agent.run_turn("two")
    assert str(failed.value) == "HTTP 500: boom" and len(agent.messages) == 2


def test_the_same_call_again_and_again_is_told_and_said(env: ToolEnv) -> None:
    from mca.events import Notice
    from mca.repeats import REPEAT_LIMIT

    seen: list[object] = []
    loud = replace(env, emit=seen.append)
    same = [call("read_file", f"c{i}", path="missing.txt") for i in range(REPEAT_LIMIT + 1)]
    agent, _ = agent_with(loud, *same, say("giving up"))
    agent.run_turn("read it")
    results = [m for m in agent.messages if m.role == "tool"]
    assert all("same call" not in m.content for m in results[: REPEAT_LIMIT - 1])
    assert f"this same call {REPEAT_LIMIT} times in a row" in results[REPEAT_LIMIT - 1].content
    assert f"{REPEAT_LIMIT + 1} times in a row" in results[REPEAT_LIMIT].content
    lines = [e.message for e in seen if isinstance(e, Notice)]
    assert lines == [f"the model made the same call {REPEAT_LIMIT} times in a row"
                     ' (read_file {"path": "missing.txt"}); it was told so']  # fmt: skip

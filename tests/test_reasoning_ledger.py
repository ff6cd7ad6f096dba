"""Reasoning in the ledger, the calibration and the saved conversation: what a request sends back
is a row of its own (the provider's count of it where it said one), the turn's reasoning and
cache writes are recorded, and thinking (signatures and encrypted content included) survives a
save and a resume exactly."""

from __future__ import annotations

import json
from pathlib import Path

from mca.ledger import request_chars
from mca.state.checked import ledger_from, message_from
from mca.state.conversations import message_json
from mca.types import Message, Reasoning, Response, ToolCall, Usage
from tests.helpers import FakeModel, lab_session, say

SIGNED = Reasoning("I will list the files first.", "messages/m", signature="EqSig==")
ENCRYPTED = Reasoning("**Listing**", "responses/m", item_id="rs_1", encrypted="gAAAA", tokens=900)


def thinking_call(reasoning: Reasoning, usage: Usage) -> Response:
    call = ToolCall("c1", "list_dir", {})
    return Response(Message("assistant", "", tool_calls=(call,), reasoning=(reasoning,)), usage)


def test_reasoning_sent_back_is_a_row_of_its_own(ws: Path) -> None:
    usage = Usage(5000, 900, cached_tokens=4000, cache_write_tokens=600, reasoning_tokens=800)
    model = FakeModel([thinking_call(ENCRYPTED, usage), say("done", Usage(5100, 20))])
    s = lab_session(ws, model)
    s.run_turn("list the files")
    entry = s.ledger.last
    assert entry is not None and entry.chars == request_chars(model.requests[-1])
    row = next(r for r in entry.rows if r.kind == "reasoning")
    assert row.label == "reasoning sent back (1 piece)" and row.tokens == 900  # as reported
    assert entry.reasoning_tokens == 800 and entry.to_json()["provider_reasoning_tokens"] == 800
    assert ledger_from(entry.to_json()).reasoning_tokens == 800


def test_unreported_reasoning_is_estimated_and_earlier_turns_are_not_counted(ws: Path) -> None:
    model = FakeModel([thinking_call(SIGNED, Usage(10, 5)), say("done"), say("again")])
    s = lab_session(ws, model)
    s.run_turn("list the files")
    first = s.ledger.last
    assert first is not None
    row = next(r for r in first.rows if r.kind == "reasoning")
    assert row.tokens == s.skills.estimator.count(SIGNED.text) and row.chars == len(SIGNED.text)
    s.run_turn("and now?")
    second = s.ledger.last
    assert second is not None and not any(r.kind == "reasoning" for r in second.rows)
    assert second.chars == request_chars(model.requests[-1])


def test_the_cache_writes_of_a_turn_are_recorded(ws: Path) -> None:
    usage = Usage(5000, 20, cached_tokens=3000, cache_write_tokens=1500)
    s = lab_session(ws, FakeModel([say("done", usage)]))
    s.run_turn("hello")
    entry = s.ledger.last
    assert entry is not None and (entry.cached_tokens, entry.cache_write_tokens) == (3000, 1500)
    again = ledger_from(entry.to_json())
    assert (again.cached_tokens, again.cache_write_tokens) == (3000, 1500)


def test_thinking_survives_a_save_and_a_resume_exactly() -> None:
    for r in (
        SIGNED,
        ENCRYPTED,
        Reasoning("", "messages/m", redacted="EqRedacted"),
        Reasoning("x"),
    ):
        m = Message("assistant", "ok", tool_calls=(ToolCall("c", "list_dir", {}),), reasoning=(r,))
        assert message_from(json.loads(json.dumps(message_json(m)))) == m


def test_record_keeps_the_thinking_as_text(tmp_path: Path) -> None:
    """--record writes a reply's thinking (never its signature or encrypted content), and the
    scripted model replays it as thinking."""
    from mca.models.mock import ScriptedModel, script_line
    from mca.types import Request

    line = script_line(Message("assistant", "hi", reasoning=(SIGNED, ENCRYPTED)), None)
    assert json.loads(line)["thinking"] == f"{SIGNED.text}\n\n{ENCRYPTED.text}"
    assert "EqSig" not in line and "gAAAA" not in line
    path = tmp_path / "script.jsonl"
    path.write_text(line + "\n")
    shown: list[str] = []
    reply = ScriptedModel(path).complete(Request("s", (), ()), None, shown.append)
    assert "".join(shown) == json.loads(line)["thinking"] and reply.message.content == "hi"

"""A cancelled turn keeps what it completed (issue 34, item 1). A turn edits notes.txt, then runs
a slow command; it is cancelled during the command. The edit stays on disk, so it stays in the
conversation: the finished call and its result, the running call answered "cancelled" (every
wire requires an answer for every call), and a note that the turn stopped there. "ok, continue"
then sends all of it, to a fake that refuses what the real APIs refuse (tests/strict_rules.py).
/undo takes the files and those messages back together."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mca.cancel import close_cancelled, drop_cancelled
from mca.models import anthropic, openai, responses
from mca.types import KIND_CANCELLED, Message, ToolCall
from tests.fakeserver import FakeServer, Received, Reply
from tests.ptyscreen import MCA, Screen, as_a_terminal, child_env, wait_until
from tests.strict_rules import Issued, chat_refusal, messages_refusal, responses_refusal
from tests.strict_server import StrictServer

EDIT = ("write_file", {"path": "notes.txt", "content": "new\n"})
SLOW = ("run_command", {"command": "echo half-way; touch started; sleep 30"})
KEPT = "turn cancelled; the conversation keeps its 1 completed tool call"


class TwoTurns:
    """The first turn edits, then runs the slow command; any request holding "ok, continue"
    is answered at once. Both go through the strict rules."""

    def __init__(self) -> None:
        self.first = StrictServer(script=(EDIT, SLOW))
        # one provider: what the first issued (reasoning items, signatures) the second verifies
        first = self.first
        self.after = StrictServer(
            script=(), answer="Continuing.", issued=first.issued, signed=first.signed
        )
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Received) -> Reply:
        said = request.body.decode(errors="replace")
        if request.body:
            self.bodies.append(request.json)
        return (self.after if "ok, continue" in said else self.first)(request)

    @property
    def refused(self) -> list[str]:
        return self.first.refused + self.after.refused


@pytest.fixture
def server() -> Iterator[tuple[FakeServer, TwoTurns]]:
    rules = TwoTurns()
    srv = FakeServer(rules)
    srv.start()
    yield srv, rules
    srv.stop()


def wire_env(ws: Path, srv: FakeServer, model: str) -> dict[str, str]:
    anthropic_wire = model.startswith("claude")
    return child_env(
        ws,
        MCA_PROVIDER="anthropic" if anthropic_wire else "openai",
        MCA_BASE_URL=srv.url if anthropic_wire else f"{srv.url}/v1",
        MCA_API_KEY="sk-cancel-test-0123456789abcdef",
        MCA_MODEL=model,
        MCA_RETRY_BASE="0.01",
    )


def steps_sent(body: dict[str, Any]) -> None:
    """The request carries the completed call, its result, the cancelled one and the note."""
    text = json.dumps({k: v for k, v in body.items() if k != "tools"})
    assert "write_file" in text and "notes.txt" in text
    assert "cancelled: the user stopped the turn (Esc or Ctrl-C)" in text
    assert "half-way" in text  # what the command printed before it was stopped
    assert "the user cancelled this turn here" in text
    assert text.index("the user cancelled this turn here") < text.index("ok, continue")


# -- the wire shapes, in-process ---------------------------------------------------------------
def cancelled_conversation() -> list[Message]:
    calls = (ToolCall("c1", *EDIT), ToolCall("c2", *SLOW), ToolCall("c3", "list_dir", {}))
    messages = [
        Message("user", "edit it, then check", turn=1),
        Message("assistant", "", tool_calls=calls[:1]),
        Message("tool", "wrote notes.txt", tool_call_id="c1", tool_name="write_file", turn=1),
        Message("assistant", "", tool_calls=calls[1:]),
    ]
    assert close_cancelled(messages, 0, 1, "Esc or Ctrl-C", "half-way")
    return [*messages, Message("user", "ok, continue", turn=2)]


def test_every_call_is_answered_on_every_wire() -> None:
    messages = cancelled_conversation()
    answers = [m for m in messages if m.role == "tool"]
    assert [m.tool_call_id for m in answers] == ["c1", "c2", "c3"]
    assert answers[1].content.startswith("cancelled") and "half-way" in answers[1].content
    assert answers[2].content.startswith("not run")
    chat = {"model": "gpt-4o", "messages": openai.to_wire_messages("sys", messages)}
    assert chat_refusal(chat) is None
    said = {"model": "gpt-4o", "input": responses.to_wire_input(messages)}
    assert responses_refusal(said, Issued()) is None
    wired = anthropic.to_wire_messages(messages)
    body = {"max_tokens": 100, "messages": wired}
    assert messages_refusal(body, {"anthropic-version": "2023-06-01"}, {}) is None
    # the note and the next sentence follow the tool results in the same user message
    last = wired[-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text", "text"]


def test_the_same_conversation_without_answers_is_refused_everywhere() -> None:
    """The rules the test above passes are real: drop the answers and each wire says no."""
    messages = [m for m in cancelled_conversation() if m.role != "tool" or m.tool_call_id == "c1"]
    chat = {"model": "gpt-4o", "messages": openai.to_wire_messages("sys", messages)}
    assert chat_refusal(chat) is not None
    said = {"model": "gpt-4o", "input": responses.to_wire_input(messages)}
    assert responses_refusal(said, Issued()) is not None
    body = {"max_tokens": 100, "messages": anthropic.to_wire_messages(messages)}
    assert messages_refusal(body, {"anthropic-version": "2023-06-01"}, {}) is not None


def test_nothing_is_kept_when_no_call_began_and_undo_drops_only_a_cancelled_last_turn() -> None:
    asked = [Message("user", "hi", turn=1)]
    assert not close_cancelled(asked, 0, 1, "Esc or Ctrl-C", None) and len(asked) == 1
    messages = cancelled_conversation()[:-1]
    assert messages[-1].kind == KIND_CANCELLED
    assert not drop_cancelled(messages, 2)  # another turn's undo leaves it
    assert drop_cancelled(messages, 1) and messages == []


# -- the installed mca, -p, against the strict fake ------------------------------------------------
WIRES = {
    "chat": "gpt-4o",
    "responses": "gpt-5",  # reasoning items with encrypted content go back, verified
    "anthropic": "claude-sonnet-4-5",
}


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
@pytest.mark.parametrize("wire", WIRES)
def test_ctrl_c_in_p_keeps_the_steps_and_continue_sends_them(
    ws: Path, server: tuple[FakeServer, TwoTurns], wire: str
) -> None:
    srv, rules = server
    (ws / "notes.txt").write_text("old\n")
    env = wire_env(ws, srv, WIRES[wire])
    extra = ["--thinking", "2048"] if wire == "anthropic" else []
    argv = [str(MCA), "-p", "edit notes.txt, then run the slow check", "--yes", *extra]
    proc = subprocess.Popen(
        argv, cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=as_a_terminal,
    )  # fmt: skip
    try:
        wait_until(lambda: (ws / "started").exists(), "the slow command started")
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130 and KEPT in err, err
    assert (ws / "notes.txt").read_text() == "new\n"
    again = subprocess.run(
        [str(MCA), "--continue", "-p", "ok, continue", "--yes", *extra],
        cwd=ws, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert again.returncode == 0 and again.stdout.strip() == "Continuing.", again.stderr
    assert "mca: its last turn was cancelled part way: what it completed is kept" in again.stderr
    steps_sent(rules.bodies[-1])
    assert rules.refused == []


# -- the REPL in a terminal: Esc ------------------------------------------------------------------
def repl_cancelled(ws: Path, srv: FakeServer) -> Screen:
    (ws / "notes.txt").write_text("old\n")
    term = Screen(ws, ["--yes"], wire_env(ws, srv, "gpt-4o"))
    term.expect("mca>")
    term.on_screen("skills: 0 loaded")
    term.child.sendline("edit notes.txt, then run the slow check")
    term.on_screen("│ half-way")
    term.child.send("\x1b")  # Esc
    term.on_screen("turn cancelled")
    return term


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_esc_keeps_the_steps_export_shows_them_and_ok_continue_sends_them(
    ws: Path, server: tuple[FakeServer, TwoTurns]
) -> None:
    srv, rules = server
    term = repl_cancelled(ws, srv)
    term.on_screen(KEPT)
    assert (ws / "notes.txt").read_text() == "new\n"
    term.child.sendline("/export")
    # not "nothing to export: the conversation is empty" (a long path goes on the next line)
    term.wait_for(lambda s: "wrote" in s.split("mca> /export")[-1], "the export written")
    exported = next((ws.parent / "home" / "exports").glob("*.md")).read_text()
    assert "write_file" in exported and "cancelled this turn here" in exported
    term.child.sendline("ok, continue")
    term.on_screen("Continuing.")
    steps_sent(rules.bodies[-1])
    assert rules.refused == []
    term.close()


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_undo_after_esc_takes_the_files_and_the_steps_back(
    ws: Path, server: tuple[FakeServer, TwoTurns]
) -> None:
    srv, rules = server
    term = repl_cancelled(ws, srv)
    term.child.sendline("/undo")
    term.on_screen("completed steps are taken out too")
    assert (ws / "notes.txt").read_text() == "old\n" and not (ws / "started").exists()
    term.child.sendline("ok, continue")
    term.on_screen("Continuing.")
    talk = [m for m in rules.bodies[-1]["messages"] if m["role"] != "system"]
    sent = json.dumps(talk)  # (the tool list and the system prompt name write_file)
    assert "write_file" not in sent and "cancelled this turn" not in sent
    assert rules.refused == []
    term.close()


if not hasattr(os, "fork"):  # pragma: no cover
    pytest.skip("POSIX only", allow_module_level=True)


def test_a_cancel_with_no_completed_call_says_what_it_kept() -> None:
    from mca.cancel import said

    assert "0 completed" not in said(True, 0)
    assert "the call that was running, marked cancelled" in said(True, 0)
    assert "its 2 completed tool calls" in said(True, 2)


def test_a_conversation_picked_up_says_how_its_last_turn_ended() -> None:
    from mca.cancel import ended_early, failed_note, note
    from mca.types import KIND_CANCELLED

    turn = [Message("user", "go"), Message("assistant", "done")]
    assert ended_early(turn) == ""
    cancelled = [*turn, Message("user", note("Esc"), kind=KIND_CANCELLED)]
    assert ended_early(cancelled).startswith("its last turn was cancelled part way")
    failed = [*turn, Message("user", failed_note("HTTP 500"), kind=KIND_CANCELLED)]
    assert ended_early(failed).startswith("its last turn was ended by an error part way")

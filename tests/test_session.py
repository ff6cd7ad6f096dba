"""The session's narrow API for the faces: the mode in one place, undo logged, shell messages."""

from __future__ import annotations

from pathlib import Path

from mca.assemble import open_session
from mca.config import load_settings
from mca.session import HeadlessUI, Session
from mca.types import KIND_SHELL
from tests.helpers import FakeModel, Reply, call, say


def _session(ws: Path, *replies: Reply) -> Session:
    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "h")}, workspace=ws)
    return open_session(settings, HeadlessUI(), model=FakeModel(replies), log_to_disk=False)


def test_the_mode_the_session_sets_is_the_one_tools_see(ws: Path) -> None:
    write = call("write_file", path="a.txt", content="x")
    s = _session(ws, write, say("ok"), write, say("ok"))
    s.set_mode("read-only")
    result = s.run_turn("write it")
    assert s.mode == "read-only" and not result.tools[0].ok and not (ws / "a.txt").exists()
    s.set_mode("auto-edit")
    s.run_turn("write it")
    assert (ws / "a.txt").read_text() == "x"
    assert s.undoable() and s.changes()[0][0] == "a.txt"
    report = s.undo()
    assert report.removed == ["a.txt"] and not (ws / "a.txt").exists()
    assert next(e for e in s.log.events if e["event"] == "undo")["removed"] == ["a.txt"]
    s.close()


def test_a_shell_message_joins_the_next_turn(ws: Path) -> None:
    s = _session(ws, say("seen"))
    s.add_shell_message("I ran ls")
    assert s.messages[-1].kind == KIND_SHELL and s.messages[-1].turn == 1
    s.run_turn("and?")
    assert s.turns == 1 and s.last_turn is not None and s.last_turn.answer == "seen"
    s.clear()
    assert list(s.messages) == []
    s.close()

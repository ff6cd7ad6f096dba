"""The session's narrow API for the faces: the mode in one place, undo logged, shell messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from mca.assembly.assemble import open_session
from mca.config.settings import load_settings
from mca.errors import UndoError
from mca.session.faces import HeadlessUI
from mca.session.session import Session
from mca.types import KIND_SHELL, KIND_UNDONE
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


def test_undo_of_a_finished_turn_tells_the_model_its_files_went_back(ws: Path) -> None:
    """The conversation never disagrees with the disk: after /undo of a turn whose messages
    stay, the next request carries a note naming the files that are as before it (main: the
    model was still told it had written them)."""
    (ws / "b.txt").write_text("old\n")
    model = FakeModel(
        [
            call("write_file", path="a.txt", content="x"),
            call("write_file", path="b.txt", content="new\n"),
            say("wrote a.txt and b.txt"),
            say("ok"),
        ]
    )
    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "h")}, workspace=ws)
    s = open_session(settings, HeadlessUI(), model=model, log_to_disk=False)
    s.run_turn("write them")
    report = s.undo()
    assert not (ws / "a.txt").exists() and (ws / "b.txt").read_text() == "old\n"
    assert any("a note tells the model" in n for n in report.notes), report.notes
    s.run_turn("what is in b.txt now?")
    sent = [m for m in model.requests[-1].messages if m.kind == KIND_UNDONE]
    assert len(sent) == 1 and "a.txt" in sent[0].content and "b.txt" in sent[0].content
    assert sent[0].role == "user" and "/undo" in sent[0].content
    with pytest.raises(UndoError):  # nothing left to take back: said, and no second note
        s.undo()
    assert [m.kind for m in s.messages].count(KIND_UNDONE) == 1
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


def _skill(ws: Path, description: str) -> None:
    d = ws / ".agents" / "skills" / "deploy"
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: deploy\ndescription: {description}\n---\nBody.\n")


def _notices(s: Session) -> list[str]:
    return [e["message"] for e in s.log.events if e["event"] == "notice"]


def test_a_skill_edited_between_turns_rebuilds_the_catalog(ws: Path) -> None:
    _skill(ws, "Use when deploying.")
    s = _session(ws, say("ok"), say("ok"))
    _skill(ws, "Use when shipping a release to production.")  # edited before the first turn
    s.run_turn("hi")
    assert any("skills changed on disk: edited deploy" in n for n in _notices(s))
    assert "shipping a release" in s.engine.prompt.text
    s.close()


def test_one_shot_takes_the_skills_its_walk_just_found(ws: Path) -> None:
    _skill(ws, "Use when deploying.")
    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "h")}, workspace=ws)
    model = FakeModel([say("ok"), say("ok")])
    s = open_session(settings, HeadlessUI(), model=model, log_to_disk=False, one_shot=True)
    _skill(ws, "Use when shipping a release to production.")
    s.run_turn("hi")  # its one turn: discovery a moment ago is current, no second stat pass
    assert not any("changed on disk" in n for n in _notices(s))
    s.run_turn("again")  # a later turn looks again
    assert any("skills changed on disk: edited deploy" in n for n in _notices(s))
    s.close()

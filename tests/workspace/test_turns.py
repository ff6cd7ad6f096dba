"""/undo and /rewind through a real session: commands' changes come back byte for byte and
mode for mode, the conversation follows /rewind, and a rewind is undone like a turn."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mca.errors import UndoError
from mca.workspace.store import store_dir
from tests.helpers import call, say
from tests.workspace.world import command_turn, session, state

EDIT = "sed -i 's/world/mca/' a.txt && rm old.txt && python3 gen.py"
GEN = (
    "import os\nos.makedirs('out', exist_ok=True)\n"
    "open('out/gen.py', 'w').write('X = 1\\n')\nos.chmod('out/gen.py', 0o755)\n"
    "os.chmod('a.txt', 0o600)\n"
)


def _workspace(ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    (ws / "a.txt").chmod(0o640)
    (ws / "old.txt").write_bytes(b"old\x00bytes\n")
    (ws / "gen.py").write_text(GEN)


def test_undo_reverts_what_a_command_changed(ws: Path) -> None:
    _workspace(ws)
    before = state(ws)
    s = session(ws, *command_turn(EDIT))
    s.run_turn("change things")
    assert (ws / "a.txt").read_text() == "hello mca\n" and (ws / "out" / "gen.py").exists()
    report = s.undo()
    assert state(ws) == before
    assert sorted(report.restored) == ["a.txt", "old.txt"]
    assert sorted(report.removed) == ["out/", "out/gen.py"]
    assert any("not covered" in n for n in report.notes)
    with pytest.raises(UndoError, match="nothing to undo"):
        s.undo()
    s.close()


def test_the_store_is_outside_the_workspace_and_a_reading_turn_records_nothing(
    ws: Path,
) -> None:
    _workspace(ws)
    before = state(ws)
    s = session(ws, *command_turn("cat a.txt"), call("read_file", path="a.txt"), say("ok"))
    s.run_turn("look")
    s.run_turn("read")
    assert state(ws) == before and s.undoable() == []
    assert (store_dir(ws.parent / "home", ws) / "checkpoints" / "objects").is_dir()
    s.close()


def test_undo_leaves_what_changed_since_unless_forced(ws: Path) -> None:
    _workspace(ws)
    s = session(ws, *command_turn(EDIT))
    s.run_turn("change things")
    (ws / "a.txt").write_text("edited by hand\n")
    report = s.undo()
    assert report.skipped == ["a.txt"] and (ws / "a.txt").read_text() == "edited by hand\n"
    assert (ws / "old.txt").exists() and not (ws / "out").exists()  # the rest went back
    forced = s.undo(force=True)
    assert forced.restored == ["a.txt"] and (ws / "a.txt").read_text() == "hello world\n"
    s.close()


def test_a_file_tool_write_and_a_command_in_one_turn(ws: Path) -> None:
    _workspace(ws)
    before = state(ws)
    replies = [
        call("write_file", path="a.txt", content="by the tool\n"),
        call("run_command", command="echo 'by the command' >> a.txt && chmod 755 a.txt"),
        say("done"),
    ]
    s = session(ws, *replies)
    s.run_turn("both")
    s.undo()
    assert state(ws) == before
    with pytest.raises(UndoError):
        s.undo()  # the turn's snapshot manifest was undone with it
    s.close()


def test_rewind_takes_files_and_conversation_back_and_is_undoable(ws: Path) -> None:
    _workspace(ws)
    original = state(ws)
    write = [call("write_file", path="notes.md", content="# notes\n"), say("noted")]
    s = session(ws, *command_turn(EDIT), *write, *command_turn("echo three > three.txt"))
    s.run_turn("change things")
    after_one = state(ws)
    s.run_turn("make notes")
    s.run_turn("three")
    after_three, talk = state(ws), list(s.messages)
    assert [n for n, _ in s.turns_listed()] == [1, 2, 3]
    done = s.rewind(2)
    assert state(ws) == after_one and [n for n, _ in s.turns_listed()] == [1]
    assert done.found and sorted(done.report.removed) == ["notes.md", "three.txt"]
    s.undo()  # the rewind, conversation and all
    assert state(ws) == after_three and list(s.messages) == talk
    s.rewind(1)
    assert state(ws) == original and list(s.messages) == []
    s.close()


def test_rewind_without_changes_since_only_cuts_the_conversation(ws: Path) -> None:
    s = session(ws, say("one"), say("two"))
    s.run_turn("first")
    s.run_turn("second")
    done = s.rewind(2)
    assert not done.found and [n for n, _ in s.turns_listed()] == [1]
    s.close()


def test_a_damaged_blob_is_reported_not_written(ws: Path) -> None:
    _workspace(ws)
    s = session(ws, *command_turn("echo new > a.txt"))
    s.run_turn("change")
    packs = store_dir(ws.parent / "home", ws) / "checkpoints" / "packs"
    for pack in packs.glob("*.pack"):  # small blobs live in packs: same length, other bytes
        pack.write_bytes(pack.read_bytes().replace(b"hello world\n", b"HELLO WORLD\n"))
    report = s.undo()
    assert (ws / "a.txt").read_text() == "new\n" and "damaged" in " ".join(report.problems)
    s.close()


def test_a_later_session_undoes_an_earlier_ones_command(ws: Path) -> None:
    _workspace(ws)
    before = state(ws)
    first = session(ws, *command_turn(EDIT))
    first.run_turn("change things")
    first.close()
    later = session(ws)
    later.undo()
    assert state(ws) == before
    later.close()


def test_checkpoints_off(ws: Path) -> None:
    _workspace(ws)
    s = session(ws, *command_turn(EDIT), MCA_CHECKPOINT_CAP="0")
    s.run_turn("change things")
    with pytest.raises(UndoError, match="nothing to undo"):
        s.undo()
    s.close()
    assert not os.path.exists(store_dir(ws.parent / "home", ws) / "checkpoints" / "records")

"""Snapshot before write, and undo: create, modify, walk back, external change, crash, prune."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mca.errors import UndoError
from mca.tools import get_tool
from mca.tools.base import ToolEnv, TurnState
from mca.workspace.report import UndoReport
from mca.workspace.store import WorkspaceStore
from mca.workspace.walk import OFF


def write(env: ToolEnv, path: str, content: str, turn: int = 1) -> None:
    get_tool("write_file").run(env, TurnState(turn), {"path": path, "content": content})


def undo(store: WorkspaceStore, force: bool = False) -> UndoReport:
    return store.undo(force)[0]


def another(env: ToolEnv, session: str, started: str) -> WorkspaceStore:
    """A later session's store of the same workspace."""
    return WorkspaceStore(env.root, env.workspace.base, session, started, OFF)


def test_undo_restores_modified_and_removes_created(env: ToolEnv, ws: Path) -> None:
    (ws / "old.txt").write_text("original")
    (ws / "old.txt").chmod(0o640)
    write(env, "old.txt", "changed")
    write(env, "new.txt", "brand new")
    write(env, "old.txt", "changed twice")  # second write in the turn keeps the first snapshot
    report = undo(env.workspace)
    assert report.restored == ["old.txt"] and report.removed == ["new.txt"]
    assert (ws / "old.txt").read_text() == "original"
    assert (ws / "old.txt").stat().st_mode & 0o777 == 0o640
    assert not (ws / "new.txt").exists()
    with pytest.raises(UndoError, match="nothing to undo"):
        undo(env.workspace)


def test_repeated_undo_walks_back(env: ToolEnv, ws: Path) -> None:
    for turn, text in enumerate(("v1", "v2", "v3"), 1):
        write(env, "f.txt", text, turn)
    undo(env.workspace)
    assert (ws / "f.txt").read_text() == "v2"
    undo(env.workspace)
    assert (ws / "f.txt").read_text() == "v1"
    undo(env.workspace)
    assert not (ws / "f.txt").exists()


def test_undo_leaves_externally_changed_files_unless_forced(env: ToolEnv, ws: Path) -> None:
    (ws / "f.txt").write_text("mine")
    write(env, "f.txt", "agent")
    (ws / "f.txt").write_text("edited by hand")
    report = undo(env.workspace)
    assert report.skipped == ["f.txt"] and not report.complete
    assert (ws / "f.txt").read_text() == "edited by hand"
    report = undo(env.workspace, force=True)
    assert report.restored == ["f.txt"]
    assert (ws / "f.txt").read_text() == "mine"


def test_content_is_stored_once(env: ToolEnv, ws: Path) -> None:
    for name in ("a.txt", "b.txt"):
        (ws / name).write_text("same bytes")
        write(env, name, "x")
    assert len(list((env.workspace.base / "objects").iterdir())) == 1
    assert not (ws / ".mca").exists()  # nothing of mca's state is kept in the workspace


def test_crash_between_snapshot_and_write(env: ToolEnv, ws: Path) -> None:
    """The snapshot is on disk before the target changes; a crash there loses nothing."""
    target = ws / "f.txt"
    target.write_text("old")
    env.workspace.before_write(1, "f.txt", target, b"new", note="turn 1")
    # ... the process dies here: the target still holds its old bytes.
    later = another(env, "second", "20260102T000000")
    report = undo(later)
    assert report.unchanged == ["f.txt"] and target.read_text() == "old"


def test_undo_in_a_new_session(env: ToolEnv, ws: Path) -> None:
    (ws / "f.txt").write_text("before")
    write(env, "f.txt", "after")
    later = another(env, "second", "20260102T000000")
    assert undo(later).restored == ["f.txt"]
    assert (ws / "f.txt").read_text() == "before"


def test_prune_keeps_the_newest_sessions(ws: Path) -> None:
    for i in range(25):
        store = WorkspaceStore(
            ws, ws.parent / "store", f"s{i:02d}", f"202601{i + 1:02d}T000000", OFF
        )
        target = ws / "f.txt"
        target.write_text(f"content {i}")
        store.before_write(1, "f.txt", target, b"next", note="")
    store.prune(keep_sessions=20)
    records, _ = store.journal.read()
    assert len(records) == 20
    assert len(list((ws.parent / "store/objects").iterdir())) == 20


# -- damage and surprises: each ends in a report, and the next /undo goes on ------------------
def test_a_directory_where_a_file_was(env: ToolEnv, ws: Path) -> None:
    write(env, "a.txt", "new")
    (ws / "a.txt").unlink()
    (ws / "a.txt").mkdir()
    report = undo(env.workspace, force=True)
    assert report.problems and "directory" in report.problems[0]
    assert (ws / "a.txt").is_dir()
    with pytest.raises(UndoError, match="nothing to undo"):
        undo(env.workspace)


def test_an_unreadable_file_is_reported(env: ToolEnv, ws: Path) -> None:
    (ws / "a.txt").write_text("old")
    write(env, "a.txt", "new")
    os.chmod(ws / "a.txt", 0)
    if os.access(ws / "a.txt", os.R_OK):  # root reads anything: make it unreadable otherwise
        (ws / "a.txt").unlink()
        os.mkfifo(ws / "a.txt")
    report = undo(env.workspace, force=True)
    assert report.problems, report


@pytest.mark.parametrize("bad", ["{}", "[]", "not json", '{"session": "x", "turn": 1}', ""])
def test_bad_manifests_are_skipped_and_reported(env: ToolEnv, ws: Path, bad: str) -> None:
    (ws / "a.txt").write_text("old")
    write(env, "a.txt", "new")
    turns = env.workspace.base / "turns"
    (turns / "99999999T999999-bad-0001.json").write_text(bad)
    report = undo(env.workspace)
    assert report.restored == ["a.txt"] and report.problems
    later = another(env, "later", "20990101T000000")
    assert later.start() == []  # start-up is not blocked by them
    later.close()


def test_kill_between_two_writes_of_one_file(env: ToolEnv, ws: Path) -> None:
    """The second write's manifest is saved, then mca dies before the file changes again: the
    file holds the first write's bytes, which are still mca's own, and undo restores it."""
    (ws / "a.txt").write_text("original")
    write(env, "a.txt", "first")
    env.workspace.before_write(1, "a.txt", ws / "a.txt", b"second", note="")
    (ws / ".a.txt.mca-tmp-999999-abcd1234").write_text("torn")  # left by the killed write
    report = undo(another(env, "next", "20990101T000000"))
    assert report.restored == ["a.txt"] and not report.skipped
    assert (ws / "a.txt").read_text() == "original"
    assert not (ws / ".a.txt.mca-tmp-999999-abcd1234").exists()

"""Snapshot before write, and undo: create, modify, walk back, external change, crash, prune."""

from __future__ import annotations

from pathlib import Path

import pytest

from mca.errors import UndoError
from mca.tools import get_tool
from mca.tools.base import ToolContext
from mca.tools.snapshots import SnapshotStore


def write(ctx: ToolContext, path: str, content: str) -> None:
    get_tool("write_file").run(ctx, {"path": path, "content": content})


def test_undo_restores_modified_and_removes_created(ctx: ToolContext, ws: Path) -> None:
    (ws / "old.txt").write_text("original")
    (ws / "old.txt").chmod(0o640)
    write(ctx, "old.txt", "changed")
    write(ctx, "new.txt", "brand new")
    write(ctx, "old.txt", "changed twice")  # second write in the turn keeps the first snapshot
    report = ctx.snapshots.undo()
    assert report.restored == ["old.txt"] and report.removed == ["new.txt"]
    assert (ws / "old.txt").read_text() == "original"
    assert (ws / "old.txt").stat().st_mode & 0o777 == 0o640
    assert not (ws / "new.txt").exists()
    with pytest.raises(UndoError, match="nothing to undo"):
        ctx.snapshots.undo()


def test_repeated_undo_walks_back(ctx: ToolContext, ws: Path) -> None:
    for turn, text in enumerate(("v1", "v2", "v3"), 1):
        ctx.turn = turn
        write(ctx, "f.txt", text)
    ctx.snapshots.undo()
    assert (ws / "f.txt").read_text() == "v2"
    ctx.snapshots.undo()
    assert (ws / "f.txt").read_text() == "v1"
    ctx.snapshots.undo()
    assert not (ws / "f.txt").exists()


def test_undo_leaves_externally_changed_files_unless_forced(ctx: ToolContext, ws: Path) -> None:
    (ws / "f.txt").write_text("mine")
    write(ctx, "f.txt", "agent")
    (ws / "f.txt").write_text("edited by hand")
    report = ctx.snapshots.undo()
    assert report.skipped == ["f.txt"] and not report.complete
    assert (ws / "f.txt").read_text() == "edited by hand"
    report = ctx.snapshots.undo(force=True)
    assert report.restored == ["f.txt"]
    assert (ws / "f.txt").read_text() == "mine"


def test_content_is_stored_once(ctx: ToolContext, ws: Path) -> None:
    for name in ("a.txt", "b.txt"):
        (ws / name).write_text("same bytes")
        write(ctx, name, "x")
    assert len(list((ctx.snapshots.base / "objects").iterdir())) == 1
    assert not (ws / ".mca").exists()  # nothing of mca's state is kept in the workspace


def test_crash_between_snapshot_and_write(ctx: ToolContext, ws: Path) -> None:
    """The snapshot is on disk before the target changes; a crash there loses nothing."""
    target = ws / "f.txt"
    target.write_text("old")
    ctx.snapshots.before_write(1, "f.txt", target, b"new", note="turn 1")
    # ... the process dies here: the target still holds its old bytes.
    later = SnapshotStore(ws, ctx.snapshots.base, "second", "20260102T000000")
    report = later.undo()
    assert report.unchanged == ["f.txt"] and target.read_text() == "old"


def test_undo_in_a_new_session(ctx: ToolContext, ws: Path) -> None:
    (ws / "f.txt").write_text("before")
    write(ctx, "f.txt", "after")
    later = SnapshotStore(ws, ctx.snapshots.base, "second", "20260102T000000")
    assert later.undo().restored == ["f.txt"]
    assert (ws / "f.txt").read_text() == "before"


def test_prune_keeps_the_newest_sessions(ws: Path) -> None:
    for i in range(25):
        store = SnapshotStore(ws, ws.parent / "store", f"s{i:02d}", f"202601{i + 1:02d}T000000")
        target = ws / "f.txt"
        target.write_text(f"content {i}")
        store.before_write(1, "f.txt", target, b"next", note="")
    store.prune(keep_sessions=20)
    assert len(store.manifests()) == 20
    assert len(list((ws.parent / "store/objects").iterdir())) == 20

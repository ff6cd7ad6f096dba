"""Hostile workspaces, built at test time: links to outside, a FIFO, a file over the cap, a
.gitignore with odd patterns, a file that becomes a directory, a directory that becomes a link
out. Oracle: nothing outside the workspace changes, whatever /undo and /rewind do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.workspace.world import command_turn, session, state

CAP = "4096"
TURN = " && ".join(
    [
        "rm f && mkdir f && echo inner > f/inner",  # a file becomes a directory
        "echo more >> huge.bin",  # over the cap: not covered
        "echo changed > kept.log && echo changed > skip.log",  # one ignored, one not
        "rm -rf sub && ln -s ../outside sub",  # a directory becomes a link out
        "rm link-out && echo real > link-out",  # a link out becomes a file
        "chmod 700 script.sh && rm weird.txt",
    ]
)


def _hostile(ws: Path) -> Path:
    outside = ws.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret\n")
    (outside / "inner").write_text("outside inner\n")
    (ws / "f").write_text("a file\n")
    (ws / "f").chmod(0o604)
    (ws / "huge.bin").write_bytes(b"h" * 10_000)
    (ws / ".gitignore").write_text("*.log\n!kept.log\n[broken\n\\#x\n**/nothing/**\n/ \n")
    (ws / "kept.log").write_text("kept\n")
    (ws / "skip.log").write_text("skipped\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "inner").write_text("sub inner\n")
    (ws / "link-out").symlink_to(outside / "secret.txt")
    (ws / "dir-out").symlink_to(outside)
    (ws / "script.sh").write_text("#!/bin/sh\n")
    (ws / "script.sh").chmod(0o644)
    (ws / "weird.txt").write_bytes(bytes(range(256)))
    os.mkfifo(ws / "pipe")
    return outside


def _without(
    s: dict[str, tuple[str, int, bytes]], *paths: str
) -> dict[str, tuple[str, int, bytes]]:
    return {p: v for p, v in s.items() if p not in paths}


@pytest.mark.parametrize("how", ["undo", "rewind"])
def test_hostile_workspace_comes_back_and_nothing_outside_changes(ws: Path, how: str) -> None:
    outside = _hostile(ws)
    before, outside_before = state(ws), state(outside)
    s = session(ws, *command_turn(TURN), MCA_CHECKPOINT_FILE_CAP=CAP)
    s.run_turn("be hostile")
    assert (ws / "sub").is_symlink() and (ws / "f").is_dir()
    if how == "undo":
        report = s.undo()
        text = "\n".join(report.notes + report.problems)
    else:
        done = s.rewind(1)
        text = "\n".join(done.report.notes + done.report.problems)
        print("DBG", done.report)
    assert state(outside) == outside_before
    # every covered path is back, byte for byte and mode for mode; the ignored log and the
    # file over the cap keep what the command did, and the output says so
    assert _without(state(ws), "huge.bin", "skip.log") == _without(before, "huge.bin", "skip.log")
    assert (ws / "skip.log").read_text() == "changed\n"
    assert (ws / "huge.bin").stat().st_size == 10_005
    assert "huge.bin" in text and "gitignore" in text and "pipe" in text


def test_forced_undo_through_a_directory_swapped_for_a_link_out(ws: Path) -> None:
    outside = _hostile(ws)
    s = session(ws, *command_turn("echo new > sub/inner && echo made > sub/new.txt"))
    s.run_turn("change sub")
    outside_before = state(outside)
    os.rename(ws / "sub", ws.parent / "moved-sub")  # after the turn: sub now leads outside
    (ws / "sub").symlink_to(outside)
    report = s.undo(force=True)
    assert state(outside) == outside_before  # refused: its parent leads out of the workspace
    assert (ws / "sub").is_symlink() and "refused" in report.problems[0]


def test_rewind_never_follows_a_link_it_puts_back(ws: Path) -> None:
    outside = _hostile(ws)
    s = session(ws, *command_turn("rm dir-out && mkdir dir-out && echo x > dir-out/secret.txt"))
    s.run_turn("replace the link")
    outside_before = state(outside)
    s.rewind(1)
    assert os.readlink(ws / "dir-out") == str(outside) and state(outside) == outside_before

"""Writes mca makes for the person (/export) and the protected paths reached by another name:
the same contained path as the tools' writes, one rule for both."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from mca.errors import McaError
from mca.session.exports import write_export
from mca.text.diff import FileDiff
from mca.tools import get_tool
from mca.tools.allow import Answer, CommandQuestion
from mca.tools.base import Approvals, ToolEnv, TurnState
from mca.ui.diff_view import draw_diff
from mca.workspace.protect import protected_reason


class Asked:
    """An asker that records the protected writes it was asked about and says `answer`."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.writes: list[tuple[str, str]] = []  # the path and the diff as the person saw it

    def approve(self, question: CommandQuestion) -> Answer:
        raise AssertionError("no command here")

    def approve_write(self, path: str, reason: str, diff: FileDiff) -> bool:
        self.writes.append((path, draw_diff(diff)))
        return self.answer

    def approve_edit(self, path: str, diff: FileDiff) -> bool:
        raise AssertionError("the person's own write is not asked about in ask mode")


def asking(env: ToolEnv, answer: bool = False, mode: str = "ask") -> tuple[ToolEnv, Asked]:
    asker = Asked(answer)
    home = env.root.parent / "home"
    return replace(env, approvals=Approvals(asker, mode), home=home), asker


def test_the_default_export_goes_to_mca_home(env: ToolEnv, ws: Path) -> None:
    env, _ = asking(env)
    where = write_export(env, 1, "", "mca-x.md", b"# hi\n")
    assert where == str(ws.parent / "home" / "exports" / "mca-x.md")
    assert (Path(where).stat().st_mode & 0o777, list(ws.iterdir())) == (0o600, [])


def test_an_export_in_the_workspace_is_contained_and_undone_alone(env: ToolEnv, ws: Path) -> None:
    env, _ = asking(env, mode="auto-edit")
    get_tool("write_file").run(env, TurnState(1), {"path": "a.txt", "content": "turn 1\n"})
    env.approvals.mode = "ask"  # the person's own write is not asked about: they asked for it
    assert "(/undo reverts it)" in write_export(env, 1, "a.txt", "", b"exported\n")
    assert env.workspace.undo()[0].restored == ["a.txt"]  # the export, alone
    assert (ws / "a.txt").read_text() == "turn 1\n"
    assert env.workspace.undo()[0].removed == ["a.txt"]  # then turn 1's write
    os.symlink(ws.parent, ws / "out")
    with pytest.raises(McaError, match="outside the workspace"):
        write_export(env, 1, "out/conv.md", "", b"x")
    with pytest.raises(McaError, match="outside the workspace"):
        write_export(env, 1, f"{ws}/out/conv.md", "", b"x")
    assert not (ws.parent / "conv.md").exists()


def test_an_export_to_a_protected_path_asks_and_read_only_writes_nothing(
    env: ToolEnv, ws: Path
) -> None:
    env, asker = asking(env, answer=False)
    with pytest.raises(McaError, match="protected path"):
        write_export(env, 1, ".git/config", "", b"[core]\n")
    assert asker.writes and "+[core]" in asker.writes[0][1] and not (ws / ".git").exists()
    read_only, _ = asking(env, mode="read-only")
    with pytest.raises(McaError, match="read-only"):
        write_export(read_only, 1, "", "mca-x.md", b"x")


def test_protected_by_real_path(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "conf").mkdir(parents=True)
    os.symlink("conf", ws / ".mca")
    skills = ws / "tools" / "skills"
    real = (ws / "conf" / "x").resolve()
    assert protected_reason("conf/x", real, None, ws) is not None
    assert protected_reason("conf/x", real, None) is None  # by name alone it was not
    inside = (skills / "s" / "SKILL.md").resolve()
    assert "skills" in str(protected_reason("tools/skills/s/SKILL.md", inside, None, ws, [skills]))
    assert protected_reason("src/a.py", (ws / "src/a.py").resolve(), None, ws, [skills]) is None

"""Project instructions: AGENTS.md from the git root down to the workspace, CLAUDE.md where a
directory has no AGENTS.md, one cap for all of them, and a .git someone else planted above the
workspace ignored."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mca.context.prompt import MAX_AGENTS_CHARS, project_doc_dirs, read_agents_md


def repo(tmp_path: Path) -> tuple[Path, Path]:
    top = tmp_path / "repo"
    ws = top / "pkg" / "app"
    ws.mkdir(parents=True)
    (top / ".git").mkdir()
    return top, ws


def test_from_the_git_root_down_nearest_last(tmp_path: Path) -> None:
    top, ws = repo(tmp_path)
    (top / "AGENTS.md").write_text("root rule\n")
    (top / "pkg" / "CLAUDE.md").write_text("pkg rule from CLAUDE.md\n")
    (ws / "AGENTS.md").write_text("app rule\n")
    (ws / "CLAUDE.md").write_text("never read: AGENTS.md is here\n")
    text, problem = read_agents_md(ws)
    assert problem == ""
    order = [text.index(s) for s in ("root rule", "pkg rule", "app rule")]
    assert order == sorted(order) and "never read" not in text
    assert '<agents_md path="pkg/CLAUDE.md">' in text
    assert project_doc_dirs(ws) == (top, [top, top / "pkg", ws])


def test_without_git_only_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "plain" / "ws"
    ws.mkdir(parents=True)
    (tmp_path / "plain" / "AGENTS.md").write_text("above, not a repository\n")
    (ws / "CLAUDE.md").write_text("claude fallback\n")
    text, _ = read_agents_md(ws)
    assert "claude fallback" in text and "above" not in text


def test_one_cap_for_all_files(tmp_path: Path) -> None:
    top, ws = repo(tmp_path)
    (top / "AGENTS.md").write_text("x" * (MAX_AGENTS_CHARS + 10))
    (ws / "AGENTS.md").write_text("nearest\n")
    text, _ = read_agents_md(ws)
    assert "cut: project instructions are capped" in text and "nearest" not in text
    assert len(text) < MAX_AGENTS_CHARS + 500


def test_a_doc_that_leads_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    top, ws = repo(tmp_path)
    (tmp_path / "secret.txt").write_text("outside the repository\n")
    (top / "AGENTS.md").symlink_to(tmp_path / "secret.txt")
    (ws / "AGENTS.md").write_text("app rule\n")
    text, problem = read_agents_md(ws)
    assert "outside the repository" not in text and "app rule" in text
    assert problem.startswith("AGENTS.md not used")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to plant a .git owned by another user")
def test_a_git_dir_of_another_user_above_the_workspace_is_ignored(tmp_path: Path) -> None:
    top, ws = repo(tmp_path)
    os.chown(top / ".git", 65534, 65534)
    (top / "AGENTS.md").write_text("planted instructions\n")
    (ws / "AGENTS.md").write_text("app rule\n")
    text, _ = read_agents_md(ws)
    assert "planted" not in text and "app rule" in text


def test_a_link_is_followed_only_inside_its_own_directory(tmp_path: Path) -> None:
    top, ws = repo(tmp_path)
    (top / "deploy.env").write_text("DB_PASSWORD=x\n")
    (ws / "AGENTS.md").symlink_to("../../deploy.env")  # inside the repository, not its dir
    (ws / "docs").mkdir()
    (ws / "docs" / "rules.md").write_text("rules\n")
    (top / "AGENTS.md").symlink_to("pkg/app/docs/rules.md")  # stays inside repo/
    text, problem = read_agents_md(ws)
    assert "DB_PASSWORD" not in text and "rules" in text
    assert "pkg/app/AGENTS.md not used: it leads to" in problem


def test_home_is_never_the_root_of_a_project_below_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = home / "Downloads" / "tarball"
    ws.mkdir(parents=True)
    (home / ".git").mkdir()  # dotfiles
    (home / "Downloads" / "AGENTS.md").write_text("a downloaded file\n")
    text, _ = read_agents_md(ws, home)
    assert "downloaded" not in text
    assert project_doc_dirs(ws, home) == (ws, [ws])
    assert project_doc_dirs(home, home) == (home, [home])  # the workspace itself may be home


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a directory another user's")
def test_a_directory_above_that_is_not_yours_ends_the_walk(tmp_path: Path) -> None:
    top, ws = repo(tmp_path)
    (top / "AGENTS.md").write_text("planted instructions\n")
    os.chown(top / "pkg", 65534, 65534)
    try:
        assert project_doc_dirs(ws) == (ws, [ws])
        assert "planted" not in read_agents_md(ws)[0]
    finally:
        os.chown(top / "pkg", 0, 0)

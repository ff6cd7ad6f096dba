"""The repositories inside a workspace (repos.py), what in them makes git run a program
(gitconfig.py, read as git reads it), and the guard's clean-up, which never follows a link a
command made (guard.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mca.workspace import guard
from mca.workspace.gitconfig import dangers, parse, runs_program
from mca.workspace.repos import Finder

GIT = shutil.which("git")

CONFIGS = [
    "[core]\n\tfsmonitor = payload\n",
    '[core] fsmonitor = "a b" ; comment\n',
    "[CORE]\n  FsMonitor=x\\\n y\n",
    '[filter "lfs x"]\n\tclean = git-lfs clean -- %f\n\tprocess\n',
    '[filter.Lfs]\nsmudge = "q\\"x"\n',
    "\ufeff[alias]\n\tx = !sh -c 'touch p'\n",
    '[a "b\\\\c\\"d"]\n k = v # comment\n[x]k=1\r\ny = "  sp " \n',
    '[include]\npath = ../x\n[includeIf "gitdir:/x/"]\n path = y\n',
    '[core]\n\tpager = "less\\tx"\n',
]


@pytest.mark.skipif(GIT is None, reason="no git here")
@pytest.mark.parametrize("text", CONFIGS)
def test_configuration_is_read_as_git_reads_it(tmp_path: Path, text: str) -> None:
    f = tmp_path / "config"
    f.write_bytes(text.encode())
    listed = subprocess.run(
        ["git", "config", "-f", str(f), "--list", "-z", "--no-includes"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    theirs = []
    for item in filter(None, listed.split("\0")):
        key, newline, value = item.partition("\n")
        theirs.append((key, value if newline else None))
    assert list(parse(text)) == theirs


@pytest.mark.parametrize(
    ("key", "value", "runs"),
    [
        ("core.fsmonitor", "payload", True),
        ("core.fsmonitor", "true", False),
        ("core.fsmonitor", None, False),
        ("core.hookspath", "../h", True),
        ("core.sshcommand", "x", True),
        ("core.pager", "less", True),
        ("core.editor", "vim", True),
        ("sequence.editor", "x", True),
        ("diff.external", "x", True),
        ("diff.md.textconv", "x", True),
        ("filter.lfs.clean", "x", True),
        ("filter.a.b.smudge", "x", True),
        ("filter.lfs.process", "x", True),
        ("alias.st", "status", False),
        ("alias.x", "!touch p", True),
        ("credential.helper", "store", False),
        ("credential.helper", "!f() { cat; }; f", True),
        ("credential.https://x.helper", "/tmp/evil", True),
        ("gpg.program", "x", True),
        ("gpg.ssh.program", "x", True),
        ("pager.log", "false", False),
        ("pager.log", "evil", True),
        ("include.path", "../x", True),
        ("remote.origin.url", "ext::sh -c evil", True),
        ("remote.origin.url", "https://example.com/x", False),
        ("remote.origin.uploadpack", "evil", True),
        ("core.autocrlf", "true", False),
        ("user.name", "me", False),
        ("interactive.difffilter", "x", True),
        ("interactive.singlekey", "true", False),
        ("sendemail.smtpserver", "/usr/bin/evil", True),
        ("sendemail.smtpserver", "smtp.example.com", False),
        ("init.templatedir", "../t", True),
        ("lfs.customtransfer.x.path", "x", True),
        ("zz.brandnew", "y", True),  # not known to be inert: reported
        ("core.brandnew", "true", True),
        ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*", False),
        ("branch.main.merge", "refs/heads/main", False),
        ("submodule.x.url", "../x", False),
    ],
)
def test_which_settings_make_git_run_a_program(key: str, value: str | None, runs: bool) -> None:
    assert runs_program(key, value) is runs


@pytest.mark.skipif(GIT is None, reason="no git here")
def test_what_git_itself_writes_is_known_to_be_inert(tmp_path: Path) -> None:
    """`git init`, `git clone` and `git worktree add` leave no setting the allow-list lacks:
    an ordinary new repository is never reported."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    run = {"check": True, "env": env, "capture_output": True}
    subprocess.run(["git", "init", "-q", str(tmp_path / "a")], **run)  # type: ignore[call-overload]
    subprocess.run(
        [
            "git",
            "-C",
            str(tmp_path / "a"),
            "-c",
            "user.name=x",
            "-c",
            "user.email=x@x",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        **run,  # type: ignore[call-overload]
    )
    subprocess.run(["git", "clone", "-q", str(tmp_path / "a"), str(tmp_path / "b")], **run)  # type: ignore[call-overload]
    subprocess.run(
        ["git", "-C", str(tmp_path / "b"), "worktree", "add", "-q", str(tmp_path / "w")], **run
    )  # type: ignore[call-overload]
    for repo in ("a", "b"):
        assert dangers(tmp_path / repo / ".git", repo) == frozenset()


def test_dangers_name_the_file_and_the_setting(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "config").write_text("[core]\n\tfsmonitor = touch\x1b[2J /x\n[user]\n\tname = me\n")
    (git / "config.worktree").write_text("[alias]\n\tx = !sh\n")
    for name, mode in (("pre-commit", 0o755), ("post-checkout", 0o644), ("x.sample", 0o755)):
        (git / "hooks" / name).write_text("#!/bin/sh\n")
        (git / "hooks" / name).chmod(mode)
    assert dangers(git, "vendor/lib/.git") == {
        ("vendor/lib/.git/config", "core.fsmonitor = touch?[2J /x"),
        ("vendor/lib/.git/config.worktree", "alias.x = !sh"),
        ("vendor/lib/.git/hooks/pre-commit", "an executable hook"),
    }


def _repo(path: Path, bare: bool = False) -> None:
    top = path if bare else path / ".git"
    for d in ("objects", "refs"):
        (top / d).mkdir(parents=True)
    (top / "HEAD").write_text("ref: refs/heads/main\n")


def test_every_kind_of_repository_inside_is_found(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _repo(ws)
    _repo(ws / "vendor" / "lib")
    _repo(ws / "deep" / "a" / "b" / "c")
    _repo(ws / "srv" / "origin.git", bare=True)
    _repo(ws / "gitdirs" / "sub", bare=True)
    (ws / "sub").mkdir()
    (ws / "sub" / ".git").write_text("gitdir: ../gitdirs/sub\n")
    (ws / "linked").mkdir()
    (ws / "linked" / ".git").symlink_to(ws / "vendor" / "lib" / ".git")
    (ws / "out").mkdir()
    (ws / "out" / ".git").write_text(f"gitdir: {tmp_path}\n")  # outside: read-only anyway
    (ws / "escape").symlink_to(tmp_path)  # never followed
    found = Finder(ws).find()
    assert set(found.git_dirs) == {
        ws / ".git",
        ws / "vendor" / "lib" / ".git",
        ws / "deep" / "a" / "b" / "c" / ".git",
        ws / "srv" / "origin.git",
        ws / "gitdirs" / "sub",
    }
    assert set(found.pointers) == {ws / "sub" / ".git", ws / "linked" / ".git", ws / "out" / ".git"}
    assert found.missed == ""


def test_a_repository_made_since_the_last_walk_is_found(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    finder = Finder(ws)
    assert finder.find().git_dirs == ()
    _repo(ws / "a" / "b")
    assert finder.find().git_dirs == (ws / "a" / "b" / ".git",)


def test_the_search_says_what_it_did_not_cover(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    deep = ws.joinpath(*["d"] * 6)
    _repo(deep)
    found = Finder(ws, max_depth=3).find()
    assert found.git_dirs == () and "3 directories deep" in found.missed
    for i in range(50):
        (ws / f"f{i}").mkdir()
    found = Finder(ws, max_entries=20).find()
    assert "stopped after" in found.missed and "not kept read-only" in found.missed


def _record(ws: Path, *paths: Path) -> guard.Record:
    return guard.record(paths, contents=True, base=ws)


def test_the_clean_up_never_follows_a_link_the_command_made(tmp_path: Path) -> None:
    """main: a command that made `.agents` a link to a folder holding `skills/` had the
    clean-up remove that folder's skills/ (it was "a protected path the command created"),
    with the user's full rights, wherever it was."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (outside / "skills").mkdir(parents=True)
    (outside / "skills" / "SKILL.md").write_text("mine\n")
    _repo(ws / "vendor" / "lib")
    (ws / "vendor" / "lib" / ".git" / "config").write_text("[core]\n")
    rec = _record(ws, ws / ".agents" / "skills", ws / "vendor" / "lib" / ".git")
    (ws / ".agents").symlink_to(outside)
    shutil.rmtree(ws / "vendor")
    (ws / "vendor").symlink_to(outside)
    (outside / "lib").mkdir()
    (outside / "lib" / ".git").mkdir()
    (outside / "lib" / ".git" / "config").write_text("theirs\n")
    notes = guard.restore(rec, ws)
    assert (outside / "skills" / "SKILL.md").read_text() == "mine\n"
    assert (outside / "lib" / ".git" / "config").read_text() == "theirs\n"
    assert not os.path.islink(ws / ".agents") and not os.path.islink(ws / "vendor")
    assert (ws / "vendor" / "lib" / ".git" / "config").read_text() == "[core]\n"
    assert any("made vendor a link, which the sandbox removed" in n for n in notes), notes


def test_a_link_that_was_there_is_followed_as_before(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "conf" / "agents" / "skills").mkdir(parents=True)
    (ws / ".agents").symlink_to("conf/agents")
    skills = ws / ".agents" / "skills"
    rec = _record(ws, skills)
    (skills / "new.md").write_text("x\n")
    assert guard.restore(rec, ws) == [
        "the sandbox put .agents/skills/ back as it was (the command created new.md)"
    ]
    assert not (skills / "new.md").exists()


def test_nested_objects_are_mirrored_at_their_own_place(tmp_path: Path) -> None:
    """Each repository's objects keep their own mirror (the same object name in two
    repositories is two files)."""
    ws, mirror = tmp_path / "ws", tmp_path / "mirror"
    mirror.mkdir()
    for top in (ws, ws / "vendor" / "lib"):
        _repo(top)
        (top / ".git" / "objects" / "ab").mkdir()
        (top / ".git" / "objects" / "ab" / "cdef").write_bytes(bytes(top))
    gits = (ws / ".git", ws / "vendor" / "lib" / ".git")
    rec = guard.record(gits, contents=True, mirror=mirror, base=ws)
    assert (mirror / ".git" / "objects" / "ab" / "cdef").exists()
    assert (mirror / "vendor" / "lib" / ".git" / "objects" / "ab" / "cdef").exists()
    (ws / "vendor" / "lib" / ".git" / "objects" / "ab" / "cdef").unlink()
    notes = guard.restore(rec, ws)
    assert notes == [
        "the sandbox put vendor/lib/.git/ back as it was (the command removed 1 object file)"
    ]
    assert (ws / "vendor" / "lib" / ".git" / "objects" / "ab" / "cdef").read_bytes() == bytes(
        ws / "vendor" / "lib"
    )

"""Checkpoints follow inodes: a change made through any name of a tracked file (another name in
the workspace, in an ignored directory, outside it) is recorded in the turn that made it, put
back by /undo and /rewind, and every name of the file is shown. Judged on disk.

The issue's case runs in a real sandbox under each mechanism this system has (namespaces, and
Landlock alone as tests/confine.py makes a system without user namespaces look), as this user
and as an ordinary account, in a child process (tests/checkpoints/linked_turns.py); the others
run unsandboxed in-process: the disk, not the sandbox, is the judge."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mca.sandbox.probe import probe
from tests import unpriv
from tests.conftest import REPO
from tests.workspace.world import State, command_turn, session, state

CALC = b"function add(a, b) {\n  return a + b;\n}\n"
CONFINE = REPO / "tests" / "confine.py"


def _workspace(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "calc.js").write_bytes(CALC)
    (ws / ".gitignore").write_text("build/\n")


def _one_file(ws: Path, *names: str) -> bool:
    inodes = {os.lstat(ws / n).st_ino for n in names}
    return len(inodes) == 1


@pytest.mark.parametrize("how", ["undo", "rewind"])
def test_a_change_through_a_second_name_is_put_back_and_shown(ws: Path, how: str) -> None:
    _workspace(ws)
    original = state(ws)
    turns = command_turn("ln src/calc.js notes.lnk") + command_turn("echo PAYLOAD >> notes.lnk")
    s = session(ws, *turns)
    s.run_turn("link it")
    linked = state(ws)
    s.run_turn("append to it")
    assert (ws / "src" / "calc.js").read_bytes() == CALC + b"PAYLOAD\n"
    assert next(sorted(f.path for f in u.files) for u in s.undoable()) == [
        "notes.lnk",
        "src/calc.js",
    ]  # /snapshots names both
    report = s.undo() if how == "undo" else s.rewind(2).report
    assert state(ws) == linked and _one_file(ws, "notes.lnk", "src/calc.js")
    assert sorted(report.restored) == ["notes.lnk", "src/calc.js"]
    assert "one file under several names (hard links): notes.lnk, src/calc.js" in report.notes
    if how == "undo":
        s.undo()
    else:
        s.rewind(1)
    assert state(ws) == original
    s.close()


@pytest.mark.parametrize(
    "name",
    ["build/x", "../outside.lnk"],
    ids=["an ignored directory", "outside the workspace"],
)
def test_a_change_through_a_name_checkpoints_do_not_see(ws: Path, name: str) -> None:
    """The other name is where no walk looks: the file's own watch hears the name made, and
    from then on the file is looked at again at every checkpoint."""
    _workspace(ws)
    (ws / "build").mkdir()
    original = state(ws)
    turns = command_turn(f"ln src/calc.js {name}") + command_turn(f"echo PAYLOAD >> {name}")
    s = session(ws, *turns)
    s.run_turn("link it")
    s.run_turn("append to it")
    assert (ws / "src" / "calc.js").read_bytes() == CALC + b"PAYLOAD\n"
    report = s.undo()
    assert report.restored == ["src/calc.js"] and (ws / "src" / "calc.js").read_bytes() == CALC
    s.undo()  # the first turn changed nothing covered: the next undo finds nothing of it
    assert _without(state(ws), "build/x") == _without(original, "build/x")
    s.close()


def test_one_command_that_links_writes_and_unlinks(ws: Path) -> None:
    """No name is left behind: the file's watch heard the link count change twice."""
    _workspace(ws)
    (ws / "build").mkdir()
    original = state(ws)
    command = "ln src/calc.js build/y && echo PAYLOAD >> build/y && rm build/y"
    s = session(ws, *command_turn(command))
    s.run_turn("be sneaky")
    assert [[f.path for f in u.files] for u in s.undoable()] == [["src/calc.js"]]
    s.undo()
    assert state(ws) == original
    s.close()


def test_a_file_linked_before_the_session_is_followed_too(ws: Path) -> None:
    _workspace(ws)
    os.link(ws / "src" / "calc.js", ws.parent / "kept-outside.js")
    original = state(ws)
    s = session(ws, *command_turn(f"echo PAYLOAD >> {ws.parent / 'kept-outside.js'}"))
    s.run_turn("append through the outside name")
    s.undo()
    assert state(ws) == original
    s.close()


def _without(s: State, *paths: str) -> State:
    return {p: v for p, v in s.items() if p not in paths}


# -- the case, in a real sandbox under each mechanism -------------------------------------
FULL, LANDLOCK = probe(), probe(namespaces=False)
MECHANISMS = {
    "namespaces": ([], FULL.user_namespaces, "user namespaces (mount"),
    "landlock": (["--no-userns"], LANDLOCK.landlock_abi > 0, "no user namespaces"),
}


def _judge(ws: Path, said: dict[str, Any], described: str) -> None:
    """After the child's two turns and its /undo of the append: calc.js as it was, both names
    one file again, both shown; then a later session's /undo takes the link itself back."""
    assert said["sandboxed"] and described in said["mechanism"], said
    assert said["ok"] == [True, True], said  # the link and the append both ran, inside
    assert (ws / "src" / "calc.js").read_bytes() == CALC == (ws / "notes.lnk").read_bytes()
    assert _one_file(ws, "notes.lnk", "src/calc.js")
    assert said["listed"][0] == ["notes.lnk", "src/calc.js"], said
    assert sorted(said["restored"]) == ["notes.lnk", "src/calc.js"], said


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", sorted(MECHANISMS))
def test_in_the_sandbox(tmp_path: Path, mechanism: str) -> None:
    refuse, here, described = MECHANISMS[mechanism]
    if not here:
        pytest.skip(f"{mechanism}: not on this system")
    ws = tmp_path / "ws"
    ws.mkdir()
    _workspace(ws)
    original = state(ws)
    child = [
        sys.executable,
        "-m",
        "tests.checkpoints.linked_turns",
        str(ws),
        str(ws.parent / "home"),
    ]
    confine = [sys.executable, str(CONFINE), *refuse, "--"] if refuse else []
    proc = subprocess.run(
        [*confine, *child], capture_output=True, text=True, timeout=300, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    _judge(ws, json.loads(proc.stdout), described)
    s = session(ws)  # a later session undoes the link itself
    s.undo()
    s.close()
    assert state(ws) == original


@pytest.mark.slow
@pytest.mark.skipif(bool(unpriv.skip_reason()), reason=unpriv.skip_reason() or "-")
@pytest.mark.parametrize("mechanism", sorted(MECHANISMS))
def test_in_the_sandbox_as_an_ordinary_user(mechanism: str) -> None:
    """The same, as the people who use mca run it: an ordinary account (tests/unpriv.py)."""
    refuse, here, described = MECHANISMS[mechanism]
    if not here:
        pytest.skip(f"{mechanism}: not on this system")
    top = Path(os.environ.get("MCA_UNPRIV_TMP", "/tmp")) / f"mca-links-{os.getpid()}"
    shutil.rmtree(top, ignore_errors=True)
    (top / "ws").mkdir(parents=True)
    try:
        ws = top / "ws"
        _workspace(ws)
        unpriv.give(top)
        paths = [str(REPO), *site.getsitepackages()]
        boot = (
            f"import sys, json; sys.path[:0] = {paths!r}; from pathlib import Path;"
            " from tests.checkpoints.linked_turns import main;"
            f" print(json.dumps(main(Path({str(ws)!r}), Path({str(top / 'home')!r}))))"
        )
        python = unpriv.user_python()
        assert python is not None
        confine = [sys.executable, str(CONFINE), *refuse, "--user", unpriv.USER, "--"]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(top)}
        proc = subprocess.run(
            [*confine, python, "-c", boot], capture_output=True, text=True, timeout=300, env=env
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        _judge(ws, json.loads(proc.stdout), described)
    finally:
        shutil.rmtree(top, ignore_errors=True)

"""The eight tools, one behaviour at a time, through the registry as the loop calls them."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from mca.errors import PathRefused, ToolError
from mca.events import Event, PlanUpdated
from mca.fs.globs import glob_match
from mca.session.faces import HeadlessUI
from mca.tools import REGISTRY, TOOL_NAMES, get_tool, tool_specs
from mca.tools.base import Approvals, ToolEnv, TurnState
from mca.tools.command import Capture
from mca.tools.files import MAX_READ_LINES

EIGHT = (
    "read_file",
    "list_dir",
    "find_files",
    "search_text",
    "write_file",
    "edit_file",
    "run_command",
    "update_plan",
)


def run(env: ToolEnv, name: str, **args: object) -> str:
    return get_tool(name).run(env, TurnState(1), args)


def test_registry_is_exactly_the_eight_in_order() -> None:
    assert TOOL_NAMES == EIGHT
    assert [s.name for s in tool_specs()] == list(EIGHT)
    for spec in tool_specs():
        assert spec.parameters["type"] == "object"
        assert set(spec.parameters["required"]) <= set(spec.parameters["properties"])
    with pytest.raises(TypeError):
        REGISTRY["extra"] = REGISTRY["read_file"]  # type: ignore[index]


def test_unknown_tool_lists_the_choices() -> None:
    with pytest.raises(ToolError, match="available: read_file, list_dir"):
        get_tool("delete_everything")


# -- read_file -------------------------------------------------------------------------------
def test_read_file_numbers_lines_and_reports_total(env: ToolEnv, ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    out = run(env, "read_file", path="a.txt")
    assert out.splitlines()[0] == "a.txt: 3 lines total"
    assert "     2\ttwo" in out
    part = run(env, "read_file", path="a.txt", offset=2, limit=1)
    assert "showing lines 2-2" in part and "1 more line:" in part and "three" not in part


def test_read_file_caps_long_files_and_says_so(env: ToolEnv, ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(MAX_READ_LINES + 500)))
    out = run(env, "read_file", path="big.txt")
    assert f"{MAX_READ_LINES + 500} lines total" in out
    assert f"offset={MAX_READ_LINES + 1}" in out
    assert len(out.splitlines()) == MAX_READ_LINES + 1


def test_read_file_caps_bytes(env: ToolEnv, ws: Path) -> None:
    (ws / "wide.txt").write_text(("x" * 1000 + "\n") * 1000)
    out = run(env, "read_file", path="wide.txt")
    assert len(out) < 300 * 1024 and "read again with offset=" in out


def test_read_file_errors(env: ToolEnv, ws: Path) -> None:
    (ws / "d").mkdir()
    (ws / "bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ToolError, match="no such file"):
        run(env, "read_file", path="missing.txt")
    with pytest.raises(ToolError, match="directory"):
        run(env, "read_file", path="d")
    assert "binary file, 3 bytes" in run(env, "read_file", path="bin")
    with pytest.raises(ToolError, match="missing required argument 'path'"):
        run(env, "read_file")
    with pytest.raises(ToolError, match="must be between"):
        run(env, "read_file", path="bin", offset=0)


@pytest.mark.parametrize("path", ["../outside.txt", "a/../../outside.txt", "/etc/passwd", "x\x00y"])
def test_paths_outside_the_workspace_are_refused(env: ToolEnv, ws: Path, path: str) -> None:
    (ws.parent / "outside.txt").write_text("secret")
    for tool, extra in (("read_file", {}), ("write_file", {"content": "x"})):
        with pytest.raises(PathRefused):
            run(env, tool, path=path, **extra)
    assert (ws.parent / "outside.txt").read_text() == "secret"


def test_symlinks_pointing_out_are_refused(env: ToolEnv, ws: Path) -> None:
    outside = ws.parent / "outside"
    outside.mkdir()
    (outside / "s.txt").write_text("secret")
    (ws / "link.txt").symlink_to(outside / "s.txt")
    (ws / "linkdir").symlink_to(outside)
    for path in ("link.txt", "linkdir/s.txt"):
        with pytest.raises(PathRefused, match="outside the workspace"):
            run(env, "read_file", path=path)
        with pytest.raises(PathRefused):
            run(env, "edit_file", path=path, old_text="secret", new_text="x")
    with pytest.raises(PathRefused):
        run(env, "write_file", path="linkdir/new.txt", content="x")
    assert (outside / "s.txt").read_text() == "secret"
    assert not (outside / "new.txt").exists()


def test_symlink_inside_the_workspace_is_fine(env: ToolEnv, ws: Path) -> None:
    (ws / "real.txt").write_text("hi\n")
    (ws / "alias.txt").symlink_to(ws / "real.txt")
    assert "1 line total" in run(env, "read_file", path="alias.txt")


# -- list / find / search ----------------------------------------------------------------------
def test_list_dir_tree_and_depth(env: ToolEnv, ws: Path) -> None:
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "src" / "a.js").write_text("")
    (ws / "src" / "deep" / "b.js").write_text("")
    (ws / "node_modules" / "x").mkdir(parents=True)
    one = run(env, "list_dir", path=".")
    assert one.splitlines() == ["node_modules/", "src/"]
    two = run(env, "list_dir", path=".", depth=3)
    assert "  a.js" in two and "    b.js" in two and "  x/" not in two
    with pytest.raises(ToolError, match="not found"):
        run(env, "list_dir", path="nope")


def test_find_files_globs(env: ToolEnv, ws: Path) -> None:
    (ws / "src" / "lib").mkdir(parents=True)
    for p in ("src/a.js", "src/lib/b.js", "README.md", "src/lib/c.py"):
        (ws / p).write_text("")
    assert run(env, "find_files", pattern="**/*.js").splitlines() == ["src/a.js", "src/lib/b.js"]
    assert run(env, "find_files", pattern="src/*.js").splitlines() == ["src/a.js"]
    assert run(env, "find_files", pattern="*.md").splitlines() == ["README.md"]
    assert "no files match" in run(env, "find_files", pattern="*.rs")
    with pytest.raises(PathRefused):
        run(env, "find_files", pattern="../*")


def test_glob_match_rules() -> None:
    assert glob_match("src/**", "src/a/b.js")
    assert glob_match("**/calc.js", "calc.js")
    assert glob_match("src/?.js", "src/a.js")
    assert not glob_match("src/*.js", "src/a/b.js")


def test_search_text(env: ToolEnv, ws: Path) -> None:
    (ws / "a.py").write_text("def foo():\n    return 1\n")
    (ws / "b.txt").write_text("foo bar\n")
    (ws / "bin").write_bytes(b"foo\x00")
    out = run(env, "search_text", pattern=r"foo")
    assert out.splitlines() == ["a.py:1:def foo():", "b.txt:1:foo bar"]
    assert run(env, "search_text", pattern="foo", path="*.py") == "a.py:1:def foo():"
    with pytest.raises(ToolError, match="invalid regex"):
        run(env, "search_text", pattern="(")


def test_search_text_is_capped(env: ToolEnv, ws: Path) -> None:
    (ws / "many.txt").write_text("hit\n" * 1000)
    out = run(env, "search_text", pattern="hit")
    assert out.splitlines()[-1].startswith("... stopped at 200 matches")


# -- write / edit -----------------------------------------------------------------------------
def test_write_file_creates_parents_and_snapshots(env: ToolEnv, ws: Path) -> None:
    assert run(env, "write_file", path="new/dir/f.txt", content="hi").startswith("created")
    assert (ws / "new/dir/f.txt").read_text() == "hi"
    records, _ = env.workspace.journal.read()
    assert records[0].writes is not None and records[0].writes.files[0].existed is False


def test_write_keeps_mode(env: ToolEnv, ws: Path) -> None:
    f = ws / "run.sh"
    f.write_text("echo 1\n")
    f.chmod(0o755)
    run(env, "write_file", path="run.sh", content="echo 2\n")
    assert f.stat().st_mode & 0o777 == 0o755


def test_edit_file_exactly_once(env: ToolEnv, ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("x = 1\ny = 1\n")
    with pytest.raises(ToolError, match="matched 2 times"):
        run(env, "edit_file", path="a.txt", old_text="1", new_text="2")
    with pytest.raises(ToolError, match="matched 0 times"):
        run(env, "edit_file", path="a.txt", old_text="z", new_text="2")
    run(env, "edit_file", path="a.txt", old_text="x = 1", new_text="x = 3")
    assert f.read_text() == "x = 3\ny = 1\n"
    run(env, "edit_file", path="a.txt", old_text="= ", new_text=":= ", replace_all=True)
    assert f.read_text() == "x := 3\ny := 1\n"
    with pytest.raises(ToolError, match="no such file"):
        run(env, "edit_file", path="b.txt", old_text="a", new_text="b")


def test_protected_paths_need_approval(env: ToolEnv, ws: Path) -> None:
    run(env, "write_file", path="a.txt", content="1")
    for path in (".mca/snapshots/objects/x", ".git/config", "sub/.GIT/hooks/pre-commit"):
        with pytest.raises(ToolError, match="protected path"):
            run(env, "write_file", path=path, content="evil")
        assert not (ws / path).exists()


# -- run_command ------------------------------------------------------------------------------
def test_run_command_ok_and_failure(env: ToolEnv, ws: Path) -> None:
    out = run(env, "run_command", command="echo hello && echo oops >&2")
    assert "exit code 0" in out and "hello" in out and "oops" in out
    with pytest.raises(ToolError, match="exit code 3"):
        run(env, "run_command", command="echo partial; exit 3")


def test_run_command_environment(env: ToolEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    out = run(env, "run_command", command='echo "pager=$PAGER key=${OPENAI_API_KEY:-none}"; cat')
    assert "pager=cat key=none" in out  # cat sees closed stdin and returns at once


def test_run_command_declined(ws: Path, env: ToolEnv) -> None:
    env = replace(env, approvals=Approvals(HeadlessUI(commands=False)))
    with pytest.raises(ToolError, match="declined"):
        run(env, "run_command", command="touch made")
    assert not (ws / "made").exists()


@pytest.mark.slow
def test_run_command_timeout_kills_the_whole_group(env: ToolEnv, ws: Path) -> None:
    start = time.monotonic()
    with pytest.raises(ToolError) as info:
        run(
            env,
            "run_command",
            command="echo started; (sleep 30; echo never) & sleep 30 & echo $$ > pgid; wait",
            timeout=1,
        )
    assert time.monotonic() - start < 10
    assert "timed out after 1s" in str(info.value) and "started" in str(info.value)
    pgid = int((ws / "pgid").read_text())
    assert live_in_group(pgid) == []


def live_in_group(pgid: int, wait: float = 3.0) -> list[str]:
    """Non-zombie processes in a process group, after giving the kernel a moment to reap."""
    deadline = time.monotonic() + wait
    while True:
        ps = subprocess.run(["ps", "-eo", "pgid=,stat=,pid="], capture_output=True, text=True)
        live = [
            line
            for line in ps.stdout.splitlines()
            if line.split()[0] == str(pgid) and not line.split()[1].startswith("Z")
        ]
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.1)


def test_run_command_keeps_head_and_tail(env: ToolEnv) -> None:
    out = run(env, "run_command", command="seq 1 100000")
    assert "1\n2\n3\n" in out and "99999\n100000" in out
    assert "bytes elided from the middle" in out
    assert len(out) < 12_000


def test_capture_bounded_memory() -> None:
    cap = Capture(head=10, tail=10)
    for _ in range(1000):
        cap.feed(b"abcdefghij" * 100)
    assert cap.total == 1_000_000 and len(cap.head) == 10 and len(cap.tail) == 10
    assert "999980 bytes elided" in cap.text()


@pytest.mark.slow
def test_background_children_do_not_hang_the_tool(env: ToolEnv) -> None:
    start = time.monotonic()
    out = run(env, "run_command", command="sleep 60 & echo done")
    assert "done" in out and time.monotonic() - start < 8


# -- update_plan ------------------------------------------------------------------------------
def test_update_plan(env: ToolEnv, turn: TurnState) -> None:
    seen: list[Event] = []
    env = replace(env, emit=seen.append)
    steps = [{"step": "read", "status": "completed"}, {"step": "edit", "status": "in_progress"}]
    out = get_tool("update_plan").run(env, turn, {"steps": steps})
    assert "[x] read" in out and "[~] edit" in out
    assert turn.plan[1] == {"step": "edit", "status": "in_progress"}
    assert seen and seen[0].kind == "plan.updated" and isinstance(seen[0], PlanUpdated)
    with pytest.raises(ToolError, match="status must be one of"):
        run(env, "update_plan", steps=[{"step": "x", "status": "done"}])
    with pytest.raises(ToolError, match="non-empty list"):
        run(env, "update_plan", steps=[])


def test_tools_never_follow_cwd(env: ToolEnv, ws: Path, tmp_path: Path) -> None:
    (ws / "a.txt").write_text("ws\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert "1 line total" in run(env, "read_file", path="a.txt")
    finally:
        os.chdir(old)

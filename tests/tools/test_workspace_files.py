"""Workspaces as they come: non-UTF-8 names, minified one-line files, CRLF and mixed endings,
.gitignore'd trees. Fixtures are made at test time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mca.agent import Agent
from mca.tools import get_tool
from mca.tools.base import ToolEnv, TurnState
from mca.tools.eol import replace
from tests.helpers import FakeModel, call, engine, say


def run(env: ToolEnv, name: str, **args: object) -> str:
    return get_tool(name).invoke(env, TurnState(1), args)


def test_non_utf8_names_in_every_listing(env: ToolEnv, ws: Path) -> None:
    os.mkdir(os.path.join(os.fsencode(ws), b"d\xfe"))
    with open(os.path.join(os.fsencode(ws), b"d\xfe", b"\xffx.txt"), "wb") as f:
        f.write(b"needle\n")
    model = FakeModel(
        [
            call("list_dir", "1", depth=3),
            call("find_files", "2", pattern="**"),
            call("search_text", "3", pattern="needle"),
            say("done"),
        ]
    )
    agent = Agent(engine(model, "s"), env)
    result = agent.run_turn("look")
    outputs = [t.result for t in result.tools]
    assert all(t.ok for t in result.tools), outputs
    assert all("d\\xfe" in out for out in outputs), outputs
    json.dumps([m.content for m in agent.messages]).encode("utf-8")  # every message encodes


def test_a_30mb_one_line_file_is_read_in_windows(env: ToolEnv, ws: Path) -> None:
    (ws / "bundle.min.js").write_text("x=1;" * 7_500_000 + "END")
    first = run(env, "read_file", path="bundle.min.js")
    assert "1 line total" in first and "read on with column=2001" in first
    assert len(first) < 5_000
    last = run(env, "read_file", path="bundle.min.js", column=29_999_997)
    assert last.split("\t", 1)[1].startswith("x=1;END")


def test_crlf_file_edit_keeps_every_other_byte(env: ToolEnv, ws: Path) -> None:
    original = b"first\r\nsecond\r\nthird\r\nfourth\r\n"
    (ws / "w.txt").write_bytes(original)
    shown = run(env, "read_file", path="w.txt")
    assert "CRLF" in shown and "\r" not in shown
    run(env, "edit_file", path="w.txt", old_text="second\nthird", new_text="2nd\n3rd\nmore")
    assert (ws / "w.txt").read_bytes() == b"first\r\n2nd\r\n3rd\r\nmore\r\nfourth\r\n"


def test_mixed_endings_keep_their_own(env: ToolEnv, ws: Path) -> None:
    (ws / "m.txt").write_bytes(b"a\nb\r\nc\nd\r\n")
    run(env, "edit_file", path="m.txt", old_text="b\nc", new_text="B\nC")
    data = (ws / "m.txt").read_bytes()
    assert data.startswith(b"a\n") and data.endswith(b"\nd\r\n")


@given(
    lines=st.lists(
        st.tuples(st.text("ab ", max_size=3), st.sampled_from(["\n", "\r\n"])),
        min_size=2,
        max_size=12,
    ),
    data=st.data(),
)
@settings(max_examples=200, deadline=None)
def test_eol_replace_round_trip(lines: list[tuple[str, str]], data: st.DataObject) -> None:
    """Replacing a span of lines (as the model saw them, without \\r) changes only that span:
    every byte before and after it stays, line endings included."""
    lines = [(f"L{k}:{body}", end) for k, (body, end) in enumerate(lines)]  # each line unique
    text = "".join(body + end for body, end in lines)
    i = data.draw(st.integers(0, len(lines) - 2))
    j = data.draw(st.integers(i + 1, len(lines) - 1))
    old = "\n".join(body for body, _ in lines[i : j + 1])
    updated, count = replace(text, old, "NEW", False)
    assert count == 1
    prefix = "".join(b + e for b, e in lines[:i])
    suffix = lines[j][1] + "".join(b + e for b, e in lines[j + 1 :])
    assert updated == prefix + "NEW" + suffix


def test_write_file_counts_lines(env: ToolEnv) -> None:
    assert "4 lines" in run(env, "write_file", path="a.txt", content="1\n2\n3\n4\n")
    assert "4 lines" in run(env, "write_file", path="b.txt", content="1\n2\n3\n4")
    assert "0 lines" in run(env, "write_file", path="c.txt", content="")


IGNORE_TREE = {
    ".gitignore": "*.log\nbuild/\n/top-only.txt\n!keep.log\ndocs/**/draft*\n",
    "src/.gitignore": "generated/\n*.tmp\n",
    "a.log": "x",
    "keep.log": "x",
    "top-only.txt": "x",
    "sub/top-only.txt": "x",
    "build/out.js": "x",
    "src/build/also.js": "x",
    "src/main.py": "x",
    "src/x.tmp": "x",
    "src/generated/g.py": "x",
    "docs/a/b/draft-1.md": "x",
    "docs/a/final.md": "x",
    "notes.txt": "x",
}


def _tree(ws: Path) -> None:
    for rel, text in IGNORE_TREE.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)


def test_gitignore_is_honoured_like_git(env: ToolEnv, ws: Path) -> None:
    _tree(ws)
    found = set(run(env, "find_files", pattern="**").splitlines())
    expected = _git_unignored(ws)  # the oracle: git's own untracked, unignored files
    if expected is not None:
        assert found == expected
    assert "a.log" not in found and "keep.log" in found and "sub/top-only.txt" in found
    every = set(run(env, "find_files", pattern="**", include_ignored=True).splitlines())
    assert {"a.log", "build/out.js", "src/generated/g.py"} <= every
    hits = run(env, "search_text", pattern="x", include_ignored=False)
    assert "build/out.js" not in hits and "src/main.py" in hits


def _git_unignored(ws: Path) -> set[str] | None:
    if not shutil.which("git"):
        return None
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    out = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.splitlines())


@pytest.mark.parametrize("bad", ["[unclosed", "\\", "!", "/", "***", "[]]", "\\!", "a/**/b"])
def test_odd_gitignore_lines_never_break_a_walk(env: ToolEnv, ws: Path, bad: str) -> None:
    (ws / ".gitignore").write_text(f"{bad}\n*.log\n")
    for rel in ("a.log", "b.txt", "a/x/b", "[unclosed", "!"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x")
    found = set(run(env, "find_files", pattern="**").splitlines()) - {"no files match **"}
    expected = _git_unignored(ws)
    if expected is not None:
        assert found == expected

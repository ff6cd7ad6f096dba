"""Containment: an attack set through the real tools and the skill resource reader.

Each case must be refused (or stay inside); afterwards nothing outside the workspace was read
into a result or changed. The report lists every refusal's message.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mca.errors import ToolError
from mca.events import drop
from mca.session.faces import HeadlessUI
from mca.skills.catalog import Budget
from mca.skills.discover import char_fits, discover
from mca.skills.model import Root
from mca.tools import get_tool
from mca.tools.base import Approvals, ToolEnv, TurnState
from mca.workspace.store import WorkspaceStore
from mca.workspace.walk import OFF
from tests.helpers import SkillDirs

pytestmark = [
    pytest.mark.stress,
    pytest.mark.slow,  # the reliability suite (make stress runs it at full size)
]
FULL = os.environ.get("MCA_STRESS") == "1"  # read at import: the autouse fixture clears MCA_*
SECRET = "TOP-SECRET-OUTSIDE-CONTENT"


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[ToolEnv, Path, Path]]:
    """A workspace, a skill outside it, and an 'outside' directory full of secrets."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "ok.txt").write_text("inside\n")
    (ws / "link_file").symlink_to(outside / "secret.txt")
    (ws / "link_dir").symlink_to(outside)
    (ws / "src" / "deep_link").symlink_to("../../outside")
    skill = tmp_path / "skills" / "guide"
    (skill / "references").mkdir(parents=True)
    (skill / "references" / "a.md").write_text("ref\n")
    (skill / "references" / "out").symlink_to(outside / "secret.txt")
    store = WorkspaceStore(ws, ws.parent / "store", "t", "20260101T000000", OFF)
    skills = SkillDirs({"guide": skill})
    yield ToolEnv(store, Approvals(HeadlessUI()), drop, skills), outside, skill


def _paths(outside: Path, skill: Path) -> list[str]:
    long = "a/" * 3000 + "x"
    return [
        "../outside/secret.txt",
        "../../outside/secret.txt",
        "src/../../outside/secret.txt",
        "./././../outside/secret.txt",
        "src/../src/../../outside/secret.txt",
        str(outside / "secret.txt"),
        "/etc/passwd",
        "/etc/shadow",
        "//etc//passwd",
        "link_file",
        "link_dir/secret.txt",
        "src/deep_link/secret.txt",
        "src\x00/../../outside/secret.txt",
        "secret.txt\x00.txt",
        "%2e%2e/outside/secret.txt",
        "..%2foutside%2fsecret.txt",
        "\u2025/outside/secret.txt",  # two-dot leader, a look-alike of ..
        "\uff0e\uff0e/outside/secret.txt",  # fullwidth full stops
        "src/\u2024\u2024/secret.txt",  # one-dot leaders
        long,
        "~/.ssh/id_rsa",
        str(skill / ".." / ".." / "outside" / "secret.txt"),
        str(skill / "references" / "out"),
        str(skill / "references" / ".." / ".." / "guide" / ".." / ".." / "outside" / "secret.txt"),
    ]


def _attempt(env: ToolEnv, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """(refused, message or result)."""
    try:
        return False, get_tool(tool).run(env, TurnState(1), args)
    except ToolError as e:
        return True, str(e)


def test_attack_set(arena: tuple[ToolEnv, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    env, outside, skill = arena
    before = {p: p.read_bytes() for p in outside.iterdir()}
    cases: list[tuple[str, dict[str, Any]]] = []
    for path in _paths(outside, skill):
        cases += [
            ("read_file", {"path": path}),
            ("write_file", {"path": path, "content": "pwned"}),
            ("edit_file", {"path": path, "old_text": "TOP", "new_text": "pwned"}),
            ("list_dir", {"path": path}),
        ]
    cases += [
        ("find_files", {"pattern": "../outside/*"}),
        ("find_files", {"pattern": "/etc/*"}),
        ("search_text", {"pattern": "TOP-SECRET"}),  # searched inside only: must find nothing
        ("search_text", {"pattern": "TOP", "path": "../outside/*"}),
        ("list_dir", {"path": "link_dir"}),
        ("write_file", {"path": ".mca/snapshots/objects/evil", "content": "x"}),
    ]
    escapes, report = [], []
    for tool, args in cases:
        refused, text = _attempt(env, tool, args)
        if SECRET in text:
            escapes.append((tool, args))
        report.append(
            f"{tool:<12} {str(args)[:60]:<62} -> {'refused' if refused else 'ok'}: {text[:90]}"
        )
    after = {p: p.read_bytes() for p in outside.iterdir()}
    assert after == before, "a file outside the workspace changed"
    assert not (outside / "pwned").exists()
    with capsys.disabled():
        print(f"\ncontainment: {len(cases)} cases, {len(escapes)} escapes")
        if FULL:
            print("\n".join(report))
    assert len(cases) >= 40 and escapes == []


def test_skill_md_symlink_and_dotdot_paths_pattern(tmp_path: Path) -> None:
    real = tmp_path / "real" / "SKILL.md"
    real.parent.mkdir()
    real.write_text("---\nname: sneaky\ndescription: x\n---\n")
    root = tmp_path / "root"
    (root / "sneaky").mkdir(parents=True)
    (root / "sneaky" / "SKILL.md").symlink_to(real)
    (root / "dotdot").mkdir()
    (root / "dotdot" / "SKILL.md").write_text(
        "---\nname: dotdot\ndescription: x\npaths: ['../../etc/*']\n---\n"
    )
    d = discover([Root(root, "t", 1)], Budget(10**6, "chars", "t"), char_fits)
    assert list(d.skills) == ["dotdot"] and d.skills["dotdot"].paths == ()  # the pattern dropped
    codes = sorted(x.code for c in d.candidates for x in c.diagnostics)
    assert codes == ["field-dropped", "symlinked-entry"]


FLIPPER = """
import os, sys
real, parked, outside = sys.argv[1:4]
while True:
    try:
        os.rename(real, parked)
        os.symlink(outside, real)
        os.unlink(real)
        os.rename(parked, real)
    except OSError:
        pass
"""


@pytest.mark.slow
def test_symlink_swapped_between_check_and_use(arena: tuple[ToolEnv, Path, Path]) -> None:
    """Another process keeps swapping a real directory for a symlink pointing out, so some
    reads and writes resolve the path while it is real and open it while it is a link."""
    env, outside, _ = arena
    ws = env.root
    real = ws / "r"
    real.mkdir()
    (real / "secret.txt").write_text("harmless\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(real), str(ws / "parked"), str(outside)]
    )
    leaked = 0
    try:
        time.sleep(0.1)
        # a fixed number of attempts, not a rate: on a loaded machine fewer swaps land between
        # check and use, but whatever lands must never leak
        for _ in range(3000 if FULL else 300):
            _, text = _attempt(env, "read_file", {"path": "r/secret.txt"})
            leaked += SECRET in text
            _attempt(env, "write_file", {"path": "r/new.txt", "content": "x"})
    finally:
        proc.kill()
        proc.wait()
    assert leaked == 0 and not (outside / "new.txt").exists()
    assert (outside / "secret.txt").read_text() == SECRET

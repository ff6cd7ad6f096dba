"""Acceptance for workspace checkpoints, through the installed `mca` and the scripted model
(fixtures/mock-scripts/sed-rm-gen.jsonl): a command's `sed -i`, `rm` and generator are undone
byte for byte and mode for mode, and /rewind takes files and the conversation back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mca.state.conversations import read_saved
from tests.conftest import REPO
from tests.workspace.world import state

MCA = Path(sys.executable).parent / "mca"
SCRIPT = REPO / "fixtures" / "mock-scripts" / "sed-rm-gen.jsonl"
GEN = (
    "import os\nos.makedirs('out', exist_ok=True)\n"
    "open('out/generated.py', 'w').write('X = 1\\n')\nos.chmod('out/generated.py', 0o755)\n"
    "os.chmod('a.txt', 0o600)\n"
)
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
    pytest.mark.slow,  # the installed mca, turn by turn
]


def _workspace(ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    (ws / "a.txt").chmod(0o640)
    (ws / "old.txt").write_bytes(b"old\x00bytes\n")
    (ws / "gen.py").write_text(GEN)


def _mca(ws: Path, stdin: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(ws.parent),
        "MCA_HOME": str(ws.parent / "home"),
        "MCA_MOCK_SCRIPT": str(SCRIPT),
        "MCA_MODE": "yolo",
    }
    r = subprocess.run(
        [str(MCA)], input=stdin, capture_output=True, text=True, cwd=ws, env=env, timeout=60
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def _conversation(ws: Path) -> list[str]:
    saved = read_saved(next((ws.parent / "home" / "sessions").glob("*.jsonl")))
    assert saved is not None
    return [m.content for m in saved.messages if m.role == "user"]


def test_undo_restores_every_byte_and_mode_a_command_changed(ws: Path) -> None:
    _workspace(ws)
    before = state(ws)
    out = _mca(ws, "change things\n/undo\n")
    assert "exit code 0" in out and "undid session" in out and "not covered" in out
    assert state(ws) == before


def test_rewind_1_restores_files_and_the_conversation(ws: Path) -> None:
    _workspace(ws)
    before = state(ws)
    out = _mca(ws, "change things\nmake notes\n/rewind 1\n")
    assert "rewound to before turn 1" in out
    assert state(ws) == before and _conversation(ws) == []


def test_a_rewind_picked_from_the_list_is_undone(ws: Path) -> None:
    _workspace(ws)
    out = _mca(ws, "change things\nmake notes\n/rewind\n1\n/undo\n")
    assert "   1. change things" in out and "undid the rewind to before turn 1" in out
    assert (ws / "a.txt").read_text() == "hello mca\n" and (ws / "notes.md").exists()
    assert (ws / "out" / "generated.py").stat().st_mode & 0o777 == 0o755
    assert _conversation(ws) == ["change things", "make notes"]

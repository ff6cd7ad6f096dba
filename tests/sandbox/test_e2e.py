"""The installed `mca` command, as a person runs it: a scripted model asks `run_command` for the
attempts, mca runs them with its defaults (the sandbox on; --yes so nothing waits for a
person), and the oracle looks at the disk, the listener, /proc and everything mca printed,
with API keys planted in mca's own environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.sandbox.probe import probe
from tests.sandbox.cases import ATTEMPTS
from tests.sandbox.world import World, all_files_text, build_world, wait_gone

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,  # the installed mca's commands in the sandbox
]

MCA = str(Path(sys.executable).parent / "mca")
KEYS = {
    "OPENAI_API_KEY": "sk-planted-openai-0a1b2c3d4e5f",
    "ANTHROPIC_API_KEY": "sk-ant-planted-6a7b8c9d0e1f",
    "GROQ_API_KEY": "gsk-planted-2b3c4d5e6f7a",
}
MECH = probe()


def _script(path: Path, commands: list[str]) -> Path:
    lines = [
        {"content": "", "tool_calls": [{"name": "run_command", "arguments": {"command": c}}]}
        for c in commands
    ]
    lines.append({"content": "done"})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _mca(world: World, commands: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    script = _script(world.root / "script.jsonl", commands)
    env = {
        **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
        **KEYS,
        **world.env,  # $HOME, $XDG_RUNTIME_DIR, $SSH_AUTH_SOCK: the world's sockets are named
        "HOME": str(world.home),
        "MCA_HOME": str(world.root / "mcahome"),
        "MCA_MOCK_SCRIPT": str(script),
        "MCA_MAX_STEPS": "1000",
    }
    return subprocess.run(
        [MCA, "-C", str(world.ws), "-p", "go", "--yes", *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    if not MECH.available:
        pytest.skip("no sandbox here: mca runs commands unsandboxed, asks first and says so")
    w = build_world(tmp_path, MECH, own_run=False)
    w.sandbox.close()  # the world's own sandbox is not used: mca builds its own
    yield w
    w.listener.close()


def test_every_attempt_through_mca_is_blocked_or_harmless(world: World) -> None:
    attempts = [a for a in ATTEMPTS if a.held_by(MECH)]
    mca_attempts = [
        # mca's own process, which holds the planted keys in its environment
        "cat /proc/$PPID/environ /proc/$(ps -o ppid= $PPID)/environ > env.txt 2>&1; true",
        "for p in /proc/[0-9]*; do cat $p/environ; done > all-env.txt 2>/dev/null; true",
    ]
    before = world.snapshot()
    done = _mca(world, [world.command(a.command) for a in attempts] + mca_attempts)
    assert done.returncode == 0, done.stderr[-2000:]
    assert world.snapshot() == before
    assert not (world.ws / "GOT").exists()
    printed = done.stdout + done.stderr
    texts = [printed, *all_files_text(world.ws)]
    planted = [*KEYS.values(), *world.secrets]
    assert [k for k in planted if any(k in t for t in texts)] == []
    assert world.listener.received == []
    assert wait_gone(world) == []
    assert "done" in done.stdout


def test_sandbox_off_is_todays_behaviour(world: World) -> None:
    """--sandbox off, asked for explicitly: the command runs with the user's rights (the
    control that shows the attempts above are stopped by the sandbox, not by accident)."""
    done = _mca(world, [world.fill("echo x > {outside}/new")], "--sandbox", "off")
    assert done.returncode == 0, done.stderr
    assert (world.outside / "new").exists()

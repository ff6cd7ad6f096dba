"""Crash safety: SIGKILL the real `mca` at random points of scripted write/edit turns.

Every file must hold its old bytes or its new bytes (never torn, never empty), and `/undo` in a
new session must bring back the old bytes. `make stress` runs 100 trials; CI runs a few.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

MCA = Path(sys.executable).parent / "mca"
FULL = os.environ.get("MCA_STRESS") == "1"
TRIALS = 100 if FULL else 4
SIZE = 1_500_000
pytestmark = [
    pytest.mark.stress,
    pytest.mark.skipif(not MCA.exists(), reason="mca not installed"),
    pytest.mark.slow,  # kills the installed mca mid-write
]


def _content(rng: random.Random, tag: str) -> str:
    line = "".join(rng.choice("abcdefghij") for _ in range(99)) + "\n"
    return f"MARKER-{tag}\n" + line * (SIZE // 100)


def _trial(tmp: Path, n: int, rng: random.Random) -> tuple[int, int, bool]:
    ws = tmp / f"ws{n}"
    ws.mkdir()
    old = {f"f{i}.txt": _content(rng, f"old{i}") for i in range(4)}
    for name, text in old.items():
        (ws / name).write_text(text)
    new0, new_file = _content(rng, "new0"), _content(rng, "brand-new")
    steps = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "f0.txt", "content": new0}}]},
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "f1.txt",
                        "old_text": "MARKER-old1",
                        "new_text": "MARKER-new1",
                    },
                }
            ]
        },
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "created.txt", "content": new_file}}
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "f3.txt",
                        "old_text": "MARKER-old3",
                        "new_text": "MARKER-new3",
                    },
                }
            ]
        },
        {"content": "done"},
    ]
    script = tmp / f"script{n}.jsonl"
    script.write_text("\n".join(json.dumps(s) for s in steps) + "\n")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp),
        "MCA_HOME": str(tmp / "home"),
        "MCA_MOCK_SCRIPT": str(script),
    }
    proc = subprocess.Popen(
        [str(MCA), "-C", str(ws), "-p", "go", "--yes"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(rng.uniform(0.0, 1.6))
    completed = proc.poll() == 0
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    allowed: dict[str, set[str | None]] = {
        "f0.txt": {old["f0.txt"], new0},
        "f1.txt": {old["f1.txt"], old["f1.txt"].replace("MARKER-old1", "MARKER-new1", 1)},
        "f2.txt": {old["f2.txt"]},
        "f3.txt": {old["f3.txt"], old["f3.txt"].replace("MARKER-old3", "MARKER-new3", 1)},
        "created.txt": {None, new_file},
    }
    lost = 0
    for name, ok in allowed.items():
        p = ws / name
        lost += (p.read_text() if p.exists() else None) not in ok
    # /undo in a new session, typed into the REPL
    undo = subprocess.run(
        [str(MCA), "-C", str(ws)],
        input="/undo\n/exit\n",
        env={k: v for k, v in env.items() if k != "MCA_MOCK_SCRIPT"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    for name, text in old.items():
        lost += (ws / name).read_text() != text
    lost += (ws / "created.txt").exists()
    assert "error" not in undo.stdout.lower() or "nothing to undo" in undo.stdout, undo.stdout
    return len(allowed), lost, completed


def test_sigkill_during_write_edit_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(1234)
    files = lost = completed = 0
    for n in range(TRIALS):
        f, lo, done = _trial(tmp_path, n, rng)
        files, lost, completed = files + f, lost + lo, completed + done
    with capsys.disabled():
        print(
            f"\ncrash safety: {TRIALS} trials ({completed} turns completed before the kill),"
            f" {files} files checked twice (after the kill, after /undo), {lost} lost"
        )
    assert lost == 0

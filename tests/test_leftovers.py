"""The suite's own oracles for what a test leaves behind (tests/leftovers.py) find it, in a
process of their own so that nothing here touches the run's children."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CODE = """
import ctypes, os, subprocess, time
from tests import leftovers
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # a subreaper, as the suite's process is
out = subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], capture_output=True)
orphan = int(out.stdout)
time.sleep(0.2)
assert leftovers.has_children()
assert leftovers.zombie_child() is None
left = leftovers.running_children()
if left and "hidden" in left[0]:  # /proc hidden: found, but not named, so not killed
    assert len(left) == 1, left
    os.kill(orphan, 9)
    os.waitpid(orphan, 0)
else:
    assert len(left) == 1 and left[0].startswith(f"{orphan} sleep 60"), left
assert not leftovers.has_children()
pid = os.fork()
if pid == 0:
    os._exit(3)
while leftovers.zombie_child() is None:
    time.sleep(0.01)
assert leftovers.zombie_child() == pid  # seen, not taken
assert leftovers.reap_zombies() == [pid] and not leftovers.has_children()
print("ok")
"""


def test_an_orphan_and_a_zombie_are_found_and_nothing_else() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


def test_a_marker_is_held_while_a_process_has_it_open(tmp_path: Path) -> None:
    from tests.leftovers import held, marker, opening, released

    alive = marker(tmp_path / "alive")
    assert not held(alive)
    proc = subprocess.Popen(
        ["bash", "-c", opening(alive, "echo ready; read x")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline() == b"ready\n"
        assert held(alive) and released(alive, 0.2) is False
    finally:
        proc.stdin.close()
        proc.wait()
        proc.stdout.close()
    assert released(alive) and not held(alive)
    assert os.path.getsize(alive) == 0

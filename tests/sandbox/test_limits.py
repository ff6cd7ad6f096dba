"""Memory and CPU limits of a sandboxed command (the lab sets them for student code)."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mca.sandbox.box import Sandbox
from mca.sandbox.probe import probe
from mca.sandbox.rights import Grant, Mode, build_policy

MECH = probe()
pytestmark = [
    pytest.mark.skipif(not MECH.available, reason="no Landlock on this kernel"),
    pytest.mark.slow,  # process, memory and CPU limits, hit
]


def run(
    tmp_path: Path, code: str, memory: int = 0, cpu: int = 0
) -> subprocess.CompletedProcess[bytes]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    policy = build_policy(Mode.READ_ONLY, ws, tmp_path / "home", tmp_path / "mcahome")
    sb = Sandbox(dataclasses.replace(policy, max_memory_bytes=memory, max_cpu_seconds=cpu), MECH)
    try:
        launch = sb.prepare(Grant(), dict(os.environ))
        proc = sb.popen([sys.executable, "-c", code], launch, stdout=subprocess.PIPE)
        out, _ = proc.communicate(timeout=60)
        sb.finish(launch, proc.pid)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out)
    finally:
        sb.close()


def test_memory_is_limited_per_process(tmp_path: Path) -> None:
    code = "try:\n    b = bytearray(1 << 30)\n    print('got')\nexcept MemoryError:\n    print(0)"
    assert run(tmp_path, code, memory=256 << 20).stdout.strip() == b"0"
    assert run(tmp_path, code).stdout.strip() == b"got"  # no limit unless asked for


def test_cpu_time_is_limited_per_process(tmp_path: Path) -> None:
    done = run(tmp_path, "while True:\n    pass", cpu=1)
    assert done.returncode != 0  # SIGXCPU, or SIGKILL at the hard limit


def kill_at_once(tmp_path: Path) -> None:
    """A command and its child, both running, killed as a grader stops a hand-in, and closed."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    sb = Sandbox(build_policy(Mode.READ_ONLY, ws, tmp_path / "home", tmp_path / "mca"), MECH)
    launch = sb.prepare(Grant(), dict(os.environ))
    # only the parent prints (both printing could interleave as b"11\n"); both sleep
    code = "import os, time\nif os.fork():\n    print(1, flush=True)\ntime.sleep(30)"
    proc = sb.popen([sys.executable, "-c", code], launch, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"1\n"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    sb.finish(launch, proc.pid)
    sb.close()


@pytest.mark.skipif(MECH.pids_cgroup is None, reason="no pids cgroup here (root only)")
def test_closing_removes_the_cgroup_even_right_after_a_kill(tmp_path: Path) -> None:
    assert MECH.pids_cgroup is not None
    mine = f"mca-{os.getpid()}-*"
    before = set(MECH.pids_cgroup.glob(mine))
    for _ in range(20):
        kill_at_once(tmp_path)
    assert set(MECH.pids_cgroup.glob(mine)) == before

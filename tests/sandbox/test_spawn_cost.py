"""What a sandboxed command's start and end cost mca (issue #33 item 6), judged from outside:
the command's status reaches mca while the process that waited on its PID namespace is still
ending (its end frees the namespaces, which costs the kernel milliseconds). strace holds that
process at its exit_group for a second: the status must not wait for it, and must be whole."""

from __future__ import annotations

import dataclasses
import os
import select
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.sandbox.box import Sandbox
from mca.sandbox.probe import probe
from mca.sandbox.rights import Grant, Mode, build_policy
from mca.sandbox.spawning.client import shared
from mca.tools.command import execute
from tests.leftovers import marker, opening, released, zombie_child

FULL = probe()
pytestmark = pytest.mark.slow  # commands in the sandbox, strace holding processes


def _box(tmp_path: Path, name: str) -> Sandbox:
    ws = tmp_path / name
    ws.mkdir()
    (ws / ".git").mkdir()
    policy = build_policy(Mode.WORKSPACE_WRITE, ws, tmp_path / "home", tmp_path / "mh")
    return Sandbox(policy, FULL)


def _attached(strace: subprocess.Popen[bytes], seconds: float = 20.0) -> bool:
    """strace said it attached (its first line on stderr)."""
    assert strace.stderr is not None
    ready, _, _ = select.select([strace.stderr], [], [], seconds)
    return bool(ready) and b"attached" in strace.stderr.readline()


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Sandbox]:
    """A fresh sandbox whose commands start under strace, which holds every process of the
    spawner's at its exit_group for one second."""
    if not FULL.user_namespaces:
        pytest.skip("no user namespaces here: no PID namespace, no waiter")
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    warm = _box(tmp_path, "warm")
    assert execute("true", str(warm.policy.workspace), 30, sandbox=warm).code == 0
    warm.close()
    (spawner,) = shared().pids()
    hold = "exit_group:delay_enter=1000000"
    argv = ["strace", "-f", "-p", str(spawner), "-e", "trace=exit_group", "-e", f"inject={hold}"]
    strace = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        if not _attached(strace):
            pytest.skip("strace cannot attach to the spawner here")
        box = _box(tmp_path, "ws")
        yield box
        box.close()
    finally:
        strace.terminate()
        strace.wait(timeout=30)
        assert strace.stderr is not None
        strace.stderr.close()


def _exists(pid: int) -> bool:
    """Whether the process is still there (a zombie too), asked of the kernel, not /proc."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_status_does_not_wait_for_the_namespaces_to_be_freed(held: Sandbox) -> None:
    """Before: the spawner said a command had ended when it reaped the PID namespace's waiter,
    after the waiter's own end had freed the command's mount, IPC and PID namespaces (1 to 8 ms
    here, on every command). Now the waiter says the status first,
    once every process of the namespace has ended."""
    ws = str(held.policy.workspace)
    for code in (0, 7, 255):
        launch = held.prepare(Grant(), {"PATH": "/usr/bin:/bin"})
        proc = held.popen(["/bin/sh", "-c", f"exit {code}"], launch, cwd=ws)
        assert proc.wait(timeout=60) == code
        waiter_ending = _exists(proc.pid)  # held at its exit_group
        held.finish(launch, proc.pid)
        assert waiter_ending, "the status waited for the waiter's end"


@pytest.mark.parametrize("held_by", ["group", "cgroup"])
def test_what_a_command_leaves_running_is_killed_and_reaped(tmp_path: Path, held_by: str) -> None:
    """Without namespaces no process of a command leaves its group (seccomp refuses setsid and
    setpgid), so killing the group after the command ends all it left; the spawner, their
    subreaper, reaps them. Before, mca itself was the subreaper and found orphans in /proc: it
    left zombies under mca (1,192 under one CI pytest, 1,270 as an ordinary user), and where
    /proc was hidden a `setsid` daemon outlived its command. Judged without /proc: a marker
    every process holds, and this process's own children."""
    mech = probe(namespaces=False)
    if not mech.landlock_abi:
        pytest.skip("no Landlock here: no sandbox without namespaces")
    if held_by == "cgroup" and mech.pids_cgroup is None:
        pytest.skip("no pids cgroup here (root only)")
    if held_by == "group":  # what every ordinary user has
        mech = dataclasses.replace(mech, pids_cgroup=None)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    alive = marker(tmp_path / "alive")
    box = Sandbox(build_policy(Mode.WORKSPACE_WRITE, ws, tmp_path / "h", tmp_path / "mh"), mech)
    escapes = "(setsid sleep 60 &); (sleep 61 &); setsid -f sleep 62; nohup sleep 63 &"
    try:
        for _ in range(3):
            done = execute(opening(alive, escapes + " true"), str(ws), 30, sandbox=box)
            assert done.code == 0, done.output
            assert released(alive), "something the command started still runs"
        done = execute("setsid true; echo rc=$?", str(ws), 30, sandbox=box)
        assert "Operation not permitted" in done.output and "rc=1" in done.output
    finally:
        box.close()
    assert zombie_child() is None

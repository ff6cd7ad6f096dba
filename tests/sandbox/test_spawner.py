"""The spawner (mca/sandbox/spawning/spawner.py): sandboxed commands start from a small
single-threaded helper made once per process, not from a fork of mca (threaded, large) with
preexec_fn.

Judged from outside, in /proc: who forked each command and how many threads it has, what the
helper holds, what is left running after mca is killed, after a time limit, after Ctrl-C, and
after the helper itself is killed. Each test runs under every mechanism this system has."""

from __future__ import annotations

import contextlib
import dataclasses
import marshal
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mca.errors import ToolError
from mca.lab.childkit import ensure_kit
from mca.lab.launch import Limits, Unsandboxed
from mca.sandbox.box import Sandbox
from mca.sandbox.linux import CLONE_NEWNET, ChildPlan
from mca.sandbox.probe import Mechanisms, probe
from mca.sandbox.rights import Grant, Mode, build_policy
from mca.sandbox.spawning.client import Setup, Spawner, SpawnError, plan_to_wire, shared
from mca.tools.command import CommandInterrupted, execute
from tests.leftovers import commands_left, held, marker, opening, released, running

FULL = probe()
PROC = os.access(f"/proc/{os.getpid()}/status", os.R_OK)
KINDS = {
    "namespaces": FULL if FULL.user_namespaces else None,
    "landlock": probe(namespaces=False) if FULL.landlock_abi else None,
}
pytestmark = pytest.mark.slow  # commands in the sandbox, a helper process


@pytest.fixture(params=list(KINDS))
def box(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Sandbox]:
    mech: Mechanisms | None = KINDS[request.param]
    if mech is None:
        pytest.skip(f"{request.param}: not on this system")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    sb = Sandbox(build_policy(Mode.WORKSPACE_WRITE, ws, tmp_path / "home", tmp_path / "mh"), mech)
    yield sb
    sb.close()


def _status(pid: int) -> dict[str, str]:
    """A process's /proc status (for what only it shows: its threads, its parent)."""
    if not PROC:
        pytest.skip("/proc cannot be read here: a process's threads and parent are not shown")
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        return dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)


def _gone(pids: list[int], alive: Path | None = None, seconds: float = 10.0) -> bool:
    """These processes ended, and nothing holds the marker of the command (no /proc read)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(running(p) for p in pids) and not (alive and held(alive)):
            return True
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def _threads() -> Iterator[None]:
    """mca is threaded when it runs commands (the UI's, the reader's): so is this test."""
    stop = threading.Event()
    workers = [threading.Thread(target=stop.wait, daemon=True) for _ in range(3)]
    for t in workers:
        t.start()
    try:
        yield
    finally:
        stop.set()


def test_no_command_is_set_up_in_a_threaded_process(box: Sandbox, tmp_path: Path) -> None:
    """The process that forked the command (its parent while it runs) has one thread and is
    not mca; it runs as mca's user, holds no environment and nothing but its own descriptors
    (main: the parent was mca itself, with every thread it had)."""
    alive = marker(tmp_path / "alive")
    launch = box.prepare(Grant(), {"PATH": os.environ["PATH"]})
    with _threads():
        assert threading.active_count() > 1
        proc = box.popen(
            ["/bin/sh", "-c", opening(alive, "sleep 30")],
            launch,
            cwd=str(box.policy.workspace),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        parent = int(_status(proc.pid)["PPid"])
        assert parent != os.getpid()
        assert _status(parent)["Threads"] == "1"
        assert _status(parent)["Uid"].split()[:2] == [str(os.getuid())] * 2
        # the spawner, or its forker for this sandbox's cgroup (root: joining one is slow)
        assert parent in shared().pids() or int(_status(parent)["PPid"]) in shared().pids()
        try:
            environ = Path(f"/proc/{parent}/environ").read_bytes()
            fds = os.listdir(f"/proc/{parent}/fd")
        except PermissionError:  # non-dumpable, as mca: only root reads these
            return
        assert b"API_KEY" not in environ and len(environ) < 200, environ
        # its socket, its signal pipe, /dev/null, its own stderr file (unlinked), the
        # sandbox's namespaces: nothing of mca's
        ours = ("socket:", "pipe:", "/dev/null", "user:", "net:")
        links = [os.readlink(f"/proc/{parent}/fd/{fd}") for fd in fds]
        held = [x for x in links if not x.startswith(ours) and not x.endswith("(deleted)")]
        assert held == [], links
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        box.finish(launch, proc.pid)
    assert _gone([proc.pid], alive)


KILLED_MCA = """
import os, subprocess, sys
from pathlib import Path
from mca.sandbox.box import Sandbox
from mca.sandbox.rights import Grant, Mode, build_policy
from mca.sandbox.probe import probe
from mca.sandbox.spawning.client import shared
tmp, alive, kind = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
mech = probe(namespaces=kind == "namespaces")
sb = Sandbox(build_policy(Mode.WORKSPACE_WRITE, tmp, tmp / "home", tmp / "mh"), mech)
launch = sb.prepare(Grant(), {"PATH": os.environ["PATH"]})
proc = sb.popen(["/bin/sh", "-c", f"exec 9<{alive}; sleep 60 & sleep 60"], launch, cwd=str(tmp),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(proc.pid, *shared().pids(), flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_spawner_and_its_commands_end_when_mca_is_killed(kind: str, tmp_path: Path) -> None:
    """mca killed -9 (nothing of it runs to clean up): the spawner sees its socket close, kills
    what it started, and ends; nothing holding the command's marker is left."""
    if KINDS[kind] is None:
        pytest.skip(f"{kind}: not on this system")
    alive = marker(tmp_path / "alive")
    mca = subprocess.Popen(
        [sys.executable, "-c", KILLED_MCA, str(tmp_path), str(alive), kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    assert mca.stdout is not None
    command, spawner = (int(x) for x in mca.stdout.readline().split())
    assert running(command) and running(spawner)
    deadline = time.monotonic() + 10
    while not held(alive) and time.monotonic() < deadline:  # it runs, opening its marker
        time.sleep(0.02)
    assert held(alive)
    mca.kill()
    mca.wait()
    mca.stdin.close()  # type: ignore[union-attr]
    mca.stdout.close()
    assert _gone([spawner, command], alive), (held(alive), running(spawner))


def test_a_command_tree_is_killed_at_its_time_limit(box: Sandbox, tmp_path: Path) -> None:
    alive = marker(tmp_path / "alive")
    started = time.monotonic()
    done = execute(opening(alive, "sleep 60 & (sleep 61) & sleep 62"), "/", 1, sandbox=box)
    assert done.timed_out and time.monotonic() - started < 20
    assert _gone([], alive)


def test_a_command_tree_is_killed_at_ctrl_c(box: Sandbox, tmp_path: Path) -> None:
    alive = marker(tmp_path / "alive")
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(CommandInterrupted):
        execute(opening(alive, "sleep 60 & (sleep 61) & sleep 62"), "/", 30, sandbox=box)
    timer.join()
    assert _gone([], alive)


def test_a_killed_spawner_is_started_again(box: Sandbox) -> None:
    """The spawner killed between two commands: the next command starts a new one and runs."""
    assert execute("echo one", "/", 10, sandbox=box).output == "one\n"
    (first,) = shared().pids()
    os.kill(first, signal.SIGKILL)
    assert _gone([first])
    assert execute("echo two", "/", 10, sandbox=box).output == "two\n"
    (second,) = shared().pids()
    assert second != first


def test_a_command_running_when_the_spawner_dies_is_killed_and_said(
    box: Sandbox, tmp_path: Path
) -> None:
    alive = marker(tmp_path / "alive")
    launch = box.prepare(Grant(), {"PATH": os.environ["PATH"]})
    proc = box.popen(
        ["/bin/sh", "-c", opening(alive, "sleep 60 & sleep 61")],
        launch,
        cwd="/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    (spawner,) = shared().pids()
    os.kill(spawner, signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    assert getattr(proc, "lost", False)
    box.finish(launch, proc.pid)
    assert _gone([spawner, proc.pid], alive)


def test_a_spawner_that_cannot_start_is_one_line(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No interpreter to run it, or one that dies at once (tried twice): the command is not
    run, and the tool's result says why in one line."""
    launch = box.prepare(Grant(), {})
    with pytest.raises(SpawnError) as raised:
        monkeypatch.setattr(sys, "executable", "/nonexistent/python")
        Spawner().spawn(["/bin/true"], {}, launch.setup, cwd="/")
    assert "could not start" in str(raised.value) and "\n" not in str(raised.value)
    box.finish(launch, 0)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    monkeypatch.setattr("mca.sandbox.spawning.client._shared", Spawner())
    with pytest.raises(ToolError) as said:
        execute("echo never", "/", 10, sandbox=box)
    text = str(said.value)
    assert text.startswith("not run: the sandbox's spawner ended") and "\n" not in text, text
    assert "exit code 1" in text


def test_the_plan_crosses_whole() -> None:
    """Every field of the ChildPlan reaches the spawner as it was made (the plan is the
    interface: fields added to it travel without a change here)."""
    values: dict[str, Any] = {
        "namespaces": CLONE_NEWNET,
        "uid": 1000,
        "gid": 1000,
        "loopback_up": True,
        "binds": ((b"/a", b"/b"),),
        "writable": (b"/w",),
        "read_only": ((b"/r", 6),),
        "mount_proc": True,
        "rlimits": ((1, 2),),
        "cgroup_procs": b"/sys/fs/cgroup/x/cgroup.procs",
        "drop_caps": (21, 22),
        "ruleset_fd": 9,
        "masks": ((b"/s", True),),
        "mask_dir": b"/m",
        "remount": ((b"/", 2),),
        "strict": True,
    }
    fields = {f.name for f in dataclasses.fields(ChildPlan)}
    plan = ChildPlan(**{k: v for k, v in values.items() if k in fields})
    assert ChildPlan(**marshal.loads(marshal.dumps(plan_to_wire(plan)))) == plan


def test_the_lab_without_a_sandbox_starts_from_the_spawner_with_its_limits(
    tmp_path: Path,
) -> None:
    """The unsandboxed grader's children too (main: preexec_fn in the grader's threads)."""
    launcher = Unsandboxed(Limits(memory_mb=300), ensure_kit(tmp_path / "kit"))
    read, write = os.pipe()
    try:
        with open(os.devnull, "wb") as err:
            proc = launcher.start((read, write), err)
        parent = int(_status(proc.pid)["PPid"])
        deadline = time.monotonic() + 10  # set in the child after it is started: wait for them
        while time.monotonic() < deadline:
            limits = Path(f"/proc/{proc.pid}/limits").read_text()  # (_status: /proc is read)
            if str(300 * 1024 * 1024) in limits:
                break
            time.sleep(0.02)
        launcher.stop(proc)
    finally:
        os.close(read)
        os.close(write)
        launcher.close()
    assert parent != os.getpid() and parent in shared().pids()
    assert str(300 * 1024 * 1024) in limits


def test_a_bare_setup_runs_nothing_before_exec() -> None:
    """Setup(None): the child only starts a session of its own (a test's unsandboxed box)."""
    proc = shared().spawn(
        [sys.executable, "-c", "import os; print(os.getpid(), os.getsid(0))"],
        {"PATH": os.environ["PATH"]},
        Setup(None, confine=False),
        cwd="/",
        stdout=subprocess.PIPE,
    )
    out, _ = proc.communicate(timeout=10)
    assert out is not None
    pid, sid = out.split()
    assert pid == sid and proc.returncode == 0


def test_a_threaded_process_probes_through_the_spawner() -> None:
    """The REPL builds its session (and probes the system) in a thread: the probe's fork is the
    spawner's then, and finds what a single-threaded probe finds."""
    with _threads():
        found = probe()
        assert shared().pids()
    assert found == FULL


def test_the_spawner_imports_only_the_set_up() -> None:
    """What the helper loads: the child's set-up (linux, landlock, seccomp; nproc, which counts
    this user's tasks before a start) and its own modules (spawning: spawner, child, frames,
    started: the commands it started); nothing of the rest of mca, no threads, no subprocess."""
    from mca.sandbox.spawning.client import MCA_PARENT

    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import mca.sandbox.spawning.spawner;"
        " print(' '.join(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, MCA_PARENT],
        capture_output=True,
        text=True,
        check=True,
        env={},
    ).stdout.split()
    ours = {m for m in out if m.startswith("mca.")}
    allowed = {"linux", "landlock", "seccomp", "nproc", "spawning"}
    allowed |= {"spawning.spawner", "spawning.child", "spawning.frames", "spawning.started"}
    assert ours <= {f"mca.sandbox.{m}" for m in allowed} | {"mca.sandbox"}, ours
    assert not {"threading", "subprocess", "pathlib"} & set(out), out


def test_passed_descriptors_never_take_the_place_of_the_landlock_ruleset(box: Sandbox) -> None:
    """The ruleset comes along after stdio and pass_fds; putting those in place at their low
    numbers (the lab's pipes are such) must not close it in the child. Before the fix, a
    ruleset received at one of those numbers was overwritten: `landlock restrict_self: File
    descriptor in bad state`, exit 126 (seen with the lab's two grading jobs)."""
    pipes = [os.pipe() for _ in range(16)]  # numbers from 3 up: the spawner's own are low too
    passed = sorted(fd for pair in pipes for fd in pair)
    try:
        for _ in range(3):
            launch = box.prepare(Grant(), {"PATH": "/usr/bin:/bin"})
            proc = box.popen(
                ["/bin/sh", "-c", "echo ran"],
                launch,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=passed,
            )
            out, err = proc.communicate(timeout=60)
            box.finish(launch, proc.pid)
            assert proc.returncode == 0 and out == b"ran\n", err
    finally:
        for fd in passed:
            os.close(fd)


def test_what_a_command_left_ends_with_its_first_process(tmp_path: Path) -> None:
    """Without a PID namespace the spawner kills a command's group as its first process ends,
    before reaping it (its zombie keeps the group's id theirs): a sleep left in the background
    is gone at once, whatever mca does next, and the spawner, asked, says nothing is left."""
    mech = probe(namespaces=False)
    if not mech.landlock_abi:
        pytest.skip("no Landlock here: no sandbox without namespaces")
    ws = tmp_path / "ws"
    ws.mkdir()
    alive = marker(tmp_path / "alive")
    box = Sandbox(build_policy(Mode.WORKSPACE_WRITE, ws, tmp_path / "h", tmp_path / "mh"), mech)
    try:
        launch = box.prepare(Grant(), {"PATH": os.environ["PATH"]})
        proc = box.popen(
            ["/bin/sh", "-c", opening(alive, "sleep 60 >/dev/null 2>&1 & exit 0")],
            launch,
            cwd=str(ws),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert proc.wait(timeout=30) == 0
        assert released(alive)  # before mca's own clean-up (box.finish)
        assert commands_left() == 0
        box.finish(launch, proc.pid)
    finally:
        box.close()

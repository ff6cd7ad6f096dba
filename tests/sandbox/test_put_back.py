"""Protected paths are put back on every ending of a command (issue 45, item 2): Esc or Ctrl-C,
SIGTERM, and mca killed outright, whose record the next mca in the workspace puts back before
anything reads it. The oracle is the disk: the git directories' digests before and after."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mca.process import signals
from mca.tools.command import CommandInterrupted, execute
from tests.leftovers import marker, opening, released
from tests.sandbox.mechanisms import chosen, used
from tests.sandbox.world import World, _environ, build_world

REPO = Path(__file__).resolve().parents[2]
# The two ways .git is kept: a read-only mount (namespaces), a record put back (Landlock only).
MECHANISMS = chosen(only=("namespaces", "namespaces-only", "landlock"))
TAMPER = (
    "printf '[core]\\n\\tfsmonitor = touch {outside}/pwn\\n' >> .git/config;"
    " git config -f vendor/lib/.git/config core.fsmonitor 'touch {outside}/pwn';"
    " mkdir -p .agents/skills/x && echo planted > .agents/skills/x/SKILL.md;"
    " echo tampered; sleep 60"
)


@pytest.fixture(params=sorted(MECHANISMS) or ["none"])
def world(request: pytest.FixtureRequest, world_root: Path) -> Iterator[World]:
    if request.param == "none":
        pytest.skip("no sandbox mechanism on this system")
    mech = MECHANISMS[request.param]
    used(mech)
    w = build_world(world_root, mech)
    yield w
    w.sandbox.close()
    w.listener.close()


def _stopper(stop: Callable[[], None]) -> tuple[Callable[[bytes], None], threading.Event]:
    """A reader of the command's output that calls `stop` (from the reader's thread, as the
    keyboard's thread sends Esc) once the command says it tampered."""
    said = threading.Event()
    seen = bytearray()

    def feed(chunk: bytes) -> None:
        seen.extend(chunk)
        if b"tampered" in seen and not said.is_set():
            said.set()
            stop()

    return feed, said


@pytest.mark.parametrize("how", ["esc", "sigterm"])
def test_a_stopped_command_leaves_no_protected_path_changed(world: World, how: str) -> None:
    """Esc (SIGINT to the turn's thread) and SIGTERM (a CI job's timeout) while the command
    sleeps after appending core.fsmonitor to .git/config and to a nested repository's, and
    making .agents/skills: all of it is as before, and said (main: kept, the payload ran at
    the next git status)."""
    before = world.snapshot()
    main = threading.main_thread().ident
    assert main is not None and threading.current_thread() is threading.main_thread()
    old = {s: signal.getsignal(s) for s in signals.TERMINATING}
    if how == "esc":
        feed, said = _stopper(lambda: signal.pthread_kill(main, signal.SIGINT))
    else:
        signals.install()
        feed, said = _stopper(lambda: os.kill(os.getpid(), signal.SIGTERM))
    try:
        with _environ(world.env), pytest.raises(CommandInterrupted) as stopped:
            execute(world.command(TAMPER), str(world.ws), 60, feed, sandbox=world.sandbox)
    finally:
        signals.install()  # forgets the signal that came
        for sig, handler in old.items():
            signal.signal(sig, handler)
    assert said.is_set(), stopped.value.output
    assert released(world.marker), "the command still runs"
    after = world.snapshot()
    assert after["git"] == before["git"]
    assert after["nested"] == before["nested"]
    assert not (world.ws / ".agents" / "skills").exists()
    assert not (world.outside / "pwn").exists()
    notes = " ".join(stopped.value.notes)
    assert ".agents/skills" in notes, notes
    if not world.sandbox.namespaces:  # a mount kept .git read-only: nothing to put back there
        assert "put .git/ back" in notes, notes
    assert not list((world.root / "mcahome" / "sandbox").glob("*/pending/*.json"))


def _mca(*args: str, refuse: tuple[str, ...]) -> list[str]:
    confine = [sys.executable, "-m", "tests.confine", *refuse, "--"] if refuse else []
    return [*confine, sys.executable, "-m", "mca", *args]


def _script(path: Path, *commands: str) -> Path:
    lines = [
        {"content": "", "tool_calls": [{"name": "run_command", "arguments": {"command": c}}]}
        for c in commands
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in [*lines, {"content": "done"}]))
    return path


def _hello(
    ws: Path, script: Path, refuse: tuple[str, ...], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """A later `mca -p hello` in the workspace, with a script that only answers."""
    return subprocess.run(
        _mca("-C", str(ws), "-p", "hello", refuse=refuse),
        env={**env, "MCA_MOCK_SCRIPT": str(_script(script))},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


@pytest.mark.slow
@pytest.mark.parametrize("refuse", [(), ("--no-userns",)], ids=["probe", "no-userns"])
def test_mca_killed_during_a_command_is_put_back_by_the_next_mca(
    tmp_path: Path, refuse: tuple[str, ...]
) -> None:
    """kill -9 of mca while its command sleeps after tampering: the spawner ends the command,
    and the next mca in the workspace puts .git/config back before anything else, says so,
    and keeps what stood there (main: the tampered config stayed, and became the baseline)."""
    from mca.sandbox.probe import probe

    if not probe(namespaces="--no-userns" not in refuse).available:
        pytest.skip("no sandbox here: mca asks before every command, and -p runs none")
    ws, home, outside = tmp_path / "ws", tmp_path / "home", tmp_path / "outside"
    for d in (home, outside):
        d.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "MCA_HOME": str(home / ".mca"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PYTHONPATH": str(REPO),
    }
    subprocess.run(["git", "init", "-q", str(ws)], check=True, env=env)
    subprocess.run(["git", "init", "-q", str(ws / "vendor" / "lib")], check=True, env=env)
    config = (ws / ".git" / "config").read_text()
    alive = marker(tmp_path / "alive")
    tamper = opening(alive, TAMPER.format(outside=outside))
    script = _script(tmp_path / "s.jsonl", tamper)
    first = subprocess.Popen(
        _mca("-C", str(ws), "-p", "go", refuse=refuse),
        env={**env, "MCA_MOCK_SCRIPT": str(script)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert first.stderr is not None
    planted = ws / ".agents" / "skills" / "x" / "SKILL.md"
    deadline = time.monotonic() + 60
    while not planted.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert planted.exists(), first.stderr.read().decode() if first.poll() is not None else ""
    first.kill()
    first.wait()
    first.stderr.close()
    assert released(alive, 20), "the command outlived mca"
    if "--no-userns" in refuse:  # no mount kept it: the record is what puts it back
        assert "fsmonitor" in (ws / ".git" / "config").read_text()
    again = _hello(ws, tmp_path / "t.jsonl", refuse, env)
    assert again.returncode == 0, again.stderr
    assert "an earlier mca ended during a sandboxed command" in again.stderr, again.stderr
    assert (ws / ".git" / "config").read_text() == config
    assert "fsmonitor" not in (ws / "vendor" / "lib" / ".git" / "config").read_text()
    assert not (ws / ".agents" / "skills").exists()
    aside = list((home / ".mca" / "sandbox").glob("*/aside/*"))
    assert len(aside) == 1, again.stderr
    assert (aside[0] / ".agents" / "skills" / "x" / "SKILL.md").read_text() == "planted\n"
    if "--no-userns" in refuse:
        assert "fsmonitor" in (aside[0] / ".git" / "config").read_text()
    third = _hello(ws, tmp_path / "u.jsonl", refuse, env)  # said once: the record is gone
    assert "an earlier mca" not in third.stderr, third.stderr


SAVE = """
import sys
from pathlib import Path
from mca.workspace.guard import record
from mca.workspace.pending import Pending
ws, state = Path(sys.argv[1]), Path(sys.argv[2])
pending = Pending(state, ws)
pending.save(record((ws / ".git",), contents=True, base=ws), "make test")
print(pending.path)
"""


def _record(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace with a .git/config, and the record an mca saved before a command and left
    when it ended (a process of its own, gone: its lock is free)."""
    from mca.sandbox.rights import state_dir

    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    state = state_dir(tmp_path / "mcahome", ws)
    out = subprocess.run(
        [sys.executable, "-c", SAVE, str(ws), str(state)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return ws, state, Path(out.stdout.strip())


def test_a_record_whose_mca_still_runs_is_left_to_it(tmp_path: Path) -> None:
    """Two mca in one workspace: the second one's start does not put back what the first is
    running a command over (its lock is held), and does once the first is gone."""
    from mca.workspace.pending import recover

    ws, state, path = _record(tmp_path)
    (ws / ".git" / "config").write_text("[core]\n\tfsmonitor = x\n")
    code = (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR);"
        " fcntl.flock(fd, fcntl.LOCK_EX); print(flush=True); time.sleep(60)"
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", code, str(path.with_suffix(".lock"))], stdout=subprocess.PIPE
    )
    try:
        assert owner.stdout is not None and owner.stdout.readline() == b"\n"
        assert recover(state, ws) == []
        assert "fsmonitor" in (ws / ".git" / "config").read_text()
    finally:
        owner.kill()
        owner.wait()
        if owner.stdout is not None:
            owner.stdout.close()
    notes = recover(state, ws)
    assert "an earlier mca ended during a sandboxed command (make test)" in notes[0], notes
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert not path.exists()
    assert not list((state / "kept").glob("*/*")), "the kept bytes outlived their record"


@pytest.mark.parametrize(
    "where", ["/etc/passwd", "{outside}/file", "{ws}/../outside/file", "{ws}"], ids=str
)
def test_a_record_that_names_a_path_outside_the_workspace_puts_nothing_back(
    tmp_path: Path, where: str
) -> None:
    """A record is mca's own, but read as untrusted: one that names a path outside the
    workspace is refused whole, said, kept for a look, and nothing anywhere changes."""
    from mca.workspace.pending import recover

    ws, state, path = _record(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "file").write_text("mine\n")
    doc = json.loads(path.read_text())
    target = where.format(ws=ws, outside=outside)
    doc["existed"][target] = False  # "it was not there": removed, if it were believed
    path.write_text(json.dumps(doc))
    (ws / ".git" / "config").write_text("[core]\n\tfsmonitor = x\n")
    notes = recover(state, ws)
    assert len(notes) == 1 and "unreadable" in notes[0], notes
    assert (outside / "file").read_text() == "mine\n"
    assert Path("/etc/passwd").exists() and ws.is_dir()
    assert "fsmonitor" in (ws / ".git" / "config").read_text()  # nothing put back from it
    assert path.with_suffix(".unreadable").exists()


def test_a_record_that_cannot_be_kept_on_disk_is_said_and_the_command_runs(
    world: World,
) -> None:
    """$MCA_HOME's sandbox folder is not one (a full disk, a file in the way): the command
    runs, and what is lost if mca dies during it is said beside its output."""
    (world.root / "mcahome" / "sandbox").write_text("in the way\n")
    done = world.run("echo ran")
    assert "ran" in done.output
    assert any("could not keep the protected paths' record" in r for r in done.reports)

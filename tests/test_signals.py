"""SIGTERM and SIGHUP end mca the way Ctrl-C does (issue 34, item 3): the command's whole tree
(and the sandbox's waiting helper, a forked copy of mca) ends, the turn ends with its line or
event, the conversation is saved with the steps that completed, and mca exits 143 / 129. The
oracle is /proc: after mca exits, no process of the command's tree and no mca is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from tests import leftovers
from tests.leftovers import opening, released
from tests.ptyscreen import MCA, Screen, as_a_terminal, child_env, wait_until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
    pytest.mark.slow,  # the installed mca, a real command, a signal
]
EXIT = {signal.SIGTERM: 143, signal.SIGHUP: 129}


def alive(ws: Path) -> Path:
    """The marker every process of the test's command holds open (tests/leftovers.py): made
    beside the workspace, where the command may read it."""
    return ws.parent / "alive"


def none_left(ws: Path) -> None:
    """Nothing of the command still runs: no process holds the marker (no /proc read)."""
    assert released(alive(ws)), "a process of the command still runs"


def script_for(ws: Path, marker: str) -> Path:
    """An edit that completes, then a long command that writes `started` and waits (holding
    the marker, as all it starts does)."""
    script = ws.parent / "script.jsonl"
    command = opening(leftovers.marker(alive(ws)), f"touch started; sleep 120 # {marker}")
    calls = [
        {"name": "write_file", "arguments": {"path": "notes.txt", "content": "edited\n"}},
        {"name": "run_command", "arguments": {"command": command}},
    ]
    script.write_text("".join(json.dumps({"tool_calls": [c]}) + "\n" for c in calls))
    return script


def saved(ws: Path) -> str:
    """The saved conversation(s) of this workspace's home, as text."""
    files = sorted((ws.parent / "home" / "sessions").glob("*.jsonl"))
    return "".join(f.read_text() for f in files)


def assert_saved_with_its_steps(ws: Path) -> None:
    text = saved(ws)
    assert '"write_file"' in text and "the user cancelled this turn here" in text
    assert (ws / "notes.txt").read_text() == "edited\n"  # and the disk agrees


OUTPUTS = {"text": (), "json": ("--json",), "stream-json": ("--output-format", "stream-json")}


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_signal_during_a_command_of_p_ends_it_all(
    ws: Path, output: str, sig: signal.Signals
) -> None:
    marker = f"mca-signal-{uuid.uuid4().hex[:12]}"
    env = child_env(ws, MCA_MOCK_SCRIPT=str(script_for(ws, marker)))
    argv = [str(MCA), "-p", f"edit, then wait ({marker})", "--yes", *OUTPUTS[output]]
    proc = subprocess.Popen(
        argv, cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until(lambda: (ws / "started").exists(), "the command started")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == EXIT[sig], err
    none_left(ws)
    assert_saved_with_its_steps(ws)
    line = f"turn cancelled ({sig.name}); the conversation keeps its 1 completed tool call"
    if output == "stream-json":
        end = json.loads(out.splitlines()[-1])
        assert end["type"] == "turn.end" and end["stop_reason"] == "interrupted"
        assert end["notice"].startswith(line)
    elif output == "json":
        assert json.loads(out)["stopped"].startswith(line)
    assert err.count("turn cancelled") == (output != "stream-json")


@pytest.mark.pty
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_signal_during_a_command_in_the_repl_ends_it_all(ws: Path, sig: signal.Signals) -> None:
    marker = f"mca-signal-{uuid.uuid4().hex[:12]}"
    env = child_env(ws, MCA_MOCK_SCRIPT=str(script_for(ws, marker)))
    term = Screen(ws, ["--yes"], env)
    term.expect("mca>")
    term.on_screen("skills: 0 loaded")
    term.child.sendline(f"edit, then wait ({marker})")
    wait_until(lambda: (ws / "started").exists(), "the command started")
    assert term.child.pid is not None
    os.kill(term.child.pid, sig)
    term.ended()
    assert term.child.exitstatus == EXIT[sig], term.text()
    none_left(ws)
    assert_saved_with_its_steps(ws)


@pytest.mark.pty
def test_a_terminal_that_goes_away_during_a_command_ends_it_all(ws: Path) -> None:
    """A real hangup: the terminal's master side closes (the kernel sends SIGHUP, and every
    write to the terminal fails from then on). Nothing is left, the conversation is saved, no
    crash report is written, and mca exits 129."""
    marker = f"mca-signal-{uuid.uuid4().hex[:12]}"
    term = Screen(ws, ["--yes"], child_env(ws, MCA_MOCK_SCRIPT=str(script_for(ws, marker))))
    term.expect("mca>")
    term.on_screen("skills: 0 loaded")
    term.child.sendline(f"edit, then wait ({marker})")
    wait_until(lambda: (ws / "started").exists(), "the command started")
    pid = term.child.pid
    assert pid is not None
    os.close(term.child.child_fd)  # the terminal window is closed
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 129
    none_left(ws)
    assert_saved_with_its_steps(ws)
    assert not list((ws.parent / "home" / "logs").glob("crash-*"))


def test_sigterm_at_the_prompt_ends_the_repl_with_143(ws: Path) -> None:
    env = child_env(ws, MOCK="1")
    proc = subprocess.Popen(
        [str(MCA)],
        cwd=ws,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_terminal,
    )
    out = proc.stdout
    assert out is not None
    try:
        wait_until(lambda: "skills:" in (out.readline() or "skills:"), "the banner")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 143 and "Traceback" not in err, err


@pytest.mark.parametrize("refuse", [(), ("no-userns",)], ids=["userns", "no-userns"])
def test_sigterm_as_an_ordinary_user_leaves_nothing(refuse: tuple[str, ...]) -> None:
    """The same as an ordinary account, with the namespaces (the forked waiter) and without
    them (the command's process group, which nothing may leave, killed whole)."""
    import shutil

    from tests.unpriv import as_user, give, skip_reason

    if skip_reason():
        pytest.skip(skip_reason())
    top = Path("/tmp") / f"mca-unpriv-signal-{os.getpid()}"
    shutil.rmtree(top, ignore_errors=True)
    (top / "ws").mkdir(parents=True)
    ws, marker = top / "ws", f"mca-signal-{uuid.uuid4().hex[:12]}"
    script = script_for(ws, marker)
    give(top)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(top), "MCA_HOME": str(top / "home")}
    argv = [*as_user(*refuse, hide_proc=False), "-C", str(ws), "-p", f"go ({marker})", "--yes"]
    proc = subprocess.Popen(
        argv, env={**env, "MCA_MOCK_SCRIPT": str(script)}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until(lambda: (ws / "started").exists(), "the command started")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 143, err
        none_left(ws)
        assert_saved_with_its_steps(ws)
    finally:
        proc.kill()
        shutil.rmtree(top, ignore_errors=True)

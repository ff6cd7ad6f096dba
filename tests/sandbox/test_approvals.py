"""What a person approves is what runs: the REPL in-process with a scripted model, judged by
what happened on disk (a marker a command would leave) and by how many questions were asked."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from mca.cli.start import repl_for
from mca.config.settings import load_settings
from mca.sandbox.probe import probe

ENTER, CTRL_D = "\r", "\x04"
ASKED = "run_command wants to run exactly this"
MECH = probe()
needs_sandbox = pytest.mark.skipif(not MECH.available, reason="no Landlock on this kernel")
needs_namespaces = pytest.mark.skipif(
    not MECH.user_namespaces, reason="read-only .git needs a mount namespace here"
)


def repl(ws: Path, commands: list[str], keys: str, **env: str) -> str:
    """Run one turn whose model asks for `commands`, answering with `keys`."""
    script = ws.parent / "s.jsonl"
    lines = [
        {"content": "", "tool_calls": [{"name": "run_command", "arguments": {"command": c}}]}
        for c in commands
    ]
    script.write_text("".join(json.dumps(x) + "\n" for x in [*lines, {"content": "done"}]))
    base = {"MCA_MOCK_SCRIPT": str(script), "MCA_HOME": str(ws.parent / "home")}
    base["HOME"] = str(ws.parent)
    settings = load_settings({**base, **env}, workspace=ws)
    out = io.StringIO()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(f"go{ENTER}{keys}{CTRL_D}")
        pipe.close()
        r = repl_for(settings, input=pipe, output=DummyOutput(), out=out, history=InMemoryHistory())
        r.run()
    return out.getvalue()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(ws)], check=True, env=env)
    tools = ws / "tools"
    tools.mkdir()
    (tools / "git").write_text(f"#!/bin/sh\ntouch {tmp_path}/shipped-git-ran\n")
    (tools / "git").chmod(0o755)
    return ws


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["off", "workspace-write"])
def test_always_on_git_status_covers_nothing_else(ws: Path, sandbox: str) -> None:
    """'a' to `git status`, then what the issue found covered by a bare-name "always": each is
    asked (answered n), and none of their markers appear."""
    if sandbox != "off" and not MECH.available:
        pytest.skip("no Landlock on this kernel")
    marker = ws.parent / "pwned"
    others = [
        "git status --short",  # the same program and first argument: covered
        "./tools/git status",
        f"git -c core.fsmonitor='touch {marker}' status",
        f"git -c alias.x='!touch {marker}' x",
        "PATH=./tools:$PATH git status",
        f"git status; touch {marker}",
    ]
    out = repl(
        ws,
        ["git status", *others],
        "a" + ENTER + ("n" + ENTER) * 5,
        MCA_MODE="ask",
        MCA_SANDBOX=sandbox,
    )
    assert out.count(ASKED) == 6  # git status, then each of the five not covered
    assert not marker.exists() and not (ws.parent / "shipped-git-ran").exists()


def test_a_padded_command_shows_its_padding(ws: Path) -> None:
    command = "ls" + " " * 500 + "; touch hidden" + "\n" * 3 + "  touch also-hidden  "
    out = repl(ws, [command], "n" + ENTER, MCA_MODE="ask")
    assert "ls[500 spaces]; touch hidden" in out
    assert (
        "2 | (empty line)" in out and "4 | [2 spaces]touch also-hidden" in out
    )  # its ends: stripped
    assert not (ws / "hidden").exists() and not (ws / "also-hidden").exists()


def test_invisible_characters_are_shown_as_codes(ws: Path) -> None:
    command = "echo safe\u200b\u2028rm -rf x\u00a0y\U000e0041"
    out = repl(ws, [command], "n" + ENTER, MCA_MODE="ask")
    assert "echo safe\\u200b\\u2028rm -rf x\\u00a0y\\U000e0041" in out


def test_a_command_too_long_to_read_is_refused(ws: Path) -> None:
    command = "true\n" * 300 + "touch late"
    out = repl(ws, [command], "y" + ENTER, MCA_MODE="ask")
    assert ASKED not in out and "301 lines long" in out and not (ws / "late").exists()


@needs_sandbox
@needs_namespaces
def test_git_commit_is_offered_again_with_git_writable(ws: Path) -> None:
    (ws / "f.txt").write_text("x\n")
    commit = "git add f.txt && git -c user.name=t -c user.email=t@t commit -qm one"
    out = repl(ws, [commit], "y" + ENTER)  # auto-edit: no first question, one to widen
    assert ASKED not in out and "run it again" not in out  # (the question goes to the asker)
    assert "the sandbox stopped this command from writing .git/" in out
    log = subprocess.run(["git", "-C", str(ws), "log", "--oneline"], capture_output=True, text=True)
    assert "one" in log.stdout


@needs_sandbox
@needs_namespaces
def test_declining_more_leaves_git_untouched_and_says_so(ws: Path) -> None:
    (ws / "f.txt").write_text("x\n")
    commit = "git add f.txt && git -c user.name=t -c user.email=t@t commit -qm one"
    out = repl(ws, [commit], "n" + ENTER)
    log = subprocess.run(["git", "-C", str(ws), "log", "--oneline"], capture_output=True, text=True)
    assert log.stdout == "" and "the user did not allow more" in out


@needs_sandbox
def test_widening_asks_even_in_yolo(ws: Path) -> None:
    before = (ws / ".git" / "config").read_bytes()
    out = repl(ws, ["echo '[alias] x = !touch pwned' >> .git/config"], "n" + ENTER, MCA_MODE="yolo")
    assert "the sandbox stopped this command from writing .git/" in out
    assert "the user did not allow more" in out
    assert (ws / ".git" / "config").read_bytes() == before


@needs_sandbox
def test_allow_git_commits_in_yolo_without_a_question(ws: Path) -> None:
    """The person said so once (allow_git): a commit asks nothing; .mca/ stays protected (its
    wall is still asked about: declined here)."""
    (ws / "f.txt").write_text("x\n")
    commit = "git add f.txt && git -c user.name=t -c user.email=t@t commit -qm one"
    evil = "mkdir -p .mca && echo x > .mca/evil"
    out = repl(ws, [commit, evil], "n" + ENTER, MCA_MODE="yolo", MCA_ALLOW_GIT="1")
    log = subprocess.run(["git", "-C", str(ws), "log", "--oneline"], capture_output=True, text=True)
    assert "one" in log.stdout and not (ws / ".mca" / "evil").exists()
    assert out.count("the sandbox stopped this command") == 1, out  # .mca/'s, not the commit's
    assert out.index("the sandbox stopped this command") > out.index(evil)
    assert "sandboxed: workspace-write, no network, .git/ writable" in out


@pytest.mark.slow
@needs_sandbox
def test_the_network_is_offered_once_and_named(ws: Path) -> None:
    """A command that needs the network: refused, the way to allow it named; allowed once, it
    reaches a listener this test runs."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]
    got: list[bytes] = []

    def accept() -> None:
        conn, _ = server.accept()
        got.append(conn.recv(100))
        conn.close()

    threading.Thread(target=accept, daemon=True).start()
    command = (
        f"python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', {port}));"
        " s.sendall(b'hello')\""
    )
    out = repl(ws, [command], "n" + ENTER)
    assert "--allow-network" in out and got == []
    out = repl(ws, [command], "y" + ENTER)
    assert "run again with the network" in out
    server.settimeout(5)
    for _ in range(50):
        if got:
            break
        threading.Event().wait(0.1)
    server.close()
    assert got == [b"hello"]


@needs_sandbox
def test_a_command_that_succeeded_is_not_offered_more(ws: Path) -> None:
    """Output that merely mentions a refused connection is no reason to widen anything."""
    out = repl(ws, ["echo 'curl: (7) Connection refused (expected by this test)'"], "")
    assert "the sandbox stopped" not in out and "did not allow more" not in out


def test_auto_edit_asks_where_nothing_contains_commands(ws: Path) -> None:
    """The default mode runs a command without a question only inside a sandbox; where the
    system has none, it says so once and every command asks (declined here: nothing runs)."""
    out = repl(ws, ["echo hi > made.txt"], "n" + ENTER)
    if MECH.available:
        assert ASKED not in out and (ws / "made.txt").exists(), out
        assert "commands run unsandboxed" not in out
    else:
        assert ASKED in out and not (ws / "made.txt").exists(), out
        assert out.count("commands run unsandboxed") == 1, out

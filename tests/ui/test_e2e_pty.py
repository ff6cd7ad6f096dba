"""End to end: the installed `mca` command in a real pseudo-terminal, driven like a person."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.ptyscreen import MCA, as_a_terminal, child_env, wait_until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.pty,
    pytest.mark.slow,  # the installed mca in a pseudo-terminal
]


def spawn(ws: Path, *args: str, **env: str) -> pexpect.spawn[str]:
    child = pexpect.spawn(
        str(MCA),
        ["-C", str(ws), *args],
        env=child_env(ws, **env),
        encoding="utf-8",
        timeout=15,
        dimensions=(40, 120),
        preexec_fn=as_a_terminal,
    )
    child.expect("mca>")
    return child


@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_type_a_request_see_tools_undo_and_exit(ws: Path) -> None:
    (ws / "greeting.txt").write_text("hello world\n")
    child = spawn(ws, MOCK="1")
    assert "offline mock model" in (child.before or "")
    child.sendline('replace "world" with "terminal" in greeting.txt')
    child.expect(r"edit_file\(path=greeting.txt")
    child.expect("edited greeting.txt")
    child.expect("mca>")
    assert (ws / "greeting.txt").read_text() == "hello terminal\n"
    child.sendline("/undo")
    child.expect("restored greeting.txt")
    child.expect("mca>")
    assert (ws / "greeting.txt").read_text() == "hello world\n"
    child.sendcontrol("d")
    child.expect("bye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_ctrl_c_during_a_command_cancels_the_turn_and_keeps_the_session(ws: Path) -> None:
    child = spawn(ws, "--yes", MOCK="1")
    child.sendline("run `echo started-it; touch began; sleep 30`")
    child.expect(r"run_command\(command=echo started-it; touch began; sleep 30\)")
    # nothing is on the screen while a command runs (its output comes when it ends): the
    # command's own mark says it has started before Ctrl-C is pressed
    wait_until((ws / "began").exists, "the command's start")
    child.sendcontrol("c")
    child.expect("command interrupted; its process group was killed. Last output:")
    child.expect("started-it")
    child.expect("turn cancelled")
    child.expect("mca>")
    child.sendline("/tools")
    child.expect("update_plan")
    child.expect("mca>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_history_persists_between_sessions(ws: Path) -> None:
    child = spawn(ws, MOCK="1")
    child.sendline("list the files")
    child.expect("The workspace has")
    child.expect("mca>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    assert "list the files" in (ws.parent / "home" / "history").read_text()


@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_pasted_block_stays_one_message_and_esc_enter_adds_a_line(ws: Path, tmp_path: Path) -> None:
    script = tmp_path / "echo.jsonl"
    script.write_text('{"content": "got it"}\n{"content": "got that too"}\n')
    child = spawn(ws, MCA_MOCK_SCRIPT=str(script))
    child.send("\x1b[200~first pasted line\nsecond pasted line\x1b[201~")
    child.send("\r")
    child.expect("got it")
    child.expect("mca>")
    child.send("typed line")
    child.send("\x1b\r")  # Esc-Enter: a newline, not a submit
    child.send("after the newline\r")
    child.expect("got that too")
    child.expect("mca>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    history = (ws.parent / "home" / "history").read_text()
    assert "+first pasted line\n+second pasted line\n" in history
    assert "+typed line\n+after the newline\n" in history

"""One question style (issue 34, item 10): every question mca asks takes one key on a terminal,
shows its default in capitals, and a diff asked about is printed once; `mca --help` and
docs/using.md say what the approval modes do, as the code does it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from mca.cli.args import repl_parser
from mca.modes import DEFAULT_MODE, MODES
from tests.conftest import REPO
from tests.ptyscreen import MCA, Screen
from tests.ui.test_live_pty import start
from tests.ui.test_terminal_pty import env_for

TMUX = (100, 30)  # a tmux pane's size, as the issue was found in
in_a_terminal = pytest.mark.skipif(not MCA.exists(), reason="mca is not installed here")


def at_prompt(term: Screen) -> Callable[[str], bool]:
    """The cursor on an empty prompt (the screen may have scrolled past earlier ones), the
    mode's word before it in any mode but the default."""
    return lambda _: term.line_at_cursor().split()[-1:] == ["mca>"]


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@in_a_terminal
def test_ask_mode_prints_the_diff_once(ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    term = Screen(ws, ["--mode", "ask"], env_for(ws, MOCK="1"), size=TMUX)
    start(term)
    term.child.sendline('replace "world" with "mca" in a.txt')
    term.on_screen("apply this change to a.txt? [y]es / [N]o / [a]lways: every edit:")
    term.child.send("y")  # one key, no Enter
    term.on_screen("✓ edited a.txt")
    term.wait_for(at_prompt(term), "the prompt back")
    screen = term.text()
    assert screen.count("+hello mca") == 1 and screen.count("-hello world") == 1, screen
    assert "[a]lways: every edit: yes" in screen and (ws / "a.txt").read_text() == "hello mca\n"
    term.close()


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@in_a_terminal
def test_init_and_shell_questions_take_one_key_and_enter_is_no(ws: Path) -> None:
    (ws / "AGENTS.md").write_text("mine\n")
    term = Screen(ws, [], env_for(ws, MOCK="1"), size=TMUX)
    start(term)
    term.child.sendline("/init")
    term.on_screen("AGENTS.md exists: overwrite it (/undo puts it back)? [y]es / [N]o:")
    term.child.send("\r")  # Enter: the default shown in capitals
    term.on_screen("AGENTS.md left as it is")
    assert "[y]es / [N]o: no" in term.text() and (ws / "AGENTS.md").read_text() == "mine\n"
    term.wait_for(at_prompt(term), "the prompt back")
    term.child.sendline("/init")
    term.wait_for(lambda s: s.count("overwrite it") == 2, "the question again")
    term.child.send("y")  # one key, no Enter
    term.on_screen("wrote AGENTS.md")
    assert (ws / "AGENTS.md").read_text().startswith("# AGENTS.md")
    term.wait_for(at_prompt(term), "the prompt back")
    term.child.sendline("!echo from-me")
    term.on_screen("add the command and its output to the conversation? [y]es / [N]o:")
    term.child.send("y")
    term.on_screen("added: the model sees it with your next message")
    term.wait_for(at_prompt(term), "the prompt back")
    term.close()


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@in_a_terminal
def test_p_on_a_terminal_asks_with_one_key_and_prints_the_diff_once(ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    argv = ["-p", 'replace "world" with "mca" in a.txt', "--mode", "ask"]
    child: pexpect.spawn[bytes] = pexpect.spawn(
        str(MCA), argv, env=env_for(ws, MOCK="1"), cwd=str(ws), timeout=30, dimensions=(30, 100)
    )
    child.expect(rb"apply this change to a\.txt\? \[y\]es / \[N\]o: ")
    after = child.after if isinstance(child.after, bytes) else b""
    asked = (child.before or b"") + after
    child.send("y")  # one key, no Enter
    child.expect(pexpect.EOF)
    everything = asked + (child.before or b"")
    child.close()
    assert child.exitstatus == 0, everything
    assert everything.count(b"+hello mca") == 1, everything
    assert b"[N]o: yes\r\n" in everything and (ws / "a.txt").read_text() == "hello mca\n"


def test_help_and_the_docs_say_what_the_default_mode_does() -> None:
    """The code (mca.tools.command._approve): in auto-edit a command runs in the sandbox
    without a question, and asks only where there is no sandbox. MODES says so in words, --help
    shows those words, and docs/using.md says the same."""
    helped = " ".join(repl_parser().format_help().split())
    assert f"default {DEFAULT_MODE}: {MODES[DEFAULT_MODE]}" in helped
    assert "commands run in the sandbox, or ask without one" in MODES[DEFAULT_MODE]
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    docs = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in pages)
    said = re.search(r"## Approval modes `auto-edit` \(the default\): ([^.]*)", docs)
    assert said is not None
    assert "commands run in the sandbox without a question" in said.group(1)
    assert "and ask when there is no sandbox" in said.group(1)
    assert "[y/N]" not in docs  # one question style, in the README and docs/ too

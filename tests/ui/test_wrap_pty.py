"""mca's own text on terminals 60, 80 and 100 columns wide (read back from a pyte screen): no word
of what the faces print (the banner, slash commands' output, the cancel notice, errors, the -p
face's notes, `mca sandbox check`) is cut across two lines. A terminal cuts a line at its last
column whatever is there; mca breaks its lines between words before that."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ptyscreen import MCA, Screen, child_env

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.pty,
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
    pytest.mark.slow,  # the installed mca in a pseudo-terminal
]
WIDTHS = (60, 80, 100)
ROWS = 400  # tall enough that nothing scrolls off while the test reads it


ESCAPES = re.compile(rb"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Z]|[=>78DEHM])")


def cut_words(screen: str, raw: bytes, columns: int) -> list[str]:
    """Each place a word runs from the last column of a row into the next row: a row filled to
    its last column with a letter or digit there, followed by a row that starts with one, where
    what was written ran on with no line end between the two (a line mca broke itself may
    fill the row exactly: a line end was written there)."""
    written = ESCAPES.sub(b"", raw).decode("utf-8", errors="replace")
    rows = screen.split("\n")
    cuts = []
    for row, below in itertools.pairwise(rows):
        if not (len(row) == columns and row[-1].isalnum() and below[:1].isalnum()):
            continue
        tail, head = row.split()[-1], below.split()[0]
        if tail + head in written:
            cuts.append(f"{tail!r} / {head!r}")
    return cuts


def test_cut_words_finds_a_cut_and_only_a_cut() -> None:
    rows = ["x" * 55 + " word", "s here"]
    assert cut_words("\n".join(rows), ("x" * 55 + " words here").encode(), 60)
    written = "x" * 55 + " word\r\n  s here"  # broken by mca: a line end written
    assert not cut_words("\n".join(rows), written.encode(), 60)
    whole = ["x" * 55 + " word", "  next line", "x" * 59 + ".", "below"]
    assert not cut_words("\n".join(whole), "".join(whole).encode(), 60)


def more_prompts(n: int) -> Callable[[str], bool]:
    return lambda screen: screen.count("mca>") > n


def two_commands(tmp: Path) -> Path:
    """A mock script: one command that ends, then one that runs until Esc."""
    steps = [
        {"content": "", "tool_calls": [{"name": "run_command", "arguments": {"command": c}}]}
        for c in ("echo one", "echo began; sleep 30")
    ]
    script = tmp / "two.jsonl"
    script.write_text("".join(json.dumps(step) + "\n" for step in steps))
    return script


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_repl_breaks_its_own_lines_between_words(
    ws: Path, tmp_path: Path, columns: int
) -> None:
    env = child_env(ws, MCA_MOCK_SCRIPT=str(two_commands(tmp_path)))
    term = Screen(ws, ["--yes"], env, size=(columns, ROWS))
    term.expect("mca>")
    term.on_screen("skills: 0 loaded")
    term.child.sendline("run two commands")
    term.on_screen("began")
    term.child.send("\x1b")
    term.wait_for(lambda s: s.count("mca>") >= 2 and "cancelled" in s, "the turn cancelled")
    for command in ("/help", "/mode", "/model", "/mode read-only", "/status", "/steps 0"):
        prompts = term.text().count("mca>")
        term.child.sendline(command)
        term.wait_for(more_prompts(prompts), f"{command} answered")
    term.close()
    screen = term.text()
    assert "a note that it stopped" in re.sub(r"\s+", " ", screen)  # the notice was long enough
    assert cut_words(screen, term.raw, columns) == [], screen


@pytest.mark.parametrize("columns", WIDTHS)
def test_errors_notes_and_the_sandbox_check_break_between_words(ws: Path, columns: int) -> None:
    """Start-up's error (no key), -p's note that the mock answers, `mca sandbox check`."""
    runs = [
        (["-p", "hello"], {"MCA_PROVIDER": "openai"}),
        (["-p", "hello"], {"MOCK": "1"}),
        (["sandbox", "check"], {}),
    ]
    for args, extra in runs:
        term = Screen(ws, args, child_env(ws, **extra), size=(columns, ROWS))
        term.ended()
        screen = term.text()
        assert screen.strip(), args
        assert cut_words(screen, term.raw, columns) == [], screen


def test_a_pipe_gets_each_line_whole(ws: Path) -> None:
    """Not a terminal: nothing is broken (a script reads one line per message)."""
    run = subprocess.run(
        [str(MCA), "-p", "hello"],
        env=child_env(ws, MCA_PROVIDER="openai"),
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = run.stderr.strip().split("\n")
    assert len(lines) == 1 and len(lines[0]) > 100, run.stderr

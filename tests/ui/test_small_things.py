"""The small things a daily user hit in the first hour (issue 34, item 12), each with its test:
lines broken between words at the terminal's width, where /status's window comes from, a line
while the server is asked for its window (and the asking bounded), slash completion that says
what each command does, and --json's object on Ctrl-C. (The stream-json schema's dispatch on
`type` and the ids linking tool calls to results: tests/test_event_stream.py.)"""

from __future__ import annotations

import contextlib
import itertools
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar, cast

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from mca.models.window import PROBES_SECONDS, discover_window
from mca.ui.line_editor import McaCompleter
from mca.ui.render import wrap_words
from tests.fakeserver import FakeServer, Received, Reply, openai_reply, serve
from tests.ptyscreen import MCA, Screen, as_a_terminal, child_env
from tests.ui.test_live_pty import start
from tests.ui.test_terminal_pty import env_for

TMUX = (100, 30)  # a tmux pane's size, as the issue was found in
T = TypeVar("T")


def in_a_terminal(test: T) -> T:
    """The marks of a test that drives the installed mca in a pseudo-terminal."""
    marks = (
        pytest.mark.e2e,
        pytest.mark.pty,
        pytest.mark.slow,
        pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
    )
    for mark in marks:
        test = cast(T, mark(test))
    return test


def at_prompt(term: Screen) -> bool:
    return term.line_at_cursor() == "mca>"


def whole_words(term: Screen, first: str) -> None:
    """The line showing `first` went on to a second row, broken between words by mca (the
    next row starts with its indent), and no row on the screen was broken by the terminal (a
    full row followed by one that does not start with an indent)."""
    rows = term.text().splitlines()
    top = max(i for i, r in enumerate(rows) if first in r)  # the latest
    assert rows[top + 1].startswith("  ") and rows[top + 1].strip(), rows[top : top + 2]
    for row, after in itertools.pairwise(rows):
        assert len(row) < TMUX[0] or after.startswith(" "), (row, after)


@contextlib.contextmanager
def server_without_a_window(hang: bool = False) -> Iterator[FakeServer]:
    """A chat server that says nothing of its window (or never answers when asked: `hang`)."""

    def handle(r: Received) -> Reply:
        if r.path.endswith("/chat/completions"):
            return openai_reply(r, "the answer")
        return Reply(hang=True) if hang else Reply(status=404, chunks=[b"{}"])

    with serve(handle) as server:
        yield server


@contextlib.contextmanager
def props(n_ctx: int) -> Iterator[FakeServer]:
    """llama.cpp's server with a window of `n_ctx` tokens."""

    def handle(r: Received) -> Reply:
        if r.path.endswith("/chat/completions"):
            return openai_reply(r, "the answer")
        if r.path == "/props":
            body = {"default_generation_settings": {"n_ctx": n_ctx}}
            return Reply(
                headers={"content-type": "application/json"}, chunks=[json.dumps(body).encode()]
            )
        return Reply(status=404, chunks=[b"{}"])

    with serve(handle) as server:
        yield server


def no_window_env(ws: Path, server: FakeServer) -> dict[str, str]:
    env = env_for(ws, server)
    del env["MCA_CONTEXT_WINDOW"]  # nothing says the window: the server is asked
    return env


# -- lines broken between words ------------------------------------------------------------------
def test_wrap_words_breaks_between_words_with_a_hanging_indent() -> None:
    line = "~1,968 in / ~34 out tokens (estimated, o200k_base) · 2 model calls · 0.7 s · session"
    assert wrap_words(line, 40).split("\n") == [
        "~1,968 in / ~34 out tokens (estimated,",
        "  o200k_base) · 2 model calls · 0.7 s ·",
        "  session",
    ]
    assert wrap_words("  short\n  " + "x " * 30, 30).split("\n")[2].startswith("    x")
    assert wrap_words("fits", 4) == "fits"


@in_a_terminal
def test_status_and_the_usage_line_break_between_words(ws: Path) -> None:
    term = Screen(ws, [], child_env(ws, MOCK="1"), size=TMUX)
    start(term)
    term.child.sendline("list the files")
    term.on_screen("session ~")
    term.wait_for(lambda _: at_prompt(term), "the prompt back")
    whole_words(term, "out tokens (")
    term.child.sendline("/status")
    term.on_screen("instruction files")
    term.wait_for(lambda _: at_prompt(term), "the prompt back")
    whole_words(term, "in context now")
    term.close()


# -- where the window comes from ---------------------------------------------------------------
def status_of(ws: Path, env: dict[str, str]) -> str:
    """The screen after /status in mca run with `env`."""
    term = Screen(ws, [], env, size=TMUX)
    start(term)
    term.child.sendline("/status")
    term.on_screen("instruction files")
    term.wait_for(lambda _: at_prompt(term), "the prompt back")
    screen = term.text()
    term.close()
    return screen


@in_a_terminal
def test_status_says_where_the_window_comes_from(ws: Path) -> None:
    for serving, said in (
        (props(2048), "context window 2,048 tokens (from the server's llama.cpp /props)"),
        (server_without_a_window(), "context window 32,000 tokens (assumed: no setting"),
    ):
        with serving as server:
            assert said in status_of(ws, no_window_env(ws, server))
    term = Screen(ws, [], child_env(ws, MOCK="1", MCA_CONTEXT_WINDOW="9000"), size=TMUX)
    start(term)
    term.child.sendline("/status")
    term.on_screen("context window 9,000 tokens (set by MCA_CONTEXT_WINDOW)")
    term.wait_for(lambda _: at_prompt(term), "the prompt back")
    term.close()


# -- asking the server for its window ------------------------------------------------------------
@in_a_terminal
def test_the_first_turn_says_it_waits_for_the_server_s_window(ws: Path) -> None:
    with server_without_a_window(hang=True) as server:
        term = Screen(ws, [], no_window_env(ws, server), size=TMUX)
        term.expect("mca>")
        term.child.sendline("hello")  # at once: the session is still being built
        term.on_screen("asking the server for its context window")
        term.on_screen("the answer", timeout=PROBES_SECONDS + 10)
        term.wait_for(lambda _: at_prompt(term), "the prompt back")
        assert "asking the server" not in term.text()  # the spinner gave way to the answer
        term.close()


def test_asking_for_the_window_is_bounded_whatever_the_server_does() -> None:
    """A server that answers a byte a second never finishes a probe; asking stops anyway."""

    def trickle(r: Received) -> Reply:
        return Reply(
            headers={"content-type": "application/json"}, chunks=[b" "] * 60, delays=[1.0] * 60
        )

    with serve(trickle) as server:
        began = time.monotonic()
        assert discover_window(f"{server.url}/v1", "m") is None
        assert time.monotonic() - began < PROBES_SECONDS + 3  # it used to read for a minute


# -- slash completion ----------------------------------------------------------------------------
def test_slash_completion_says_what_each_command_and_skill_does(tmp_path: Path) -> None:
    commands = {"/resume": "go on with a saved conversation", "/rewind": "files back"}
    skills = {"release-notes": "Write release notes.\x1b[2J"}
    completer = McaCompleter(tmp_path, lambda: commands, lambda: skills)
    done = list(completer.get_completions(Document("/re"), CompleteEvent()))
    shown = {c.text: c.display_meta_text for c in done}
    assert shown == {
        "/release-notes": "skill: Write release notes.^[[2J",  # made visible, never obeyed
        "/resume": "go on with a saved conversation",
        "/rewind": "files back",
    }


@in_a_terminal
def test_tab_shows_the_commands_with_what_they_do(ws: Path) -> None:
    term = Screen(ws, [], child_env(ws, MOCK="1"), size=TMUX)
    start(term)
    term.child.send("/re\t")
    term.on_screen("go on with a saved conversation")
    term.on_screen("/rewind")
    term.child.send("\x1b")  # Esc: the menu closes
    term.child.send("\x15")  # Ctrl-U: nothing sent
    term.wait_for(lambda _: at_prompt(term), "an empty prompt")
    term.close()


# -- --json on Ctrl-C ----------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_json_prints_its_object_on_ctrl_c(ws: Path) -> None:
    child = subprocess.Popen(
        [str(MCA), "-p", "run `sleep 30`", "--json", "--yes"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(ws, MOCK="1"),
        cwd=ws,
        preexec_fn=as_a_terminal,
    )
    assert child.stderr is not None
    for line in child.stderr:
        if line.startswith("→ run_command"):
            break
    time.sleep(0.3)  # into the command's wait (a Ctrl-C before it is the same to --json)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    obj = json.loads(out)
    assert obj["stop"] == "interrupted" and "cancelled" in obj["stopped"]
    assert obj["session"] and obj["turn"] == 1 and obj["error"] is None

"""The start-up summary on a terminal is prepared behind the first prompt, yet comes out whole
and before the first turn's output, however early that turn was asked for."""

from __future__ import annotations

import io
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from mca.assembly.assemble import open_session
from mca.assembly.wiring import face_config
from mca.config.settings import load_settings
from mca.ui.repl import Repl
from mca.ui.terminal import ReplUI
from tests.ptyscreen import MCA, Screen
from tests.ui.test_terminal_pty import env_for

SUMMARY = "skills: 0 loaded, 0 skipped, 0 shadowed · catalog 0 chars, 0 tokens"


class Terminal(io.StringIO):
    """What the REPL writes, standing in for a terminal (the summary is deferred only there)."""

    def isatty(self) -> bool:
        return True


class LateSummary(Repl):
    """Its summary is ready only once the person has entered a line: many skills on a slow disk,
    and a person who types at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entered = threading.Event()

    def read(self) -> str | None:
        line = super().read()
        self.entered.set()
        return line

    def summary(self) -> str:
        assert self.entered.wait(timeout=20)
        return super().summary()


@pytest.mark.slow
def test_a_late_summary_still_comes_whole_before_the_first_turn(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "home")}, workspace=ws)
    out = Terminal()
    monkeypatch.setattr(sys, "stdout", out)  # the REPL's own output is the process's stdout
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("run `echo hi`\r\x04")
        opener = lambda ui: open_session(settings, ui)  # noqa: E731
        face = face_config(settings)
        repl = LateSummary(
            face, opener, input=pipe, output=DummyOutput(), history=InMemoryHistory()
        )
        assert repl.run() == 0
    lines = out.getvalue().splitlines()
    summary = next(i for i, line in enumerate(lines) if line.startswith("skills:"))
    assert lines[summary].startswith(SUMMARY)
    assert summary < next(i for i, line in enumerate(lines) if "→ run_command" in line)
    assert lines[-1] == "bye"


def test_held_keeps_what_this_thread_writes_for_later() -> None:
    out = io.StringIO()
    ui = ReplUI(out, lambda question: "")
    with ui.held() as kept:
        ui.say("kept \x1b[31m")
        other = threading.Thread(target=ui.say, args=("written",))
        other.start()
        other.join()
    assert out.getvalue() == "written\n" and kept == ["kept ^[[31m\n"]
    ui.replay("".join(kept))
    assert out.getvalue() == "written\nkept ^[[31m\n"


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_a_request_typed_before_the_first_prompt_follows_the_summary(ws: Path) -> None:
    term = Screen(ws, ["--yes"], env_for(ws, MOCK="1"))
    term.child.sendline("run `echo hi`")  # sent before mca has drawn anything
    term.wait_for(lambda s: s.count("mca>") >= 2 and "I ran it" in s, "the turn done")
    lines = term.text().splitlines()
    summary = next(i for i, line in enumerate(lines) if line.startswith("skills:"))
    assert lines[summary].startswith(SUMMARY)
    assert summary < next(i for i, line in enumerate(lines) if "→ run_command" in line)
    term.close()


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_what_start_up_says_behind_the_prompt_is_printed_above_it(ws: Path) -> None:
    """A config warning found while the session is built behind the prompt: on its own lines
    above the prompt with the summary, never written onto the prompt's line."""
    config = ws.parent / "home" / "config.toml"
    config.parent.mkdir()
    config.write_text("bogus_key = 1\n")
    config.chmod(0o600)
    term = Screen(ws, [], env_for(ws, MOCK="1"), size=(300, 40))  # no line wraps
    term.expect("mca>")
    term.on_screen("skills: 0 loaded")
    term.child.send("typed")
    term.on_screen("mca> typed")
    lines = [line for line in term.text().splitlines() if line]
    assert lines[-2].startswith(SUMMARY) and lines[-1] == "mca> typed"
    above = lines[:-2]  # (with what the sandbox holds on this system, on some)
    assert any(
        line.startswith("warning: ") and line.endswith("unknown setting, ignored") for line in above
    ), above
    term.child.send("\x15")  # Ctrl-U: an empty line for close()'s Ctrl-D
    term.close()

"""A model's thinking in every face: dim and folded in the REPL (/thinking unfolds it), on
stderr with -p (never in the answer on stdout), its own event kind in stream-json (scrubbed
across its pieces), never in an answer. Driven through the real loop by a scripted model whose
replies think (MCA_MOCK_SCRIPT lines with "thinking")."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from mca.cli import main
from mca.cli.start import repl_for
from mca.config.settings import load_settings
from mca.events import SessionStarted, ThinkingDelta
from mca.ui.jsonl import StreamUI
from mca.ui.render import fold_thinking
from mca.ui.terminal import ReplUI

ENTER, CTRL_D = "\r", "\x04"
KEY = "sk-ant-thinking-0123456789abcdef"
LONG = "I should list the files.\nThen read notes.txt.\nThen search.\nThen answer.\nDone."
SCRIPT = (
    {"thinking": LONG, "tool_calls": [{"name": "list_dir", "arguments": {}}]},
    {"thinking": "Now I know.", "content": "The workspace has one file."},
)


def script(tmp_path: Path) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in SCRIPT))
    return str(path)


def one_shot(ws: Path, tmp_path: Path, *flags: str) -> int:
    """`mca -p` with the thinking script (its output in capsys)."""
    env = {
        "HOME": str(tmp_path),
        "MCA_HOME": str(tmp_path / "h"),
        "MCA_MOCK_SCRIPT": script(tmp_path),
    }
    return main(["-C", str(ws), "-p", "what is here?", *flags], env)


def test_thinking_is_folded_to_its_first_lines() -> None:
    folded = fold_thinking(LONG)
    assert folded.splitlines()[:4] == [
        "thinking:",
        "  ┊ I should list the files.",
        "  ┊ Then read notes.txt.",
        "  ┊ Then search.",
    ]
    assert folded.endswith("… 2 more lines (/thinking shows them)")
    assert fold_thinking("one\x1b[2Jtwo") == "thinking:\n  ┊ one^[[2Jtwo"  # never obeyed
    assert fold_thinking("  \n") == ""


def test_the_repl_shows_it_dim_and_folded_and_unfolds_it(ws: Path, tmp_path: Path) -> None:
    settings = load_settings(
        {"MCA_HOME": str(tmp_path / "home"), "MCA_MOCK_SCRIPT": script(tmp_path)}, workspace=ws
    )
    out = io.StringIO()
    keys = f"what is here?{ENTER}/thinking{ENTER}{CTRL_D}"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(keys)
        repl = repl_for(
            settings, input=pipe, output=DummyOutput(), out=out, history=InMemoryHistory()
        )
        repl.run()
    text = out.getvalue()
    turn = text[: text.index("thinking, reply 1")]
    assert turn.index("thinking:\n  ┊ I should list") < turn.index("→ list_dir")
    assert "… 2 more lines (/thinking shows them)" in turn and "Then answer." not in turn
    assert turn.index("  ┊ Now I know.") < turn.index("The workspace has one file.")
    unfolded = text[text.index("thinking, reply 1") :]
    assert (
        "thinking, reply 1:\n" + LONG in unfolded and "thinking, reply 2:\nNow I know." in unfolded
    )
    answers = [m.content for m in repl.session.messages if m.role == "assistant"]
    assert answers == ["", "The workspace has one file."]  # thinking is never the answer


def test_on_a_colour_terminal_it_is_dim() -> None:
    out = io.StringIO()
    ui = ReplUI(out, lambda q: "", colour=True)
    ui.event(ThinkingDelta("Let me "))
    ui.event(ThinkingDelta("think."))
    ui.text("Answer.")
    ui.end_stream()
    shown = out.getvalue()
    assert shown.startswith("\x1b[2mthinking:\n  ┊ Let me think.\x1b[0m\n")
    assert "Answer." in shown[shown.index("\x1b[0m") :]


def test_p_puts_it_on_stderr_never_in_the_answer(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert one_shot(ws, tmp_path) == 0
    out, err = capsys.readouterr()
    assert out == "The workspace has one file.\n"
    assert "thinking:\n  ┊ I should list the files." in err and "… 2 more lines" in err
    assert err.index("I should list") < err.index("→ list_dir") < err.index("Now I know.")


def test_stream_json_has_it_as_its_own_kind(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert one_shot(ws, tmp_path, "--output-format", "stream-json") == 0
    lines: list[dict[str, Any]] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    kinds = [r["type"] for r in lines]
    assert kinds.index("thinking.delta") < kinds.index("tool.call")
    thought = "".join(r["text"] for r in lines if r["type"] == "thinking.delta")
    assert thought == LONG + "Now I know."
    text = "".join(r["text"] for r in lines if r["type"] == "text.delta")
    assert text == "The workspace has one file." == lines[-1]["answer"]
    logged = (tmp_path / "h" / "logs").iterdir()
    assert not any("thinking.delta" in p.read_text() for p in logged)  # not in the session log


def test_a_key_split_across_thinking_pieces_is_scrubbed() -> None:
    out = io.StringIO()
    ui = StreamUI(out, [KEY], asker=None)  # type: ignore[arg-type]  # nothing is asked here
    ui.start(SessionStarted("s", "w", "p", "m"))
    for piece in ("the key is ", KEY[:10], KEY[10:], " so"):
        ui.event(ThinkingDelta(piece))
    ui.text("answer")
    ui.end_text()
    written = out.getvalue()
    lines = [json.loads(x) for x in written.splitlines()][1:]
    assert KEY not in written and KEY[:10] not in written
    assert "".join(r["text"] for r in lines if r["type"] == "thinking.delta") == (
        "the key is [REDACTED] so"
    )
    assert [r["type"] for r in lines][-1] == "text.delta"


def test_the_spinner_says_the_model_is_thinking() -> None:
    ui = ReplUI(io.StringIO(), lambda q: "", live=True)
    ui.spinner.start()
    try:
        ui.event(ThinkingDelta("hmm"))
        assert ui.spinner.what == "thinking"
    finally:
        ui.spinner.stop()
    ui.end_thinking()

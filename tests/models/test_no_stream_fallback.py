"""A server that cannot stream with tools (issue 34, item 11): llama-cpp-python's server answers
an empty event stream, an older llama-server an HTTP 500 (tests/strict_server.py plays both, as
recorded and as reported). mca sends that request again without streaming, says so once, and
sends every later request with tools unstreamed for the rest of the session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mca.errors import EmptyStream
from mca.types import Message, Request
from tests.fakeserver import Received, Reply, serve
from tests.helpers import settings_for
from tests.models.test_reasoning import model_for, turn
from tests.models.wire import through
from tests.ptyscreen import MCA, Screen
from tests.strict_server import LLAMA_CPP_PYTHON, LLAMA_SERVER, StrictServer
from tests.ui.test_live_pty import start
from tests.ui.test_terminal_pty import env_for

SAID = "the server cannot stream an answer while tools are offered: sent again without streaming"


class Kept:
    """A strict server that keeps every chat body it was sent."""

    def __init__(self, refuses: str) -> None:
        self.server = StrictServer(script=(("list_dir", {"path": "."}),), no_streamed_tools=refuses)
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, received: Received) -> Reply:
        if received.path.endswith("/chat/completions"):
            self.bodies.append(json.loads(received.body))
        return self.server(received)

    def streamed(self) -> list[tuple[bool, bool]]:
        """(streamed, tools offered) of each request, in order."""
        return [(bool(b.get("stream")), bool(b.get("tools"))) for b in self.bodies]


@pytest.mark.parametrize("refuses", [LLAMA_CPP_PYTHON, LLAMA_SERVER])
def test_sent_again_unstreamed_said_once_and_so_for_the_session(
    tmp_path: Path, refuses: str
) -> None:
    kept, notices = Kept(refuses), list[str]()
    settings = settings_for("openai", tmp_path, server="http://127.0.0.1:9", MCA_MODEL="qwen")
    model = model_for(settings, through(kept), notices)
    messages, _ = turn(model, calls=1)
    assert messages[-1].content.startswith("Three tools ran"), messages[-1]
    messages, _ = turn(model, calls=1)  # the next turn: unstreamed from the start
    assert len(notices) == 1 and notices[0].startswith(SAID)
    assert kept.streamed() == [(True, True)] + [(False, True)] * 4
    assert kept.server.refused == [f"{refuses}: no stream with tools"]  # once, not retried
    model.complete(Request("s", (Message("user", "summarise"),), ()))  # a compaction's
    assert kept.streamed()[-1] == (True, False)  # without tools it still streams


def test_without_tools_an_empty_stream_is_an_error_saying_so(tmp_path: Path) -> None:
    def empty(received: Received) -> Reply:
        return Reply(200, {"content-type": "text/event-stream"}, [])

    settings = settings_for("openai", tmp_path, server="http://127.0.0.1:9", MCA_MODEL="qwen")
    model = model_for(settings, through(empty))
    with pytest.raises(EmptyStream, match="ended the stream without sending anything"):
        model.complete(Request("s", (Message("user", "hi"),), ()))


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_the_repl_goes_on_unstreamed_after_saying_so_once(ws: Path) -> None:
    kept = Kept(LLAMA_CPP_PYTHON)
    with serve(kept) as server:
        term = Screen(ws, [], env_for(ws, server), size=(100, 30))
        start(term)
        term.child.sendline("list the files")
        term.on_screen("Three tools ran.")
        term.wait_for(lambda _: term.line_at_cursor() == "mca>", "the prompt back")
        assert SAID in " ".join(term.text().split())
        assert "try --no-stream" not in term.text() and "error" not in term.text()
        term.child.sendline("and again")
        term.wait_for(lambda s: s.count("Three tools ran.") == 2, "the second answer")
        term.wait_for(lambda _: term.line_at_cursor() == "mca>", "the prompt back")
        assert " ".join(term.text().split()).count(SAID) == 1  # said once
        term.close()
    assert kept.streamed() == [(True, True)] + [(False, True)] * 4

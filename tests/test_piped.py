"""Piped stdin with a prompt is appended to it (issue 34, item 2): `cat notes.txt | mca -p
"explain this"` sends both, says on stderr how much was attached, cuts at MAX_PIPED_BYTES and
says so, and turns bytes that are not UTF-8 into U+FFFD. The fake server's record of the request
is the oracle: what the model received."""

from __future__ import annotations

import io
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.cli.piped import MAX_PIPED_BYTES, Piped, attach
from tests.fakeserver import FakeServer, Received, Reply, openai_reply, serve
from tests.ptyscreen import MCA, child_env

NOTES = "the build fails on line 12\nbecause MAGIC-7 is unset\n"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    def answer(request: Received) -> Reply:
        if not request.path.endswith("/chat/completions"):  # the window probe: unknown here
            return Reply(status=404, chunks=[b"{}"])
        return openai_reply(request, "It explains itself.")

    with serve(answer) as srv:
        yield srv


def run(
    ws: Path, srv: FakeServer, piped: bytes | None, *argv: str, **extra: str
) -> subprocess.CompletedProcess[bytes]:
    env = child_env(
        ws,
        MCA_PROVIDER="openai",
        MCA_MODEL="test-model",
        MCA_BASE_URL=f"{srv.url}/v1",
        MCA_API_KEY="sk-piped-0123456789abcdef",
        **extra,
    )
    return subprocess.run(
        [str(MCA), "-p", "explain this", *argv],
        input=piped,
        stdin=subprocess.DEVNULL if piped is None else None,
        cwd=ws, env=env, capture_output=True, timeout=60,
    )  # fmt: skip


def sent(srv: FakeServer) -> str:
    """The user's message in the first request the model received."""
    body = next(r.json for r in srv.received if r.path.endswith("/chat/completions"))
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


pytestmark = pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")


@pytest.mark.e2e
@pytest.mark.slow
def test_piped_text_is_appended_to_the_prompt(ws: Path, server: FakeServer) -> None:
    done = run(ws, server, NOTES.encode())
    assert done.returncode == 0 and done.stdout.decode().strip() == "It explains itself."
    said = sent(server)
    assert said.startswith("explain this\n") and NOTES in said
    assert "mca: attached 52 bytes (2 lines) of piped input" in done.stderr.decode()


@pytest.mark.e2e
@pytest.mark.slow
def test_nothing_piped_sends_the_prompt_alone(ws: Path, server: FakeServer) -> None:
    done = run(ws, server, None)
    assert done.returncode == 0 and sent(server) == "explain this"
    assert "attached" not in done.stderr.decode()


@pytest.mark.e2e
@pytest.mark.slow
def test_a_flood_is_cut_and_not_utf8_is_replaced(ws: Path, server: FakeServer) -> None:
    flood = b"caf\xe9 \xff\n" + "é".encode() * MAX_PIPED_BYTES
    done = run(ws, server, flood, MCA_CONTEXT_WINDOW="1000000")  # a window it fits in
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "cut at 256 KiB (the rest was not read)" in err
    assert "2 characters that were not UTF-8 text shown as U+FFFD" in err
    said = sent(server)
    assert said.startswith("explain this\n") and "caf\ufffd \ufffd" in said
    assert MAX_PIPED_BYTES - 8 < len(said.encode()) - len("explain this") < MAX_PIPED_BYTES + 200


def test_attach_cuts_on_a_character_and_keeps_a_whole_prompt() -> None:
    text, note = attach("why?", Piped("é".encode() * 3 + b"\xc3", more=True))
    assert "ééé\n" in text and "\ufffd" not in text and "cut at" in note
    assert attach("why?", Piped(b"  \n", more=False)) == ("why?", "")


def test_a_stdin_that_is_no_pipe_is_not_read() -> None:
    from mca.cli.piped import read_piped

    assert read_piped(io.StringIO("typed"), io.StringIO()) is None  # no descriptor
    with open("/dev/null") as null:
        assert read_piped(null, io.StringIO()) is None  # a device


@pytest.mark.e2e
def test_a_prompt_that_cannot_fit_the_window_is_said_and_never_sent(
    ws: Path, server: FakeServer
) -> None:
    words = " ".join(f"word{i % 997}x{i % 13}" for i in range(40_000))[:MAX_PIPED_BYTES]
    done = run(ws, server, words.encode())  # an unknown model: a window of 32k is assumed
    err = done.stderr.decode()
    assert done.returncode == 1 and "does not fit the model's context window" in err
    assert "window is 32,000" in err and "nothing was sent" in err
    assert not any(r.path.endswith("/chat/completions") for r in server.received)

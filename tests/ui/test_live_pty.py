"""While mca works, on a real terminal (read back from a pyte screen): a running command's
output and seconds under its tool line, keys typed meanwhile kept for the next message (never
inside the answer), Esc interrupting the turn, and one key answering an approval."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakeserver import FakeServer, Received, Reply, serve
from tests.ptyscreen import MCA, Screen
from tests.ui.test_terminal_pty import delta, env_for

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.pty,
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
    pytest.mark.slow,  # the installed mca in a pseudo-terminal
]
# Five seconds of output, one line a second; its first line tries to set the terminal's title.
TICKS = "printf 'x\\033]0;PWNED\\007y\\n'; for i in 1 2 3 4 5; do echo tick-$i; sleep 1; done"
WORDS = [f"word{i:02} " for i in range(12)]  # one line on the screen


def prompts(n: int) -> Callable[[str], bool]:
    return lambda screen: screen.count("mca>") >= n


def start(term: Screen) -> None:
    """The prompt up and the session built (its summary printed: nothing else is printed from
    another thread while the test types)."""
    term.expect("mca>")
    term.on_screen("skills: 0 loaded")


def running(ws: Path, command: str, shows: str) -> Screen:
    """mca running `command` for the mock model, its output showing the line `shows`."""
    term = Screen(ws, ["--yes"], env_for(ws, MOCK="1"))
    start(term)
    term.child.sendline(f"run `{command}`")
    term.on_screen(f"│ {shows}")
    return term


def streaming(ws: Path, server: FakeServer, size: tuple[int, int] = (100, 40)) -> Screen:
    """mca asked the first question, its answer streaming (slowly) on the screen."""
    term = Screen(ws, [], env_for(ws, server), size=size)
    start(term)
    term.child.sendline("first question")
    term.on_screen("word02")
    return term


def next_answered(screen: str) -> bool:
    return "next" in screen and screen.count("mca>") >= 3


def sent_users(server: FakeServer) -> list[str]:
    """The last user message of each request the server received."""
    calls = [r.json for r in server.received if r.path.endswith("/chat/completions")]
    return [[m for m in c["messages"] if m["role"] == "user"][-1]["content"] for c in calls]


@pytest.fixture
def slow_answer() -> Iterator[FakeServer]:
    """The first answer streams a word every 0.3 s; the next ones come at once."""

    def handle(r: Received) -> Reply:
        if not r.path.endswith("/chat/completions"):
            return Reply(status=404, chunks=[b"{}"])
        done = b"data: [DONE]\n\n"
        if sent_users_of(r) != ["first question"]:
            return Reply(
                headers={"content-type": "text/event-stream"}, chunks=[delta("next"), done]
            )
        chunks = [delta(w) for w in WORDS] + [done]
        return Reply(
            headers={"content-type": "text/event-stream"},
            chunks=chunks,
            delays=[0.3] * len(chunks),
        )

    with serve(handle) as server:
        yield server


def sent_users_of(r: Received) -> list[str]:
    return [m["content"] for m in r.json["messages"] if m["role"] == "user"]


def test_a_running_command_shows_its_last_lines_and_seconds(ws: Path) -> None:
    term = running(ws, TICKS, "tick-2")
    term.wait_for(lambda s: "running · 2 s" in s or "running · 3 s" in s, "the seconds counting")
    screen = term.text()
    assert "│ x^[]0;PWNED^Gy" in screen and term.screen.title != "PWNED"  # shown, not obeyed
    assert screen.index("→ run_command") < screen.index("running ·") < screen.index("│ tick-1")
    term.on_screen("│ tick-4")
    term.wait_for(prompts(2), "the prompt back")
    screen = term.text()
    assert "running ·" not in screen and "│ tick" not in screen  # the box gave way to the result
    assert "✓ $ printf" in screen and "I ran it" in screen
    term.close()


def test_keys_typed_during_a_command_are_shown_queued_and_wait_at_the_prompt(ws: Path) -> None:
    term = running(ws, "echo go; sleep 3", "go")
    term.child.send("list the files")
    term.on_screen("queued: list the files")  # on the command's line, not in its output
    term.wait_for(lambda s: "mca> list the files" in s, "the prompt with what was typed")
    assert "│ go" not in term.text()
    term.child.send("\x15")  # Ctrl-U: the line is the person's to edit (here: clear)
    term.wait_for(lambda _: term.line_at_cursor() == "yolo mca>", "the prompt line cleared")
    term.close()


def test_command_output_is_plain_lines_without_a_terminal(ws: Path) -> None:
    piped = subprocess.run(
        [str(MCA), "--yes"],
        input="run `printf 'one\\ntwo \\033[31mred\\033[0m\\nno newline'`\n",
        capture_output=True,
        text=True,
        env=env_for(ws, MOCK="1"),
        cwd=ws,
        timeout=60,
    )
    out = piped.stdout
    assert "  │ one\n  │ two red\n  │ no newline\n" in out, piped.stderr
    assert "\x1b" not in out and "running ·" not in out


def test_ctrl_d_typed_during_a_turn_ends_the_session_once_the_turn_is_done(ws: Path) -> None:
    term = running(ws, "echo go; sleep 2", "go")
    term.child.sendcontrol("d")
    term.ended()  # within the pexpect timeout: Ctrl-D was not lost
    screen = term.text()
    assert screen.index("I ran it") < screen.rindex("bye") and screen.count("mca>") == 2


def test_keys_typed_right_after_an_answer_all_arrive(ws: Path) -> None:
    """Typed fast, as the first answer shows: the next request and a Ctrl-D. Whether each key
    lands in the turn's end, before the prompt is drawn or at the prompt, the request is sent
    and the session then ends."""
    term = Screen(ws, ["--yes"], env_for(ws, MOCK="1"))
    start(term)
    term.child.sendline("hello")
    term.on_screen("offline mock model")
    term.child.send("run `echo again`\r\x04")
    term.ended()
    screen = term.text()
    assert "mca> run `echo again`" in screen and "I ran it" in screen
    assert screen.rstrip().endswith("bye") and screen.count("mca>") == 3


def test_keys_typed_during_an_answer_stay_out_of_it_and_are_sent_next(
    ws: Path, slow_answer: FakeServer
) -> None:
    term = streaming(ws, slow_answer)
    term.child.send("typed meanwhile")
    term.on_screen("word06")
    term.child.send("\r")
    term.on_screen("word11")
    term.wait_for(next_answered, "the typed message answered")
    screen = term.text()
    answer = next(line for line in screen.splitlines() if "word00" in line)
    assert answer.split() == [w.strip() for w in WORDS]  # nothing typed landed in it
    assert "mca> typed meanwhile" in screen
    assert sent_users(slow_answer) == ["first question", "typed meanwhile"]
    term.close()


def test_keys_typed_during_an_answer_show_as_queued_under_it_while_it_streams(
    ws: Path, slow_answer: FakeServer
) -> None:
    """As during a command: `queued: …` on its own line, under the answer as it streams (at a
    tmux pane's size, 100x30), gone when the answer ends; the answer's line stays whole."""
    term = streaming(ws, slow_answer, size=(100, 30))
    term.child.send("typed meanwhile")
    term.on_screen("queued: typed meanwhile")
    assert "word11" not in term.text()  # shown while the answer still streams
    assert term.row("queued: typed meanwhile") == term.row("word00") + 1
    term.on_screen("word08")
    assert term.row("queued: typed meanwhile") == term.row("word00") + 1  # it stays under it
    term.on_screen("word11")
    term.wait_for(lambda s: "queued:" not in s, "the note gone with the answer's end")
    answer = next(line for line in term.text().splitlines() if "word00" in line)
    assert answer.split() == [w.strip() for w in WORDS]
    term.child.send("\r")
    term.wait_for(next_answered, "the typed message answered")
    assert sent_users(slow_answer) == ["first question", "typed meanwhile"]
    assert "queued:" not in term.text()  # nor shown again in the next turn
    term.close()


def test_esc_interrupts_a_streaming_answer_and_keeps_the_conversation(
    ws: Path, slow_answer: FakeServer
) -> None:
    term = streaming(ws, slow_answer)
    term.child.send("\x1b")
    term.on_screen("turn cancelled; the conversation is as it was before it")
    term.wait_for(prompts(2), "the prompt back")
    assert "word11" not in term.text()
    term.child.sendline("again")
    term.wait_for(next_answered, "the next turn answered")
    calls = [r.json for r in slow_answer.received if r.path.endswith("/chat/completions")]
    assert [m["content"] for m in calls[-1]["messages"] if m["role"] == "user"] == ["again"]
    term.close()


def test_esc_stops_a_running_command(ws: Path) -> None:
    term = running(ws, "echo began; sleep 30", "began")
    term.child.send("\x1b")
    term.on_screen("command interrupted; its process group was killed")
    term.on_screen("turn cancelled")
    term.wait_for(prompts(2), "the prompt back")  # keys sent before it are the turn's
    term.close()


def test_one_key_answers_an_approval_and_enter_is_no(ws: Path) -> None:
    term = Screen(ws, ["--mode", "ask"], env_for(ws, MOCK="1"))
    start(term)
    term.child.sendline("run `touch approved`")
    term.on_screen("run it? [y]es / [N]o / [a]lways `touch approved`:")
    term.child.send("x")  # not an answer: ignored
    term.child.send("y")
    term.on_screen("I ran it")
    assert "[a]lways `touch approved`: yes" in term.text() and (ws / "approved").exists()
    term.wait_for(prompts(2), "the prompt back")
    term.child.sendline("run `touch declined`")
    term.wait_for(lambda s: s.count("run it?") == 2, "the second question")
    term.child.send("\r")
    term.on_screen("the user declined to run")
    assert "[a]lways `touch declined`: no" in term.text() and not (ws / "declined").exists()
    term.wait_for(prompts(3), "the prompt back")
    term.close()


def test_p_in_text_mode_shows_a_running_command_on_stderr_and_only_the_answer_on_stdout(
    ws: Path,
) -> None:
    """The command's first line is on stderr while it still runs: it waits for a file the test
    creates only once it has read that line (at most 20 s, then the test fails)."""
    key = "sk-test-live0123456789abcdef"
    wait = "for i in $(seq 200); do [ -e go ] && break; sleep 0.1; done"
    command = f"printf 'began \\033]0;T\\007 {key}\\n'; {wait}; echo ended; printf tail"
    child = subprocess.Popen(
        [str(MCA), "--yes", "-p", f"run `{command}`"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_for(ws, MOCK="1", OPENAI_API_KEY=key),
        cwd=ws,
    )
    assert child.stderr is not None
    before_go = []
    for line in child.stderr:
        before_go.append(line)
        if line.startswith("  │ began"):
            (ws / "go").touch()
            break
    out, err = child.communicate(timeout=60)
    assert before_go[-1] == "  │ began ^[]0;T^G [REDACTED]\n", "".join(before_go)
    assert err.index("  │ ended\n  │ tail\n") < err.index("✓ $ printf")
    assert key not in err and key not in out
    assert "│" not in out and out.startswith("I ran it:\n$ printf") and out.endswith("tail\n")
    assert child.returncode == 0

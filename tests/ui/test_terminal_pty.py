"""What a person sees on a real terminal, read back from a pyte screen: the spinner while the
server is slow (with its retry state) cleared by the first text, Markdown rendered on a terminal
and left plain when piped, the diff before the approval question, -p streaming to stdout."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakeserver import FakeServer, Received, Reply, serve
from tests.ptyscreen import MCA, Screen, child_env

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.pty,
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
    pytest.mark.slow,  # the installed mca in a pseudo-terminal
]
ANSWER = [
    "# Hea",
    "ding\n\nSome **bo",
    "ld** and `co",
    "de` here.\n\n```py\nx = 1  # **not bold**\n```\n- it",
    "em\n",
    " ".join(f"word{i:02}" for i in range(1, 21)) + "\n",  # wider than the screen
]


def delta(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def slow_markdown(first_delay: float) -> Iterator[Any]:
    """429 once (retry after 1 s), then the answer after `first_delay` seconds, in pieces."""
    calls = {"n": 0}

    def handle(r: Received) -> Reply:
        if not r.path.endswith("/chat/completions"):
            return Reply(status=404, chunks=[b"{}"])
        calls["n"] += 1
        if calls["n"] == 1:
            return Reply(status=429, headers={"retry-after": "1"}, chunks=[b'{"error": "slow"}'])
        chunks = [delta(t) for t in ANSWER] + [b"data: [DONE]\n\n"]
        delays = [first_delay] + [0.3] * (len(chunks) - 1)
        return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks, delays=delays)

    with serve(handle) as server:
        yield server


@pytest.fixture
def slow_server() -> Iterator[FakeServer]:
    yield from slow_markdown(first_delay=2.5)


def env_for(ws: Path, server: FakeServer | None = None, **extra: str) -> dict[str, str]:
    env = child_env(ws, **extra)
    if server is not None:
        env |= {
            "MCA_PROVIDER": "openai",
            "MCA_MODEL": "test-model",
            "MCA_BASE_URL": f"{server.url}/v1",
            "MCA_API_KEY": "test-key-0123456789",
            "MCA_CONTEXT_WINDOW": "32000",
            "MCA_RETRY_BASE": "0.05",
        }
    return env


def test_spinner_shows_elapsed_and_retry_then_markdown_replaces_it(
    ws: Path, slow_server: FakeServer
) -> None:
    term = Screen(ws, [], env_for(ws, slow_server))
    term.expect("mca>")
    term.child.sendline("explain")
    term.expect(b"waiting for the model")
    term.expect(rb"HTTP 429, retrying in 1 s \(1/4\)")
    term.expect(rb"waiting for the model \xc2\xb7 2 s \xc2\xb7 HTTP 429; retry 1/4 sent")
    term.expect("item")
    term.expect("mca>")
    screen = term.text()
    assert "waiting for the model" not in screen  # the spinner's line was cleared
    assert "Heading" in screen and "# Heading" not in screen
    assert term.style_of("Heading").bold
    assert term.style_of("bold and").bold and "Some bold and code here." in screen
    assert term.style_of("code").fg == "cyan" and not term.style_of("here.").bold
    assert "│ x = 1  # **not bold**" in screen  # code is set apart and left as written
    assert "• item" in screen
    words = [w for line in screen.splitlines() for w in line.split() if w.startswith("word")]
    assert words == [f"word{i:02}" for i in range(1, 21)]  # wrapped between words, not in one
    assert "~72 out tokens (estimated, o200k_base) · 1 model call" in screen
    term.close()


def test_markdown_is_plain_without_a_terminal_or_with_no_color(
    ws: Path, slow_server: FakeServer
) -> None:
    piped = subprocess.run(
        [str(MCA)],
        input="explain\n",
        capture_output=True,
        text=True,
        env=env_for(ws, slow_server),
        cwd=ws,
        timeout=60,
    )
    assert "# Heading\n\nSome **bold** and `code` here." in piped.stdout, piped.stderr
    assert "\x1b" not in piped.stdout and "waiting for the model" not in piped.stdout


def test_no_color_on_a_terminal_is_plain_too(ws: Path) -> None:
    with serve(lambda r: next(slow_markdown_reply(r))) as server:
        term = Screen(ws, [], env_for(ws, server, NO_COLOR="1"))
        term.expect("mca>")
        term.child.sendline("explain")
        term.expect("item")
        term.expect("mca>")
        assert "# Heading" in term.text() and b"\x1b[1m" not in term.raw
        term.close()


def slow_markdown_reply(r: Received) -> Iterator[Reply]:
    if not r.path.endswith("/chat/completions"):
        yield Reply(status=404, chunks=[b"{}"])
        return
    chunks = [delta(t) for t in ANSWER] + [b"data: [DONE]\n\n"]
    yield Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)


def test_p_streams_the_answer_to_stdout_as_it_arrives(ws: Path) -> None:
    def handle(r: Received) -> Reply:
        if not r.path.endswith("/chat/completions"):
            return Reply(status=404, chunks=[b"{}"])
        chunks = [delta("first line\n"), delta("second line\n"), b"data: [DONE]\n\n"]
        return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks, delays=[0, 0, 5])

    with serve(handle) as server:
        proc = subprocess.Popen(
            [str(MCA), "-p", "go"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env_for(ws, server),
            cwd=ws,
            bufsize=0,  # unbuffered: readline takes only the first line
        )
        assert proc.stdout is not None
        first = proc.stdout.readline()
        still_running = proc.poll() is None  # the stream's end is 5 s away
        rest, err = proc.communicate(timeout=60)
    assert first == b"first line\n" and still_running, err
    assert rest == b"second line\n", err  # the answer once, no duplicate at the end


def test_the_diff_comes_before_the_approval_question(ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    term = Screen(ws, ["--mode", "ask"], env_for(ws, MOCK="1"))
    term.expect("mca>")
    term.child.sendline('replace "two" with "TWO" in a.txt')
    term.expect("apply this change to a.txt")
    assert term.row("-two") < term.row("+TWO") < term.row("apply this change")
    term.child.sendline("n")
    term.expect("mca>")
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    term.close()


def test_a_protected_write_is_shown_whole_and_exact_before_its_question(
    ws: Path, tmp_path: Path
) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    aliases = "".join(f"\tst{i} = status\n" for i in range(90))  # a diff longer than a fold
    new = f"[core]\n[alias]\n{aliases}\tfsmonitor = touch PWNED\u2028x\n[user]\n"
    call = {"name": "write_file", "arguments": {"path": ".git/config", "content": new}}
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"content": "", "tool_calls": [call]}) + '\n{"content": "ok"}\n')
    term = Screen(ws, [], env_for(ws, MCA_MOCK_SCRIPT=str(script)))
    term.expect("mca>")
    term.child.sendline("tidy the git config")
    term.on_screen("write .git/config anyway?")
    payload = term.row("+\\tfsmonitor = touch PWNED\\u2028x")  # one line, every character
    assert payload < term.row("+[user]") < term.row("write .git/config anyway?")
    assert b"more diff lines not shown" not in term.raw
    term.child.sendline("n")
    term.expect("mca>")
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    term.close()


def test_tab_completes_skill_names_and_slash_skill_runs_it(ws: Path) -> None:
    skill = ws / ".agents" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release-notes\ndescription: Notes.\n---\nbody\n")
    term = Screen(ws, [], env_for(ws, MOCK="1"))
    term.expect("mca>")
    term.expect("skills: 1 loaded")  # the session is ready: completion knows the skills
    term.child.send("use $rel\t")
    term.on_screen("mca> use $release-notes")
    term.child.send("\x15")  # Ctrl-U: clear the line
    term.wait_for(lambda _: term.line_at_cursor() == "mca>", "the prompt line cleared")
    term.child.send("/rel\t")
    term.on_screen("mca> /release-notes")
    term.child.send(" for 1.2\r")  # /<skill> [text]: a turn that uses the skill
    term.expect("skill release-notes  score 100  mention /release-notes")
    term.expect("mca>")
    term.close()


def test_slash_skill_over_the_budget_on_a_terminal(ws: Path) -> None:
    """/planner completes and loads its head; a skill hidden from /NAME does not complete; a
    built-in command wins over a skill of its name."""
    root = ws / ".agents" / "skills"
    steps = "".join(f"## Step {i}\n\n" + "Do it well. " * 40 + "\n\n" for i in range(60))
    for name, extra, body in (
        ("planner", "", "# Planner\n\n" + steps),
        ("hidden", "user-invocable: false\n", "hidden body\n"),
        ("diff", "", "diff skill body\n"),
    ):
        (root / name).mkdir(parents=True)
        text = f"---\nname: {name}\ndescription: Use for {name}.\n{extra}---\n{body}"
        (root / name / "SKILL.md").write_text(text)
    term = Screen(ws, [], env_for(ws, MOCK="1"))
    term.expect("skills: 3 loaded")
    term.child.send("/hid\t")
    term.wait_for(lambda _: term.line_at_cursor() == "mca> /hid", "no completion for /hid")
    term.child.send("\x15/pla\t")
    term.on_screen("mca> /planner")
    term.child.send(" Add user profile editing\r")
    term.expect(r"mention /planner \(100\)  \S+ partial: \d+ of \d+ chars")
    term.wait_for(lambda _: term.line_at_cursor() == "mca>", "the next prompt")
    term.child.send("/diff\r")
    term.on_screen("no file changes in this session")
    term.wait_for(lambda _: term.line_at_cursor() == "mca>", "the prompt after /diff")
    term.close()


def test_shell_command_and_model_switch_on_a_terminal(ws: Path) -> None:
    def handle(r: Received) -> Reply:
        if not r.path.endswith("/chat/completions"):
            return Reply(status=404, chunks=[b"{}"])
        chunks = [delta("from the server"), b"data: [DONE]\n\n"]
        return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)

    with serve(handle) as server:
        term = Screen(ws, [], env_for(ws, server))
        term.expect("mca>")
        term.child.sendline("!echo typed-by-me > made.txt; cat made.txt")
        term.expect("typed-by-me")
        term.expect(r"add the command and its output to the conversation\? \[y\]es / \[N\]o:")
        term.child.send("y")  # one key, as every question takes
        term.expect("added: the model sees it with your next message")
        term.child.sendline("hello")
        term.expect("from the server")
        term.expect("mca>")
        sent = [r.json for r in server.received if r.path.endswith("/chat/completions")]
        said = json.dumps(sent[-1]["messages"])
        assert "typed-by-me" in said and (ws / "made.txt").exists()
        term.child.sendline("/model")
        term.expect("anthropic  no key")  # MCA_API_KEY is the server's: it stays there
        term.expect("server     MCA_BASE_URL=http://127.0.0.1")
        term.expect("mca>")
        term.child.sendline("/model mock")
        term.expect("model mock via mock \\(was test-model via openai\\)")
        term.expect("mca>")
        term.child.sendline("list")
        term.expect("The workspace has")  # the mock answers now, with the same conversation
        term.expect("mca>")
        term.child.sendline("/model claude-sonnet-4-5")
        term.expect("ANTHROPIC_API_KEY")  # the name implies Anthropic, and no key is set
        term.expect("mca>")
        term.close()
    assert len([r for r in server.received if r.path.endswith("/chat/completions")]) == 1

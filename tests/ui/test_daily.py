"""The daily driver through the installed `mca` command: piped input, -p from stdin, first
messages, saved conversations (resumed even after a SIGKILL), /diff, /export, !command, /cost,
/model, /<skill>, exit words, and global flags on either side of a subcommand."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from mca.assembly.chooser import ModelChooser
from mca.assembly.wiring import model_options
from mca.config.settings import load_settings
from mca.errors import ConfigError
from mca.state.conversations import list_saved, read_saved

MCA = Path(sys.executable).parent / "mca"
PLANTED = "sk-planted-0123456789abcdef0123456789"
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
    pytest.mark.slow,  # the installed mca, run as a person would
]


def mca_env(ws: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(ws.parent),
        "MCA_HOME": str(ws.parent / "home"),
        "MOCK": "1",
        "OPENAI_API_KEY": PLANTED,  # known, so scrubbed everywhere; the mock never sends it
        **extra,
    }


def mca(ws: Path, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MCA), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ws,
        env=mca_env(ws, **env),
        timeout=60,
    )


def sessions(ws: Path) -> Path:
    return ws.parent / "home" / "sessions"


def test_piped_input_is_read_as_plain_lines(ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    r = mca(ws, stdin='replace "world" with "mca" in a.txt\nquit\nread a.txt\n')
    assert r.returncode == 0, r.stderr
    assert "Warning" not in r.stdout + r.stderr and "\x1b" not in r.stdout
    assert "edited a.txt" in r.stdout and r.stdout.rstrip().endswith("bye")
    assert "Here is a.txt" not in r.stdout  # `quit` left before the third line
    assert (ws / "a.txt").read_text() == "hello mca\n"


def test_exit_typed_alone_leaves_but_not_inside_a_sentence(ws: Path) -> None:
    r = mca(ws, stdin="list exit codes\nexit\nlist\n")
    assert r.stdout.count("The workspace has") == 1 and r.stdout.rstrip().endswith("bye")


def test_first_message_starts_the_repl_with_it(ws: Path) -> None:
    (ws / "a.txt").write_text("first\n")
    r = mca(ws, "read a.txt", stdin="/exit\n")
    assert r.returncode == 0 and "Here is a.txt" in r.stdout and "first" in r.stdout


def test_prompt_from_stdin(ws: Path) -> None:
    (ws / "a.txt").write_text("from stdin\n")
    for args in (["-p", "-"], ["-p"]):
        r = mca(ws, *args, stdin="read a.txt\n")
        assert r.returncode == 0 and "from stdin" in r.stdout, r.stderr
    empty = mca(ws, "-p", stdin="\n")
    assert empty.returncode == 2 and "empty" in empty.stderr


def test_global_flags_before_or_after_a_subcommand(ws: Path, tmp_path: Path) -> None:
    skills = tmp_path / "extra"
    (skills / "demo").mkdir(parents=True)
    (skills / "demo" / "SKILL.md").write_text("---\nname: demo\ndescription: A demo.\n---\nbody\n")
    for args in (
        ["-C", str(ws), "tools"],
        ["tools", "-C", str(ws)],
    ):
        r = mca(ws.parent, *args)
        assert r.returncode == 0 and "update_plan" in r.stdout, (args, r.stderr)
    for args in (
        ["--skills-dir", str(skills), "skills", "list"],
        ["skills", "list", "--skills-dir", str(skills)],
        ["-C", str(ws), "--skills-dir", str(skills), "skills", "list", "--json"],
    ):
        r = mca(ws.parent, *args)
        assert r.returncode == 0 and "demo" in r.stdout, (args, r.stderr)
    wrong = mca(ws, "-C", str(ws), "lab", "init", "x")
    assert wrong.returncode == 2 and "mca lab does not take -C" in wrong.stderr


def test_conversation_is_saved_private_and_scrubbed_then_continued(ws: Path) -> None:
    (ws / "a.txt").write_text("hello\n")
    r = mca(ws, stdin=f"read a.txt and remember {PLANTED}\n")
    assert r.returncode == 0, r.stderr
    files = list(sessions(ws).glob("*.jsonl"))
    assert len(files) == 1 and stat.S_IMODE(files[0].stat().st_mode) == 0o600
    text = files[0].read_text()
    assert PLANTED not in text, [ln for ln in text.splitlines() if PLANTED in ln]
    assert "[REDACTED]" in text
    again = mca(ws, "--continue", stdin="/ledger all\n")
    assert "resumed" in again.stdout and "1 turn," in again.stdout, again.stdout
    assert "\n   1 " in again.stdout  # /ledger all: the saved turn's ledger came back
    one = mca(ws, "-p", "list", "--continue")
    assert one.returncode == 0 and "resumed" in one.stderr
    newest = list_saved(sessions(ws), ws.resolve())[0]
    assert newest.turns == 2  # the continued conversation's turn numbers go on
    assert [entry.turn for entry in newest.ledgers] == [1, 2]
    assert [m.content for m in newest.messages if m.role == "user"][-1] == "list"


def test_resume_lists_and_picks(ws: Path) -> None:
    mca(ws, stdin="list\n")
    mca(ws, stdin="read nothing-here.txt\n")
    r = mca(ws, "--resume", stdin="2\n/exit\n")
    assert "saved conversations, newest first" in r.stdout
    assert " 1. " in r.stdout and " 2. " in r.stdout and "resumed" in r.stdout
    none = mca(ws, "--resume", "zzzzzz", stdin="")
    assert none.returncode == 1 and "no saved conversation with id 'zzzzzz'" in none.stdout
    elsewhere = ws.parent / "other"
    elsewhere.mkdir()
    fresh = mca(elsewhere, "--continue", stdin="")
    assert fresh.returncode == 1 and "no saved conversation in" in fresh.stdout


@pytest.mark.pty
def test_resume_after_sigkill_keeps_finished_turns(ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    env = {**mca_env(ws), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "MCA_MODE": "ask"}
    child = pexpect.spawn(str(MCA), env=env, cwd=str(ws), encoding="utf-8", timeout=20)
    child.expect("mca>")
    child.sendline('replace "world" with "there" in a.txt')
    child.expect(r"\[y\]es / \[N\]o")  # --mode ask: the edit asks too
    child.sendline("y")
    child.expect("session ~")  # the usage line: the turn is finished and saved
    child.expect("mca>")
    child.sendline("run `sleep 30`")  # a turn in flight, waiting for approval
    child.expect("run it")
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    child.close()
    r = mca(ws, "--continue", stdin="/export out.md\n")
    assert "resumed" in r.stdout and "1 turn," in r.stdout, r.stdout
    exported = (ws / "out.md").read_text()
    assert 'replace "world" with "there"' in exported and "sleep 30" not in exported


def test_diff_export_and_shell_command(ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    r = mca(
        ws,
        stdin='replace "two" with "TWO" in a.txt\ncreate b.txt with "new file"\n/diff\n'
        "!echo from-the-shell\ny\n/export\n",
    )
    assert r.returncode == 0, r.stderr
    diff = r.stdout[r.stdout.index("/dev/null") - 10 :]
    assert "-two" in r.stdout and "+TWO" in r.stdout and "+++ b/b.txt" in diff
    assert "2 files changed this session" in r.stdout
    assert "from-the-shell" in r.stdout and "(exit 0)" in r.stdout
    export = next((ws.parent / "home" / "exports").glob("mca-*.md"))  # mca's own, by default
    assert f"wrote {export}" in r.stdout and not list(ws.glob("mca-*.md"))
    exported = export.read_text()
    assert "## Turn 1" in exported and "from-the-shell" in exported
    saved = read_saved(next(sessions(ws).glob("*.jsonl")))
    assert saved is not None and not any(m.kind == "shell" for m in saved.messages)  # not yet
    undo = mca(ws, stdin="/undo\n/undo\n/diff\n")
    assert "no file changes in this session" in undo.stdout


def test_usage_line_and_cost_with_a_configured_price(ws: Path) -> None:
    home = ws.parent / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text('[prices]\n"mock" = { input = 1.0, output = 2.0 }\n')
    r = mca(ws, stdin="list\n/cost\n")
    assert "(estimated, o200k_base) · 2 model calls" in r.stdout
    assert "cost: nothing (the offline mock model)" in r.stdout
    (home / "config.toml").write_text('[prices]\n"mock" = { input = "free" }\n')
    bad = mca(ws, stdin="")
    assert bad.returncode == 2 and "[prices] 'mock'" in bad.stderr


def test_skill_by_name_and_unknown_names(ws: Path) -> None:
    skill = ws / ".agents" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes.\n---\nUse headings.\n"
    )
    r = mca(ws, stdin="/release-notes for 1.2\n/why\n/nope\n")
    assert "skill release-notes  score 100  mention /release-notes" in r.stdout
    assert "unknown command /nope" in r.stdout
    why = r.stdout[r.stdout.index("turn 1:") :]
    assert "loaded  release-notes" in why


def test_print_mode_loads_the_head_of_a_named_skill_over_the_budget(ws: Path) -> None:
    """mca -p "/planner ..." loads the part that fits and says how to read the rest (it loaded
    nothing before: the body is over the 12,000-character skill budget)."""
    skill = ws / ".agents" / "skills" / "planner"
    skill.mkdir(parents=True)
    steps = "".join(f"## Step {i}\n\n" + "Do it well. " * 40 + "\n\n" for i in range(60))
    (skill / "SKILL.md").write_text(
        "---\nname: planner\ndescription: Plan features.\n---\n# Planner\n\n" + steps
    )
    r = mca(ws, "-p", "/planner Add user profile editing", "--json")
    assert r.returncode == 0, r.stderr
    [decision] = json.loads(r.stdout)["skills"]["decisions"]
    assert decision["loaded"] and decision["chars"] <= 12_000
    assert (
        decision["reason"].startswith("partial: ")
        and "read_file skill:planner" in (decision["reason"])
    )
    text = mca(ws, "-p", "/planner Add user profile editing")
    assert "mention /planner (100)  → partial: " in text.stderr


def test_model_chooser(ws: Path) -> None:
    env = {"OPENAI_API_KEY": "k1", "HOME": str(ws.parent), "MCA_HOME": str(ws.parent / "h")}
    current = model_options(load_settings(env, workspace=ws))
    chooser = ModelChooser(env, ws, {})
    assert chooser.to("gpt-4.1", current).model == "gpt-4.1"
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        chooser.to("claude-sonnet-4-5", current)  # the name implies Anthropic: its key is needed
    both = ModelChooser({**env, "ANTHROPIC_API_KEY": "k2"}, ws, {})
    switched = both.to("claude-sonnet-4-5", current)
    assert switched.provider == "anthropic" and switched.api_key == "k2"
    mocked = ModelChooser({**env, "MOCK": "1"}, ws, {})
    with pytest.raises(ConfigError, match="MOCK=1"):
        mocked.to("gpt-4.1", current)
    assert "openai     key in OPENAI_API_KEY" in "\n".join(chooser.available())
    local = {"MCA_BASE_URL": "http://127.0.0.1:9/v1", "MCA_API_KEY": "local-server-key"}
    local |= {"MCA_PROVIDER": "openai", "HOME": env["HOME"], "MCA_HOME": env["MCA_HOME"]}
    at_server = model_options(load_settings({**local, "MCA_MODEL": "qwen"}, workspace=ws))
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):  # never the server's key
        ModelChooser(local, ws, {}).to("claude-sonnet-4-5", at_server)
    away = ModelChooser({**local, "ANTHROPIC_API_KEY": "k3"}, ws, {}).to("claude-x", at_server)
    assert away.api_key == "k3" and away.base_url == "https://api.anthropic.com"


def test_json_of_saved_lines_survives_damage(ws: Path) -> None:
    mca(ws, stdin="list\n")
    path = next(sessions(ws).glob("*.jsonl"))
    with path.open("a") as f:
        f.write('{"type": "messages", "messages": [{"role": "root", "content": 5}]}\n{broken\n')
    saved = read_saved(path)
    assert saved is not None and saved.turns == 1
    assert all(m.role in ("user", "assistant", "tool") for m in saved.messages)
    json.loads(path.read_text().splitlines()[0])  # the meta line stays valid JSON


def test_resume_inside_the_repl_keeps_the_conversation_it_leaves(ws: Path) -> None:
    mca(ws, stdin="list\n")
    first = list_saved(sessions(ws), ws.resolve())[0]
    r = mca(ws, stdin=f"read missing.txt\n/resume {first.id}\nlist\n")
    assert "this conversation stays saved: /resume" in r.stdout and "resumed" in r.stdout
    found = list_saved(sessions(ws), ws.resolve())
    sentences = sorted(s.first_sentence for s in found)
    assert sentences == ["list", "read missing.txt"]  # both conversations are there to resume
    resumed = next(s for s in found if s.first_sentence == "list")
    assert resumed.turns == 2 and resumed.id == first.id and resumed.path == first.path

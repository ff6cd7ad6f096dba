"""The REPL in-process: prompt_toolkit pipe input, DummyOutput, and our own text stream."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from mca.cli.start import repl_for
from mca.config.settings import Settings, load_settings
from mca.errors import McaError
from mca.ledger import TurnLedger
from mca.session.session import Session
from mca.state.conversations import SessionStore
from mca.types import Message
from mca.ui.line_editor import McaCompleter
from mca.ui.repl import Repl
from mca.ui.terminal import ReplUI
from tests.helpers import piped_repl

RunRepl = Callable[..., tuple[str, Repl]]  # keys (and env) -> what it printed, the REPL
ENTER = "\r"
CTRL_D = "\x04"
CTRL_C = "\x03"
ESC_ENTER = "\x1b\r"


@pytest.fixture
def run_repl(ws: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunRepl]:
    def go(keys: str, **env: str) -> tuple[str, Repl]:
        settings = load_settings(
            {"MOCK": "1", **env, "MCA_HOME": str(ws.parent / "home")}, workspace=ws
        )
        return piped_repl(settings, keys)

    yield go


def test_a_turn_then_undo_then_ctrl_d(run_repl: RunRepl, ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    out, _ = run_repl(
        f'replace "world" with "mca" in a.txt{ENTER}/snapshots{ENTER}/undo{ENTER}{CTRL_D}'
    )
    assert "offline mock model (MOCK=1)" in out
    assert "→ edit_file(path=a.txt" in out
    assert "turn 1: a.txt" in out
    assert "restored a.txt" in out and out.rstrip().endswith("bye")
    assert (ws / "a.txt").read_text() == "hello world\n"


def test_unknown_command_lists_valid_ones(run_repl: RunRepl) -> None:
    out, _ = run_repl(f"/nope{ENTER}/help{ENTER}/tools{ENTER}/model{ENTER}{CTRL_D}")
    assert "unknown command /nope (commands: /clear, /compact, /cost, /diff, /exit, /export" in out
    assert "/undo" in out and "8. update_plan" in out and "provider mock" in out


def test_multiline_input_is_one_message(run_repl: RunRepl) -> None:
    _, repl = run_repl(f"first line{ESC_ENTER}second line{ENTER}{CTRL_D}")
    users = [m.content for m in repl.session.agent.messages if m.role == "user"]
    assert users == ["first line\nsecond line"]


def test_ctrl_c_clears_then_twice_exits(run_repl: RunRepl) -> None:
    out, repl = run_repl(f"half typed{CTRL_C}{CTRL_C}{CTRL_C}")
    assert "press Ctrl-C again" in out and out.rstrip().endswith("bye")
    assert repl.session.agent.messages == []  # the half-typed line was never sent


def test_run_command_asks_first(run_repl: RunRepl, ws: Path) -> None:
    """Unsandboxed (as without any mechanism), auto-edit asks for every command; "always"
    covers the same program with the same first arguments, nothing else."""
    out, _ = run_repl(
        f"run `touch one`{ENTER}n{ENTER}run `touch two`{ENTER}a{ENTER}"
        f"run `touch two`{ENTER}run `touch three`{ENTER}n{ENTER}{CTRL_D}",
        MCA_SANDBOX="off",
    )
    assert not (ws / "one").exists() and "declined" in out
    assert (ws / "two").exists() and not (ws / "three").exists()
    # asked for one, two and three; the second `touch two` ran on the "always"
    assert out.count("run_command wants to run exactly this") == 3
    assert "(unsandboxed: with your full rights)" in out


@pytest.mark.slow
def test_auto_edit_runs_sandboxed_commands_without_asking(run_repl: RunRepl, ws: Path) -> None:
    out, repl = run_repl(f"run `touch one`{ENTER}{CTRL_D}")
    if not repl.session.sandbox or not repl.session.sandbox.active:
        pytest.skip("no sandbox mechanism here")
    assert (ws / "one").exists() and "run it?" not in out
    assert "sandboxed: workspace-write, no network" in out


def test_model_error_keeps_the_conversation(run_repl: RunRepl, ws: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text('{"content": "first answer"}\n')
    out, repl = run_repl(f"one{ENTER}two{ENTER}{CTRL_D}", MCA_MOCK_SCRIPT=str(script))
    assert "first answer" in out and "no more responses" in out
    assert [m.content for m in repl.session.agent.messages] == ["one", "first answer"]


def test_completion_of_commands_and_paths(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "calc.js").write_text("")
    comp = McaCompleter(ws, lambda: {"/undo": "undo", "/help": "help", "/snapshots": "list"})

    def complete(text: str) -> list[str]:
        return [c.text for c in comp.get_completions(Document(text), CompleteEvent())]

    assert complete("/u") == ["/undo"]
    assert complete("look at @sr") == ["src/"]
    assert complete("look at @src/c") == ["src/calc.js"]
    assert complete("look at @../") == []


@pytest.mark.parametrize("key", [CTRL_C, CTRL_D])
def test_ctrl_c_or_d_at_the_approval_cancels_the_turn(
    run_repl: RunRepl, ws: Path, tmp_path: Path, key: str
) -> None:
    script = tmp_path / "s.jsonl"
    call = '{"tool_calls": [{"name": "run_command", "arguments": {"command": "touch X"}}]}\n'
    script.write_text(call * 40 + '{"content": "after"}\n')
    # --mode ask: in the sandbox, auto-edit would run it without a question
    out, repl = run_repl(f"go{ENTER}{key}/exit{ENTER}", MCA_MOCK_SCRIPT=str(script), MCA_MODE="ask")
    assert "turn cancelled; the conversation is as it was" in out
    assert out.count("run_command wants to run") == 1  # asked once, not until the step limit
    assert repl.session.agent.messages == [] and not (ws / "X").exists()
    assert out.rstrip().endswith("bye")


def test_the_step_limit_is_said_once(run_repl: RunRepl, tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text('{"tool_calls": [{"name": "list_dir", "arguments": {}}]}\n' * 5)
    keys = f"go{ENTER}n{ENTER}{CTRL_D}"  # no: the turn stops at the limit
    out, _ = run_repl(keys, MCA_MOCK_SCRIPT=str(script), MCA_MAX_STEPS="2")
    assert out.count("the turn has made 2 model calls, its step limit") == 1
    assert out.count("step limit of 2 model calls") == 1


def test_at_the_step_limit_a_yes_lets_the_turn_go_on(run_repl: RunRepl, tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    loop = '{"tool_calls": [{"name": "list_dir", "arguments": {}}]}\n'
    script.write_text(loop * 3 + '{"content": "all done"}\n')
    keys = f"go{ENTER}y{ENTER}/steps{ENTER}/steps ²{ENTER}/steps 7{ENTER}/steps{ENTER}{CTRL_D}"
    out, repl = run_repl(keys, MCA_MOCK_SCRIPT=str(script), MCA_MAX_STEPS="2")
    assert "all done" in out and "step limit of" not in out.split("all done")[1]
    assert "step limit: 2 model calls in one turn" in out  # /steps shows it
    assert repl.session.max_steps == 7 and "step limit: 7 model calls" in out
    assert out.count("usage: /steps N") == 1  # "²" is a digit to str.isdigit, not a number


def test_a_bug_in_a_turn_is_one_line_and_the_session_goes_on(ws: Path) -> None:
    from mca.assembly.assemble import open_session
    from tests.helpers import FakeModel, piped_repl, say

    home = ws.parent / "home"
    settings = load_settings({"MOCK": "1", "MCA_HOME": str(home)}, workspace=ws)
    model = FakeModel([RuntimeError("kaboom"), say("fine")])
    opener = lambda ui: open_session(settings, ui, model=model)  # noqa: E731
    text, _ = piped_repl(settings, f"one{ENTER}two{ENTER}{CTRL_D}", opener=opener)
    assert "internal error (this is a bug in mca" in text and "RuntimeError: kaboom" in text
    assert "fine" in text and text.rstrip().endswith("bye")
    crash = list((home / "logs").glob("crash-*.txt"))
    assert crash and "kaboom" in crash[0].read_text() and crash[0].stat().st_mode & 0o077 == 0


class _FullDisk(SessionStore):
    """A conversation file that cannot be written after the first turn."""

    def turn(self, messages: Sequence[Message], ledger: TurnLedger | None) -> None:
        raise McaError("cannot save the conversation: no space left on the device")


def test_a_failure_after_the_turn_was_saved_says_the_turn_was_kept(ws: Path) -> None:
    """The turn ran and was checkpointed; saving it failed: the REPL must not claim the
    conversation is as it was before the turn (it is not: the turn is in it)."""
    from mca.assembly.assemble import open_session
    from tests.helpers import FakeModel, piped_repl, say

    def failing(settings: Settings, ui: ReplUI) -> Session:
        session = open_session(settings, ui, model=FakeModel([say("the answer"), say("next")]))
        return replace(session, store=_FullDisk(None, session.id, ws, "fake"))

    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "home")}, workspace=ws)
    keys = f"one{ENTER}two{ENTER}{CTRL_D}"
    text, repl = piped_repl(settings, keys, opener=lambda ui: failing(settings, ui))
    session = repl.session
    assert "error: cannot save the conversation" in text
    assert "the conversation is as it was before this turn" not in text
    assert "the turn was kept (the conversation has it); recording its ledger and saving" in text
    assert [m.content for m in session.messages if m.role == "user"] == ["one", "two"]


def test_a_failure_before_the_turn_was_kept_says_it_was_rolled_back(ws: Path) -> None:
    from mca.assembly.assemble import open_session
    from mca.errors import ModelError
    from tests.helpers import FakeModel, piped_repl

    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "home")}, workspace=ws)
    model = FakeModel([ModelError("the server went away")])
    opener = lambda ui: open_session(settings, ui, model=model)  # noqa: E731
    text, repl = piped_repl(settings, f"one{ENTER}{CTRL_D}", opener=opener)
    assert list(repl.session.messages) == []
    assert "error: the server went away\nthe conversation is as it was before this turn" in text


def test_an_error_after_completed_steps_says_what_was_kept_once(ws: Path) -> None:
    from mca.assembly.assemble import open_session
    from mca.errors import ModelError
    from tests.helpers import FakeModel, call, piped_repl

    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "home")}, workspace=ws)
    model = FakeModel([call("list_dir"), ModelError("HTTP 500: boom")])
    opener = lambda ui: open_session(settings, ui, model=model)  # noqa: E731
    text, repl = piped_repl(settings, f"one{ENTER}{CTRL_D}", opener=opener)
    assert "error: HTTP 500: boom; the turn's 1 completed tool call is kept" in text
    assert text.count("kept") == 1, text  # not again as "the turn was kept …"
    assert [m.role for m in repl.session.messages][:3] == ["user", "assistant", "tool"]


def _script(tmp_path: Path, *steps: str) -> str:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(steps) + "\n")
    return str(path)


WRITE = (
    '{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "new\\n"}}]}'
)
RUN = '{"tool_calls": [{"name": "run_command", "arguments": {"command": "%s"}}]}'
DONE = '{"content": "done"}'


def test_auto_edit_shows_the_diff_and_ask_asks_first(
    run_repl: RunRepl, ws: Path, tmp_path: Path
) -> None:
    (ws / "a.txt").write_text("old\n")
    out, _ = run_repl(f"go{ENTER}{CTRL_D}", MCA_MOCK_SCRIPT=_script(tmp_path, WRITE, DONE))
    assert "-old" in out and "+new" in out and (ws / "a.txt").read_text() == "new\n"
    (ws / "a.txt").write_text("old\n")
    out, _ = run_repl(
        f"/mode ask{ENTER}go{ENTER}n{ENTER}{CTRL_D}", MCA_MOCK_SCRIPT=_script(tmp_path, WRITE, DONE)
    )
    assert out.index("+new") < out.index("the user declined this edit")
    assert (ws / "a.txt").read_text() == "old\n"


def test_read_only_refuses_writes_and_its_commands_write_nothing(
    run_repl: RunRepl, ws: Path, tmp_path: Path
) -> None:
    script = _script(tmp_path, WRITE, RUN % "touch X", DONE)
    out, _ = run_repl(f"go{ENTER}{CTRL_D}", MCA_MOCK_SCRIPT=script, MCA_MODE="read-only")
    assert out.count("read-only mode") == 2 and not (ws / "a.txt").exists()
    assert not (ws / "X").exists()


@pytest.mark.slow
def test_always_is_scoped_to_the_program(run_repl: RunRepl, ws: Path, tmp_path: Path) -> None:
    """'always' covers the same program with the same first arguments (options may follow),
    nothing else; it is asked for with --mode ask (or without a sandbox)."""
    script = _script(
        tmp_path, RUN % "touch one", RUN % "touch one -c", RUN % "touch two", RUN % "ls", DONE
    )
    out, _ = run_repl(
        f"go{ENTER}a{ENTER}n{ENTER}n{ENTER}{CTRL_D}", MCA_MOCK_SCRIPT=script, MCA_MODE="ask"
    )
    assert (ws / "one").exists() and not (ws / "two").exists()  # `touch one`: always
    assert out.count("run_command wants to run exactly this") == 3  # one, two, ls


def _skill(ws: Path, name: str, body: str, **fields: str) -> None:
    d = ws / ".agents" / "skills" / name
    d.mkdir(parents=True)
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    (d / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Use for {name}.\n{extra}---\n{body}"
    )


def test_slash_skill_over_the_budget_loads_its_head(run_repl: RunRepl, ws: Path) -> None:
    """/NAME rest of sentence names the skill; a built-in command wins over a skill of the same
    name ($NAME still names it); /help lists the skills; an unknown /word stays an error."""
    steps = "".join(f"## Step {i}\n\n" + "Do it well. " * 40 + "\n\n" for i in range(60))
    _skill(ws, "planner", "# Planner\n\n" + steps, **{"argument-hint": '"what to plan"'})
    _skill(ws, "diff", "DIFF-SKILL-BODY\n")
    _skill(ws, "hidden", "HIDDEN-BODY\n", **{"user-invocable": "false"})
    keys = [
        "/help",
        "/planner Add user profile editing",
        "/why",
        "/diff",
        "/hidden now",
        "/nope",
        "$diff please",
        "/why",
    ]
    out, repl = run_repl(ENTER.join(keys) + ENTER + CTRL_D, HOME=str(ws.parent))
    assert "  /planner what to plan\n" in out and "  $diff  (/diff is the built-in command)" in out
    assert "/hidden" not in out[: out.index("skill planner  score 100")]
    assert re.search(r"loaded  planner: partial: \d+ of \d+ chars; the rest: read_file", out)
    assert "no file changes in this session" in out  # /diff: the command
    assert "/hidden is a skill that is not offered as a command (user-invocable: false" in out
    assert "unknown command /nope" in out
    assert "loaded  diff: expanded" in out
    sent = [m for m in repl.session.agent.messages if m.kind == "skills"]
    assert [m.skills for m in sent] == [("planner",), ("diff",)]
    assert "read_file skill:planner offset=" in sent[0].content


def test_ctrl_c_in_a_command_cancels_it_and_the_session_goes_on(ws: Path) -> None:
    from mca.ui.commands import Command

    settings = load_settings({"MOCK": "1", "MCA_HOME": str(ws.parent / "home")}, workspace=ws)
    out = io.StringIO()

    def interrupted(arg: str) -> None:
        raise KeyboardInterrupt  # Ctrl-C while a command waits (a model, the session, a disk)

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(f"/wait{ENTER}list the files{ENTER}{CTRL_D}")
        repl = repl_for(
            settings, input=pipe, output=DummyOutput(), out=out, history=InMemoryHistory()
        )
        repl.commands["/wait"] = Command("waits", interrupted)
        assert repl.run() == 0
    text = out.getvalue()
    assert "/wait cancelled" in text and "list_dir" in text and text.rstrip().endswith("bye")

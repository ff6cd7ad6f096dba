"""While mca works, in-process: a command's output as batched CommandOutput events, the box
that shows it (plain lines when not a terminal), the turn's keyboard on a pipe, and the
single-key answers to approval questions."""

from __future__ import annotations

import io
import os
import pty
import select
import signal
import termios
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyte
import pytest
from prompt_toolkit.input import create_input, create_pipe_input
from prompt_toolkit.input.typeahead import get_typeahead
from prompt_toolkit.keys import Keys

from mca.events import CommandOutput, CommandStarted, Event, ToolReturned
from mca.state.log import SessionLog
from mca.tools import get_tool
from mca.tools.allow import Answer, CommandQuestion
from mca.tools.base import ToolEnv, TurnState
from mca.tools.live import MAX_PENDING, LiveOutput
from mca.ui.keyboard import RawHold, TurnKeys, typed
from mca.ui.livebox import TAIL_LINES, CommandBox, fit
from mca.ui.terminal import ReplUI
from tests.ptyscreen import wait_until
from tests.test_event_stream import line_problems, script, stream

SECRET = "sk-live-secret-0123456789"
WORDS = [f"word{i:02} " for i in range(12)]


def texts(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, CommandOutput))


# -- the events ----------------------------------------------------------------------------------
def test_output_is_batched_and_sent_whole_once() -> None:
    got: list[Event] = []
    now = [0.0]
    live = LiveOutput(got.append, interval=0.1, clock=lambda: now[0])
    live.feed(b"one\n")  # the first piece goes at once
    assert texts(got) == "one\n"
    live.feed(b"tw")  # inside the interval: held (a timer sends it if nothing follows)
    live.feed("o \u00e9".encode()[:-1])  # a character split between two pieces
    now[0] = 0.5
    live.feed("\u00e9".encode()[-1:] + b"\n")
    live.close()
    live.feed(b"late")  # after close: nothing more
    assert texts(got) == "one\ntwo \u00e9\n" and 2 <= len(got) <= 3
    assert all(isinstance(e, CommandOutput) and e.text for e in got)


def test_a_flood_between_two_events_keeps_its_end_and_says_how_much_was_left_out() -> None:
    got: list[Event] = []
    live = LiveOutput(got.append, interval=60, clock=lambda: 0.0)
    live.feed(b"a")
    live.feed(b"x" * (MAX_PENDING + 100) + b"end")
    live.close()
    last = got[-1]
    assert isinstance(last, CommandOutput) and last.dropped == 103
    assert len(last.text) == MAX_PENDING and last.text.endswith("xend")


def test_a_key_split_between_two_events_never_joins_and_nothing_is_lost() -> None:
    got: list[Event] = []
    now = [0.0]
    live = LiveOutput(got.append, interval=0.1, clock=lambda: now[0], secrets=[SECRET])
    live.feed(f"key={SECRET[:7]}".encode())  # goes at once, but for what may be a key's start
    now[0] = 0.4
    live.feed(f"{SECRET[7:]}\nthen {SECRET[:5]}".encode())
    now[0] = 0.8
    live.feed(b"")  # nothing new: what is held stays held
    assert SECRET not in texts(got) and not texts(got).endswith(SECRET[:5])
    live.close()  # the held tail was no key: it comes with the last event
    assert texts(got) == f"key=[REDACTED]\nthen {SECRET[:5]}"
    assert next(e.text for e in got if isinstance(e, CommandOutput)) == "key="


def test_a_flood_cannot_join_a_key_across_what_it_left_out() -> None:
    """What a consumer joins is what the scrubber saw: a key's two halves on both sides of
    the characters a flood left out do not make a key there either."""
    got: list[Event] = []
    live = LiveOutput(got.append, interval=60, clock=lambda: 0.0, secrets=[SECRET])
    live.feed(f"key={SECRET[:9]}".encode())  # sent at once (but for the key's possible start)
    rest = SECRET[9:] + "z" * (MAX_PENDING - len(SECRET) + 9)  # all a flood leaves, exactly
    live.feed(b"y" * 100 + rest.encode())
    live.close()
    outputs = [e for e in got if isinstance(e, CommandOutput)]
    assert outputs[-1].dropped == 100 and SECRET not in texts(got)
    assert texts(got) == "key=[REDACTED]" + "z" * (MAX_PENDING - len(SECRET) + 9)


def test_a_real_command_printing_a_key_in_two_parts(env: ToolEnv, ws: Path) -> None:
    seen: list[Event] = []
    env = replace(env, emit=seen.append, secrets=(SECRET,))
    command = f"printf 'key=%s' '{SECRET[:8]}'; sleep 0.4; printf '%s\\n' '{SECRET[8:]}'; echo end"
    out = get_tool("run_command").run(env, TurnState(1), {"command": command})
    pieces = [e.text for e in seen if isinstance(e, CommandOutput)]
    assert "".join(pieces) == "key=[REDACTED]\nend\n" and SECRET not in "".join(pieces), pieces
    assert len(pieces) >= 2 and out.endswith("end")  # the sleep split it; the result is whole


def test_run_command_emits_its_output_between_start_and_result(env: ToolEnv, ws: Path) -> None:
    seen: list[Event] = []
    env = replace(env, emit=seen.append)
    out = get_tool("run_command").run(env, TurnState(1), {"command": "echo one; echo two"})
    kinds = [e.kind for e in seen]
    assert kinds[0] == CommandStarted.kind and "command.output" in kinds
    assert texts(seen) == "one\ntwo\n" and "one\ntwo" in out  # the model's result as before


def test_stream_json_carries_the_output_in_schema_between_start_and_result(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo one; echo two"}}]}
    replies = script(tmp_path, run, {"content": "done"})
    code, lines, _ = stream(ws, capsys, "go", "--yes", MCA_MOCK_SCRIPT=replies, MCA_SANDBOX="off")
    kinds = [r["type"] for r in lines]
    assert code == 0 and [p for r in lines for p in line_problems(r)] == []
    outputs = [r for r in lines if r["type"] == "command.output"]
    assert "".join(r["text"] for r in outputs) == "one\ntwo\n"
    assert kinds.index("command.start") < kinds.index("command.output") < kinds.index("tool.result")


def test_command_output_is_not_logged(tmp_path: Path) -> None:
    log = SessionLog(tmp_path / "log.jsonl")
    log.event(CommandOutput("lots of output", 1.0))
    log.event(ToolReturned("run_command", True, "ok"))
    log.close()
    assert [e["event"] for e in log.events] == ["tool.result"]
    assert "lots of output" not in (tmp_path / "log.jsonl").read_text()


# -- the box ---------------------------------------------------------------------------------------
def box(live: bool, columns: int = 80) -> tuple[CommandBox, io.StringIO]:
    out = io.StringIO()
    return CommandBox(out, threading.RLock(), [SECRET], live, lambda: columns), out


def test_plain_lines_once_each_made_safe() -> None:
    b, out = box(live=False)
    b.start()
    b.feed("one\ntw")
    b.feed(f"o \x1b[31mred\x1b[0m \x1b]52;c;Zm9v\x07 key={SECRET[:6]}")
    b.feed(f"{SECRET[6:]}\r\n10%\r50%\r100%\nno newline")
    b.stop()
    b.feed("after the end\n")
    assert out.getvalue().splitlines() == [
        "  │ one",
        "  │ two red ^[]52;c;Zm9v^G key=[REDACTED]",
        "  │ 100%",
        "  │ no newline",
    ]


def test_the_frame_is_the_seconds_and_the_last_lines_cut_to_the_screen() -> None:
    b, _ = box(live=True, columns=30)
    b.start()
    b.feed("".join(f"line {i}\n" for i in range(1, 10)) + "partial " + "wide \u4e16" * 9)
    started = b.frame(0)[0]
    assert started.startswith("  running · ")
    rows = b.frame(time.monotonic() + 3)
    assert rows[0].startswith("  running · 3 s")
    assert rows[1:] == [f"  │ line {i}" for i in (6, 7, 8, 9)] + [rows[-1]]
    assert len(rows) == 1 + TAIL_LINES and rows[-1].endswith("…") and "partial" in rows[-1]
    b.note = "queued: next"
    assert b.frame(time.monotonic())[0].endswith("· queued: next")
    b.stop()


def test_fit_counts_cells() -> None:
    assert fit("abc", 3) == "abc" and fit("abcd", 3) == "ab…"
    assert fit("\u4e16\u4e16\u4e16", 4) == "\u4e16…"


def test_the_box_is_erased_before_anything_else_is_written() -> None:
    out = io.StringIO()
    ui = ReplUI(out, lambda q: "", live=True)
    ui.event(CommandStarted("sleep 5"))
    ui.event(CommandOutput("working\n", 0.1))
    assert ui.box.running
    wait_until(lambda: "running ·" in out.getvalue(), "the box drawn")
    ui.event(ToolReturned("run_command", True, "$ sleep 5\nexit code 0"))
    assert not ui.box.running
    drawn = out.getvalue()
    assert drawn.rindex("\x1b[J") < drawn.index("✓ $ sleep 5")  # erased, then the result


class Flushes(io.StringIO):
    """A terminal's output as the terminal sees it: what had arrived at each flush."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def flush(self) -> None:
        self.seen.append(self.getvalue())


def test_the_queued_note_is_never_seen_gone_while_the_answer_grows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each piece of a streaming answer reaches the terminal in one write with the note's erase
    and redraw (the pty test saw the answer grow with no note under it: a flush between)."""
    monkeypatch.setenv("COLUMNS", "100")  # the terminal's width, as the screen below has it
    screen = pyte.Screen(100, 10)
    stream = pyte.Stream(screen)
    out = Flushes()
    ui = ReplUI(out, lambda q: "", live=True)
    ui.begin_turn()
    ui.text("word00 ")
    ui.queued("typed meanwhile")
    for word in WORDS[1:]:
        ui.text(word)
    shown = 0
    for upto in out.seen:
        stream.feed(upto[shown:])
        shown = len(upto)
        if "word01" in screen.display[0]:
            assert "queued: typed meanwhile" in screen.display[1], screen.display[:2]
    ui.end_stream()
    stream.feed(out.getvalue()[shown:])
    assert "queued" not in "\n".join(screen.display)
    assert screen.display[0].split() == [w.strip() for w in WORDS]


# -- the keyboard during a turn ------------------------------------------------------------------
def test_keys_typed_during_a_turn_are_kept_for_the_next_prompt() -> None:
    seen: list[str] = []
    with create_pipe_input() as pipe:
        with TurnKeys(pipe, seen.append):
            pipe.send_text("nexd\x7ft\r")
            wait_until(lambda: seen[-1:] == ["next\n"], "the keys read")
        kept = get_typeahead(pipe)
    assert typed(kept) == "next\n"


def test_ctrl_d_and_other_keys_typed_during_a_turn_are_kept_too() -> None:
    seen: list[str] = []
    with create_pipe_input() as pipe:
        with TurnKeys(pipe, seen.append):
            pipe.send_text("ab\x1b[D\t\x04c")  # Left, Tab, Ctrl-D
            wait_until(lambda: seen[-1:] == ["abc"], "the keys read")
        kept = get_typeahead(pipe)
    assert [k.key for k in kept] == ["a", "b", Keys.Left, Keys.ControlI, Keys.ControlD, "c"]
    assert typed(kept) == "abc"  # shown as queued: what they spell


def test_after_a_turn_the_terminal_stays_raw_until_the_next_prompt_releases_it() -> None:
    """Keys typed between a turn's end and the next prompt wait in the terminal unechoed, and a
    Ctrl-D stays a key (a cooked terminal would read it as the end of a line, a NUL)."""
    master, slave = pty.openpty()
    with os.fdopen(slave, "r") as stdin:
        inp = create_input(stdin)
        before = termios.tcgetattr(slave)
        hold = RawHold()
        with TurnKeys(inp, hold=hold):
            pass
        os.write(master, b"x\x04")
        raw = termios.tcgetattr(slave)
        assert not raw[3] & (termios.ECHO | termios.ICANON)
        wait_until(lambda: bool(select.select([slave], [], [], 0)[0]), "the keys in the terminal")
        assert [k.key for k in inp.read_keys()] == ["x", Keys.ControlD]
        hold.release()
        assert termios.tcgetattr(slave) == before
    os.close(master)


def test_one_key_answers_and_other_keys_are_ignored() -> None:
    with create_pipe_input() as pipe, TurnKeys(pipe) as keys:
        assert keys.key("yna", lambda: pipe.send_text("xqA")) == "a"
        assert keys.key("yn", lambda: pipe.send_text("a\r")) == ""  # Enter: the default
        assert get_typeahead(pipe) == []  # keys typed for a question are not kept


@pytest.mark.parametrize("key", ["\x1b", "\x03", "\x04"])
def test_esc_ctrl_c_and_ctrl_d_at_a_question_cancel_the_turn(key: str) -> None:
    with create_pipe_input() as pipe, TurnKeys(pipe) as keys, pytest.raises(KeyboardInterrupt):
        keys.key("yn", lambda: pipe.send_text(key))


@pytest.mark.skipif(
    signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="SIGINT does not raise KeyboardInterrupt in this process",
)
@pytest.mark.parametrize("key", ["\x1b", "\x03"])
def test_esc_and_ctrl_c_interrupt_the_turn(key: str) -> None:
    with create_pipe_input() as pipe, pytest.raises(KeyboardInterrupt), TurnKeys(pipe):
        pipe.send_text(key)
        wait_until(lambda: False, "never", timeout=20)  # the interrupt ends the wait


# -- the questions ---------------------------------------------------------------------------------
def ui_with_keys(keys: list[str]) -> tuple[ReplUI, io.StringIO]:
    out = io.StringIO()

    def key(allowed: str, show: Callable[[], None]) -> str | None:
        show()
        return keys.pop(0)

    return ReplUI(out, lambda q: pytest.fail("a line was asked for"), key=key), out


def test_approvals_take_one_key_and_show_the_answer() -> None:
    ui, out = ui_with_keys(["y", "", "a"])
    question = CommandQuestion("touch one", always="touch one")
    assert ui.approve(question) is Answer.YES
    assert ui.approve(question) is Answer.NO  # Enter: the default, No
    assert ui.approve(question) is Answer.ALWAYS
    shown = out.getvalue()
    assert "run it? [y]es / [N]o / [a]lways `touch one`: yes\n" in shown
    assert "`touch one`: no\n" in shown and "`touch one`: always\n" in shown


def test_without_a_key_reader_questions_take_a_line() -> None:
    answers = iter(["maybe", "YES", "", "always", "n"])
    ui = ReplUI(io.StringIO(), lambda q: next(answers))
    assert ui.approve(CommandQuestion("ls")) is Answer.YES  # "maybe" was asked again
    assert ui.approve(CommandQuestion("ls")) is Answer.NO  # Enter
    assert ui.approve(CommandQuestion("ls")) is Answer.NO  # "always" was not offered: again
    assert next(answers, None) is None


def test_a_queued_enter_shows_as_a_key_not_as_backslash_n() -> None:
    ui = ReplUI(io.StringIO(), lambda q: "", live=True)
    ui.queued("fix it\nthen run the tests\n")
    assert ui._note == "queued: fix it ⏎ then run the tests"
    ui.queued("a\\nb")  # typed as such: shown as typed
    assert ui._note == "queued: a\\nb"

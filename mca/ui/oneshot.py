"""`mca -p SENTENCE`: one turn, the answer on stdout, progress on stderr."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, TextIO

from mca.assemble import open_session
from mca.config import Settings
from mca.errors import McaError, error_line
from mca.events import (
    CommandOutput,
    CommandStarted,
    Event,
    Failed,
    LedgerRecorded,
    ModelRetry,
    ModelWaiting,
    SessionResumed,
    ThinkingDelta,
    TurnEnded,
    UsageReported,
)
from mca.ledger import TurnLedger
from mca.sanitize import (
    command_block,
    exact_line,
    for_terminal,
    one_line,
    scrub,
    scrub_data,
    visible,
)
from mca.session import Session
from mca.tools.allow import Answer, CommandQuestion
from mca.turn import StopReason, TurnResult
from mca.ui.jsonl import StreamUI
from mca.ui.livebox import CommandBox
from mca.ui.render import fold_thinking, ledger_table, progress_line
from mca.ui.spinner import Spinner
from mca.ui.stream import StreamWriter
from mca.words import plural


class StderrUI:
    """Progress for -p: tool calls and results on stderr; asks on the terminal when there is one.

    Everything shown is untrusted text: secrets scrubbed, control characters made visible.
    """

    def __init__(
        self,
        settings: Settings,
        err: TextIO | None = None,
        out: TextIO | None = None,
        stream_to: TextIO | None = None,
    ) -> None:
        self.settings = settings
        self.err = err or sys.stderr
        # The answer goes to stream_to as it arrives (None: at the end), exactly as sent when
        # that is not a terminal, with control characters made visible when it is.
        self.stream = (
            StreamWriter(stream_to, settings.secrets, raw=not stream_to.isatty())
            if stream_to is not None
            else None
        )
        self.any_streamed = False
        self.lock = threading.RLock()
        live = bool(getattr(self.err, "isatty", None) and self.err.isatty())
        self.spinner = Spinner(self.err, self.lock) if live else None
        # A running command's lines as they come, plain even on a terminal: stderr is a log
        # here, and stdout keeps only the answer.
        self.box = CommandBox(self.err, self.lock, settings.secrets, False, lambda: 80)
        self._thought: list[str] = []  # the reply's thinking: folded on stderr when it ends

    def end_thinking(self) -> None:
        """The reply's thinking, folded, on stderr: never in the answer on stdout."""
        text, self._thought = "".join(self._thought), []
        folded = fold_thinking(text, more="--output-format stream-json")
        if folded:
            with self.lock:
                self.err.write(for_terminal(folded, self.settings.secrets) + "\n")
                self.err.flush()

    def _say(self, text: str) -> None:
        self.end_stream()
        self.box.stop()
        with self.lock:
            self.err.write(for_terminal(text, self.settings.secrets) + "\n")
            self.err.flush()

    def _ask(self, question: str) -> bool:
        self.err.write(question)
        self.err.flush()
        line = sys.stdin.readline()
        if not line:  # Ctrl-D: cancel the turn, as Ctrl-C does
            raise KeyboardInterrupt
        return line.strip().lower() in ("y", "yes")

    def approve(self, question: CommandQuestion) -> Answer:
        """The command whole, then y/N on a terminal; without one, refused (--yes runs it)."""
        shown = command_block(question.command)
        if question.more:
            self._say(f"mca: the sandbox stopped this command from {question.wall}:\n{shown}")
            if not sys.stdin.isatty():
                return Answer.NO
            yes = self._ask(f"run it again with {question.more}, this once? [y/N] ")
            return Answer.YES if yes else Answer.NO
        if not sys.stdin.isatty():
            self._say(
                "mca: not running this command without approval (pass --yes or --mode yolo):\n"
                + shown
            )
            return Answer.NO
        where = question.sandbox or "unsandboxed: with your full rights"
        self._say(f"run_command wants to run exactly this ({where}):\n{shown}")
        return Answer.YES if self._ask("run it? [y/N] ") else Answer.NO

    def approve_write(self, path: str, reason: str, diff: str) -> bool:
        """Protected paths: --yes does not cover them; without a terminal they are refused."""
        self._say(f"{exact_line(path)} is a protected path: {reason}.\nthe change, whole:\n{diff}")
        if not sys.stdin.isatty():
            self._say(
                f"mca: not writing {exact_line(path)}: protected paths need a yes on a terminal"
                " (--yes does not cover them)"
            )
            return False
        return self._ask(f"write {exact_line(path)} anyway? [y/N] ")

    def approve_edit(self, path: str, diff: str) -> bool:
        """The "ask" mode: the diff, then a question (refused without a terminal)."""
        self._say(f"the change to {exact_line(path)}, whole:\n{diff}")
        if not sys.stdin.isatty():
            self._say(f"mca: not writing {exact_line(path)}: --mode ask needs a terminal to ask on")
            return False
        return self._ask(f"apply this change to {exact_line(path)}? [y/N] ")

    def event(self, event: Event) -> None:
        match event:
            case ThinkingDelta(text=text):
                self._thought.append(text)
            case ModelWaiting() if self.spinner is not None:
                self.end_stream()
                self.spinner.start()
            case ModelRetry(message=message) if self.spinner is not None and self.spinner.running:
                self.spinner.set_state(one_line(scrub(message, self.settings.secrets)))
            case CommandOutput(text=text):
                self.box.feed(text)
            case _:
                line = progress_line(event)
                if line:
                    self._say(line)
                if isinstance(event, CommandStarted):
                    self.box.start()

    def text(self, delta: str) -> None:
        """The answer as it arrives, on stdout; known keys never get through."""
        self.end_thinking()
        if self.spinner is not None:
            self.spinner.stop()
        if self.stream is not None:
            self.stream.feed(delta)

    def end_stream(self) -> None:
        """After the streamed text of one reply: the rest of it and a line end."""
        if self.spinner is not None:
            self.spinner.stop()
        self.end_thinking()
        if self.stream is not None and self.stream.end():
            self.any_streamed = True


def turn_json(session: Session, result: TurnResult) -> dict[str, Any]:
    """The --json object for a turn."""
    obj: dict[str, Any] = {
        "session": session.id,
        "answer": result.answer,
        "turn": result.turn,
        "stopped": result.answer if result.stopped_early else None,
        "notice": result.notice or None,
        "error": None,
        "tool_calls": [
            {"name": t.name, "arguments": dict(t.arguments), "ok": t.ok, "result": t.result}
            for t in result.tools
        ],
        "usage": {
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "cached_tokens": result.usage.cached_tokens,
            "cache_write_tokens": result.usage.cache_write_tokens,
            "reasoning_tokens": result.usage.reasoning_tokens,
            "reported_by_provider": result.usage_reported,
        },
        "model": {"provider": session.settings.provider, "name": session.settings.model},
    }
    stage = session.skills.stage.last
    if stage is not None:
        skills = stage.to_json()
        skills["injected_tokens"] = session.skills.estimator.count(stage.injected_text)
        skills["tokens_label"] = session.skills.estimator.label
        obj["skills"] = skills
    if session.ledger.last is not None:
        obj["ledger"] = session.ledger.last.to_json()
    return obj


def _resume(session: Session, wanted: str) -> SessionResumed:
    from mca.sessions import pick

    if not wanted:
        raise McaError(
            "--resume without an id lists conversations to pick from: that needs the"
            " REPL (with -p, give the id, or use --continue)"
        )
    saved = pick(session.settings.home / "sessions", session.settings.workspace, wanted)
    session.restore(saved)
    for note in saved.notes:
        _note(session.settings, f"mca: {note}")
    _note(session.settings, f"mca: resumed {saved.id} ({plural(saved.turns, 'turn')})")
    return SessionResumed(saved.id, saved.turns)


def _note(settings: Settings, text: str) -> None:
    """A line on stderr, as every line there goes: keys scrubbed, controls made visible."""
    sys.stderr.write(for_terminal(text, settings.secrets) + "\n")


def _print_json(out: TextIO, obj: dict[str, Any], settings: Settings) -> None:
    """--json's object, every string in it scrubbed (the answer, the error, tool results)."""
    out.write(json.dumps(scrub_data(obj, settings.secrets), indent=2, ensure_ascii=False) + "\n")


def run_oneshot(
    settings: Settings,
    sentence: str,
    *,
    output: str = "text",
    out: TextIO | None = None,
    resume: str | None = None,
) -> int:
    """Run one turn; exit 0 on an answer, 1 when the turn stopped early or failed. With --json
    a failed turn still prints its object, with `error` and the tool calls that did run;
    stream-json writes every event as a JSON line as the turn goes (run_streamed)."""
    out = out or sys.stdout
    if output == "stream-json":
        return run_streamed(settings, sentence, out=out, resume=resume)
    as_json = output == "json"
    ui = StderrUI(settings, stream_to=None if as_json or not settings.stream else out)
    session = open_session(settings, ui, one_shot=True)
    if resume is not None:
        try:
            _resume(session, resume)
        except BaseException:
            session.close()
            raise
    if settings.mock_reason:
        _note(settings, f"mca: using the offline mock model ({settings.mock_reason})")
    try:
        result = session.run_turn(sentence, ledger=as_json or settings.show_ledger)
    except McaError as e:
        if not as_json or session.last_turn is None:
            session.close()
            raise
        obj = turn_json(session, session.last_turn)
        obj["error"] = str(e)
        _print_json(out, obj, settings)
        sys.stderr.write(error_line(e, settings.secrets))
        session.close()
        return e.exit_code
    except BaseException:
        session.close()
        raise
    ui.end_stream()
    if as_json:
        _print_json(out, turn_json(session, result), settings)
    else:
        if not ui.any_streamed:
            answer = scrub(result.answer.rstrip("\n"), settings.secrets)
            out.write((visible(answer) if out.isatty() else answer) + "\n")
        out.flush()
        if settings.show_ledger and session.ledger.last is not None:
            _note(settings, ledger_table(session.ledger.last))
        elif not settings.show_ledger:
            session.finish_turn(result)  # after the answer is out: the tokenizer is not on its path
    session.close()
    if result.notice:
        _note(settings, f"mca: {result.notice}")
    return 1 if result.stopped_early else 0


def _end_events(result: TurnResult, entry: TurnLedger) -> tuple[UsageReported, TurnEnded]:
    """The last two lines of a streamed turn: its usage, then its answer and why it ended."""
    u = result.usage
    usage = UsageReported(
        result.turn,
        u.prompt_tokens,
        u.completion_tokens,
        result.usage_reported,
        len(result.requests),
        entry.tokens,
        entry.encoding,
        u.cached_tokens,
        u.cache_write_tokens,
        u.reasoning_tokens,
    )
    return usage, TurnEnded(result.turn, result.answer, result.stop, result.notice)


def run_streamed(
    settings: Settings, sentence: str, *, out: TextIO, resume: str | None = None
) -> int:
    """-p with --output-format stream-json: session.start, every event of the turn as it
    happens, then usage and turn.end (error and turn.end when it fails) on `out`, one JSON
    object per line. Questions are asked on the terminal, as without it."""
    ui = StreamUI(out, settings.secrets, StderrUI(settings))
    session = open_session(settings, ui, one_shot=True)
    if settings.mock_reason:
        _note(settings, f"mca: using the offline mock model ({settings.mock_reason})")
    try:
        ui.start(session.started())
        if resume is not None:
            ui.event(_resume(session, resume))
        result = session.run_turn(sentence, ledger=False)
        ui.end_text()
        entry = session.finish_turn(result)
        if settings.show_ledger:
            ui.event(LedgerRecorded(entry))
        for event in _end_events(result, entry):
            ui.event(event)
    except (McaError, KeyboardInterrupt) as e:
        last = session.last_turn
        turn = last.turn if last is not None else session.turns + 1
        if isinstance(e, KeyboardInterrupt):
            ui.event(TurnEnded(turn, "", StopReason.INTERRUPTED, ""))
            raise
        ui.event(Failed(str(e), e.exit_code))
        ui.event(TurnEnded(turn, "", StopReason.ERROR, ""))
        sys.stderr.write(error_line(e, settings.secrets))
        return e.exit_code
    finally:
        session.close()
    return 1 if result.stopped_early else 0

"""-p's face on stderr: progress, the live command box, and questions asked on the terminal."""

from __future__ import annotations

import sys
import threading
from typing import TextIO

from mca.events import (
    CommandOutput,
    CommandStarted,
    Event,
    ModelRetry,
    ModelWaiting,
    ThinkingDelta,
)
from mca.text.diff import FileDiff
from mca.text.sanitize import (
    command_block,
    exact_line,
    for_terminal,
    one_line,
    scrub,
)
from mca.tools.allow import Answer, CommandQuestion
from mca.ui.diff_view import draw_diff
from mca.ui.face import FaceConfig
from mca.ui.livebox import CommandBox
from mca.ui.questions import ANSWER_WORDS, YES_NO, line_answer, read_key, reads_keys
from mca.ui.render import fold_thinking, progress_line
from mca.ui.spinner import Spinner, counts_down
from mca.ui.stream import StreamWriter
from mca.ui.width import columns_of, fitted

__all__ = ["StderrUI"]


class StderrUI:
    """Progress for -p: tool calls and results on stderr; asks on the terminal when there is one.

    Everything shown is untrusted text: secrets scrubbed, control characters made visible.
    """

    def __init__(
        self,
        face: FaceConfig,
        err: TextIO | None = None,
        stream_to: TextIO | None = None,
        stdin: TextIO | None = None,
    ) -> None:
        self.secrets = face.secrets
        self.err = err or sys.stderr
        self.stdin = stdin or sys.stdin  # where questions are answered
        # The answer goes to stream_to as it arrives (None: at the end), exactly as sent when
        # that is not a terminal, with control characters made visible when it is.
        self.stream = (
            StreamWriter(
                stream_to,
                face.secrets,
                raw=not stream_to.isatty(),
                columns=lambda: columns_of(stream_to),
            )
            if stream_to is not None
            else None
        )
        self.any_streamed = False
        self.lock = threading.RLock()
        live = bool(getattr(self.err, "isatty", None) and self.err.isatty())
        self.spinner = Spinner(self.err, self.lock) if live else None
        # A running command's lines as they come, plain even on a terminal: stderr is a log
        # here, and stdout keeps only the answer.
        self.box = CommandBox(self.err, self.lock, face.secrets, False, lambda: 80)
        self._thought: list[str] = []  # the reply's thinking: folded on stderr when it ends

    def end_thinking(self) -> None:
        """The reply's thinking, folded, on stderr: never in the answer on stdout."""
        text, self._thought = "".join(self._thought), []
        folded = fold_thinking(text, more="--output-format stream-json")
        if folded:
            with self.lock:
                self.err.write(for_terminal(folded, self.secrets) + "\n")
                self.err.flush()

    def _say(self, text: str, exact: str = "") -> None:
        """mca's own line, broken between words on a terminal; then `exact` lines (a command,
        a diff) as they are, never broken."""
        self.end_stream()
        self.box.stop()
        shown = fitted(for_terminal(text, self.secrets), self.err)
        if exact:
            shown += "\n" + for_terminal(exact, self.secrets)
        with self.lock:
            self.err.write(shown + "\n")
            self.err.flush()

    def _ask(self, question: str) -> bool:
        """A yes/no question, asked as the REPL asks it: one key on a terminal (Enter: no)."""
        self.end_stream()
        with self.lock:
            self.err.write(for_terminal(f"{question} {YES_NO}: ", self.secrets))
            self.err.flush()
        if reads_keys(self.stdin):
            answer = read_key(self.stdin, "yn") or "n"
            self.err.write(ANSWER_WORDS[answer] + "\n")
            return answer == "y"
        line = self.stdin.readline()
        if not line:  # Ctrl-D: cancel the turn, as Ctrl-C does
            raise KeyboardInterrupt
        return line_answer(line) == "y"

    def approve(self, question: CommandQuestion) -> Answer:
        """The command whole, then y/N on a terminal; without one, refused (--yes runs it)."""
        shown = command_block(question.command)
        if question.more:
            self._say(f"mca: the sandbox stopped this command from {question.wall}:", shown)
            if not self.stdin.isatty():
                self._say(f"mca: not run again with {question.more}: no terminal to ask on")
                return Answer.UNASKED
            yes = self._ask(f"run it again with {question.more}, this once?")
            return Answer.YES if yes else Answer.NO
        if not self.stdin.isatty():
            self._say(
                "mca: not running this command without approval (pass --yes or --mode yolo):",
                shown,
            )
            return Answer.UNASKED
        where = question.sandbox or "unsandboxed: with your full rights"
        self._say(f"run_command wants to run exactly this ({where}):", shown)
        return Answer.YES if self._ask("run it?") else Answer.NO

    def approve_write(self, path: str, reason: str, diff: FileDiff) -> bool:
        """Protected paths: --yes does not cover them; without a terminal they are refused."""
        whole = draw_diff(diff)
        self._say(f"{exact_line(path)} is a protected path: {reason}.\nthe change, whole:", whole)
        if not self.stdin.isatty():
            self._say(
                f"mca: not writing {exact_line(path)}: protected paths need a yes on a terminal"
                " (--yes does not cover them)"
            )
            return False
        return self._ask(f"write {exact_line(path)} anyway?")

    def approve_edit(self, path: str, diff: FileDiff) -> bool:
        """The "ask" mode: the diff, then a question (refused without a terminal)."""
        self._say(f"the change to {exact_line(path)}, whole:", draw_diff(diff))
        if not self.stdin.isatty():
            self._say(f"mca: not writing {exact_line(path)}: --mode ask needs a terminal to ask on")
            return False
        return self._ask(f"apply this change to {exact_line(path)}?")

    def event(self, event: Event) -> None:
        match event:
            case ThinkingDelta(text=text):
                self._thought.append(text)
            case ModelWaiting() if self.spinner is not None:
                self.end_stream()
                self.spinner.start()
            case ModelRetry(message=message) if (
                self.spinner is not None and self.spinner.running and counts_down(message)
            ):
                self.spinner.set_state(one_line(scrub(message, self.secrets)))
            case CommandOutput(text=text):
                self.box.feed(text)
            case _:
                waiting = self.spinner is not None and self.spinner.running
                line = progress_line(event)
                if line:
                    self._say(line)
                if isinstance(event, CommandStarted):
                    self.box.start()
                elif isinstance(event, ModelRetry) and waiting and self.spinner is not None:
                    self.spinner.start()  # said once, above it; the wait goes on

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

"""What the REPL shows and asks on a terminal: ReplUI draws a session's events (streamed text,
commands and their live output, diffs, progress) and puts the questions before commands and
edits (the prompt's own line editing is mca/ui/line_editor.py)."""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TextIO

from mca.text.sanitize import command_block, exact_line, for_terminal, one_line, scrub
from mca.text.wrap import wrap_words
from mca.ui.ansi import CLEAR_LINE_BELOW, DIM, RESET, line_below
from mca.ui.diff_view import colour_diff, draw_diff
from mca.ui.livebox import CommandBox, fit
from mca.ui.markdown import MarkdownStream
from mca.ui.questions import ANSWER_WORDS, YES_NO, line_answer
from mca.ui.render import fold_thinking, progress_line
from mca.ui.spinner import Spinner, counts_down
from mca.ui.stream import StreamWriter

if TYPE_CHECKING:  # on the path to the first prompt: imported when first needed
    from mca.events import Event
    from mca.text.diff import FileDiff
    from mca.tools.allow import Answer, CommandQuestion

# (keys, show) -> the key pressed after show() put the question up ('' for Enter), or None when
# the keyboard is not read key by key (then the question takes a line).
KeyQuestion = Callable[[str, Callable[[], None]], str | None]


def _columns() -> int:
    return shutil.get_terminal_size().columns


class ReplUI:
    """Shows a session's events in the terminal and asks before commands run.

    Everything written passes `for_terminal`: the text comes from the model, the workspace and
    commands, so secrets are scrubbed and control characters made visible.
    """

    def __init__(
        self,
        out: TextIO,
        ask: Callable[[str], str],
        secrets: Iterable[str] = (),
        colour: bool = False,
        live: bool = False,
        key: KeyQuestion | None = None,
    ) -> None:
        self.out = out
        self.ask = ask
        self.key: KeyQuestion = key or (lambda keys, show: None)
        self.secrets = tuple(secrets)
        self.colour = colour
        self._raw_open = False
        self.lock = threading.RLock()
        self.spinner = Spinner(out, self.lock)
        self.live = live  # a terminal: a spinner while waiting, commands redrawn in place
        self.box = CommandBox(out, self.lock, self.secrets, live, _columns)
        self.stream = StreamWriter(
            out,
            self.secrets,
            markdown=self._markdown if colour else None,
            columns=_columns if live else None,
        )
        self._turn_text: list[str] = []  # what was streamed of this turn's replies
        self._thought: list[str] = []  # the reply's thinking so far: shown folded when it ends
        self._held: dict[int, list[str]] = {}  # by thread: writes kept for later (held())
        self._note = ""  # "queued: what the person typed meanwhile", or ''
        self._note_drawn = False  # the note is on the line under a streaming answer

    @staticmethod
    def _markdown() -> MarkdownStream:
        return MarkdownStream(shutil.get_terminal_size().columns)

    @property
    def streamed(self) -> bool:
        """An answer is streaming and not yet ended."""
        return self.stream.streamed

    def approve(self, question: CommandQuestion) -> Answer:
        """The command whole, where it runs, then y / n (/ a: "always" for what it covers)."""
        from mca.tools.allow import Answer

        block = command_block(question.command)
        if question.more:
            self.say(f"the sandbox stopped this command from {question.wall}:")
            self.exact(block)
            yes = self._answer(f"run it again with {question.more}, this once? {YES_NO}")
            return Answer.YES if yes == "y" else Answer.NO
        where = question.sandbox or "unsandboxed: with your full rights"
        self.say(f"run_command wants to run exactly this ({where}):")
        self.exact(block)  # never broken: what runs, as it runs
        always = f" / [a]lways `{one_line(question.always)}`" if question.always else ""
        keys = "yna" if question.always else "yn"
        while (answer := self._answer(f"run it? {YES_NO}{always}", keys)) is None:
            pass  # a typed line that is no answer: asked again
        return {"y": Answer.YES, "a": Answer.ALWAYS}.get(answer, Answer.NO)

    def approve_edit(self, path: str, diff: FileDiff) -> bool | Answer:
        """The "ask" mode: the diff, then yes / no / always (this and every later edit of the
        session apply without asking; commands still ask)."""
        from mca.tools.allow import Answer

        self.show_diff(draw_diff(diff))
        question = f"apply this change to {exact_line(path)}? {YES_NO} / [a]lways: every edit"
        while (answer := self._answer(question, "yna")) is None:
            pass  # a typed line that is no answer: asked again
        return Answer.ALWAYS if answer == "a" else answer == "y"

    def approve_write(self, path: str, reason: str, diff: FileDiff) -> bool:
        """Protected paths: the diff, then a yes/no that neither yolo nor 'always' answers."""
        self.say(f"{exact_line(path)} is a protected path: {reason}.\nthe change, whole:")
        self.show_diff(draw_diff(diff))
        return self.confirm(f"write {exact_line(path)} anyway?")

    def confirm(self, question: str) -> bool:
        """A yes/no question, asked the one way every question is (`questions.py`): True for
        yes. Esc, Ctrl-C and Ctrl-D raise KeyboardInterrupt."""
        return self._answer(f"{question} {YES_NO}") == "y"

    def more_steps(self, calls: int, more: int) -> bool:
        """At the step limit: one key lets the turn make `more` model calls."""
        self.say(f"the turn has made {calls} model calls, its step limit (/steps N changes it)")
        return self._answer(f"let it go on for {more} more? [y]es / [N]o") == "y"

    def _answer(self, question: str, keys: str = "yn") -> str | None:
        """'y', 'n' or 'a' (of `keys`). While a turn reads the keyboard: one key, Enter for No
        (the default the question shows in capitals). Otherwise a typed line, as pipes and tests
        answer ("yes", "", ...); None for a line that is no answer."""
        prompt = f"{question}: "
        key = self.key(keys, lambda: self._write(for_terminal(prompt, self.secrets)))
        if key is not None:
            self._write(ANSWER_WORDS[key or "n"] + "\n")  # the transcript shows what was chosen
            return key or "n"
        return line_answer(self.ask(prompt), keys)

    def event(self, event: Event) -> None:
        from mca.events import (
            CommandOutput,
            CommandStarted,
            FileChanged,
            ModelRetry,
            ModelWaiting,
            ThinkingDelta,
        )

        match event:
            case ThinkingDelta(text=text):  # kept until the reply's text or the next event
                if not self._thought and self.spinner.running:
                    self.spinner.what = "thinking"
                self._thought.append(text)
                return
            case ModelWaiting() if self.live:
                self.end_thinking()
                self.end_stream()
                self.spinner.start()
                return
            case ModelRetry(message=message) if self.spinner.running and counts_down(message):
                self.spinner.set_state(one_line(scrub(message, self.secrets)))
                return
            case CommandOutput(text=text):
                self.box.feed(text)
                return
        line = progress_line(event)
        if isinstance(event, FileChanged):
            line = colour_diff(scrub(line, self.secrets), self.colour)  # made safe line by line
        elif line:  # broken between words after it is made safe (a key is never split)
            line = self.fitted(for_terminal(line, self.secrets))
        waiting = self.spinner.running
        if line:
            self._write(line + "\n")
        if isinstance(event, CommandStarted):
            self.box.start()
        elif isinstance(event, ModelRetry) and waiting:
            self.spinner.start()  # said once, above it; the wait goes on

    @contextlib.contextmanager
    def held(self) -> Iterator[list[str]]:
        """What this thread writes meanwhile is kept in the list, not written: a thread other
        than the prompt's must not write while the prompt is on screen (it lands on its line)."""
        kept: list[str] = []
        self._held[threading.get_ident()] = kept
        try:
            yield kept
        finally:
            del self._held[threading.get_ident()]

    def replay(self, kept: str) -> None:
        """Write what held() kept (already made safe)."""
        if kept:
            self._write(kept)

    def _write(self, text: str, end_stream: bool = True) -> None:
        """Every write: the spinner's line cleared first, an open stream ended, the thinking
        before it shown."""
        kept = self._held.get(threading.get_ident())
        if kept is not None:
            kept.append(text)
            return
        self.end_thinking()
        self.spinner.stop()
        self.box.stop()
        with self.lock:
            self.out.write(self._unnote())
            if end_stream:
                self.stream.end()
            self.out.write(text)
            self.out.flush()

    def end_thinking(self) -> None:
        """The reply's thinking, once it is over: dim and folded (/thinking unfolds it), never
        mixed with the answer."""
        if not self._thought:
            return
        text, self._thought = "".join(self._thought), []
        folded = fold_thinking(text)
        if folded:
            self.dim(folded)

    def text(self, delta: str) -> None:
        """A piece of the answer as it streams: scrubbed, made visible, rendered."""
        self.end_thinking()
        self.spinner.stop()
        with self.lock:  # one write: the note is never seen gone while the answer grows
            shown = self._unnote() + self.stream.piece(delta)
            self._turn_text.append(delta)
            self.out.write(shown + self._renote())
            self.out.flush()

    def queued(self, typed: str) -> None:
        """What the person has typed during the turn (kept for the next prompt), shown on the
        spinner's line, the running command's, or the line under a streaming answer; the
        answer's text is never mixed with it."""
        lines = " ⏎ ".join(one_line(line) for line in typed.rstrip("\n").split("\n"))
        note = f"queued: {fit(lines, 40)}" if typed.strip() else ""  # each Enter shown as ⏎
        with self.lock:
            self.spinner.note = self.box.note = self._note = note
            if self.stream.streamed:
                self.out.write(self._unnote() + self._renote())
                self.out.flush()

    def _renote(self) -> str:
        """Under the lock, while an answer streams on a terminal: what draws the note on the
        line below it, the cursor left where the answer goes on (nothing while it waits at the
        right margin, where moving it would lose the next character's wrap: the next piece
        draws it)."""
        columns = _columns()
        if not (self.live and self._note and self.stream.streamed) or self._note_drawn:
            return ""
        if self.stream.at_margin(columns):
            return ""
        note = fit(self._note, max(columns - 1, 10))
        self._note_drawn = True
        return line_below(f"{DIM}{note}{RESET}" if self.colour else note)

    def _unnote(self) -> str:
        """Under the lock: what erases the note under the answer, to write before anything
        else."""
        if not self._note_drawn:
            return ""
        self._note_drawn = False
        return CLEAR_LINE_BELOW

    def begin_turn(self) -> None:
        """A turn starts: nothing of its answer has been shown yet, nothing typed is queued."""
        self._turn_text = []
        self.queued("")

    def shown(self, answer: str) -> bool:
        """Was this answer streamed in this turn (a notice may have ended its stream since)?"""
        return bool(answer) and answer in "".join(self._turn_text)

    def end_stream(self) -> None:
        self.end_thinking()
        self.spinner.stop()
        with self.lock:
            self.out.write(self._unnote())
            self.stream.end()

    def prompt_line(self, question: str) -> None:
        """A question waiting for one key, the cursor after it."""
        self._write(for_terminal(question, self.secrets))

    def say(self, text: str) -> None:
        """mca's own lines: made safe, then broken between words at the terminal's width."""
        self._write(self.fitted(for_terminal(text.rstrip("\n"), self.secrets)) + "\n")

    def exact(self, text: str) -> None:
        """Lines shown exactly as they are (a command before it runs): made safe, never broken
        (the terminal's own wrap keeps every character where it is)."""
        self._write(for_terminal(text.rstrip("\n"), self.secrets) + "\n")

    def answer(self, text: str) -> None:
        """The model's answer when it was not streamed (rendered the same way)."""
        self.text(text.rstrip("\n"))
        self.end_stream()

    def fitted(self, text: str) -> str:
        """`text` with its long lines broken between words at the terminal's width (mca's own
        lines, /status and the usage line; a pipe gets them whole, a line each)."""
        return wrap_words(text, _columns()) if self.live else text

    def dim(self, text: str) -> None:
        """A line of secondary information (dim on a colour terminal)."""
        safe = self.fitted(for_terminal(text, self.secrets))
        self._write((f"{DIM}{safe}{RESET}" if self.colour else safe) + "\n")

    def show_diff(self, diff: str) -> None:
        """A drawn diff (mca/ui/diff_view.py), scrubbed and coloured."""
        self._write(colour_diff(scrub(diff, self.secrets), self.colour) + "\n")

    def raw(self, text: str) -> None:
        """A command's output as it comes: made safe, not otherwise changed."""
        if text:
            self._write(for_terminal(text, self.secrets))
            self._raw_open = not text.endswith("\n")

    def end_raw(self) -> None:
        if self._raw_open:
            self._write("\n")
            self._raw_open = False

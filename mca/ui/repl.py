"""The interactive REPL: a prompt_toolkit session (plain lines when input is not a terminal),
slash commands, `!command`, approvals, Ctrl-C handling, resuming saved conversations."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from mca.errors import McaError
from mca.process import signals
from mca.turn import TurnResult
from mca.ui import outcome
from mca.ui.ansi import use_colour
from mca.ui.commands import Command, SlashCommands
from mca.ui.face import FaceConfig, ModelSwitch
from mca.ui.history import load_history
from mca.ui.keyboard import RawHold, TurnKeys, turn_keyboard
from mca.ui.line_editor import McaCompleter
from mca.ui.prompt_line import PROMPT, prompt_session
from mca.ui.remember import remember
from mca.ui.render import ledger_table
from mca.ui.startup import DeferredSummary, LazySession, skills_summary
from mca.ui.terminal import ReplUI
from mca.usage import Totals

if TYPE_CHECKING:  # imported when the session is built, after the prompt is on screen
    from mca.models.options import ModelOptions
    from mca.session.session import Session

__all__ = ["Repl"]


EXIT_WINDOW = 2.0  # seconds between two Ctrl-C at an empty prompt
EXIT_WORDS = ("exit", "quit")


class Repl:
    """The read-eval-print loop around one session."""

    def __init__(
        self,
        face: FaceConfig,
        opener: Callable[[ReplUI], Session],
        *,
        input: Input | None = None,
        output: Output | None = None,
        out: TextIO | None = None,
        history: History | None = None,
        plain: bool | None = None,
        first: str | None = None,
        resume: str | None = None,
        fork: bool = False,
        chooser: ModelSwitch | None = None,
        stdin: TextIO | None = None,
    ) -> None:
        self.face = face
        self.out = out or sys.stdout
        self.stdin = stdin or sys.stdin
        # Input that is not a terminal is read as plain lines: no prompt_toolkit, no warnings,
        # no escape codes in what a script captures.
        self.plain = plain if plain is not None else input is None and not self.stdin.isatty()
        self.prompt: PromptSession[str] | None = None
        if not self.plain:
            self.prompt = prompt_session(
                history if history is not None else load_history(face.home, face.secrets),
                McaCompleter(face.workspace, self._commands, self._skills),
                (input, output),
                self._mode,
                self._cycle_mode,
            )
        self._io = (input, output)
        self._asker: PromptSession[str] | None = None  # built on first use: it costs ~25 ms
        live = bool(getattr(self.out, "isatty", None) and self.out.isatty())
        self._keys: TurnKeys | None = None  # the keyboard, read key by key during a turn
        self._hold = RawHold()  # the terminal kept raw from a turn's end to the next prompt
        self._startup: DeferredSummary | None = None  # the summary, when built behind the prompt
        colour = use_colour(self.out, face.no_color)
        self.ui = ReplUI(self.out, self._ask, face.secrets, colour, live, self._key)
        self._lazy = LazySession(lambda: opener(self.ui))
        self.slash = SlashCommands(self)
        self.commands: dict[str, Command] = self.slash.table
        self.first, self.wanted, self.fork = first, resume, fork
        self.chooser = chooser
        self.totals = Totals()
        self.resumed = 0  # turns the conversation had when it was resumed (run elsewhere)
        self.running = True
        self.last_interrupt = 0.0

    @property
    def session(self) -> Session:
        """The session; built on first use, or in the background once the prompt is up."""
        return self._lazy.get()

    def _mode(self) -> str:  # in force: the session's once built, the configured one before
        return self._lazy.built.mode if self._lazy.built is not None else self.face.mode

    def _cycle_mode(self) -> None:
        """Shift+Tab: the next mode (mca.modes.CYCLE), from the next tool call on."""
        from mca.modes import next_mode

        with contextlib.suppress(McaError):  # not built: the next message says why
            self.session.set_mode(next_mode(self.session.mode))

    def _commands(self) -> dict[str, str]:
        """Each slash command and what it does, for completion."""
        return {name: command.help for name, command in self.commands.items()}

    def _skills(self) -> dict[str, str]:
        """Skills /NAME can use and their descriptions, for completion: none until the session
        is ready (never waits)."""
        from mca.skills.switches import user_invocable

        if self._lazy.built is None:
            return {}
        found = self._lazy.built.skills.discovery.skills
        return {n: s.description for n, s in found.items() if user_invocable(s)}

    def _ask(self, question: str) -> str:
        if self.plain:
            self.out.write(question)
            self.out.flush()
            line = self.stdin.readline()
            if not line:  # end of input answers like Ctrl-C: the whole turn is cancelled
                self.out.write("\n")
                raise KeyboardInterrupt
            self.out.write(line if line.endswith("\n") else line + "\n")  # as if typed
            return line.rstrip("\n")
        if self._asker is None:
            inp, outp = self._io
            self._asker = PromptSession[str](input=inp, output=outp, history=InMemoryHistory())
        try:
            return self._asker.prompt(question)
        except EOFError:  # Ctrl-D answers like Ctrl-C: the whole turn is cancelled
            raise KeyboardInterrupt from None

    def _key(self, keys: str, show: Callable[[], None]) -> str | None:
        """A question's one key: read by the turn's keyboard, or outside a turn (/init, after
        a `!command`) by one opened for the question; None when input is not a terminal."""
        if self._keys is not None:
            return self._keys.key(keys, show)
        with turn_keyboard(self.prompt, lambda typed: None, self._hold) as keyboard:
            return None if keyboard is None else keyboard.key(keys, show)

    @property
    def switch(self) -> Callable[[str], ModelOptions] | None:
        chooser = self.chooser
        if chooser is None:
            return None
        return lambda name: chooser.to(name, self.session.model)

    def models_configured(self) -> list[str]:
        return self.chooser.available() if self.chooser else []

    def banner(self) -> str:
        return self.face.banner

    def summary(self) -> str:
        """The startup line about skills (counts tokens: loads the tokenizer)."""
        return skills_summary(self.session)

    def resume(self, wanted: str, fork: bool = False) -> None:
        """Go on with a saved conversation: 'last', an id, or '' to pick from a list; `fork`:
        a copy of it, under a new id."""
        from mca.ui.resume import resume

        turns = resume(self.session, self.ui, self._ask, wanted, fork)
        if turns is not None:
            self.resumed = turns

    # -- input -----------------------------------------------------------------------------
    def handle_line(self, line: str) -> None:
        """One line from the person: a command, a skill, `!command`, exit, or a turn."""
        text = line.strip()
        try:
            if text in EXIT_WORDS:
                self.running = False
            elif text.startswith("!"):
                self.shell(text[1:].strip())
            elif text.startswith("#"):  # a note for AGENTS.md (mca/ui/remember.py)
                remember(text, self.session, self.ui)
            elif text.startswith("/"):
                self.handle_command(text)
            else:
                self.handle_turn(line)
        except KeyboardInterrupt:  # a command, or a wait for the session: cancelled, not fatal
            self.ui.say(f"{text.split()[0]} cancelled")

    def handle_command(self, line: str) -> None:
        """Run a slash command (or use a skill by name); unknown ones list the valid ones."""
        name, _, arg = line.strip().partition(" ")
        command = self.commands.get(name)
        try:
            self._summary_first()
            refused = None if command is not None else self.slash.skill_refusal(name)
            if refused == "":  # a skill: the stage reads /name as an explicit mention
                self.handle_turn(line.strip())
                return
            if refused:
                self.ui.say(refused)
                return
            if command is None:
                self.ui.say(
                    f"unknown command {name} (commands: {', '.join(sorted(self.commands))};"
                    " /skills lists the skills /<name> can use)"
                )
                return
            command.run(arg)
        except McaError as e:
            self.ui.say(f"error: {e}")
        except Exception as e:  # a bug: say so in one line and keep the session
            self._bug(e)

    def shell(self, command: str) -> None:
        """`!command`: the person's own command, run at once; its output may join the chat."""
        from mca.ui.shell import run_shell

        self._summary_first()
        run_shell(self.session, self.ui, command)

    # -- turns -----------------------------------------------------------------------------
    def handle_turn(self, sentence: str) -> None:
        """Run one turn, reporting errors and cancellation without losing the conversation."""
        started = time.monotonic()
        self.ui.begin_turn()
        before: TurnResult | None = None
        try:
            with turn_keyboard(self.prompt, self.ui.queued, self._hold) as self._keys:
                self._summary_first()  # a wait the turn's keys (Esc, type-ahead) apply to
                before = self.session.last_turn
                result = self.session.run_turn(sentence)
        except KeyboardInterrupt:  # Esc, Ctrl-C, SIGTERM, SIGHUP
            self.ui.say(outcome.cancelled(self._last(), before, "/undo takes both back"))
            return
        except McaError as e:
            self.ui.say(outcome.after_error(e, self._last(), before))
            return
        except Exception as e:  # a bug: reported; the conversation is what kept() says
            self._bug(e)
            self.ui.say(outcome.kept(self._last(), before))
            return
        finally:
            self._keys = None
        if self.ui.streamed:
            self.ui.end_stream()
        elif result.answer and not result.stopped_early and not self.ui.shown(result.answer):
            self.ui.answer(result.answer)
        if result.stopped_early:
            self.ui.say(result.answer)
        if result.notice:
            self.ui.say(f"({result.notice})")
        session = self.session
        if self.face.show_ledger and session.ledger.last is not None:
            self.ui.say(ledger_table(session.ledger.last))
        self._usage_line(result, time.monotonic() - started)

    def _last(self) -> TurnResult | None:
        built = self._lazy.built
        return built.last_turn if built is not None else None

    def _usage_line(self, result: TurnResult, seconds: float) -> None:
        from mca.usage import turn_line, turn_usage

        session = self.session
        usage = turn_usage(
            result.turn,
            result.usage,
            result.usage_reported,
            result.requests,
            session.messages,
            session.skills.estimator,
            session.ledger.last,
            seconds,
        )
        self.totals.turns.append(usage)
        self.ui.dim(self.ui.fitted(turn_line(usage, self.totals)))

    def _bug(self, error: Exception) -> None:
        if self.face.debug:
            raise error
        from mca.state.crash import report_bug

        self.ui.say(report_bug(error, self.face.home, self.face.secrets))

    def read(self) -> str | None:
        """One input; None means exit."""
        if self.prompt is None:  # plain lines: the transcript shows each one after a prompt
            line = self.stdin.readline()
            if not line:
                return None
            self.ui.say(PROMPT + line.rstrip("\n"))
            return line.rstrip("\n")
        try:
            return self.prompt.prompt()  # its message shows the mode
        except EOFError:
            return None
        except KeyboardInterrupt:
            if signals.received():  # SIGTERM or SIGHUP at the prompt: the session ends
                return None
            now = time.monotonic()
            if now - self.last_interrupt < EXIT_WINDOW:
                return None
            self.last_interrupt = now
            self.ui.say("(press Ctrl-C again or Ctrl-D to exit)")
            return ""
        finally:
            self._hold.release()  # the prompt has read what was typed since the last turn

    def run(self) -> int:
        """The loop; returns the exit code."""
        try:
            return self._run()
        finally:
            self._hold.release()  # whatever ended the session, the terminal as it was

    def _run(self) -> int:
        self.ui.say(self.banner())
        # On a terminal the session (skills, tokenizer, ...) is built while the person reads
        # the prompt; --strict-skills, --resume and a first message need it at once.
        deferred = (
            self.prompt is not None
            and self.ui.live
            and not self.face.strict_skills
            and self.wanted is None
            and self.first is None
        )
        try:
            if not deferred:
                with self._starting():
                    summary = self.summary()
                self.ui.say(summary)
                self._show_summary("")
                if self.wanted is not None:
                    self.resume(self.wanted, self.fork)
                if self.first is not None:
                    self.handle_line(self.first)
        except McaError as e:
            self.ui.say(f"error: {e}")
            self._close()
            return 1
        if deferred:
            assert self.prompt is not None
            self._startup = DeferredSummary(self.prompt.app, self._summary, self._show_summary)
        return self._loop()

    def _summary(self) -> str:
        """In the start-up thread: the session built, then what it said and the summary, kept
        from the screen while the prompt is up (a failed build is reported on first use)."""
        with self.ui.held() as said:
            self._lazy.build()
            if self._lazy.error is None:
                self.ui.say(self.summary())
        return "".join(said)

    def _summary_first(self) -> None:
        """Before the output of the first line handled: the start-up summary, if still due."""
        if self._startup is not None:
            with self._starting():
                self._startup.finish(wait=True)

    def _starting(self) -> contextlib.AbstractContextManager[None]:
        """While a line waits for the session: a spinner saying so, on a terminal."""
        return self._lazy.awaited(self.ui.spinner if self.ui.live else None, self.face.asks_window)

    def _show_summary(self, said: str) -> None:
        self.ui.replay(said)
        if self.face.verbose and self._lazy.error is None:
            self.slash.skills("")

    def _close(self) -> None:
        self._hold.release()
        if self._lazy.built is not None:
            self._lazy.built.close()

    def _loop(self) -> int:
        try:
            while self.running and not signals.received():
                line = self.read()
                if self._startup is not None:  # ready by now? it comes first
                    self._startup.finish(wait=False)
                if line is None:
                    break
                if line.strip():
                    self.handle_line(line)
        except McaError as e:
            self.ui.say(f"error: {e}")
            return 1
        finally:
            self._close()  # the conversation was saved after its last turn, cancelled or not
        if signals.received():  # 143 after SIGTERM, 129 after SIGHUP
            return signals.exit_code(0)
        self.ui.say("bye")
        return 0

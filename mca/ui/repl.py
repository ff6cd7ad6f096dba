"""The interactive REPL: a prompt_toolkit session, slash commands, approvals, Ctrl-C handling."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from prompt_toolkit.patch_stdout import patch_stdout

from mca import __version__
from mca.config import Settings
from mca.errors import McaError
from mca.ui.render import (
    ledger_summary,
    ledger_table,
    snapshot_lines,
    tools_text,
    undo_lines,
)
from mca.ui.terminal import McaCompleter, ReplUI, key_bindings, load_history

if TYPE_CHECKING:  # imported when the session is built, after the prompt is on screen
    from mca.session import Session


def use_colour(out: TextIO) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org)."""
    import os

    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def _open_session(settings: Settings, ui: ReplUI) -> Session:
    from mca.session import open_session

    return open_session(settings, ui)


PROMPT = "mca> "
EXIT_WINDOW = 2.0  # seconds between two Ctrl-C at an empty prompt


@dataclass(frozen=True)
class Command:
    """A slash command."""

    help: str
    run: Callable[[str], None]


class Repl:
    """The read-eval-print loop around one session."""

    def __init__(
        self,
        settings: Settings,
        *,
        input: Input | None = None,
        output: Output | None = None,
        out: TextIO | None = None,
        history: History | None = None,
        session_factory: Callable[[Settings, ReplUI], Session] | None = None,
    ) -> None:
        self.settings = settings
        self.out = out or sys.stdout
        if history is None:
            history = load_history(settings.home)
        self.prompt = PromptSession[str](
            history=history,
            input=input,
            output=output,
            key_bindings=key_bindings(),
            completer=McaCompleter(settings.workspace, lambda: self.commands),
            complete_while_typing=False,
        )
        self._io = (input, output)
        self._asker: PromptSession[str] | None = None  # built on first use: it costs ~25 ms
        self.ui = ReplUI(self.out, self._ask, settings.secrets, colour=use_colour(self.out))
        self._factory = session_factory or _open_session
        self._session: Session | None = None
        self._session_error: BaseException | None = None
        self._session_ready = threading.Event()
        self._session_lock = threading.Lock()
        self.commands: dict[str, Command] = self._base_commands()
        self.running = True
        self.last_interrupt = 0.0

    @property
    def session(self) -> Session:
        """The session; built on first use, or in the background once the prompt is up."""
        self._build_session()
        if self._session_error is not None:
            raise self._session_error
        assert self._session is not None
        return self._session

    def _build_session(self) -> None:
        with self._session_lock:
            if self._session_ready.is_set():
                return
            try:
                self._session = self._factory(self.settings, self.ui)
            except McaError as e:  # reported on first use, in the main thread
                self._session_error = e
            except OSError as e:
                self._session_error = McaError(f"cannot start the session: {e}")
            except Exception as e:  # a bug: re-raised as it is on first use, never dropped
                self._session_error = e
            finally:
                self._session_ready.set()

    def _ask(self, question: str) -> str:
        if self._asker is None:
            inp, outp = self._io
            self._asker = PromptSession[str](input=inp, output=outp, history=InMemoryHistory())
        try:
            return self._asker.prompt(question)
        except EOFError:  # Ctrl-D answers like Ctrl-C: the whole turn is cancelled
            raise KeyboardInterrupt from None

    def _base_commands(self) -> dict[str, Command]:
        return {
            "/help": Command("list the commands", self._help),
            "/undo": Command(
                "revert the last turn's file changes (--force: even if edited)", self._undo
            ),
            "/snapshots": Command("list the turns /undo can revert", self._snapshots),
            "/clear": Command("start a new conversation (files stay as they are)", self._clear),
            "/model": Command("show the provider, model and base URL", self._model),
            "/tools": Command("show the eight tools", self._tools),
            "/exit": Command("leave mca (also Ctrl-D)", self._exit),
            "/skills": Command("skills found, their status and diagnostics", self._skills),
            "/why": Command("why skills were (not) loaded for the last turn", self._why),
            "/ledger": Command(
                "what the last turn put in the context ('all': every turn)", self._ledger
            ),
            "/compact": Command("summarise older turns now (skill bodies are kept)", self._compact),
            "/mode": Command(
                "show or set what runs without asking (ask, auto-edit, ...)", self._mode
            ),
        }

    def banner(self) -> str:
        s = self.settings
        lines = [f"mca {__version__} · workspace {s.workspace}"]
        if s.provider == "mock":
            lines.append(
                f"using the offline mock model ({s.mock_reason}); set OPENAI_API_KEY or"
                " ANTHROPIC_API_KEY for a real one"
            )
        else:
            lines.append(f"model {s.model} via {s.provider}")
        lines.append("type /help for commands; Esc-Enter for a newline; Ctrl-D to exit")
        return "\n".join(lines)

    # -- slash commands --------------------------------------------------------------------
    def _help(self, arg: str) -> None:
        width = max(len(n) for n in self.commands)
        self.ui.say("\n".join(f"{n:<{width}}  {c.help}" for n, c in sorted(self.commands.items())))

    def _undo(self, arg: str) -> None:
        report = self.session.snapshots.undo(force=arg.strip() == "--force")
        self.ui.say(undo_lines(report))
        self.session.log.event(
            "undo",
            {
                "turn": report.turn_label,
                "restored": report.restored,
                "removed": report.removed,
                "skipped": report.skipped,
            },
        )

    def _snapshots(self, arg: str) -> None:
        self.ui.say(snapshot_lines([m for _, m in self.session.snapshots.undoable()]))

    def _clear(self, arg: str) -> None:
        self.session.agent.clear()
        self.ui.say("new conversation; files and snapshots are unchanged")

    def _model(self, arg: str) -> None:
        s = self.session.settings
        key = f"key from {s.api_key_var}" if s.api_key_var else "no API key"
        self.ui.say(
            f"provider {s.provider} · model {s.model} · base URL {s.base_url or '(none)'} · {key}"
            f" · context window {s.context_window:,} tokens"
        )

    def _tools(self, arg: str) -> None:
        from mca.tools import REGISTRY

        self.ui.say(tools_text(list(REGISTRY.values())))

    def _skills(self, arg: str) -> None:
        from mca.skills.report import discovery_text

        sk = self.session.skills
        catalog = sk.discovery.catalog.text
        tokens = sk.estimator.count(catalog)
        self.ui.say(
            discovery_text(sk.discovery)
            + f"\n\ncatalog in the system prompt: {len(catalog):,} chars, {tokens:,} tokens"
            f" ({sk.estimator.label})"
        )

    def _why(self, arg: str) -> None:
        from mca.skills.report import stage_text

        sk = self.session.skills
        if not sk.stage.history:
            self.ui.say("no turn yet: /why explains the skills of the last turn")
            return
        turn, result = sk.stage.history[-1]
        tokens = sk.estimator.count(result.injected_text)
        self.ui.say(f"turn {turn}:\n" + stage_text(result, tokens, sk.estimator.label))

    def _ledger(self, arg: str) -> None:
        book = self.session.ledger
        if arg.strip() == "all":
            self.ui.say(ledger_summary(book.turns))
        elif book.last is None:
            self.ui.say("no turn yet")
        else:
            self.ui.say(ledger_table(book.last))

    def _mode(self, arg: str) -> None:
        from mca.config import MODES

        tools = self.session.agent.tools
        wanted = arg.strip()
        if wanted and wanted not in MODES:
            self.ui.say(f"unknown mode {wanted!r} (modes: {', '.join(MODES)})")
            return
        if wanted:
            tools.mode = wanted
            self.ui.say(f"mode {wanted}: {MODES[wanted]}")
            return
        lines = [f"{'*' if m == tools.mode else ' '} {m:<10} {what}" for m, what in MODES.items()]
        self.ui.say("\n".join(lines))

    def _compact(self, arg: str) -> None:
        self.ui.say(self.session.compact())

    def summary(self) -> str:
        """The startup line about skills (counts tokens: loads the tokenizer)."""
        from mca.skills.discover import summary_line

        sk = self.session.skills
        tokens = sk.estimator.count(sk.discovery.catalog.text)
        return summary_line(sk.discovery, tokens, sk.estimator.label)

    def _exit(self, arg: str) -> None:
        self.running = False

    def handle_command(self, line: str) -> None:
        """Run a slash command; unknown ones list the valid ones."""
        name, _, arg = line.strip().partition(" ")
        command = self.commands.get(name)
        if command is None:
            self.ui.say(f"unknown command {name} (commands: {', '.join(sorted(self.commands))})")
            return
        try:
            command.run(arg)
        except McaError as e:
            self.ui.say(f"error: {e}")
        except Exception as e:  # a bug: say so in one line and keep the session
            self._bug(e)

    # -- turns -----------------------------------------------------------------------------
    def handle_turn(self, sentence: str) -> None:
        """Run one turn, reporting errors and cancellation without losing the conversation."""
        try:
            result = self.session.run_turn(sentence)
        except KeyboardInterrupt:
            self.ui.say("turn cancelled; the conversation is as it was before it")
            return
        except McaError as e:
            self.ui.say(f"error: {e}\nthe conversation is as it was before this turn")
            return
        except Exception as e:  # a bug: the agent already put the conversation back
            self._bug(e)
            self.ui.say("the conversation is as it was before this turn")
            return
        if self.ui.streamed:
            self.ui.end_stream()
        elif result.answer and result.answer != result.stopped:
            self.ui.say(result.answer)
        if result.stopped:
            self.ui.say(result.stopped)
        if result.notice:
            self.ui.say(f"({result.notice})")
        if self.settings.show_ledger and self.session.ledger.last is not None:
            self.ui.say(ledger_table(self.session.ledger.last))

    def _bug(self, error: Exception) -> None:
        if self.settings.debug:
            raise error
        from mca.crash import report_bug

        self.ui.say(report_bug(error, self.settings.home, self.settings.secrets))

    def read(self) -> str | None:
        """One input; None means exit."""
        try:
            return self.prompt.prompt(PROMPT)
        except EOFError:
            return None
        except KeyboardInterrupt:
            now = time.monotonic()
            if now - self.last_interrupt < EXIT_WINDOW:
                return None
            self.last_interrupt = now
            self.ui.say("(press Ctrl-C again or Ctrl-D to exit)")
            return ""

    def run(self) -> int:
        """The loop; returns the exit code."""
        self.ui.say(self.banner())
        # On a terminal the session (skills, tokenizer, ...) is built while the person reads
        # the prompt; --strict-skills must refuse before that, so it builds first.
        deferred = (
            self.out is sys.stdout and sys.stdout.isatty() and not self.settings.strict_skills
        )
        if not deferred:
            self.ui.say(self.summary())
            if self.settings.verbose:
                self._skills("")
        with patch_stdout() if deferred else contextlib.nullcontext():
            if deferred:
                self._after_first_render(self._print_summary)
            return self._loop()

    def _after_first_render(self, fn: Callable[[], None]) -> None:
        """Run fn in a thread once the prompt is on screen (never delays the first prompt)."""
        started = threading.Event()

        def handler(app: object) -> None:
            if not started.is_set():
                started.set()
                threading.Thread(target=fn, name="mca-startup", daemon=True).start()

        self.prompt.app.after_render.add_handler(handler)

    def _print_summary(self) -> None:
        self._build_session()
        if self._session_error is None:
            print(self.summary())  # patch_stdout shows it above the prompt
            if self.settings.verbose:
                self._skills("")

    def _loop(self) -> int:
        try:
            while self.running:
                line = self.read()
                if line is None:
                    break
                if not line.strip():
                    continue
                if line.startswith("/"):
                    self.handle_command(line)
                else:
                    self.handle_turn(line)
        except McaError as e:
            self.ui.say(f"error: {e}")
            return 1
        finally:
            if self._session is not None:
                self._session.close()
        self.ui.say("bye")
        return 0


def run_repl(settings: Settings) -> int:
    """Start the REPL on the real terminal."""
    return Repl(settings).run()

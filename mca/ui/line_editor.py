"""The prompt's line editing, as prompt_toolkit takes it: completion (slash commands and skill
names at the start of the line, skill names after $, workspace paths after @) and the key
bindings (Alt-Enter for a new line, Ctrl-C to clear the line or leave, Shift+Tab for the next
mode, Esc Esc for the rewind picker)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from mca.text.sanitize import one_line
from mca.ui.livebox import fit

__all__ = ["KEYS", "McaCompleter", "key_bindings"]

MAX_PATH_COMPLETIONS = 200
MAX_META = 60  # cells of a completion's description
SKIP_COMPLETE = {".git", "node_modules", "__pycache__", ".venv", ".mca"}


class McaCompleter(Completer):
    """Slash commands and skill names at the start of the line; skill names after $;
    workspace paths after @. Each command and skill shows what it does beside it (`commands`
    and `skills` map each name to its one line)."""

    def __init__(
        self,
        root: Path,
        commands: Callable[[], Mapping[str, str]],
        skills: Callable[[], Mapping[str, str]] = dict,
    ) -> None:
        self.root = root
        self.commands = commands
        self.skills = skills

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            commands, skills = self.commands(), self.skills()
            named = {f"/{s}": f"skill: {about}" for s, about in skills.items()} | dict(commands)
            for name in sorted(named):
                if name.startswith(text):
                    about = fit(one_line(named[name]), MAX_META)
                    yield Completion(name, start_position=-len(text), display_meta=about)
            return
        word = text.rsplit(None, 1)[-1] if text.strip() and not text[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])
        elif word.startswith("$"):
            for name, about in sorted(self.skills().items()):
                if name.startswith(word[1:]):
                    meta = fit(one_line(f"skill: {about}"), MAX_META)
                    yield Completion(f"${name}", start_position=-len(word), display_meta=meta)

    def _paths(self, partial: str) -> Iterable[Completion]:
        head, _, stem = partial.rpartition("/")
        base = (self.root / head).resolve()
        if not base.is_relative_to(self.root.resolve()) or not base.is_dir():
            return
        try:
            names = sorted(os.listdir(base))
        except OSError:
            return
        shown = 0
        for name in names:
            if not name.startswith(stem) or name in SKIP_COMPLETE:
                continue
            if name.startswith(".") and not stem.startswith("."):
                continue
            suffix = "/" if (base / name).is_dir() else ""
            full = f"{head}/{name}" if head else name
            yield Completion(full + suffix, start_position=-len(partial))
            shown += 1
            if shown >= MAX_PATH_COMPLETIONS:
                return


KEYS = (
    ("Enter", "send the message"),
    ("Esc Enter", "a new line in the message (Alt-Enter too)"),
    ("Shift+Tab", "cycle the mode: auto-edit, read-only, ask (yolo only by /mode yolo)"),
    ("Esc Esc", "rewind: pick a turn to go back to (on an empty line; else clears it)"),
    ("Tab", "complete /commands, $skills and @paths"),
    ("Esc or Ctrl-C", "during a turn: stop it, keeping what was done"),
    ("Ctrl-C", "clear the line; twice on an empty line: exit"),
    ("Ctrl-D", "exit"),
    ("Up / Down", "earlier messages"),
)


def key_bindings(
    cycle_mode: Callable[[], None] = lambda: None, rewind: str = "/rewind"
) -> KeyBindings:
    """The prompt's keys (KEYS says them to the person in /help)."""
    kb = KeyBindings()

    @kb.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        buf = event.current_buffer
        if buf.text:
            buf.reset()  # Ctrl-C on a line with text clears it
        else:
            event.app.exit(exception=KeyboardInterrupt())

    @kb.add("s-tab")
    def _cycle(event: KeyPressEvent) -> None:
        cycle_mode()  # the mode beside the prompt shows the new one as it redraws
        event.app.invalidate()

    @kb.add("escape", "escape")
    def _rewind(event: KeyPressEvent) -> None:
        buf = event.current_buffer
        if buf.text:
            buf.reset()
            return
        buf.text = rewind  # sent as typed: the transcript shows what ran
        buf.validate_and_handle()

    return kb

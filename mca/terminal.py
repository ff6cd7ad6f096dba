"""prompt_toolkit pieces the REPL is built from: completion, key bindings, history, and the
object that shows a session's events and asks before commands run."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from mca.render import progress_line

MAX_PATH_COMPLETIONS = 200
SKIP_COMPLETE = {".git", "node_modules", "__pycache__", ".venv", ".mca"}


class McaCompleter(Completer):
    """Slash commands at the start of the line; workspace paths after @."""

    def __init__(self, root: Path, commands: Callable[[], Iterable[str]]) -> None:
        self.root = root
        self.commands = commands

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            for name in sorted(self.commands()):
                if name.startswith(text):
                    yield Completion(name, start_position=-len(text))
            return
        word = text.rsplit(None, 1)[-1] if text.strip() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])

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


def key_bindings() -> KeyBindings:
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

    return kb


class ReplUI:
    """Shows a session's events in the terminal and asks before commands run."""

    def __init__(self, out: TextIO, ask: Callable[[str], str]) -> None:
        self.out = out
        self.ask = ask
        self.always = False
        self.streamed = False

    def approve(self, command: str) -> bool:
        if self.always:
            return True
        while True:
            answer = self.ask(f"run `{command}`? [y]es / [n]o / [a]lways this session: ")
            answer = answer.strip().lower()
            if answer in ("a", "always"):
                self.always = True
                return True
            if answer in ("y", "yes", "n", "no", ""):
                return answer in ("y", "yes")

    def event(self, kind: str, data: Mapping[str, Any]) -> None:
        line = progress_line(kind, data)
        if line:
            self.end_stream()
            self.out.write(line + "\n")
            self.out.flush()

    def text(self, delta: str) -> None:
        self.streamed = True
        self.out.write(delta)
        self.out.flush()

    def end_stream(self) -> None:
        if self.streamed:
            self.out.write("\n")
            self.streamed = False

    def say(self, text: str) -> None:
        self.end_stream()
        self.out.write(text.rstrip("\n") + "\n")
        self.out.flush()


def load_history(home: Path) -> History:
    try:
        home.mkdir(parents=True, exist_ok=True)
        return FileHistory(str(home / "history"))
    except OSError:
        return InMemoryHistory()

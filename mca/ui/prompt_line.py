"""The prompt itself: `mca> ` in the default mode, the mode's word before it in its own colour
in every other (`read-only mca> `), redrawn as Shift+Tab or /mode changes it; and the prompt
session that draws it, with its history, completion and keys. (A toolbar under the prompt needs
the terminal to report the cursor's position, which not every terminal does: the word is on the
prompt's own line.)"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import History
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from mca.modes import DEFAULT_MODE
from mca.ui.line_editor import key_bindings

__all__ = ["PROMPT", "STYLE", "prompt_session", "prompt_text"]

STYLE = Style.from_dict(
    {
        "mode": "bold",
        "mode.read-only": "fg:ansicyan",
        "mode.ask": "fg:ansiyellow",
        "mode.yolo": "fg:ansired",
    }
)
PROMPT = "mca> "


def prompt_text(mode: str) -> StyleAndTextTuples:
    """What the prompt shows in `mode`."""
    if mode == DEFAULT_MODE:
        return [("", PROMPT)]
    return [(f"class:mode class:mode.{mode}", mode), ("", f" {PROMPT}")]


def prompt_session(
    history: History,
    completer: Completer,
    io: tuple[Input | None, Output | None],
    mode: Callable[[], str],
    cycle_mode: Callable[[], None],
) -> PromptSession[str]:
    """The REPL's prompt: its history, completion and keys, the mode shown in it."""
    return PromptSession[str](
        history=history,
        input=io[0],
        output=io[1],
        key_bindings=key_bindings(cycle_mode),
        completer=completer,
        complete_while_typing=False,
        message=lambda: prompt_text(mode()),
        style=STYLE,
    )

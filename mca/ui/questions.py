"""The one style of every question mca asks a person (an approval, /init's overwrite, whether a
`!command` joins the conversation), in the REPL and with -p alike: the choices in brackets, the
default in capitals (`[y]es / [N]o`), one key answering on a terminal, Enter taking the
default, and the answer written out as a word, so the transcript shows what was chosen.

Without a terminal (a pipe, a file) a question takes a line (`y`, `yes`, `n`, ``...), as
scripts and tests answer. Nothing here imports prompt_toolkit: -p asks with termios alone.
"""

from __future__ import annotations

import os
import select
from typing import TextIO

__all__ = ["ANSWER_WORDS", "LINE_ANSWERS", "YES_NO", "line_answer", "read_key", "reads_keys"]

YES_NO = "[y]es / [N]o"  # Enter (or a line with nothing) answers No
ANSWER_WORDS = {"y": "yes", "n": "no", "a": "always"}
LINE_ANSWERS = {"y": "y", "yes": "y", "n": "n", "no": "n", "a": "a", "always": "a"}
ESC_WAIT = 0.05  # a lone Esc is the key, not the start of a sequence (an arrow), after this long
CANCEL = (b"\x03", b"\x04")  # Ctrl-C (when the terminal does not signal it), Ctrl-D


def line_answer(line: str, keys: str = "yn") -> str | None:
    """A typed line's answer: one of `keys`, 'n' for an empty line, None for no answer."""
    word = line.strip().lower()
    answer = LINE_ANSWERS.get(word, "") if word else "n"
    return answer if answer and answer in keys else None


def reads_keys(stream: TextIO) -> bool:
    """Is `stream` a terminal a question can read key by key?"""
    try:
        return stream.isatty() and os.isatty(stream.fileno())
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's StringIO)
        return False


def read_key(stream: TextIO, keys: str) -> str:
    """One of `keys` ('' for Enter) typed on the terminal `stream`, read without echo; other
    keys (and escape sequences: arrows) are ignored. Esc, Ctrl-C, Ctrl-D and the end of input
    cancel (KeyboardInterrupt), as they cancel the turn."""
    import termios
    import tty

    fd = stream.fileno()
    before = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        while True:
            key = os.read(fd, 1)
            if not key or key in CANCEL:
                raise KeyboardInterrupt
            if key == b"\x1b":
                if not select.select([fd], [], [], ESC_WAIT)[0]:
                    raise KeyboardInterrupt  # Esc alone
                os.read(fd, 64)  # the rest of a sequence: not an answer
                continue
            if key in (b"\r", b"\n"):
                return ""
            typed = key.decode("latin-1").lower()
            if typed in keys:
                return typed
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, before)

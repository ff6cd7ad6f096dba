"""How wide the terminal a stream writes to is, and mca's own text fitted to it: broken between
words on a terminal (asked at each write, so a resized window gets its new width), whole, a line
each, in a pipe or a file."""

from __future__ import annotations

import os

from mca.text.wrap import wrap_words

__all__ = ["columns_of", "fitted"]


def columns_of(stream: object) -> int | None:
    """The columns of the terminal `stream` writes to; None when it is no terminal."""
    try:
        if not stream.isatty():  # type: ignore[attr-defined]
            return None
        columns = os.get_terminal_size(stream.fileno()).columns  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None
    return columns if columns > 0 else None


def fitted(text: str, stream: object) -> str:
    """`text` broken between words at the width of the terminal `stream` writes to (unchanged
    where it writes to no terminal). Give it text already made safe: a key is scrubbed before
    a line is broken, never after."""
    columns = columns_of(stream)
    return wrap_words(text, columns) if columns else text

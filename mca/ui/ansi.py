"""Every escape sequence mca writes to a terminal, in one table (input is made safe elsewhere:
`sanitize.visible`)."""

from __future__ import annotations

import re
from typing import TextIO

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
ITALIC = "\x1b[3m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
CYAN = "\x1b[36m"
CLEAR_LINE = "\r\x1b[K"  # back to the line's start and erase it

SGR = re.compile(r"\x1b\[[0-9;]*m")  # a style sequence, ours or not
CLEAR_LINE_BELOW = "\x1b7\x1bD\r\x1b[2K\x1b8"  # erase the line under the cursor, staying put


def line_below(text: str) -> str:
    """`text` drawn on the line under the cursor, the cursor left where it was (a streaming
    answer goes on from there): IND then RI make sure that line exists, scrolling if need be,
    before DECSC saves the cursor, so that DECRC comes back to the same place."""
    return f"\x1bD\x1bM\x1b7\x1bD\r\x1b[2K{text}\x1b8"


def clear_rows_above(rows: int) -> str:
    """Up `rows` lines, to the start of that line, and erase from there to the screen's end."""
    return f"\x1b[{rows}A\r\x1b[J" if rows > 0 else ""


def use_colour(out: TextIO, no_color: bool) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org; the
    settings read it)."""
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty()) and not no_color

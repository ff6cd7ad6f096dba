"""`cat notes.txt | mca -p "explain this"`: what is piped in is appended to the prompt, as
Claude Code does (`git diff | mca -p "write a commit message"`), up to MAX_PIPED_BYTES, with a
line on stderr saying how much was attached. Bytes that are not UTF-8 (and NULs) arrive as
U+FFFD, counted in that line. A terminal, /dev/null or a socket on stdin is not read."""

from __future__ import annotations

import codecs
import os
import select
import stat
from dataclasses import dataclass
from typing import TextIO

from mca.text.counts import plural

__all__ = ["MAX_PIPED_BYTES", "Piped", "attach", "read_piped"]

# 256 KiB, about 64,000 tokens: a large diff or log fits, and it is already more than a small
# local model's whole window; more is cut (the head is kept) and the line says so.
MAX_PIPED_BYTES = 256 * 1024
QUIET_PIPE = 2.0  # seconds of a silent pipe before mca says it is waiting for it


@dataclass(frozen=True)
class Piped:
    """What stdin held, as read: at most the cap, and whether there was more."""

    data: bytes
    more: bool  # stdin held more than the cap: the rest was not read


def read_piped(stdin: TextIO, err: TextIO, cap: int = MAX_PIPED_BYTES) -> Piped | None:
    """What a pipe or a file on stdin holds (None for a terminal, or nothing readable): to its
    end, or to one byte past the cap (an endless pipe is never drained). A pipe that stays
    silent gets a line on `err` saying how to go on without it."""
    try:
        fd = stdin.fileno()
        kind = os.fstat(fd).st_mode
    except (OSError, ValueError, AttributeError):  # closed, or not a real descriptor
        return None
    if not (stat.S_ISFIFO(kind) or stat.S_ISREG(kind)):
        return None  # a terminal, /dev/null, a socket: nothing piped
    if stat.S_ISFIFO(kind) and not select.select([fd], [], [], QUIET_PIPE)[0]:
        err.write("mca: waiting for what is piped to stdin (use </dev/null to go on without)\n")
        err.flush()
    chunks, size = [], 0
    while size <= cap and (chunk := os.read(fd, min(65536, cap + 1 - size))):
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    return Piped(data[:cap], len(data) > cap)


def attach(prompt: str, piped: Piped) -> tuple[str, str]:
    """The prompt with the piped text after it, and the line for stderr ('' when stdin was
    empty: the prompt as given)."""
    data = piped.data
    # cut at a character's start: a sequence the cap split is left out, not replaced
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=not piped.more)
    text = text.replace("\x00", "\ufffd")
    if not text.strip():
        return prompt, ""
    replaced = text.count("\ufffd") - data.count("\ufffd".encode())
    lines = text.count("\n") + (not text.endswith("\n"))
    what = f"{len(data):,} bytes ({plural(lines, 'line')})"
    note = f"mca: attached {what} of piped input to the prompt"
    if piped.more:
        note += f"; cut at {MAX_PIPED_BYTES // 1024} KiB (the rest was not read)"
    if replaced:
        note += f"; {plural(replaced, 'character')} that were not UTF-8 text shown as U+FFFD"
    cut = ", cut" if piped.more else ""
    head = f"--- piped input: {len(data):,} bytes, {plural(lines, 'line')}{cut} ---"
    body = text if text.endswith("\n") else text + "\n"
    return f"{prompt}\n\n{head}\n{body}--- end of piped input ---", note

"""A window of lines from a file, in bounded memory: read_file of a line range of a 4 GB file
costs a chunk and the lines shown, not the file; a 30 MB one-line file is read in a character
window of that line."""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from typing import BinaryIO

CHUNK = 64 * 1024
LINE_CHARS = 2000  # characters kept per shown line (the rest is counted, not stored)
COUNT_LINES_MAX = 64 * 1024 * 1024  # larger files: the total line count is not computed


@dataclass
class Line:
    """One shown line: its kept characters (from `column`), its length in characters."""

    number: int
    text: str
    chars: int
    column: int = 1

    @property
    def cut(self) -> bool:
        return self.column > 1 or self.column - 1 + len(self.text) < self.chars


@dataclass
class Window:
    """The lines of a window and what is known about the whole file."""

    lines: list[Line] = field(default_factory=list)
    total: int | None = None  # None: not counted (a file over COUNT_LINES_MAX)
    crlf: bool = False  # some shown line ended in \r\n


class _LineBuffer:
    """The current line, decoded as it streams, keeping only the window's characters."""

    def __init__(self, column: int, width: int) -> None:
        self.skip, self.width = column - 1, width
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.kept: list[str] = []
        self.have = 0
        self.seen = 0

    def add(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final)
        lo = max(self.skip - self.seen, 0)
        if self.have < self.width and lo < len(text):
            piece = text[lo : lo + self.width - self.have]
            self.kept.append(piece)
            self.have += len(piece)
        self.seen += len(text)

    def line(self, n: int, column: int) -> tuple[Line, bool]:
        self.add(b"", final=True)
        text = "".join(self.kept)
        crlf = text.endswith("\r") and self.have < self.width
        if crlf:
            text = text[:-1]
        return Line(n, text, self.seen - crlf, column), crlf


def read_window(
    f: BinaryIO,
    size: int,
    first: int,
    count: int,
    byte_budget: int,
    *,
    column: int = 1,
    width: int = LINE_CHARS,
    chunk: int = CHUNK,
) -> Window:
    """Lines first..first+count-1 (1-based) of `f`, each from `column` for `width` characters,
    at most about `byte_budget` bytes of them in all."""
    win = Window()
    end = first + count  # exclusive
    counting = size <= COUNT_LINES_MAX
    n, used = 1, 0
    cur = _LineBuffer(column, width)
    last = b""
    while data := f.read(chunk):
        last = data[-1:]
        if n >= end:
            if not counting:
                return win
            n += data.count(b"\n")
            continue
        pos = 0
        while pos < len(data):
            nl = data.find(b"\n", pos)
            stop = len(data) if nl < 0 else nl
            if first <= n < end:
                cur.add(data[pos:stop])
            if nl < 0:
                break
            if first <= n < end:
                used += _keep(win, cur.line(n, column))
                cur = _LineBuffer(column, width)
                if used > byte_budget:
                    end = n + 1
            n += 1
            pos = nl + 1
    if first <= n < end and cur.seen + len(cur.decoder.getstate()[0]):
        _keep(win, cur.line(n, column))
    win.total = n - 1 if last in (b"\n", b"") else n
    return win


def _keep(win: Window, kept: tuple[Line, bool]) -> int:
    line, crlf = kept
    win.crlf = win.crlf or crlf
    win.lines.append(line)
    return len(line.text.encode("utf-8", "replace")) + 8

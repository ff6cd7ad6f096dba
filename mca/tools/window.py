"""A window of lines from a file, in bounded memory: read_file of a line range of a 4 GB file
costs one chunk and the lines shown, not the file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import BinaryIO

CHUNK = 64 * 1024
MAX_LINE_BYTES = 8 * 1024  # kept per shown line (the rest is counted, not stored)
COUNT_LINES_MAX = 64 * 1024 * 1024  # larger files: the total line count is not computed


@dataclass
class Line:
    """One shown line: its number, its kept bytes and its full length in bytes."""

    number: int
    data: bytes
    length: int

    @property
    def cut(self) -> bool:
        return self.length > len(self.data)


@dataclass
class Window:
    """The lines of a window and what is known about the whole file."""

    lines: list[Line] = field(default_factory=list)
    total: int | None = None  # None: not counted (a file over COUNT_LINES_MAX)
    crlf: bool = False  # some shown line ended in \r\n


def read_window(
    f: BinaryIO, size: int, first: int, count: int, byte_budget: int, *, chunk: int = CHUNK
) -> Window:
    """Lines first..first+count-1 (1-based) of `f`, at most `byte_budget` bytes of them."""
    win = Window()
    end = first + count  # exclusive
    counting = size <= COUNT_LINES_MAX
    n, used = 1, 0
    cur, cur_len = bytearray(), 0
    last = b""
    while True:
        data = f.read(chunk)
        if not data:
            break
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
                room = MAX_LINE_BYTES - len(cur)
                if room > 0:
                    cur += data[pos : min(stop, pos + room)]
                cur_len += stop - pos
            if nl < 0:
                break
            if first <= n < end:
                used += _keep(win, n, cur, cur_len)
                cur, cur_len = bytearray(), 0
                if used > byte_budget:
                    end = n + 1
            n += 1
            pos = nl + 1
    if first <= n < end and cur_len:
        _keep(win, n, cur, cur_len)
    win.total = n - 1 if last in (b"\n", b"") else n
    return win


def _keep(win: Window, n: int, cur: bytearray, length: int) -> int:
    data = bytes(cur)
    if data.endswith(b"\r") and length == len(data):
        win.crlf = True
        data, length = data[:-1], length - 1
    win.lines.append(Line(n, data, length))
    return len(data) + 8

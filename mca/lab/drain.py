"""What a student child prints (stdout and stderr, one pipe), drained by the grader and capped.

The child's output is never a file under its size limit (writing past it raised `File too
large` in the student's function) and never a pipe nobody reads (it would block the child):
the grader reads the pipe whenever it waits on the child and keeps only the first and the last
few KiB, for its own failure text. Printing any amount costs the hand-in nothing but the time
it takes, and the grader's memory stays bounded.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

__all__ = ["HEAD", "TAIL", "Drained"]

HEAD = 4096  # bytes kept from the start of the output
TAIL = 4096  # and from its end
READ = 1 << 16


@dataclass
class Drained:
    """The read end of a child's output pipe (non-blocking), and what was kept of it."""

    fd: int
    head: bytes = b""
    tail: bytes = b""
    total: int = 0
    ended: bool = False  # the pipe's every writer closed it

    def __post_init__(self) -> None:
        os.set_blocking(self.fd, False)

    def keep(self, chunk: bytes) -> None:
        """Count a chunk; keep what falls in the head or in the tail."""
        self.total += len(chunk)
        if len(self.head) < HEAD:
            room = HEAD - len(self.head)
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail = (self.tail + chunk)[-TAIL:]

    def read(self) -> None:
        """Everything the pipe holds now (never waits)."""
        while not self.ended:
            try:
                chunk = os.read(self.fd, READ)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # closed under us: nothing more to read
                chunk = b""
            if not chunk:
                self.ended = True
                return
            self.keep(chunk)

    def text(self) -> str:
        """The output as kept: its head, what was left out, its tail."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        skipped = self.total - len(self.head) - len(self.tail)
        return head + (f"\n[... {skipped} bytes not kept ...]\n" if skipped else "") + tail

    def last_line(self, width: int = 200) -> str:
        """The last line written (why Python itself gave up, say), at most `width` long."""
        lines = (self.tail or self.head).decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:width] if lines else ""

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

"""The grader's progress line on a terminal: done / total, elapsed time, and the slowest
hand-in still running (the one to look at when a run seems stuck)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from mca.text.sanitize import one_line

__all__ = ["WIDTH", "Progress"]

WIDTH = 24


class Progress:
    """Shared by the grading threads (start/finish) and the thread that draws it."""

    def __init__(
        self, total: int, out: TextIO, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.total, self.out, self.clock = total, out, clock
        self.began = clock()
        self.done = 0
        self.running: dict[str, float] = {}
        self.lock = threading.Lock()

    def start(self, student: str) -> None:
        with self.lock:
            self.running[student] = self.clock()

    def finish(self, student: str) -> None:
        with self.lock:
            self.running.pop(student, None)
            self.done += 1

    def line(self) -> str:
        """'[#########.......]  12/40  0:23  slowest running: alice (14 s)'."""
        now = self.clock()
        with self.lock:
            done, running = self.done, dict(self.running)
        filled = WIDTH * done // max(self.total, 1)
        elapsed = int(now - self.began)
        text = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {done:>3}/{self.total}"
        text += f"  {elapsed // 60}:{elapsed % 60:02d}"
        if running:
            name, since = min(running.items(), key=lambda kv: kv[1])
            text += f"  slowest running: {one_line(name)[:30]} ({int(now - since)} s)"
        return text

    def draw(self) -> None:
        self.out.write("\r\x1b[K" + self.line())
        self.out.flush()

    def clear(self) -> None:
        self.out.write("\r\x1b[K")
        self.out.flush()

"""A one-line spinner while the model is working: elapsed seconds and the retry state.

It draws from a thread on a terminal only, always on the same line, and clears that line before
anything else is written (the caller holds `lock` for its own writes and calls `stop` first).
"""

from __future__ import annotations

import math
import re
import threading
import time
from typing import TextIO

from mca.ui.ansi import CLEAR_LINE

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1
DELAY = 0.3  # a reply faster than this never shows a spinner
STARTING = "starting the session"  # what is waited for before a turn can start
ASKING = "asking the server for its context window"
_RETRY = re.compile(r"(.*), retrying in ([\d.]+) s \((\d+)/(\d+)\)$")


def counts_down(message: str) -> bool:
    """Is this a retry's wait ("HTTP 429, retrying in 4.0 s (2/5)"), which the spinner counts
    down, rather than news that stays true (a request sent again another way)?"""
    return _RETRY.match(message) is not None


class Spinner:
    def __init__(self, out: TextIO, lock: threading.RLock) -> None:
        self.out = out
        self.lock = lock
        self.state = ""  # e.g. "HTTP 429, retrying in 4.0 s (2/5)"
        self.state_at = 0.0
        self.what = "waiting for the model"
        self.started = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False
        self.note = ""  # e.g. "queued: what the person typed meanwhile"

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, what: str = "waiting for the model") -> None:
        if self._thread is not None:
            return
        self.what, self.state = what, ""
        self.started = time.monotonic()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="mca-spinner", daemon=True)
        self._thread.start()

    def set_state(self, state: str) -> None:
        """What the wait is about now, e.g. "HTTP 429, retrying in 4.0 s (2/5)"."""
        self.state, self.state_at = state, time.monotonic()

    def _state(self, now: float) -> str:
        m = _RETRY.match(self.state)
        if not m:
            return self.state
        why, wait, n, of = m.group(1), float(m.group(2)), m.group(3), m.group(4)
        left = wait - (now - self.state_at)
        if left > 0:
            return f"{why}, retrying in {math.ceil(left)} s ({n}/{of})"
        return f"{why}; retry {n}/{of} sent"

    def line(self, now: float, frame: int) -> str:
        elapsed = int(now - self.started)
        state = f" · {self._state(now)}" if self.state else ""
        note = f" · {self.note}" if self.note else ""
        return f"{FRAMES[frame % len(FRAMES)]} {self.what} · {elapsed} s{state}{note}"

    def _run(self) -> None:
        frame = 0
        while not self._stop.wait(TICK if frame else DELAY):
            with self.lock:
                if self._stop.is_set():
                    break
                self.out.write(CLEAR_LINE + self.line(time.monotonic(), frame))
                self.out.flush()
                self._drawn = True
            frame += 1

    def stop(self) -> None:
        """Stop and clear the line (safe to call when not running)."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        if thread is not threading.current_thread():
            thread.join()
        self._thread = None
        with self.lock:
            if self._drawn:
                self.out.write(CLEAR_LINE)
                self.out.flush()
                self._drawn = False

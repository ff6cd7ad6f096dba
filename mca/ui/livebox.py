"""A running command's output under its tool line. On a terminal: the last few lines and the
seconds elapsed, redrawn in place by a ticking thread (as the spinner is) and erased when the
command ends (its result follows). Otherwise: each complete line once, with no escape codes.

The output is untrusted: known secrets are scrubbed (also across pieces), style sequences
dropped, every other control character made visible, and each line cut to the screen's width
so that redrawing in place never meets a wrapped line."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TextIO

from mca.text.sanitize import StreamScrubber, for_terminal
from mca.ui.ansi import SGR, clear_rows_above

TAIL_LINES = 5
TICK = 0.2  # seconds between two redraws, at most
MARGIN = "  │ "


def clean(line: str, secrets: Iterable[str]) -> str:
    """One line as a terminal may show it: what a carriage return overwrote dropped (progress
    bars), style sequences dropped, secrets scrubbed, the rest made visible."""
    return for_terminal(SGR.sub("", line.rstrip("\r").rsplit("\r", 1)[-1]), secrets)


def width(text: str) -> int:
    """The cells `text` takes on a terminal (a wide letter takes two)."""
    if text.isascii() and text.isprintable():
        return len(text)  # one cell a character: no width table needed
    from prompt_toolkit.utils import get_cwidth  # ~50 ms to import: -p rarely needs it

    return get_cwidth(text)


def fit(text: str, columns: int) -> str:
    """`text` cut to `columns` cells, an ellipsis marking the cut."""
    if text.isascii() and text.isprintable() and len(text) <= columns:
        return text  # one cell a character: no width table needed
    # imported here: prompt_toolkit costs ~50 ms to import, and `-p` never needs it otherwise
    from prompt_toolkit.utils import get_cwidth

    if get_cwidth(text) <= columns:
        return text
    out, used = [], 0
    for ch in text:
        used += get_cwidth(ch)
        if used > columns - 1:
            break
        out.append(ch)
    return "".join(out) + "…"


class CommandBox:
    """Start it when a command starts, feed it the output, stop it before anything else is
    written (the caller holds `lock` for its own writes)."""

    def __init__(
        self,
        out: TextIO,
        lock: threading.RLock,
        secrets: Iterable[str],
        live: bool,
        columns: Callable[[], int],
    ) -> None:
        self.out, self.lock, self.live = out, lock, live
        self.secrets = tuple(secrets)
        self.columns = columns
        self._scrubber = StreamScrubber(self.secrets)
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._partial = ""
        self._started = 0.0
        self._rows = 0  # rows drawn last time
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.running = False
        self.note = ""  # e.g. "queued: what the person typed meanwhile"

    def start(self) -> None:
        self.stop()
        with self.lock:
            self._scrubber = StreamScrubber(self.secrets)
            self._tail.clear()
            self._partial, self._started, self.running = "", time.monotonic(), True
        if self.live:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="mca-command", daemon=True)
            self._thread.start()

    def feed(self, text: str) -> None:
        """Output as it came (any piece of it)."""
        with self.lock:
            if not self.running:
                return
            lines = (self._partial + self._scrubber.feed(text)).replace("\r\n", "\n").split("\n")
            self._partial = lines.pop()
            if self.live:
                self._tail.extend(clean(line, self.secrets) for line in lines)
            else:
                self._plain(lines)

    def _plain(self, lines: list[str]) -> None:
        for line in lines:
            self.out.write(MARGIN + clean(line, self.secrets) + "\n")
        self.out.flush()

    def frame(self, now: float) -> list[str]:
        """What the box shows at `now`: elapsed seconds, then the output's last lines."""
        lines = list(self._tail)
        if self._partial:
            lines.append(clean(self._partial, self.secrets))
        width = max(self.columns() - 1, 10)
        shown = [fit(MARGIN + line, width) for line in lines[-TAIL_LINES:]]
        note = f" · {self.note}" if self.note else ""
        return [f"  running · {int(now - self._started)} s{note}", *shown]

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            with self.lock:
                if self._stop.is_set():
                    break
                rows = self.frame(time.monotonic())
                self.out.write(clear_rows_above(self._rows) + "".join(r + "\n" for r in rows))
                self.out.flush()
                self._rows = len(rows)

    def stop(self) -> None:
        """Erase the box (a terminal) or end its last line (plain); safe when not running."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            if thread is not threading.current_thread():
                thread.join()
        with self.lock:
            if not self.running:
                return
            self.running = False
            rest = self._partial + self._scrubber.flush()
            if self.live:
                self.out.write(clear_rows_above(self._rows))
                self._rows = 0
            elif rest:
                self._plain([rest])
            self.out.flush()

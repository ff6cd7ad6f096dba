"""A running command's output for the person as it comes: decoded, batched, scrubbed of known
keys and sent as CommandOutput events, at most one every INTERVAL seconds (a chatty command must
not redraw the screen for every byte), from the command's reader thread or a timer.

The scrubbing runs over what the events carry, in order, as one stream: a key printed in two
parts that fall into two events is caught, because a tail that could be the start of a key is
held back until the next event (or the last one, when the command ends) shows what it is. A
consumer that joins the events' texts never sees a key whole, and nothing is lost."""

from __future__ import annotations

import codecs
import math
import threading
import time
from collections.abc import Callable, Iterable

from mca.events import CommandOutput, EventSink
from mca.text.sanitize import StreamScrubber

INTERVAL = 0.1  # seconds between two events of one command, at least
MAX_PENDING = 16_384  # characters kept between two events: a flood shows its end


class LiveOutput:
    """Feed it the command's bytes (`feed`, from any thread); `close` when the command ended
    sends what is left. Nothing is sent after `close`."""

    def __init__(
        self,
        emit: EventSink,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        secrets: Iterable[str] = (),
    ) -> None:
        self._emit = emit
        self._interval = interval
        self._clock = clock
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._scrubber = StreamScrubber(secrets)  # over the events' texts as one stream
        self._lock = threading.Lock()
        self._pending = ""
        self._dropped = 0
        self._started = clock()
        self._last = -math.inf
        self._timer: threading.Timer | None = None
        self._closed = False

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self._add(self._decoder.decode(chunk))
            wait = self._last + self._interval - self._clock()
            if wait <= 0:
                self._send()
            elif self._timer is None:  # what came meanwhile goes when the interval is up
                self._timer = threading.Timer(wait, self._due)
                self._timer.daemon = True
                self._timer.start()

    def close(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._add(self._decoder.decode(b"", final=True))
            self._send(last=True)  # with what the scrubber held back: nothing is lost
            self._closed = True

    def _due(self) -> None:
        with self._lock:
            self._timer = None
            self._send()

    def _add(self, text: str) -> None:
        self._pending += text
        over = len(self._pending) - MAX_PENDING
        if over > 0:
            self._pending = self._pending[over:]
            self._dropped += over

    def _send(self, last: bool = False) -> None:
        if self._closed:
            return
        text = self._scrubber.feed(self._pending) + (self._scrubber.flush() if last else "")
        self._pending = ""
        if not (text or self._dropped):
            return  # all of it may be a key's start: it goes with the next event
        now = self._clock()
        elapsed = round(now - self._started, 1)
        self._emit(CommandOutput(text, elapsed, self._dropped))
        self._dropped, self._last = 0, now

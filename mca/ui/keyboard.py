"""The keyboard while a turn runs, on a terminal: raw mode (nothing typed is echoed into the
answer), read by a thread through prompt_toolkit's own parser.

- Keys typed meanwhile are kept for the next prompt as prompt_toolkit's typeahead: the prompt
  starts with them, an Enter in them sends the text, a Ctrl-D on an empty line ends the session.
- From the turn's end until the next prompt reads them, the terminal stays raw (RawHold): the
  keys wait in it unechoed, and a Ctrl-D stays a key (a cooked terminal turns it into a NUL).
- Esc and Ctrl-C interrupt the turn the way Ctrl-C always did: SIGINT to the turn's thread
  (raw mode turns the terminal's own SIGINT off), once per turn.
- A question during the turn (an approval) takes a single key.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import signal
import threading
from collections.abc import Callable
from types import TracebackType

from prompt_toolkit import PromptSession
from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

ESC_WAIT = 0.05  # a lone Esc is the key, not the start of a sequence, after this long
STOP_KEYS = (Keys.Escape, Keys.ControlC)
ENTER = (Keys.ControlM, Keys.ControlJ)
# The terminal's own replies (cursor position, mouse), not keys the person pressed.
REPLIES = (Keys.CPRResponse, Keys.Vt100MouseEvent, Keys.WindowsMouseEvent, Keys.Ignore)


def is_text(press: KeyPress) -> bool:
    return not isinstance(press.key, Keys) and press.key.isprintable()


def typed(presses: list[KeyPress]) -> str:
    """What the kept keys spell (each Enter as a newline), for showing it; keys that spell
    nothing (Ctrl-D, arrows) are kept but not shown."""
    text = ""
    for press in presses:
        if press.key == Keys.ControlH:
            text = text[:-1]
        elif press.key in ENTER:
            text += "\n"
        elif is_text(press) or press.key == Keys.BracketedPaste:
            text += press.data
    return text


class RawHold:
    """The terminal's raw mode, handed from a turn's keyboard to whoever shows the next prompt,
    which releases it once that prompt has read the keys (the terminal as it was before)."""

    def __init__(self) -> None:
        self._raw: contextlib.ExitStack | None = None

    def keep(self, raw: contextlib.ExitStack) -> None:
        self.release()
        self._raw = raw

    def release(self) -> None:
        raw, self._raw = self._raw, None
        if raw is not None:
            raw.close()


class TurnKeys:
    """`with TurnKeys(input):` around a turn; `key()` answers a question with one key."""

    def __init__(
        self,
        inp: Input,
        on_typed: Callable[[str], None] = lambda text: None,
        hold: RawHold | None = None,
    ) -> None:
        self.inp = inp
        self.on_typed = on_typed
        self.hold = hold  # None: the terminal goes back as it was when the turn ends
        self._lock = threading.Lock()
        self._kept: list[KeyPress] = []
        self._answers: queue.Queue[KeyPress | None] = queue.Queue()
        self._asking = self._closing = self._interrupted = False
        self._target = 0
        self._thread: threading.Thread | None = None
        self._wake = os.pipe()
        self._raw: contextlib.ExitStack | None = None

    def __enter__(self) -> TurnKeys:
        self._target = threading.get_ident()
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.inp.raw_mode())
            self._thread = threading.Thread(target=self._run, name="mca-keys", daemon=True)
            self._thread.start()
            self._raw = stack.pop_all()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            with self._lock:  # from here on no key interrupts: the turn is over
                self._closing = True
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        os.write(self._wake[1], b"x")
        if self._thread is not None:
            self._thread.join()
        for fd in self._wake:
            os.close(fd)
        if self.hold is not None and self._raw is not None:
            self.hold.keep(self._raw)  # still raw: keys typed from now on wait for the prompt
        elif self._raw is not None:
            self._raw.close()  # the terminal as it was
        store_typeahead(self.inp, self._kept)

    def key(self, allowed: str, show: Callable[[], None]) -> str:
        """One of `allowed` ('' for Enter), pressed after `show` put the question up; other
        keys are ignored. Esc, Ctrl-C, Ctrl-D and the end of input cancel the turn."""
        with self._lock:
            self._asking = True
        try:
            show()
            while True:
                press = self._answers.get()
                if press is None or press.key in (*STOP_KEYS, Keys.ControlD):
                    raise KeyboardInterrupt
                if press.key in ENTER:
                    return ""
                if is_text(press) and press.data.lower() in allowed:
                    return press.data.lower()
        finally:
            with self._lock:
                self._asking = False

    def _run(self) -> None:
        for press in get_typeahead(self.inp):  # typed right after the Enter that sent the turn
            self._on_key(press)
        fd, pending = self.inp.fileno(), False
        while not self.inp.closed:
            ready, _, _ = select.select([fd, self._wake[0]], [], [], ESC_WAIT if pending else None)
            if self._wake[0] in ready:
                return
            presses = self.inp.read_keys() if ready else self.inp.flush_keys()
            pending = bool(ready)
            for press in presses:
                self._on_key(press)
        self._answers.put(None)  # the end of input: a question waiting is cancelled

    def _on_key(self, press: KeyPress) -> None:
        with self._lock:
            if self._asking:
                self._answers.put(press)
                return
            if press.key in STOP_KEYS:
                if not (self._closing or self._interrupted):
                    self._interrupted = True
                    signal.pthread_kill(self._target, signal.SIGINT)
                return
            if press.key in REPLIES:
                return
            self._kept.append(press)
            text = typed(self._kept)
        self.on_typed(text)


def turn_keyboard(
    prompt: PromptSession[str] | None, on_typed: Callable[[str], None], hold: RawHold
) -> contextlib.AbstractContextManager[TurnKeys | None]:
    """Around a turn: the prompt's keyboard read key by key when it is a terminal, left raw in
    `hold` at the end; otherwise nothing (piped input is read a line at a time, as scripts and
    tests expect)."""
    inp = prompt.app.input if prompt is not None else None
    try:
        terminal = inp is not None and os.isatty(inp.fileno())
    except (NotImplementedError, OSError, ValueError):  # an input with no descriptor
        terminal = False
    if inp is None or not terminal:
        return contextlib.nullcontext()
    return TurnKeys(inp, on_typed, hold)

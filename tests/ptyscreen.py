"""Driving the installed `mca` in a pseudo-terminal: its environment, and a pyte screen to read
what a person would see. Tests wait on what is on the screen, never on fixed sleeps."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pyte

MCA = Path(sys.executable).parent / "mca"


def child_env(ws: Path, **extra: str) -> dict[str, str]:
    """A clean environment for mca in a terminal: its own HOME and MCA_HOME beside `ws`, and no
    cursor-position query (without PROMPT_TOOLKIT_NO_CPR each start waits for a reply)."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(ws.parent),
        "MCA_HOME": str(ws.parent / "home"),
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        **extra,
    }


def as_a_terminal() -> None:
    """In the child, before mca starts: Ctrl-C interrupts, as on a person's terminal. A suite
    started in the background (`make test &`) runs with SIGINT ignored, the child would inherit
    that, and Python keeps ignoring a signal that was ignored when it started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until(ready: Callable[[], bool], what: str, timeout: float = 20) -> None:
    """Poll until `ready()`; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never happened within {timeout:g} s")
        time.sleep(0.02)


class Screen:
    """A pexpect child whose output is also fed to a pyte screen."""

    def __init__(
        self,
        ws: Path,
        args: list[str],
        env: dict[str, str],
        size: tuple[int, int] = (100, 40),
        launcher: tuple[str, ...] = (),
    ) -> None:
        """`launcher`: what starts mca (tests/confine.py's command line, ending in `--`)."""
        cols, rows = size  # 100 columns: the answer in test_terminal_pty is wider than that
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
        argv = [*launcher, str(MCA), *args]
        self.child: pexpect.spawn[bytes] = pexpect.spawn(
            argv[0],
            argv[1:],
            env=env,
            cwd=str(ws),
            timeout=30,
            dimensions=(rows, cols),
            preexec_fn=as_a_terminal,
        )

    def expect(self, pattern: str | bytes) -> bytes:
        self.child.expect(pattern)
        after = self.child.after  # the match (or EOF / TIMEOUT, which expect() raised)
        got = (self.child.before or b"") + (after if isinstance(after, bytes) else b"")
        self._feed(got)
        return got

    def on_screen(self, text: str, timeout: float = 20) -> None:
        """Wait until the rendered screen shows `text` (a redraw may send only what changed)."""
        self.wait_for(lambda screen: text in screen, f"{text!r} on the screen", timeout)

    def wait_for(self, ready: Callable[[str], bool], what: str, timeout: float = 20) -> None:
        """Wait until `ready(the screen's text)` holds, reading what the child sends meanwhile."""
        deadline = time.monotonic() + timeout
        self._feed(self.child.buffer)  # what the last expect() read past its match
        self.child.buffer = b""
        while not ready(self.text()):
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw {what}:\n{self.text()}")
            try:
                self._feed(self.child.read_nonblocking(4096, timeout=0.2))
            except pexpect.TIMEOUT:
                continue

    def _feed(self, data: bytes) -> None:
        self.raw += data
        self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def line_at_cursor(self) -> str:
        return str(self.screen.display[self.screen.cursor.y]).rstrip()

    def row(self, needle: str) -> int:
        return next(i for i, line in enumerate(self.screen.display) if needle in line)

    def style_of(self, needle: str) -> Any:
        y = self.row(needle)
        x = self.screen.display[y].index(needle)
        return self.screen.buffer[y][x]

    def close(self) -> None:
        self.child.sendcontrol("d")
        self.ended()

    def ended(self) -> None:
        """Wait for mca to exit, the screen showing all it wrote."""
        try:
            self.child.expect(pexpect.EOF)
            self._feed(self.child.before or b"")
        finally:
            self.child.close(force=True)

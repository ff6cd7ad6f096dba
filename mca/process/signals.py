"""SIGTERM and SIGHUP end mca the way Ctrl-C does: the running command's whole tree is killed,
the turn ends (what it completed kept, as after Esc), the session is saved, and mca exits with
128 + the signal's number (143, 129).

A CI job's timeout sends SIGTERM; a closed terminal sends SIGHUP. Python's default for either is
to die at once, leaving the command (in a session of its own) and the sandbox's waiting helper
running. Here the signal raises `Terminated`, a KeyboardInterrupt, in the main thread (where
Python runs every handler and where turns run), so every path Ctrl-C takes is taken. Only the
first signal raises: the cleanup it starts runs to its end. After SIGHUP the terminal is gone:
what mca would still write to it goes to /dev/null (a pipe or a file keeps getting it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = [
    "TERMINATING",
    "Terminated",
    "exit_code",
    "held",
    "install",
    "name",
    "received",
    "why",
]

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []  # the signal that ended this process, once one came (process-wide)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: the turn ends as Ctrl-C ends it, then mca exits."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def install() -> None:
    """Turn SIGTERM and SIGHUP into Terminated (in the main thread; elsewhere it cannot be)."""
    _received.clear()
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in TERMINATING:
        if signal.getsignal(sig) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(sig, _handler)


def _handler(signum: int, frame: FrameType | None) -> None:
    if _received:
        return
    _received.append(signum)
    if signum == signal.SIGHUP:
        _quiet_terminal()
    raise Terminated(signum)


def _quiet_terminal() -> None:
    """stdout and stderr that are the hung-up terminal now go to /dev/null (writes to it would
    fail with EIO half-way through saving)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    for fd in (1, 2):
        try:  # a terminal that hung up is no tty any more (isatty fails): a character device
            if stat.S_ISCHR(os.fstat(fd).st_mode) and not os.path.samestat(
                os.fstat(fd), os.fstat(null)
            ):
                os.dup2(null, fd)
        except OSError:
            continue
    os.close(null)


def received() -> int:
    """The terminating signal that arrived (0: none)."""
    return _received[0] if _received else 0


def name() -> str:
    """The terminating signal's name ('' when none came)."""
    signum = received()
    return signal.Signals(signum).name if signum else ""


def why() -> str:
    """How the turn was stopped, for the model: the signal, or Esc/Ctrl-C."""
    return name() or "Esc or Ctrl-C"


def exit_code(interrupted: int) -> int:
    """128 + the signal for SIGTERM and SIGHUP; `interrupted` (130) for Ctrl-C."""
    signum = received()
    return 128 + signum if signum else interrupted


@contextlib.contextmanager
def held(*, drop: bool = False) -> Iterator[None]:
    """Ctrl-C, Esc, SIGTERM and SIGHUP wait while the block runs (putting protected paths back
    must not stop half way), then act as they would have: the first one's handler runs at the
    block's end. With `drop`, the block runs while a stop is already under way: a signal's
    handler still runs (SIGTERM is remembered, so mca still exits after the turn) but what it
    raises is dropped, as the stop is already being raised. In the main thread only (Python
    runs handlers there); elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        came.append(signum)

    old: dict[int, Callable[[int, FrameType | None], Any]] = {}
    for sig in (signal.SIGINT, *TERMINATING):
        handler = signal.getsignal(sig)
        if callable(handler):
            old[sig] = handler
            signal.signal(sig, hold)
    try:
        yield
    finally:
        for signum, was in old.items():
            signal.signal(signum, was)
        if came and came[0] in old:
            first = old[came[0]]
            try:
                first(came[0], None)
            except KeyboardInterrupt:
                if not drop:
                    raise

"""Putting protected paths back runs to its end (issue 45, item 2): a second Esc, Ctrl-C or a
SIGTERM during it waits until it is done, then acts as it would have; while a stop is already
under way what it raises is dropped, but a terminating signal is still remembered."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from mca.process import signals


@pytest.fixture
def terminating() -> Iterator[None]:
    old = {s: signal.getsignal(s) for s in signals.TERMINATING}
    signals.install()
    yield
    signals.install()  # forgets what came
    for sig, handler in old.items():
        signal.signal(sig, handler)


def test_ctrl_c_in_a_held_block_comes_at_its_end() -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), signals.held():
        os.kill(os.getpid(), signal.SIGINT)
        done.append("after the signal")  # the block went on
    assert done == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_stop_under_way_drops_a_second_one_but_remembers_sigterm(terminating: None) -> None:
    with signals.held(drop=True):
        os.kill(os.getpid(), signal.SIGINT)
    with signals.held(drop=True):
        os.kill(os.getpid(), signal.SIGTERM)
    assert signals.received() == signal.SIGTERM  # mca still exits 143 after the turn


def test_nothing_held_nothing_raised() -> None:
    with signals.held():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
